"""What each student has done, saved per user in one small JSON file.

The file is ``$GRADLAB_DATA_DIR/progress.json`` (default
``$XDG_DATA_HOME/gradlab`` or ``~/.local/share/gradlab``). For each lesson it
keeps the last status of each task, when the lesson was first completed and how
many hints of each task the student has opened. Every change reads the file
again, applies itself and writes atomically, so the app and ``gradlab check`` in
another terminal do not undo each other. A damaged file is moved aside, not
lost, and progress starts afresh.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from .catalog import Lesson
from .grading import Report
from .workspace import write_atomically

__all__ = ["DATA_ENV", "progress_file", "load", "record_report", "reveal_hint", "state",
           "passed_tasks"]

DATA_ENV = "GRADLAB_DATA_DIR"
_VERSION = 1


def progress_file() -> Path:
    base = os.environ.get(DATA_ENV)
    if not base:
        xdg = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
        base = Path(xdg) / "gradlab"
    return Path(base).expanduser() / "progress.json"


def load(path: Path | None = None) -> dict:
    """Every lesson's progress: ``{lesson name: {"tasks": {...}, "completed": ..., ...}}``."""
    path = path or progress_file()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        return _set_aside(path, f"can't read it ({error})")
    if not isinstance(raw, dict) or not _well_formed(raw.get("lessons")):
        return _set_aside(path, "it is not a gradlab progress file")
    return raw["lessons"]


def _well_formed(lessons) -> bool:
    """Each lesson's entry is a table, and so are its tasks and hints (if any)."""
    return isinstance(lessons, dict) and all(
        isinstance(entry, dict) and isinstance(entry.get("tasks", {}), dict)
        and isinstance(entry.get("hints", {}), dict) for entry in lessons.values())


def _set_aside(path: Path, why: str) -> dict:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside, k = path.with_name(f"{path.name}.damaged-{stamp}"), 1
    while aside.exists():  # damaged twice in one second: keep both
        aside, k = path.with_name(f"{path.name}.damaged-{stamp}-{k}"), k + 1
    try:
        os.replace(path, aside)
        where = f"moved it to {aside}"
    except OSError:
        where = "left it where it is"
    warnings.warn(f"gradlab: your lesson progress file {path}: {why}; {where} and started "
                  "afresh", stacklevel=3)
    return {}


def _update(change: Callable[[dict], None], path: Path | None = None) -> dict:
    path = path or progress_file()
    lessons = load(path)
    change(lessons)
    text = json.dumps({"version": _VERSION, "lessons": lessons}, indent=1, sort_keys=True)
    write_atomically(path, text.encode("utf-8"))
    return lessons


def _entry(lessons: dict, lesson: Lesson) -> dict:
    entry = lessons.setdefault(lesson.name, {})
    entry.setdefault("tasks", {})
    entry.setdefault("hints", {})
    entry.setdefault("completed", None)
    return entry


def record_report(lesson: Lesson, report: Report, path: Path | None = None) -> dict:
    """Save the statuses of a check run; a lesson stays completed once it passed."""
    def change(lessons: dict) -> None:
        entry = _entry(lessons, lesson)
        for result in report.results:
            entry["tasks"][result.name] = result.status
        entry["checked"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        if report.passed and not entry["completed"]:
            entry["completed"] = entry["checked"]

    return _update(change, path)


def reveal_hint(lesson: Lesson, task: str, path: Path | None = None) -> int:
    """Count one more hint opened for ``task``; how many are open now."""
    hints = len(lesson.task(task).hints)
    opened = {}

    def change(lessons: dict) -> None:
        entry = _entry(lessons, lesson)
        entry["hints"][task] = min(hints, int(entry["hints"].get(task, 0)) + 1)
        opened["n"] = entry["hints"][task]

    _update(change, path)
    return opened["n"]


def passed_tasks(lesson: Lesson, lessons: dict) -> int:
    entry = lessons.get(lesson.name, {})
    names = {t.name for t in lesson.tasks}
    return sum(1 for name, status in entry.get("tasks", {}).items()
               if name in names and status == "passed")


def state(lesson: Lesson, lessons: dict) -> str:
    """``done`` (passed once), ``started`` (checked or hinted) or ``new``."""
    entry = lessons.get(lesson.name)
    if not entry:
        return "new"
    return "done" if entry.get("completed") else "started"
