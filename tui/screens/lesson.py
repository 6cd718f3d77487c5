"""The lesson screen: the lesson's text and tasks beside the debugger running the student's file.

It is the debugger screen (:class:`DebuggerScreen`) on the student's working
copy, with the lesson pane added on the left: the text (Markdown) and the
tasks (✓/✗ per task, expected vs got, the hints opened so far). The
lesson's ``panels`` choose which debugger panels appear.

    k   run the checks (in a separate Python process: an endless loop or a
        crash in the student's file cannot hang the app)
    h   the next hint of the first task that does not pass yet
    r   run the file again under the debugger
    R   put the starter back (the old file goes to backups/, nothing is lost)
    w   watch mode on/off: on by default, every save reruns the checks and the file
    l   under 110 columns: switch between the lesson and the debugger

Progress (statuses, hints opened) is saved per user by :mod:`lessons.progress`.
"""

from __future__ import annotations

import os
from pathlib import Path

from rich.markup import escape
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Footer, Markdown, MarkdownViewer, Static, TabbedContent, TabPane

from lessons import progress
from lessons.catalog import PANELS, Lesson
from lessons.grading import Report, run_checks_isolated
from lessons.workspace import reset_working_copy

from ..widgets.tasks import TasksPanel, first_open_task
from .confirm import ConfirmScreen
from .debugger import DebuggerScreen
from .help import key_lines

__all__ = ["LessonScreen", "WATCH_INTERVAL", "LESSON_KEYS"]

WATCH_INTERVAL = 1.0  # seconds between looks at the file's modification time

LESSON_KEYS = (
    ("k", "check your file: ✓ or ✗ per task, with what was expected and what came"),
    ("h", "the next hint for the first task that does not pass yet"),
    ("r", "run your file again under the debugger"),
    ("R", "reset: put the starter back (your file goes to backups/)"),
    ("w", "watch mode on/off (on: every save reruns the checks and your file)"),
    ("l", "under 110 columns: switch between the lesson and the debugger"),
)

_DEBUG_PANELS = tuple(p for p in PANELS if p != "graph")  # the tabs under the graph


def _short(path: Path) -> str:
    """``path`` with the home folder written ``~``."""
    try:
        return "~/" + str(path.resolve().relative_to(Path.home().resolve()))
    except ValueError:
        return str(path)


