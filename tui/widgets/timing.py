"""The time panel: where the shown iteration spent its time, op by op.

Each op box of the iteration's graph knows how long its forward took and how
long its backward node took (the ``duration`` of ``OpForward`` and
``BackwardNode``). The panel adds them up by op name, largest first, with a
bar per op. Forward times are the NumPy/CuPy call alone; a backward node's
time includes the ops its formula ran. Python around the ops (dispatch,
graph bookkeeping, the script's own code) is not in these rows:
``gradlab profile SCRIPT`` measures that too.
"""

from __future__ import annotations

from textual.content import Content

from gradlab.debug.snapshot import Snapshot

from .charts import TextPanel, bar, flow, table, wrap_words

__all__ = ["TimePanel", "time_by_op"]


def time_by_op(nodes) -> list[tuple[str, int, float, float]]:
    """(op, calls, forward seconds, backward seconds) per op name, largest total first."""
    rows: dict[str, list] = {}
    for node in nodes:
        if node.kind != "op" or node.duration is None:
            continue
        row = rows.setdefault(node.label, [0, 0.0, 0.0])
        row[0] += 1
        row[1] += node.duration
        row[2] += node.backward_duration or 0.0
    ordered = sorted(rows.items(), key=lambda item: -(item[1][1] + item[1][2]))
    return [(op, calls, fwd, bwd) for op, (calls, fwd, bwd) in ordered]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g}"


class TimePanel(TextPanel):
    """Time per op in the shown iteration (``TimePanel(id="time")``)."""

    DEFAULT_CSS = """
    TimePanel { height: 1fr; }
    """

    def key(self, snapshot: Snapshot, selected: str | None) -> object:
        graph = snapshot.graph
        if graph is None:
            return None
        return graph.iteration, tuple((n.duration, n.backward_duration) for n in graph.nodes)

    def build(self, snapshot: Snapshot, selected: str | None, width: int,
              height: int) -> list[Content]:
        graph = snapshot.graph
        if graph is None:
            return [Content.styled("no graph yet: times appear once ops have run",
                                   "$text-muted")]
        rows = time_by_op(graph.nodes)
        if not rows:
            return [Content.styled(line, "$text-muted") for line in wrap_words(
                "no op times in this view (screenshots leave them out, and an iteration "
                "shows them once its ops have run)", width)]
        forward = sum(r[2] for r in rows)
        backward = sum(r[3] for r in rows)
        lines = flow([Content.styled(f"iteration {graph.iteration}", "bold $primary"),
                      Content.assemble(("forward ", "$text-muted"), f"{_ms(forward)} ms"),
                      Content.assemble(("backward ", "$text-muted"), f"{_ms(backward)} ms")],
                     width)
        top = max(fwd + bwd for _, _, fwd, bwd in rows) or 1.0
        cells = [[op, str(calls), _ms(fwd), _ms(bwd) if bwd else "-"]
                 for op, calls, fwd, bwd in rows]
        shown = table(["op", "calls", "fwd ms", "bwd ms"], cells, width - 1)
        if shown is None:  # too narrow for the columns: names and totals only
            shown = [Content(f"{op}  {_ms(fwd + bwd)} ms") for op, _, fwd, bwd in rows]
        else:
            bar_w = width - 1 - shown[0].cell_length - 2
            if bar_w >= 4:
                shown = [shown[0]] + [
                    line + "  " + Content.styled(bar((fwd + bwd) / top, bar_w), "$accent")
                    for line, (_, _, fwd, bwd) in zip(shown[1:], rows)]
        lines += [Content(" ") + line for line in shown]
        lines.append(Content(""))
        lines += [Content.styled(line, "$text-muted") for line in wrap_words(
            "forward: the NumPy/CuPy call; backward: the node, its ops included. Python "
            "around the ops is not here: `gradlab profile SCRIPT` shows it.", width)]
        return lines
