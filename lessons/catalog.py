"""Find the lessons and read their metadata (``lesson.toml``).

A lesson folder is named ``NN_slug``: the number orders the curriculum and is
what students type (``gradlab lesson 3``). Metadata errors name the file and
the field, so a lesson author sees at once what to fix.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["Lesson", "Task", "LessonError", "LESSONS_DIR", "PANELS", "all_lessons",
           "get_lesson"]

LESSONS_DIR = Path(__file__).resolve().parent
"""Where the lesson folders live (found through the source tree, like assets/)."""

PANELS = ("graph", "inspector", "memory", "optimizer", "training", "time", "log")
"""The debugger panels a lesson may ask the app to show."""

REQUIREMENTS = ("cuda",)
"""What a lesson may need beyond the CPU; checks that need it skip without it."""

_FOLDER = re.compile(r"^(\d\d)_([a-z0-9_]+)$")
_FILES = ("lesson.toml", "lesson.md", "starter.py", "solution.py", "checks.py", "figures.py")


class LessonError(ValueError):
    """A lesson that does not exist, or one whose files are malformed."""


@dataclass(frozen=True)
class Task:
    """One thing the student writes, checked by one ``@check`` function."""

    name: str
    title: str
    hints: tuple[str, ...] = ()


@dataclass(frozen=True)
class Lesson:
    """One lesson: its metadata and where its files are."""

    number: int
    slug: str
    folder: Path
    title: str
    minutes: int
    goals: tuple[str, ...]
    prerequisites: tuple[int, ...]
    panels: tuple[str, ...]
    tasks: tuple[Task, ...]
    requires: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The folder's name, ``NN_slug``: also the working copy's name."""
        return self.folder.name

    @property
    def text_file(self) -> Path:
        return self.folder / "lesson.md"

    @property
    def starter(self) -> Path:
        return self.folder / "starter.py"

    @property
    def solution(self) -> Path:
        return self.folder / "solution.py"

    @property
    def checks_file(self) -> Path:
        return self.folder / "checks.py"

    @property
    def figures_file(self) -> Path:
        return self.folder / "figures.py"

    @property
    def figures_dir(self) -> Path:
        return self.folder / "figures"

    def text(self) -> str:
        return self.text_file.read_text(encoding="utf-8")

    def task(self, name: str) -> Task:
        for task in self.tasks:
            if task.name == name:
                return task
        raise LessonError(f"lesson {self.number} has no task {name!r}; its tasks are "
                          f"{', '.join(t.name for t in self.tasks)}")

    def __str__(self) -> str:
        return f"{self.number:2d}  {self.title}"


def _strings(where: str, field: str, value, *, required: bool = False) -> tuple[str, ...]:
    if value is None and not required:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise LessonError(f"{where}: {field} must be a list of non-empty strings, got "
                          f"{value!r}")
    return tuple(value)


def _read_tasks(where: str, raw) -> tuple[Task, ...]:
    if not isinstance(raw, list) or not raw:
        raise LessonError(f"{where}: a lesson needs at least one [[tasks]] table with a name "
                          "and a title")
    tasks, seen = [], set()
    for k, entry in enumerate(raw):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) \
                or not isinstance(entry.get("title"), str):
            raise LessonError(f"{where}: task {k + 1} needs name = \"...\" and title = "
                              f"\"...\", got {entry!r}")
        name = entry["name"]
        if not name.isidentifier():
            raise LessonError(f"{where}: task name {name!r} must be a Python identifier "
                              "(it names the @check function's task)")
        if name in seen:
            raise LessonError(f"{where}: two tasks are named {name!r}")
        seen.add(name)
        unknown = set(entry) - {"name", "title", "hints"}
        if unknown:
            raise LessonError(f"{where}: task {name!r} has unknown fields {sorted(unknown)}; "
                              "a task has name, title and hints")
        tasks.append(Task(name, entry["title"],
                          _strings(where, f"task {name!r} hints", entry.get("hints"))))
    return tuple(tasks)