class LessonScreen(DebuggerScreen):
    """Lesson ``lesson`` on the student's file ``path``."""

    BINDINGS = [
        Binding("k", "check", "check"),
        Binding("h", "hint", "hint"),
        Binding("r", "restart", "rerun"),
        Binding("R", "reset", "reset", show=False, key_display="R"),
        Binding("w", "toggle_watch", "watch", show=False),
        Binding("l", "toggle_view", "lesson/debug"),
        # Room in the footer for the lesson's keys: these stay on the help screen and palette.
        Binding("o", "step('update')", "upd", show=False),
        Binding("x", "toggle_breakpoint", "break", show=False),
        Binding("N", "toggle_nonfinite", "NaN", show=False, key_display="N"),
        Binding("g", "save_image", "image", show=False),
        Binding("p", "pause", "pause", show=False),
    ]

    def __init__(self, lesson: Lesson, path: str | os.PathLike, **options) -> None:
        super().__init__(os.fspath(path), title=Path(path).name, **options)
        self.lesson = lesson
        self.path = Path(path)
        self.report: Report | None = None
        self.checking = False
        self.watching = True
        self._seen_mtime = self._mtime()
        saved = progress.load().get(lesson.name, {})
        self.hints_open: dict[str, int] = dict(saved.get("hints", {}))

    @property
    def help_extra(self) -> str:
        return "\n".join([f"[b]Lesson {self.lesson.number}: {escape(self.lesson.title)}[/b]",
                          f"your file: {escape(str(self.path))}", "",
                          *key_lines(LESSON_KEYS), ""])

    # --- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static("starting ...", id="status")
        yield from self.compose_toolbar()
        with Horizontal(id="lesson-main"):
            with Vertical(id="lesson-pane"):
                yield Static(self._title_markup(), id="lesson-title")
                with TabbedContent(id="lesson-tabs"):
                    with TabPane("Lesson", id="tab-text"):
                        yield MarkdownViewer(self.lesson.text(), id="lesson-text",
                                             show_table_of_contents=False, open_links=False)
                    with TabPane("Tasks", id="tab-tasks"):
                        yield TasksPanel(id="tasks")
                with Horizontal(id="lesson-buttons"):
                    yield Button("✓ check k", id="btn-check", compact=True, variant="primary")
                    yield Button("hint h", id="btn-hint", compact=True)
                    yield Button("rerun r", id="btn-restart", compact=True)
                    yield Button("reset R", id="btn-reset", compact=True)
            with Vertical(id="debug-pane"):
                yield from self.compose_body()
        yield Footer(compact=True)

    @property
    def wide(self) -> bool:
        return False  # the debugger has the narrow half of the screen: panels as tabs

    def shows_panel(self, panel: str) -> bool:
        return panel in self.lesson.panels

    def _title_markup(self) -> str:
        done = 0 if self.report is None else self.report.counts["passed"]
        tasks = f"{done}/{len(self.lesson.tasks)} tasks" if self.report else \
            f"{len(self.lesson.tasks)} tasks"
        watch = " · watching for saves" if self.watching else ""
        return (f"[b]Lesson {self.lesson.number} · {escape(self.lesson.title)}[/b]\n"
                f"[dim]{self.lesson.minutes} min · {tasks}{watch} · your file:[/dim] "
                f"{escape(_short(self.path))}")

    def on_mount(self) -> None:
        # (Textual calls DebuggerScreen.on_mount first, by itself: it starts the session.)
        tabs = self.query_one("#tabs", TabbedContent)
        for panel in _DEBUG_PANELS:
            if panel not in self.lesson.panels:
                tabs.hide_tab(f"tab-{panel}")
        first = next((p for p in self.lesson.panels if p != "graph"), None)
        if first is not None:
            tabs.active = f"tab-{first}"
        if "graph" not in self.lesson.panels:
            self.query_one("#graph").display = False
            self.add_class("-no-graph")
        self.query_one("#lesson-text").focus()
        self._show_tasks()
        self.set_interval(WATCH_INTERVAL, self.watch_file)

    def welcome(self) -> None:
        self.notify("Read the lesson, write the TODOs in your file and save: the checks run "
                    "on every save (k runs them now). Your file runs under the debugger: c runs "
                    "it, n b step it. l switches views under 110 columns; ? shows every key.",
                    title=f"Lesson {self.lesson.number}", timeout=10)

    # --- the tasks -------------------------------------------------------------------------
    def _show_tasks(self) -> None:
        self.query_one("#tasks", TasksPanel).show(self.lesson, self.report, self.hints_open,
                                                  checking=self.checking)
        self.query_one("#lesson-title", Static).update(self._title_markup())

    def _show_lesson_tab(self, tab: str) -> None:
        self.query_one("#lesson-tabs", TabbedContent).active = tab
        self.remove_class("-debugger-view")

    def action_check(self) -> None:
        if self.checking:
            self.notify("Checking already ...", timeout=2)
            return
        self.checking = True
        self._show_tasks()
        self._show_lesson_tab("tab-tasks")
        self._check()

    @work(thread=True, exclusive=True, group="lesson-check")
    def _check(self) -> None:
        report = run_checks_isolated(self.lesson, self.path)
        try:
            progress.record_report(self.lesson, report)
            saved = ""
        except OSError as error:
            saved = f"Your progress could not be saved: {error}"
        self.app.call_from_thread(self._checked, report, saved)

    def _checked(self, report: Report, saved_error: str) -> None:
        self.checking = False
        self.report = report
        self._show_tasks()
        counts = report.counts
        if report.passed:
            self.notify(f"Every task of lesson {self.lesson.number} passes. Well done!",
                        title="✓ Lesson complete", timeout=8)
        elif report.load_error:
            self.notify("Your file did not load: see the Tasks tab.", severity="error")
        else:
            self.notify(f"{counts['passed']} of {len(report.results)} tasks pass. "
                        "h opens a hint.", title="Checks", severity="warning")
        if saved_error:
            self.notify(saved_error, severity="error")

    def action_hint(self) -> None:
        task = self.lesson.task(first_open_task(self.lesson, self.report))
        opened = self.hints_open.get(task.name, 0)
        if opened >= len(task.hints):
            self.notify(f"That was the last hint for “{task.title}”. The reference answer is "
                        f"in {self.lesson.solution}.", title="No more hints")
            return
        try:
            self.hints_open[task.name] = progress.reveal_hint(self.lesson, task.name)
        except OSError:  # progress is a comfort: the hint shows all the same
            self.hints_open[task.name] = opened + 1
        self._show_tasks()
        self._show_lesson_tab("tab-tasks")
        n = self.hints_open[task.name]
        self.notify(task.hints[n - 1], title=f"Hint {n} of {len(task.hints)}: {task.title}",
                    timeout=12)

    # --- the file --------------------------------------------------------------------------
    def _mtime(self) -> int | None:
        try:
            return self.path.stat().st_mtime_ns
        except OSError:
            return None

    def watch_file(self) -> None:
        """On a save: check again and run the file again (watch mode)."""
        stamp = self._mtime()
        if stamp == self._seen_mtime:
            return
        self._seen_mtime = stamp
        if not self.watching or stamp is None:
            return
        self.notify(f"{self.path.name} changed: checking it and running it again.", timeout=3)
        self.restart()
        self.action_check()

    def action_toggle_watch(self) -> None:
        self.watching = not self.watching
        self._seen_mtime = self._mtime()
        self._show_tasks()
        self.notify("Watching your file: each save reruns the checks and the file." if
                    self.watching else "Not watching: k checks, r reruns.")

    def action_reset(self) -> None:
        self.app.push_screen(ConfirmScreen(
            f"Put the starter of lesson {self.lesson.number} back? Your file "
            f"{self.path.name} is kept in backups/ first.", "Reset to the starter"),
            self._reset_chosen)

    def _reset_chosen(self, yes: bool | None) -> None:
        if not yes:
            return
        backup = reset_working_copy(self.lesson)
        self._seen_mtime = self._mtime()
        self.report = None
        self._show_tasks()
        self.restart()
        kept = f" Your old file is in {backup}." if backup else ""
        self.notify(f"Back to the starter.{kept}", title="Reset", timeout=10)

    def action_toggle_view(self) -> None:
        if self.wide_enough:
            self.notify("The lesson and the debugger are side by side at this width.")
            return
        self.toggle_class("-debugger-view")

    @property
    def wide_enough(self) -> bool:
        return self.has_class("-wide")

    # --- the debugger's parts, adapted -------------------------------------------------------
    def action_step(self, kind: str) -> None:
        self.add_class("-debugger-view")  # under 110 columns, show what the step does
        super().action_step(kind)

    def action_resume(self) -> None:
        self.add_class("-debugger-view")
        super().action_resume()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        actions = {"btn-check": self.action_check, "btn-hint": self.action_hint,
                   "btn-restart": self.action_restart, "btn-reset": self.action_reset}
        action = actions.get(event.button.id or "")
        if action is not None:  # the debugger's own buttons go on to DebuggerScreen's handler
            event.prevent_default()
            action()

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """Figures and other files of the lesson: say where they are (a terminal can't
        show an image; a file viewer or browser can)."""
        event.stop()
        href = event.href
        if "://" in href:
            self.app.open_url(href)
            return
        target = (self.lesson.folder / href).resolve()
        if target.exists():
            self.notify(f"Open {target} in an image viewer or a browser.", title="Figure",
                        timeout=12)
        else:
            self.notify(f"The lesson points at {href}, which is not there.", severity="warning")

    def _announce(self, snap) -> None:
        # A TODO is the normal state of a starter: say so gently, without the traceback.
        if snap.status == "failed" and snap.error and not self._error_shown and \
                "NotImplementedError" in snap.error:
            self._error_shown = True
            todo = snap.error.strip().splitlines()[-1]
            self.notify(f"Your file stopped at a TODO ({todo}). Write it and save: the "
                        "checks and the run start again.", title="Not written yet",
                        severity="warning", timeout=10)
            return
        super()._announce(snap)
