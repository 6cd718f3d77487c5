"""GradlabApp: the terminal app (home screen, debugger, help), dark or light.

The app only presents: a :class:`gradlab.debug.Session` records and steps the
run on the training thread, the screens poll ``session.version`` and draw the
:class:`~gradlab.debug.Snapshot` it hands out. ``gradlab`` opens the home
screen, ``gradlab run SCRIPT`` the debugger on that script directly.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

__all__ = ["GradlabApp", "AppResult", "CSS_FILE", "DEMO_ARGS", "demo_script"]

CSS_FILE = Path(__file__).resolve().parents[1] / "assets" / "tui" / "gradlab.tcss"
"""The app's styles. Like the shipped datasets, assets/ is found through the source
tree, which an editable install (``pip install -e .``, what .ci/setup does) keeps."""

DEMO_ARGS = ("--epochs", "5", "--quiet")
"""The demo: gradlab.examples.moons_mlp for a few epochs (75 steps), long enough to see
the loss fall and short enough to run to the end."""

STATIC_ENV = "GRADLAB_TUI_STATIC"
"""Set to 1 to leave timings (steps per second, clocks) off the screen: for snapshot tests."""


def demo_script() -> str:
    """The path of the demo script (the two-moons MLP example)."""
    from gradlab.examples import moons_mlp

    return moons_mlp.__file__


@dataclass
class AppResult:
    """What the app leaves to the command line when it exits.

    ``run_on``: the session of a script the user let run on after quitting. It is
    left paused at its next event, so that its output can be shown in order: the
    caller shows ``run_on.run.output``, then calls ``run_on.detach("continue")``
    and waits for the script (``gradlab run`` prints the rest of its output).
    """

    run_on: object | None = None


class GradlabApp(App[AppResult]):
    """The gradlab terminal app: ``GradlabApp()`` opens the home screen,
    ``GradlabApp(script="train.py", script_args=[...])`` the debugger on a script,
    ``GradlabApp(lesson=3)`` lesson 3 beside the debugger on the student's file."""

    TITLE = "gradlab"
    SUB_TITLE = "a deep-learning engine you can watch think"
    CSS_PATH = CSS_FILE
    # Below 110 columns the side panels go under the graph, as tabs.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("t", "toggle_theme", "Theme"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, *, script: str | os.PathLike | None = None,
                 script_args: Sequence[str] = (), static: bool | None = None,
                 session_factory: Callable[[], object] | None = None,
                 pause_at_start: bool = True, lesson: int | str | None = None) -> None:
        if not CSS_FILE.is_file():
            raise FileNotFoundError(
                f"gradlab's app styles are missing: {CSS_FILE}. They ship in assets/tui/ and "
                "are found through the source tree, so install gradlab in editable mode "
                "(bash .ci/setup) or restore the file (git checkout -- assets/tui).")
        super().__init__()
        self.script = None if script is None else os.fspath(script)
        self.script_args = tuple(script_args)
        self.static = bool(os.environ.get(STATIC_ENV)) if static is None else static
        self.session_factory = session_factory
        self.pause_at_start = pause_at_start
        self.lesson = lesson
        self.theme = "textual-dark"

    # --- screens ---------------------------------------------------------------------------
    def get_default_screen(self) -> Screen:
        from .screens.home import HomeScreen

        return HomeScreen()

    def on_mount(self) -> None:
        if self.script is not None:
            self.open_debugger(self.script, self.script_args)
        elif self.lesson is not None:
            self.open_lesson(self.lesson)

    def open_debugger(self, script: str, args: Sequence[str] = (), *,
                      title: str | None = None) -> None:
        """Start ``script`` under a new debug session and show it."""
        from .screens.debugger import DebuggerScreen

        self.push_screen(DebuggerScreen(script, args, title=title,
                                        session_factory=self.session_factory,
                                        pause_at_start=self.pause_at_start))

    def open_demo(self) -> None:
        self.open_debugger(demo_script(), DEMO_ARGS, title="demo: two moons MLP")

    def open_lessons(self) -> None:
        """The list of lessons with the student's progress."""
        from .screens.lessons import LessonListScreen

        self.push_screen(LessonListScreen())

    def open_lesson(self, number: int | str) -> None:
        """Lesson ``number`` beside the debugger on the student's working copy."""
        from lessons.catalog import LessonError, get_lesson
        from lessons.workspace import ensure_working_copy

        from .screens.lesson import LessonScreen

        try:
            lesson = get_lesson(number)
            path = ensure_working_copy(lesson)
        except (LessonError, OSError) as error:
            self.notify(str(error), title="Lesson", severity="error")
            return
        self.push_screen(LessonScreen(lesson, path, session_factory=self.session_factory,
                                      pause_at_start=self.pause_at_start))

    # --- actions ---------------------------------------------------------------------------
    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(getattr(self.screen, "help_extra", "")))

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    async def action_quit(self) -> None:
        """Quit; from a debugger with a live script, ask first (stop it or let it run on)."""
        from .screens.debugger import DebuggerScreen

        for screen in reversed(self.screen_stack):
            if isinstance(screen, DebuggerScreen):
                screen.action_quit_debugger()
                return
        self.exit(AppResult())

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Toggle dark/light", "Switch between the dark and the light theme",
                            self.action_toggle_theme)
        yield SystemCommand("Help", "The keys of the debugger and what it shows",
                            self.action_help)
        commands = getattr(screen, "palette_commands", None)
        if commands is not None:
            yield from commands()
