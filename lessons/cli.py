"""``gradlab lesson`` and ``gradlab check``: the lessons on the command line.

    gradlab lesson               the lessons, with your progress
    gradlab lesson N             open lesson N in the app (the app is tui's part)
    gradlab lesson N --where     print the path of your working copy of lesson N
    gradlab lesson N --reset     put the starter back (your copy goes to backups/)
    gradlab lesson N --figures DIR
                                 draw the lesson's pictures into DIR
    gradlab check N [--file PATH] [--seed S] [--watch] [--solution]
                                 run lesson N's checks on your file; exit 0 only when
                                 every task passes

No Textual here: the console script (tui/cli.py) passes in the function that
opens the app. ``python -m lessons check ...`` runs the same checks, which is
how the app runs them in a separate process.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from . import progress
from .catalog import Lesson, LessonError, all_lessons, get_lesson
from .grading import Report, run_checks, run_checks_isolated
from .loading import make_figures
from .workspace import ensure_working_copy, reset_working_copy, working_copy, workspace_dir

__all__ = ["lesson_arguments", "run_lesson", "check_arguments", "run_check", "format_list",
           "main"]

_STATE_MARK = {"done": "✓", "started": "…", "new": " "}


def format_list(lessons: tuple[Lesson, ...], saved: dict) -> str:
    """The lessons as a table: state, number, title, minutes, tasks passed."""
    lines = ["    #  lesson" + " " * 52 + "min  tasks"]
    for lesson in lessons:
        mark = _STATE_MARK[progress.state(lesson, saved)]
        tasks = f"{progress.passed_tasks(lesson, saved)}/{len(lesson.tasks)}"
        title = lesson.title if len(lesson.title) <= 56 else lesson.title[:55] + "…"
        needs = f"  (some checks need {', '.join(lesson.requires)})" if lesson.requires else ""
        lines.append(f"  {mark} {lesson.number:2d}  {title:<56}  {lesson.minutes:3d}  "
                     f"{tasks:>5}{needs}")
    done = sum(progress.state(lesson, saved) == "done" for lesson in lessons)
    lines += ["", f"{done} of {len(lessons)} done. Your files are in {workspace_dir()}.",
              "Open one with: gradlab lesson N    check it with: gradlab check N"]
    return "\n".join(lines)


# --- gradlab lesson ------------------------------------------------------------------------
def lesson_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("number", nargs="?", help="the lesson to open (leave out: list them)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--where", action="store_true",
                      help="print the path of your working copy and exit")
    what.add_argument("--reset", action="store_true",
                      help="put the starter back (your copy is kept in backups/)")
    what.add_argument("--figures", metavar="DIR",
                      help="draw the lesson's pictures into DIR and exit")


def run_lesson(args: argparse.Namespace,
               open_app: Callable[[Lesson, Path], int] | None = None) -> int:
    """``gradlab lesson``; ``open_app(lesson, working_copy)`` opens the app on a lesson."""
    try:
        if args.number is None:
            print(format_list(all_lessons(), progress.load()))
            return 0
        lesson = get_lesson(args.number)
    except LessonError as error:
        print(f"gradlab lesson: {error}", file=sys.stderr)
        return 2
    if args.where:
        print(ensure_working_copy(lesson))
        return 0
    if args.reset:
        backup = reset_working_copy(lesson)
        kept = f"; your old copy is in {backup}" if backup else ""
        print(f"{working_copy(lesson)} is the starter again{kept}")
        return 0
    if args.figures:
        for path in make_figures(lesson, args.figures):
            print(path)
        return 0
    path = ensure_working_copy(lesson)
    if open_app is None:
        print(f"Lesson {lesson.number}: {lesson.title}\nRead {lesson.text_file}\nEdit {path}\n"
              f"Check it with: gradlab check {lesson.number}")
        return 0
    return open_app(lesson, path)


# --- gradlab check -------------------------------------------------------------------------
def check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("number", help="the lesson whose checks to run")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--file", help="the file to check (default: your working copy)")
    which.add_argument("--solution", action="store_true",
                       help="check the lesson's reference solution (for instructors)")
    which.add_argument("--starter", action="store_true",
                       help="check the untouched starter (every task should fail)")
    parser.add_argument("--seed", type=int, help="replay a run's random inputs")
    parser.add_argument("--watch", action="store_true",
                        help="check again each time the file is saved (Ctrl+C stops)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="show every comparison, also of tasks that pass")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    # The folder the lessons are in (run_checks_isolated passes its lesson's).
    parser.add_argument("--root", help=argparse.SUPPRESS)


def _target(args: argparse.Namespace, lesson: Lesson) -> Path:
    if args.solution:
        return lesson.solution
    if args.starter:
        return lesson.starter
    if args.file:
        return Path(args.file)
    return ensure_working_copy(lesson)


def _report(args: argparse.Namespace, lesson: Lesson, report: Report, save: bool) -> int:
    if args.json:
        print(report.to_json())
    else:
        print(report.format(verbose=args.verbose))
    if save:
        try:
            progress.record_report(lesson, report)
        except OSError as error:
            print(f"gradlab check: could not save your progress: {error}", file=sys.stderr)
    return 0 if report.passed else 1


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def _watch(args: argparse.Namespace, lesson: Lesson, path: Path, save: bool,
           poll: float = 0.5) -> int:
    print(f"Watching {path}: the checks run again each time you save it (Ctrl+C stops).")
    seen, code = object(), 1
    try:
        while True:
            stamp = _mtime(path)
            if stamp != seen:
                seen = stamp
                print(f"\n--- {time.strftime('%H:%M:%S')} ---")
                report = run_checks_isolated(lesson, path, seed=args.seed)
                code = _report(args, lesson, report, save)
            time.sleep(poll)
    except KeyboardInterrupt:
        return code


def run_check(args: argparse.Namespace) -> int:
    try:
        lesson = get_lesson(args.number, getattr(args, "root", None))
    except LessonError as error:
        print(f"gradlab check: {error}", file=sys.stderr)
        return 2
    path = _target(args, lesson)
    if not path.is_file():
        print(f"gradlab check: no such file: {path}", file=sys.stderr)
        return 2
    # Only the student's own attempts count as progress, not the solution or a --json child.
    save = not (args.solution or args.starter or args.json)
    if args.watch:
        return _watch(args, lesson, path, save)
    return _report(args, lesson, run_checks(lesson, path, seed=args.seed), save)


def main(argv: list[str] | None = None) -> int:
    """``python -m lessons {list | lesson ... | check ...}``, without the app."""
    parser = argparse.ArgumentParser(prog="python -m lessons")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the lessons, with your progress")
    lesson_arguments(sub.add_parser("lesson", help="a lesson's files"))
    check_arguments(sub.add_parser("check", help="run a lesson's checks"))
    args = parser.parse_args(argv)
    if args.command == "list":
        print(format_list(all_lessons(), progress.load()))
        return 0
    if args.command == "lesson":
        return run_lesson(args)
    return run_check(args)
