"""The traceback modal: the user's script raised; the app stays open to look around."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

__all__ = ["TracebackScreen"]


class TracebackScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape", "close", "Close")]
    AUTO_FOCUS = "#close"

    def __init__(self, script: str, error: str) -> None:
        super().__init__()
        self.script = script
        self.error = error

    def compose(self) -> ComposeResult:
        with Vertical(id="traceback"):
            yield Static(f"[b]{self.script} raised an exception[/b] (the graph, memory and "
                         "log show the run up to there; the traceback stays in the Log tab)",
                         id="traceback-title")
            with VerticalScroll(id="traceback-scroll"):
                yield Static(self.error, id="traceback-text", markup=False)
            yield Button("Close", id="close")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
