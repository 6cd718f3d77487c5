"""The debugger screen: a script runs under a debug session; the graph and panels show it.

The screen never waits on the training thread. Ten times a second it reads
``session.version`` (a number) and, only when it changed, takes one
``session.snapshot()`` and hands it to the graph and the visible panels;
while the script runs freely it draws at most twice a second, so the
app's own work leaves the interpreter to training. Each widget repaints only
what changed, without a new layout where its size stays the same. Step
commands go to the session, which applies them on the training thread.

Layout: under 110 columns the graph fills the top and the panels are tabs
below it (Inspector first); wider, the inspector sits beside the graph above
the Memory / Optimizer / Training / Log tabs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from rich.markup import escape
from textual import work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Footer, Static, TabbedContent, TabPane

from ..app import AppResult
from ..widgets.graph_view import GraphView
from ..widgets.inspector import InspectorPanel
from ..widgets.log import LogPanel
from ..widgets.memory import MemoryPanel
from ..widgets.optimizer import OptimizerPanel
from ..widgets.timing import TimePanel
from ..widgets.training import TrainingPanel
from .quit import RUN_ON, STOP, QuitScreen
from .traceback import TracebackScreen

__all__ = ["DebuggerScreen", "STEP_KEYS", "POLL_INTERVAL", "RUNNING_INTERVAL"]

POLL_INTERVAL = 0.1  # seconds: at most ten refreshes a second however fast training runs
RUNNING_INTERVAL = 0.5  # seconds between redraws while the script runs freely

# key, step kind, footer word, toolbar label
STEP_KEYS = (
    ("n", "op", "op", "op"),
    ("b", "backward", "bwd", "bwd"),
    ("o", "update", "upd", "upd"),
    ("i", "iteration", "iter", "iter"),
    ("e", "epoch", "epoch", "epoch"),
)
_STATUS_COLOURS = {"running": "$success", "paused": "$warning", "failed": "$error",
                   "finished": "$primary", "stopped": "$secondary", "idle": "$foreground"}
_ALIVE = ("idle", "running", "paused")


def _default_session():
    """A session that records a full iteration as often as the screen redraws while running.

    Recording more often than the app shows would only slow training down.
    """
    from gradlab.debug import Session

    return Session(detail_interval=RUNNING_INTERVAL)


class DebuggerScreen(Screen):
    """Debug ``script`` (run with ``args``) under a fresh session."""

    BINDINGS = [
        # The footer shows n b o i c p x N g ? q at 80 columns; e, [ and ] are in the help
        # screen, the toolbar (e) and the command palette.
        *(Binding(key, f"step('{kind}')", word, tooltip=f"run to the next {kind}",
                  show=kind != "epoch")
          for key, kind, word, _ in STEP_KEYS),
        Binding("c", "resume", "continue"),
        Binding("p", "pause", "pause"),
        Binding("x", "toggle_breakpoint", "break"),
        Binding("N", "toggle_nonfinite", "NaN", key_display="N"),
        Binding("g", "save_image", "image"),
        Binding("left_square_bracket", "history(-1)", "back", key_display="[", show=False),
        Binding("right_square_bracket", "history(1)", "fwd", key_display="]", show=False),
        Binding("r", "restart", "rerun", show=False, tooltip="run the script again from the top"),
        Binding("q", "quit_debugger", "quit"),
        Binding("t", "app.toggle_theme", "theme", show=False),  # off the 80-column footer
        Binding("escape", "follow", "follow the run", show=False),
    ]

    def __init__(self, script: str, args: Sequence[str] = (), *, title: str | None = None,
                 session_factory: Callable[[], object] | None = None,
                 pause_at_start: bool = True) -> None:
        super().__init__()
        self.script = script
        self.args = tuple(args)
        self.title = title or os.path.basename(script)
        self.session_factory = session_factory or _default_session
        self.pause_at_start = pause_at_start
        self.session = None
        self.snapshot = None  # the last Snapshot drawn
        self.selected: str | None = None  # the node the user picked (None: follow the run)
        self.viewing: int | None = None  # an earlier iteration shown from history (time travel)
        self._version: int | None = None
        self._drawn_at = 0.0  # time.monotonic() of the last redraw
        self._status_rows = 1
        self._status_text = ""
        self._detached = False
        self._error_shown = False
        self._ended_said = False

    # --- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static("starting ...", id="status")
        yield from self.compose_toolbar()
        yield from self.compose_body()
        yield Footer(compact=True)

    def compose_toolbar(self) -> ComposeResult:
        with Horizontal(id="toolbar"):
            yield from self.toolbar_buttons()

    def toolbar_buttons(self) -> ComposeResult:
        yield Button("▶ continue", id="btn-resume", compact=True, tooltip="c")
        yield Button("‖ pause", id="btn-pause", compact=True, tooltip="p")
        for key, kind, _, label in STEP_KEYS:
            yield Button(f"{label} {key}", id=f"btn-{kind}", compact=True,
                         tooltip=f"{key}: run to the next {kind}")

    def compose_body(self) -> ComposeResult:
        """The graph and the panels (the lesson screen puts its text beside them)."""
        static = getattr(self.app, "static", False)  # nothing on screen that varies by run
        with Horizontal(id="main"):
            yield GraphView(id="graph")
            with Vertical(id="side"):
                yield InspectorPanel(id="inspector-wide")
                with TabbedContent(id="tabs"):
                    with TabPane("Inspector", id="tab-inspector"):
                        yield InspectorPanel(id="inspector")
                    with TabPane("Memory", id="tab-memory"):
                        yield MemoryPanel(id="memory", show_times=not static)
                    with TabPane("Optimizer", id="tab-optimizer"):
                        yield OptimizerPanel(id="optimizer")
                    with TabPane("Training", id="tab-training"):
                        yield TrainingPanel(id="training", show_rate=not static)
                    with TabPane("Time", id="tab-time"):
                        yield TimePanel(id="time")
                    with TabPane("Log", id="tab-log"):
                        yield LogPanel(id="log")

    @property
    def wide(self) -> bool:
        return self.has_class("-wide")

    def on_resize(self) -> None:
        self.call_after_refresh(self._sync_layout)

    def _sync_layout(self) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        if self.wide:
            tabs.hide_tab("tab-inspector")
            if tabs.active in ("", "tab-inspector"):
                tabs.active = "tab-memory"
        elif self.shows_panel("inspector"):
            tabs.show_tab("tab-inspector")
        # At 80 columns the step keys need the footer's whole width (ctrl+p is in the help).
        self.query_one(Footer).show_command_palette = self.size.width >= 100
        if self.snapshot is not None:  # the status line may need another row, or one less
            self._status_text = ""
            self._show_status(self.status_text())
        self._draw_panels()

    def shows_panel(self, panel: str) -> bool:
        """Whether ``panel`` is on this screen (the lesson screen shows a lesson's few)."""
        return True

    # --- the session -----------------------------------------------------------------------
    def on_mount(self) -> None:
        self.query_one("#graph").focus()
        self.start_session()
        self.set_interval(POLL_INTERVAL, self.poll)
        self.poll()
        if not getattr(self.app, "static", False):
            self.welcome()

    def welcome(self) -> None:
        """The first words on the screen: what to press."""
        if self.pause_at_start:
            self.notify("Paused before the first op. c runs, n b o i e step (op, backward, "
                        "update, iteration, epoch), ? shows every key.", title=self.title,
                        timeout=8)

    def start_session(self) -> None:
        """Run the script under a fresh session (one session runs one script)."""
        self.session = self.session_factory()
        self.session.attach()
        self._detached = False
        try:
            self.session.run_script(self.script, self.args, pause_at_start=self.pause_at_start)
        except (OSError, ValueError) as error:
            self._error_shown = True
            self.app.push_screen(TracebackScreen(self.title, f"{type(error).__name__}: {error}"))

    def restart(self) -> None:
        """Stop the run and start the script again from the top (after an edit)."""
        if self.session is not None and not self._detached:
            self._detached = True
            self.session.detach("stop")
        self.snapshot, self.selected, self.viewing, self._version = None, None, None, None
        self._error_shown = self._ended_said = False
        self.query_one("#graph", GraphView).select(None)
        self.start_session()
        self.poll()

    def on_unmount(self) -> None:
        if self.session is not None and not self._detached:
            self._detached = True
            self.session.detach("stop")

    def poll(self) -> None:
        """Redraw when the session changed since the last look (a cheap number compare)."""
        version = self.session.version
        if version == self._version:
            return
        now = time.monotonic()
        if self.session.status == "running" and now - self._drawn_at < RUNNING_INTERVAL:
            return  # running freely: a few pictures a second are plenty
        self._drawn_at = now
        self._version = version
        self.snapshot = self.session.snapshot()
        self.redraw()

    @property
    def status(self) -> str:
        return self.snapshot.status if self.snapshot is not None else "idle"

    def _shown_graph(self):
        snap = self.snapshot
        if self.viewing is not None:
            for graph in snap.history:
                if graph.iteration == self.viewing:
                    return graph
            self.viewing = None  # it left the recorded history: back to live
        return snap.graph

    def _view_snapshot(self):
        """The snapshot the panels get: the graph shown, no timings in static mode."""
        snap = replace(self.snapshot, graph=self._shown_graph())
        if getattr(self.app, "static", False):  # nothing that changes from run to run
            graph = snap.graph
            if graph is not None:
                graph = replace(graph, nodes=tuple(replace(n, duration=None,
                                                           backward_duration=None)
                                                   for n in graph.nodes))
            snap = replace(snap, steps_per_second=None, graph=graph)
        return snap

    def redraw(self) -> None:
        if self.snapshot is None:
            return
        snap = self.snapshot
        graph = self._shown_graph()
        self.query_one("#graph", GraphView).show(graph)  # it keeps the current node in view
        self._show_status(self.status_text())
        self._draw_panels()
        self._announce(snap)

    def _draw_panels(self) -> None:
        if self.snapshot is None:
            return
        view = self._view_snapshot()
        selected = self.selected
        if selected is None and view.graph is not None:
            selected = view.graph.current
        inspector = "#inspector-wide" if self.wide else "#inspector"
        self.query_one(inspector, InspectorPanel).show(view, selected)
        active = self.query_one("#tabs", TabbedContent).active
        panel = active.removeprefix("tab-")
        if panel and panel != "inspector":
            self.query_one(f"#{panel}").show(view, selected)

    def _announce(self, snap) -> None:
        if snap.status == "failed" and snap.error and not self._error_shown:
            self._error_shown = True
            self.app.push_screen(TracebackScreen(self.title, snap.error))
        elif snap.status in ("finished", "stopped") and not self._ended_said:
            self._ended_said = True
            self.notify(f"{self.title} has {snap.status}. Look around, or q to quit.",
                        title="Script ended")

    def _show_status(self, text: str) -> None:
        """The status line, one row (two when it is too long): a new layout only when the
        row count changes."""
        status = self.query_one("#status", Static)
        if text == self._status_text:
            return
        self._status_text = text
        fits = Content.from_markup(text).cell_length <= max(1, status.size.width - 2)
        rows = 1 if fits or not status.size.width else 2
        if rows != self._status_rows:
            self._status_rows = rows
            status.styles.height = rows
        status.update(text, layout=False)

    def status_text(self) -> str:
        snap = self.snapshot
        colour = _STATUS_COLOURS.get(snap.status, "$foreground")
        parts = [f"[b {colour}]{snap.status}[/]"]
        reason = snap.pause_reason if snap.status == "paused" else None
        if reason:  # why first: it matters most
            parts = [f"[b {colour}]{escape(reason)}[/]"] if reason.startswith("paused") \
                else [f"[b {colour}]paused:[/] [i]{escape(reason)}[/]"]
        parts += [f"iteration {snap.iteration}", f"epoch {snap.epoch}"]
        if self.viewing is not None:
            parts.append(f"[b $accent]viewing iteration {self.viewing}[/] (] returns)")
        if snap.position is not None:
            parts.append(escape(snap.position.description))
        if snap.status == "running" and self.session is not None and \
                self.session.waits_for_next_iteration:
            parts.append("[b]pausing where the next iteration begins[/] (p again: now)")
        graph = self._shown_graph()
        if graph is not None and graph.partial:
            parts.append("[i]partial graph: some ops ran before recording began[/]")
        if snap.steps_per_second and snap.status == "running" \
                and not getattr(self.app, "static", False):
            parts.append(f"{snap.steps_per_second:.1f} it/s")
        if snap.breakpoints:
            parts.append(f"{len(snap.breakpoints)} breakpoint"
                         f"{'s' if len(snap.breakpoints) != 1 else ''}")
        return " · ".join(parts)

    # --- events from widgets ---------------------------------------------------------------
    def on_graph_view_node_selected(self, message) -> None:
        self.selected = message.key
        self._draw_panels()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._draw_panels()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        name = (event.button.id or "").removeprefix("btn-")
        if name == "resume":
            self.action_resume()
        elif name == "pause":
            self.action_pause()
        elif name:
            self.action_step(name)

    # --- actions ---------------------------------------------------------------------------
    def _can_control(self) -> bool:
        if self.session is not None and self.session.status in _ALIVE:
            return True
        self.notify(f"The script has {self.status}: nothing left to step.", severity="warning")
        return False

    def action_step(self, kind: str) -> None:
        if self._can_control():
            self.viewing = None
            self.session.step(kind)

    def action_resume(self) -> None:
        if self._can_control():
            self.viewing = None
            self.session.resume()

    def action_restart(self) -> None:
        self.notify(f"Running {self.title} again from the top.", timeout=3)
        self.restart()

    def action_pause(self) -> None:
        if self._can_control():
            self.session.pause()

    def _selected_node(self):
        graph = self._shown_graph() if self.snapshot is not None else None
        key = self.selected or (graph.current if graph is not None else None)
        if graph is None or key is None:
            return None
        try:
            return graph.node(key)
        except KeyError:
            return None

    def action_toggle_breakpoint(self) -> None:
        node = self._selected_node()
        if node is None or node.kind != "op":
            self.notify("Select an op in the graph first: x breaks whenever that op runs.",
                        severity="warning")
            return
        now = self.session.toggle_op_breakpoint(node.label)
        self.notify(f"{'Breakpoint on' if now else 'No more breakpoint on'} op "
                    f"{node.label}" + (" (c runs to it)" if now else ""))

    def action_toggle_nonfinite(self) -> None:
        on = not self.session.break_on_nonfinite
        self.session.break_on_nonfinite = on
        self.notify("Pausing when a NaN or Inf appears in any value or gradient." if on else
                    "No more pausing on NaN/Inf.")

    def action_history(self, delta: int) -> None:
        if self.snapshot is None:
            return
        recorded = [g.iteration for g in self.snapshot.history]
        if self.viewing is None:
            if delta > 0 or not recorded:
                self.notify("This is the live iteration." if recorded or delta > 0 else
                            "No earlier iteration recorded yet.")
                return
            self.viewing = recorded[-1]
        elif delta < 0:
            older = [i for i in recorded if i < self.viewing]
            if not older:
                self.notify(f"Iteration {self.viewing} is the oldest one recorded.")
                return
            self.viewing = older[-1]
        else:
            newer = [i for i in recorded if i > self.viewing]
            self.viewing = newer[0] if newer else None
        self.action_follow()

    def action_follow(self) -> None:
        """Drop the selection: the inspector follows the node the run is at."""
        self.selected = None
        self.query_one("#graph", GraphView).select(None)
        self.redraw()

    def action_save_image(self) -> None:
        graph = self._shown_graph() if self.snapshot is not None else None
        if graph is None or not graph.nodes:
            self.notify("No graph recorded yet: step into the run first (n).",
                        severity="warning")
            return
        self.notify("Drawing the graph with Graphviz ...", timeout=2)
        self._save_image(graph)

    @work(thread=True, exclusive=True, group="save-image")
    def _save_image(self, graph) -> None:
        from gradlab.viz import GraphvizNotFound

        from .graph_image import save_graph_image

        try:
            path = save_graph_image(graph)
        except (GraphvizNotFound, OSError) as error:
            self.app.call_from_thread(self.notify, str(error), title="No image",
                                      severity="error")
            return
        self.app.call_from_thread(self.notify, f"Saved the graph of iteration "
                                  f"{graph.iteration} to {os.path.abspath(path)}",
                                  title="Graph image")

    def action_quit_debugger(self) -> None:
        if self.session is None or self.session.status not in _ALIVE:
            self.app.exit(AppResult())
            return
        self.app.push_screen(QuitScreen(self.title), self._quit_chosen)

    def _quit_chosen(self, choice: str | None) -> None:
        if choice == STOP:
            self._detached = True
            self.session.detach("stop")
            self.app.exit(AppResult())
        elif choice == RUN_ON:
            # Held at its next event until the caller has shown what it printed so far,
            # then released with session.detach("continue") (see AppResult).
            self._detached = True
            self.session.pause()
            self.session.pause()  # asked twice: hold at the very next event, not the next iteration
            self.app.exit(AppResult(run_on=self.session))

    def palette_commands(self) -> Iterator[SystemCommand]:
        """The debugger's commands, by name, for the command palette (ctrl+p)."""
        for key, kind, _, _ in STEP_KEYS:
            yield SystemCommand(f"Step: next {kind} ({key})", f"run to the next {kind}, then "
                                "pause", lambda kind=kind: self.action_step(kind))
        yield SystemCommand("Continue (c)", "run until a breakpoint", self.action_resume)
        yield SystemCommand("Pause (p)", "pause at the next op, backward node or update",
                            self.action_pause)
        yield SystemCommand("Run again (r)", "stop the script and start it again from the top",
                            self.action_restart)
        yield SystemCommand("Break on the selected op (x)", "pause whenever that op runs",
                            self.action_toggle_breakpoint)
        yield SystemCommand("Break on NaN/Inf (N)", "pause when a value or gradient is not "
                            "finite", self.action_toggle_nonfinite)
        yield SystemCommand("Save the graph as an image (g)", "gradlab-graph-<iteration>.svg",
                            self.action_save_image)
        yield SystemCommand("Earlier iteration ([)", "time travel over recorded history",
                            lambda: self.action_history(-1))
        yield SystemCommand("Later iteration (])", "back towards the live iteration",
                            lambda: self.action_history(1))
