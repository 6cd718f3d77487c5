"""The quit modal: the script still runs; stop it, let it run on, or stay."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

__all__ = ["QuitScreen", "STOP", "RUN_ON", "CANCEL"]

STOP, RUN_ON, CANCEL = "stop", "run_on", "cancel"


class QuitScreen(ModalScreen[str]):
    """Dismissed with :data:`STOP`, :data:`RUN_ON` or :data:`CANCEL`."""

    AUTO_FOCUS = "#stop"
    BINDINGS = [
        Binding("escape", "choose('cancel')", "Cancel"),
        Binding("s", "choose('stop')", "Stop it", show=False),
        Binding("r", "choose('run_on')", "Let it run", show=False),
    ]

    def __init__(self, script: str = "the script") -> None:
        super().__init__()
        self.script = script

    def compose(self) -> ComposeResult:
        with Vertical(id="quit"):
            yield Static(f"[b]{self.script}[/b] is still running. Quit the debugger and ...",
                         id="quit-question")
            with Horizontal(id="quit-buttons"):
                yield Button("Stop the script", id="stop", variant="error")
                yield Button("Let it run on", id="run_on", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id)

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