def read_lesson(folder: Path) -> Lesson:
    """Read one lesson folder; :class:`LessonError` says what is wrong with it."""
    folder = Path(folder)
    match = _FOLDER.match(folder.name)
    if match is None:
        raise LessonError(f"{folder}: a lesson folder is named NN_slug (two digits, then "
                          "lower-case words joined by _), e.g. 03_backprop_by_hand")
    missing = [name for name in _FILES if not (folder / name).is_file()]
    if missing:
        raise LessonError(f"{folder}: missing {', '.join(missing)}; a lesson has "
                          f"{', '.join(_FILES)}")
    where = str(folder / "lesson.toml")
    try:
        meta = tomllib.loads((folder / "lesson.toml").read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise LessonError(f"{where}: not valid TOML: {error}") from None
    known = {"title", "minutes", "goals", "prerequisites", "panels", "requires", "tasks"}
    unknown = set(meta) - known
    if unknown:
        raise LessonError(f"{where}: unknown fields {sorted(unknown)}; known: {sorted(known)}")
    title = meta.get("title")
    if not isinstance(title, str) or not title.strip():
        raise LessonError(f"{where}: title = \"...\" is missing")
    minutes = meta.get("minutes")
    if not isinstance(minutes, int) or not 5 <= minutes <= 60:
        raise LessonError(f"{where}: minutes must be a whole number from 5 to 60, got "
                          f"{minutes!r}")
    prerequisites = meta.get("prerequisites", [])
    if not isinstance(prerequisites, list) or \
            not all(type(p) is int and p > 0 for p in prerequisites):
        raise LessonError(f"{where}: prerequisites must be a list of lesson numbers, got "
                          f"{prerequisites!r}")
    panels = _strings(where, "panels", meta.get("panels"), required=True)
    bad = [p for p in panels if p not in PANELS]
    if bad or not panels:
        raise LessonError(f"{where}: panels must name some of {', '.join(PANELS)}; got "
                          f"{list(panels)}")
    requires = _strings(where, "requires", meta.get("requires"))
    bad = [r for r in requires if r not in REQUIREMENTS]
    if bad:
        raise LessonError(f"{where}: requires may name {', '.join(REQUIREMENTS)}; got {bad}")
    goals = _strings(where, "goals", meta.get("goals"), required=True)
    if not goals:
        raise LessonError(f"{where}: goals must list at least one thing the lesson teaches")
    return Lesson(number=int(match.group(1)), slug=match.group(2), folder=folder,
                  title=title.strip(), minutes=minutes, goals=goals,
                  prerequisites=tuple(prerequisites), panels=panels,
                  tasks=_read_tasks(where, meta.get("tasks")), requires=requires)


def _folders(root: Path) -> list[Path]:
    if not root.is_dir():
        raise LessonError(f"{root}: no such folder of lessons")
    return sorted(p for p in root.iterdir() if p.is_dir() and _FOLDER.match(p.name))


@cache
def _read_cached(folder: Path, stamp: float) -> Lesson:
    return read_lesson(folder)


def _read(folder: Path) -> Lesson:
    """read_lesson, again only when lesson.toml changed (an author editing it in the app)."""
    toml = folder / "lesson.toml"
    return _read_cached(folder, toml.stat().st_mtime if toml.exists() else 0.0)


def all_lessons(root: Path | None = None) -> tuple[Lesson, ...]:
    """Every lesson, in order; a malformed one raises :class:`LessonError`."""
    root = Path(root or LESSONS_DIR).resolve()
    lessons = tuple(_read(p) for p in _folders(root))
    numbers = [lesson.number for lesson in lessons]
    if len(set(numbers)) != len(numbers):
        twice = sorted({n for n in numbers if numbers.count(n) > 1})
        raise LessonError(f"{root}: two lesson folders share the number(s) {twice}")
    return lessons


def get_lesson(number: int | str, root: Path | None = None) -> Lesson:
    """Lesson ``number`` (an int, ``"3"``, ``"03"`` or a folder name like ``03_backprop``).

    Only that lesson's folder is read, so one malformed lesson does not hide the others.
    """
    root = Path(root or LESSONS_DIR).resolve()
    folders = _folders(root)
    text = str(number).strip()
    try:
        wanted = int(text)
    except ValueError:
        wanted = None
    found = [p for p in folders if text in (p.name, _FOLDER.match(p.name).group(2))] or \
        [p for p in folders if int(_FOLDER.match(p.name).group(1)) == wanted]
    if len(found) > 1:
        raise LessonError(f"{root}: two lesson folders share the number {wanted}: "
                          f"{', '.join(p.name for p in found)}")
    if found:
        return _read(found[0])
    if not folders:
        raise LessonError(f"no lessons found in {root}")
    first, last = (int(_FOLDER.match(p.name).group(1)) for p in (folders[0], folders[-1]))
    raise LessonError(f"there is no lesson {number!r}: the lessons are numbered {first} to "
                      f"{last} (gradlab lesson lists them)")
