"""Small fake lessons, written into a temporary folder, for the framework's tests."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from lessons.catalog import LESSONS_DIR

LESSON_TOML = '''\
title = "Adding and doubling"
minutes = 10
goals = ["add two numbers", "double an array"]
prerequisites = []
panels = ["graph", "log"]

[[tasks]]
name = "add"
title = "Add two numbers"
hints = ["Use +.", "return a + b"]

[[tasks]]
name = "double"
title = "Double an array"
hints = ["Multiply by 2.", "return 2 * x", "Really: return 2 * x"]
'''

STARTER = '''\
"""A fake lesson: add and double."""


def add(a, b):
    # TODO: return the sum
    raise NotImplementedError("add")


def double(x):
    # TODO: return 2 * x
    raise NotImplementedError("double")


if __name__ == "__main__":
    print(add(1, 2))
'''

SOLUTION = '''\
"""A fake lesson: add and double (solved)."""


def add(a, b):
    return a + b


def double(x):
    return 2 * x


if __name__ == "__main__":
    print(add(1, 2))
'''

CHECKS = '''\
from lessons.expect import check, expect_close, expect_equal


@check("add")
def add(student, rng):
    a, b = (int(v) for v in rng.integers(0, 100, size=2))
    expect_equal(student.add(a, b), a + b, f"add({a}, {b})")


@check("double")
def double(student, rng):
    x = rng.normal(size=3)
    expect_close(student.double(x), 2 * x, "double of 3 numbers")
'''

FIGURES = '''\
from pathlib import Path


def make(folder: Path) -> list[Path]:
    path = Path(folder) / "note.txt"
    path.write_text("a picture")
    return [path]
'''


def write_lesson(root: Path, name: str = "01_fake", *, toml: str = LESSON_TOML,
                 starter: str = STARTER, solution: str = SOLUTION, checks: str = CHECKS,
                 figures: str = FIGURES, text: str = "# Lesson 1 · Fake\n") -> Path:
    """A lesson folder ``root/name`` with the six files (dedented); its path."""
    folder = Path(root) / name
    folder.mkdir(parents=True, exist_ok=True)
    files = {"lesson.toml": toml, "lesson.md": text, "starter.py": starter,
             "solution.py": solution, "checks.py": checks, "figures.py": figures}
    for file, content in files.items():
        (folder / file).write_text(textwrap.dedent(content), encoding="utf-8")
    (folder / "figures").mkdir(exist_ok=True)
    return folder


def copy_lesson_01(root: Path) -> Path:
    """The real lesson 1 (the template), copied into ``root`` alone: the other lessons
    are not needed, nor disturbed."""
    source = LESSONS_DIR / "01_derivative_as_slope"
    return Path(shutil.copytree(source, Path(root) / source.name,
                                ignore=shutil.ignore_patterns("__pycache__")))


def student_file(folder: Path, source: str, name: str = "mine.py") -> Path:
    """A student's file with ``source`` (dedented) in ``folder``."""
    path = Path(folder) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path
