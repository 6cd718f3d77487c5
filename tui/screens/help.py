"""The help screen: what the debugger shows and every key."""

from __future__ import annotations

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["HelpScreen", "HELP_TEXT", "key_lines"]

_KEYS = (
    ("n", "step to the next op (forward, or an op outside autograd)"),
    ("b", "step to the next backward node"),
    ("o", "step to the next optimizer update (one parameter)"),
    ("i", "step to the start of the next iteration"),
    ("e", "step to the next epoch"),
    ("c / p", "continue (until a breakpoint) / pause"),
    ("x", "break whenever the selected node's op runs (again: remove it)"),
    ("N", "break when a NaN or Inf appears in a value or gradient"),
    ("[ / ]", "back / forward through the recorded iterations (time travel)"),
    ("r", "run the script again from the top (after you edited it)"),
    ("g", "save the graph as an image: gradlab-graph-<iteration>.svg"),
    ("arrows", "select a node (or click it); the inspector shows it"),
    ("escape", "drop the selection: the inspector follows the run"),
    ("f / m", "focus on a node's neighbourhood / collapse its module"),
    ("home", "scroll to the node the run is at"),
    ("t", "dark / light theme"),
    ("ctrl+p", "the command palette: every command by name"),
    ("q", "quit: stop the script, or let it run on without the debugger"),
)

def key_lines(keys) -> list[str]:
    """One help line per (key, what it does)."""
    return [f"  [b $accent]{escape(key):<7}[/] {escape(what)}" for key, what in keys]


HELP_TEXT = "\n".join([
    "[b]gradlab debugger[/b]",
    "",
    "Your script runs on a training thread; the debugger pauses it inside the engine's "
    "events and draws the graph of the current iteration: blue once an op's forward ran, "
    "green once its backward ran, the current node highlighted.",
    "",
    *key_lines(_KEYS),
    "",
    "[dim]escape or ? closes this help[/dim]",
])


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(self, extra: str = "") -> None:
        super().__init__()
        self.extra = extra  # a screen's own keys (the lesson screen's), shown first

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            if self.extra:
                yield Static(self.extra, id="help-extra")
            yield Static(HELP_TEXT, id="help-text")

    def action_close(self) -> None:
        self.dismiss(None)
