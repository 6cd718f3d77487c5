"""The home screen: start the demo, the lessons, or open a script in the debugger."""

from __future__ import annotations

import shlex
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Label, Static

__all__ = ["HomeScreen"]

_INTRO = (
    "Pause a training run at any op, step through backprop node by node, and watch the "
    "graph, the gradients, the memory and the optimizer state change."
)


class HomeScreen(Screen):
    """What ``gradlab`` opens: the demo button has the focus, so Enter starts it."""

    AUTO_FOCUS = "#demo"
    BINDINGS = [
        Binding("d", "demo", "Demo"),
        Binding("l", "lessons", "Lessons"),
        Binding("o", "open", "Open a script"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="home"):
            yield Static("[b]gradlab[/b] · a deep-learning engine you can watch think",
                         id="home-title")
            yield Static(_INTRO, id="home-intro")
            with Center():
                yield Button("Start the demo: an MLP learns two moons", id="demo",
                             variant="primary")
            with Center():
                yield Button("Lessons: from a derivative to a GPU", id="lessons")
            yield Label("Open a script in the debugger (path, then its arguments):",
                        id="open-label")
            with Horizontal(id="open-row"):
                yield Input(placeholder="train.py", id="script-path")
                yield Input(placeholder="--epochs 3", id="script-args")
                yield Button("Open", id="open")
        yield Footer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        actions = {"demo": self.action_demo, "lessons": self.action_lessons,
                   "open": self.open_script}
        action = actions.get(event.button.id or "")
        if action is not None:
            action()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.open_script()

    def action_demo(self) -> None:
        self.app.open_demo()

    def action_lessons(self) -> None:
        self.app.open_lessons()

    def action_open(self) -> None:
        self.query_one("#script-path", Input).focus()

    def open_script(self) -> None:
        path = self.query_one("#script-path", Input).value.strip()
        if not path:
            self.notify("Type the path of a Python script first.", severity="warning")
            self.action_open()
            return
        script = Path(path).expanduser()
        if not script.is_file():
            self.notify(f"No such script: {script}", severity="error")
            return
        try:
            args = shlex.split(self.query_one("#script-args", Input).value)
        except ValueError as error:
            self.notify(f"Can't read the arguments: {error}", severity="error")
            return
        self.app.open_debugger(str(script), args)
