"""The tasks panel of a lesson: each task with ✓/✗, expected vs got, and the hints opened.

The text comes from :func:`tasks_markup`, a pure function of the lesson, the
last check report and the number of hints open per task, so it is tested
without an app. Before the first check the tasks are listed with what to press.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.markup import escape
from textual.containers import VerticalScroll
from textual.widgets import Static

from lessons.catalog import Lesson
from lessons.grading import Report

__all__ = ["TasksPanel", "tasks_markup", "first_open_task"]

_STYLE = {"passed": "$success", "failed": "$error", "todo": "$warning", "error": "$error",
          "skipped": "$secondary"}
_WORDS = {"passed": "passed", "failed": "not yet right", "todo": "TODO",
          "error": "raised an error", "skipped": "skipped"}


def first_open_task(lesson: Lesson, report: Report | None) -> str:
    """The task the student is on: the first one the last check did not pass."""
    statuses = {r.name: r.status for r in report.results} if report else {}
    for task in lesson.tasks:
        if statuses.get(task.name) != "passed":
            return task.name
    return lesson.tasks[-1].name


def tasks_markup(lesson: Lesson, report: Report | None, hints_open: Mapping[str, int],
                 *, checking: bool = False) -> str:
    """Console markup for the panel."""
    lines = []
    if checking:
        lines.append("[i]checking ...[/i]")
    elif report is None:
        lines.append("[i]k checks your file · h opens the next hint[/i]")
    else:
        counts = report.counts
        verdict = "[b $success]every task passes[/]" if report.passed else \
            f"[b]{counts['passed']} of {len(report.results)} pass[/b]"
        lines.append(f"{verdict} [dim]· seed {report.seed}[/dim]")
        if report.load_error:
            lines += ["[b $error]Your file did not load:[/]",
                      f"[$error]{escape(report.load_error)}[/]"]
    results = {r.name: r for r in report.results} if report else {}
    for k, task in enumerate(lesson.tasks, 1):
        result = results.get(task.name)
        lines.append("")
        if result is None:
            lines.append(f"[b]· {k}. {escape(task.title)}[/b]")
        else:
            style = _STYLE[result.status]
            lines.append(f"[b {style}]{result.symbol}[/] [b]{k}. {escape(task.title)}[/b] "
                         f"[{style}]{_WORDS[result.status]}[/]")
            shown, held = result.shown()
            if held:
                lines.append(f"  [dim]{held} check{'s' if held > 1 else ''} held before "
                             "this one[/dim]")
            for c in shown:
                mark = "[$success]✓[/]" if c.ok else "[$error]✗[/]"
                lines.append(f"  {mark} {escape(c.what)}")
                lines.append(f"      expected [b]{escape(c.expected)}[/b]")
                lines.append(f"      got      [b]{escape(c.got)}[/b]")
            if result.message and not result.passed:
                lines.append(f"  [i]{escape(result.message)}[/i]")
        for n, hint in enumerate(task.hints[:hints_open.get(task.name, 0)], 1):
            lines.append(f"  [$accent]hint {n}:[/] {escape(hint)}")
    return "\n".join(lines)


class TasksPanel(VerticalScroll):
    """``show(lesson, report, hints_open)`` redraws the tasks."""

    DEFAULT_CSS = """
    TasksPanel { height: 1fr; padding: 0 1; }
    """

    def compose(self):
        yield Static("", id="tasks-text")

    def show(self, lesson: Lesson, report: Report | None, hints_open: Mapping[str, int],
             *, checking: bool = False) -> None:
        self.query_one("#tasks-text", Static).update(
            tasks_markup(lesson, report, hints_open, checking=checking))
