"""Load a lesson's Python files by path: the student's copy, checks.py, figures.py.

Lesson folders are named ``03_backprop`` and are not packages, so their files
are loaded from their paths, each under a fresh module name.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["load_module", "make_figures"]

_counter = itertools.count()


def load_module(path: str | Path, prefix: str = "gradlab_lesson") -> ModuleType:
    """Run the file at ``path`` as a new module (not ``__main__``: its demo does not run)."""
    path = Path(path).resolve()
    name = f"{prefix}_{path.stem}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"can't load {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def make_figures(lesson, folder: str | Path) -> list[Path]:
    """Draw lesson ``lesson``'s pictures into ``folder`` with its figures.py; their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    module = load_module(lesson.figures_file, "gradlab_lesson_figures")
    made = module.make(folder)
    return [Path(p) for p in made]
