"""The log panel: the session's event stream, filterable, then the script's output and error.

Events arrive as numbered :class:`~gradlab.debug.snapshot.LogLine` records;
the panel remembers the last number it wrote and appends only newer lines,
so a long run stays cheap to show. The filter takes kind words (``op
backward update phase metric output break error`` and the rest of
:data:`KINDS`) and any other words, which must all appear in a line's text.
The script's output follows (complete lines appended as they come, the
unfinished last line shown apart, as a terminal would), and a traceback in
the error colour if the script failed.
"""

from __future__ import annotations

from collections import deque

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Input, RichLog, Static

from gradlab.debug.snapshot import LogLine, Snapshot
from gradlab.viz.theme import SERIES_COLORS

__all__ = ["LogPanel", "KINDS", "parse_filter"]

KINDS = ("op", "backward", "grad", "update", "memory", "phase", "metric", "output", "break",
         "error")
_ALIASES = {"bwd": "backward", "fwd": "op", "forward": "op", "step": "update", "out": "output",
            "err": "error", "ops": "op", "metrics": "metric", "phases": "phase",
            "updates": "update", "grads": "grad", "breaks": "break", "errors": "error"}
# Mid-tone colours (gradlab.viz.theme's series) for the kind tags; "break" and "error" take the
# theme's warning and error colours when the lines are written.
_KIND_COLORS = {"op": SERIES_COLORS[0], "backward": SERIES_COLORS[1], "grad": SERIES_COLORS[1],
                "update": SERIES_COLORS[3], "memory": SERIES_COLORS[2], "phase": SERIES_COLORS[4],
                "metric": SERIES_COLORS[2], "output": ""}
_THEME_KINDS = {"break": "warning", "error": "error"}


def parse_filter(text: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """Split a filter into the kinds it names and the other (lower-cased) words."""
    kinds, words = set(), []
    for word in text.lower().replace(",", " ").split():
        kind = _ALIASES.get(word, word)
        if kind in KINDS:
            kinds.add(kind)
        else:
            words.append(word)
    return frozenset(kinds), tuple(words)


class LogPanel(Vertical):
    """Events, output and error of a run: ``LogPanel(max_lines=1000, id="log")``.

    ``max_lines``: how many event lines (and output lines) the panel keeps.
    """

    DEFAULT_CSS = """
    LogPanel { height: 1fr; }
    LogPanel > #log-filter { height: 1; border: none; padding: 0 1; }
    LogPanel > #log-events { height: 2fr; scrollbar-size-vertical: 1; }
    LogPanel > #log-output-title, LogPanel > #log-error-title {
        height: 1; color: $text-muted; text-style: bold;
    }
    LogPanel > #log-output { height: 1fr; scrollbar-size-vertical: 1; }
    LogPanel > #log-partial { height: auto; max-height: 2; }
    LogPanel > #log-error { height: auto; max-height: 50%; scrollbar-size-vertical: 1; }
    LogPanel #log-error-text { color: $error; }
    LogPanel > .-empty { display: none; }
    """

    def __init__(self, *, max_lines: int = 1000, name: str | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.max_lines = max_lines
        self.lines: deque[LogLine] = deque(maxlen=max_lines)  # every event line seen
        self.last_seq = -1
        self.kinds: frozenset[str] = frozenset()
        self.words: tuple[str, ...] = ()
        self._output = ""  # output already handled (its complete lines are written)
        self._output_seen = ""  # the whole output of the last snapshot
        self._error: str | None = None
        self._colors: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter: op, backward, update, phase, metric, output, "
                                "break, error or any words", id="log-filter")
        yield RichLog(max_lines=self.max_lines, wrap=False, markup=False, id="log-events")
        yield Static("output", id="log-output-title", classes="-empty")
        yield RichLog(max_lines=self.max_lines, wrap=True, markup=False, id="log-output",
                      classes="-empty")
        yield Static("", id="log-partial", classes="-empty", markup=False)
        yield Static("error", id="log-error-title", classes="-empty")
        with VerticalScroll(id="log-error", classes="-empty"):
            yield Static("", id="log-error-text", markup=False)

    # -------------------------------------------------------------- updates

    def show(self, snapshot: Snapshot, selected: str | None = None) -> None:
        """Append what is new in ``snapshot``: event lines, output, error."""
        self._show_events(snapshot.log)
        if snapshot.output != self._output_seen:
            self._output_seen = snapshot.output
            self._show_output(snapshot.output)
        if snapshot.error != self._error:
            self._error = snapshot.error
            self.query_one("#log-error-text", Static).update(snapshot.error or "")
            for part in ("#log-error", "#log-error-title"):
                self.query_one(part).set_class(not snapshot.error, "-empty")

    def _show_events(self, log: tuple[LogLine, ...]) -> None:
        if not log:
            return
        if log[-1].seq < self.last_seq:  # a new session: start over
            self.lines.clear()
            self.last_seq = -1
            self.query_one("#log-events", RichLog).clear()
        new = []
        for line in reversed(log):  # newest first, stop at what was shown
            if line.seq <= self.last_seq:
                break
            new.append(line)
        if not new:
            return
        new.reverse()
        self.lines.extend(new)
        self.last_seq = new[-1].seq
        self._write(new)

    def _write(self, lines: list[LogLine]) -> None:
        events = self.query_one("#log-events", RichLog)
        for line in lines:
            if self.matches(line):
                events.write(self._format(line))

    def _show_output(self, output: str) -> None:
        log = self.query_one("#log-output", RichLog)
        if output.startswith(self._output):
            fresh = output[len(self._output):]
        else:  # the bounded output dropped its beginning: write what is kept again
            log.clear()
            fresh = output
        done = fresh.rfind("\n") + 1
        for line in fresh[:done].splitlines():
            log.write(Text(line.rsplit("\r", 1)[-1]))
        # What follows the last newline is written only once complete: show it apart.
        self._output = output[:len(output) - len(fresh) + done]
        partial = output[len(self._output):].rsplit("\r", 1)[-1]
        self.query_one("#log-partial", Static).update(partial)
        self.query_one("#log-partial").set_class(not partial, "-empty")
        for part in ("#log-output", "#log-output-title"):
            self.query_one(part).set_class(not output, "-empty")

    # -------------------------------------------------------------- filtering

    def matches(self, line: LogLine) -> bool:
        """Whether ``line`` passes the filter (its kind, and every word in its text)."""
        if self.kinds and line.kind not in self.kinds:
            return False
        text = line.text.lower()
        return all(word in text for word in self.words)

    def set_filter(self, text: str) -> None:
        """Filter the event lines (as if typed in the filter box) and write them again."""
        kinds, words = parse_filter(text)
        if (kinds, words) == (self.kinds, self.words):
            return
        self.kinds, self.words = kinds, words
        self.query_one("#log-events", RichLog).clear()
        self._write(list(self.lines))

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "log-filter":
            event.stop()
            self.set_filter(event.value)

    def _format(self, line: LogLine) -> Text:
        color = self._color(line.kind)
        text = Text(f"{line.kind[:5]:<5} ", style=f"bold {color}".strip())
        text.append(line.text, style=color if line.kind in _THEME_KINDS else "")
        return text

    def _color(self, kind: str) -> str:
        if kind in _THEME_KINDS:
            theme = self.app.theme
            if theme not in self._colors:
                variables = self.app.get_css_variables()
                self._colors[theme] = variables.get("error", "red")
                self._colors[theme + ":warning"] = variables.get("warning", "yellow")
            return self._colors[theme if kind == "error" else theme + ":warning"]
        return _KIND_COLORS.get(kind, "")
