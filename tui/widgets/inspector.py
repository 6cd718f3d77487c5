"""The inspector: everything recorded about one graph node, its value, its gradient, its rule.

It shows the node the user selected in the graph view (or, with none
selected, the node the run is at): what op made it, where (module path),
shapes, dtype and device, statistics of the value and of the gradient that
backward brought back, a small picture of the numbers, and the op's
derivative rule in words. All of it comes precomputed in the snapshot.
"""

from __future__ import annotations

from textual.content import Content

from gradlab.debug.snapshot import NodeSnapshot, Snapshot, TensorSummary

from .charts import (
    TextPanel,
    flow,
    format_number,
    format_shape,
    heatmap,
    histogram,
    wrap_words,
)

__all__ = ["InspectorPanel", "PICTURE_FROM"]

PICTURE_FROM = 4  # elements: smaller tensors get their values, not a heatmap or histogram

_KIND_WORDS = {"op": "op", "parameter": "parameter", "input": "data input",
               "leaf": "leaf tensor (requires grad)"}
_STATE_WORDS = {"created": "recorded before the session attached",
                "forward": "forward done", "backward": "backward done"}
_NO_GRAD = {
    "op": "no gradient yet: backward has not reached this node",
    "parameter": "no gradient yet: backward has not reached this parameter",
    "leaf": "no gradient yet: backward has not reached this tensor",
    "input": "no gradient: a data input needs none",
}


def _heading(text: str) -> Content:
    return Content.styled(text, "bold $primary")


def _muted(text: str) -> Content:
    return Content.styled(text, "$text-muted")


def _note(text: str, width: int, indent: int = 2) -> list[Content]:
    """A muted remark, wrapped to ``width``."""
    return [_muted(" " * indent + line) for line in wrap_words(text, width - indent)]


def _field(label: str, value: str, style: str = "") -> Content:
    return Content.assemble((label, "$text-muted"), " ", (value, style))


def summary_lines(summary: TensorSummary, width: int, picture: bool = True,
                  max_value_lines: int = 8) -> list[Content]:
    """A tensor summary as lines: statistics, NaN/Inf counts, a heatmap or histogram, values.

    Under :data:`PICTURE_FROM` elements there is no picture (a shade or two says nothing the
    numbers do not), and a single element is just its value.
    """
    single = summary.numel == 1 and summary.values is not None
    if single:  # min, max, mean and norm would all repeat it
        stats = [_field("value", summary.values, "bold")]
    else:
        stats = [_field(name, format_number(getattr(summary, name)))
                 for name in ("min", "max", "mean", "std", "norm")]
        if summary.dtype.startswith("complex"):  # the statistics are of the magnitudes
            stats.insert(0, Content.styled("of |z|:", "$text-muted"))
    if summary.finite:
        stats.append(Content.styled("finite", "$success"))
    else:
        for name, count in (("NaN", summary.nan), ("Inf", summary.inf)):
            style = "bold $error" if count else ""
            stats.append(Content.assemble((f"{name} {count}", style)))
    head = f"{format_shape(summary.shape)} {summary.dtype} {summary.device}"
    lines = [Content("  " + head)] + flow(stats, width, indent=2)
    if summary.numel == 0:
        lines.append(_muted("  empty tensor"))
    picture = picture and summary.numel >= PICTURE_FROM
    if picture and summary.heatmap:
        rows = summary.heatmap
        cell = max(1, min(2, (width - 2) // max(1, len(rows[0]))))
        lines += [Content("  ") + line for line in heatmap(rows, cell)]
    elif picture and summary.histogram:
        edges, counts = summary.histogram
        lines += [Content("  " + row) for row in histogram(edges, counts, width - 2)]
    if summary.values and not single:
        value_lines = [part for line in summary.values.splitlines()
                       for part in (wrap_words(line, width - 2) if len(line) > width - 2
                                    else [line])]
        lines += [Content("  " + v) for v in value_lines[:max_value_lines]]
        if len(value_lines) > max_value_lines:
            lines.append(_muted(f"  ... {len(value_lines) - max_value_lines} more lines"))
    return lines


class InspectorPanel(TextPanel):
    """The selected (or current) graph node in detail: ``InspectorPanel(id="inspector")``.

    Call :meth:`show` with each new snapshot and the graph view's selected key;
    the text is rebuilt only when that node's record changed.
    """

    DEFAULT_CSS = """
    InspectorPanel { height: 1fr; }
    """

    def key(self, snapshot: Snapshot, selected: str | None) -> object:
        node, reason = self._pick(snapshot, selected)
        return node, reason, selected is None

    @staticmethod
    def _pick(snapshot: Snapshot, selected: str | None) -> tuple[NodeSnapshot | None, str | None]:
        """The node to show, or why there is none."""
        graph = snapshot.graph
        if graph is None:
            return None, ("no graph yet: start or step the script; the inspector then shows "
                          "the node the run is at, or the one you select")
        key = selected or graph.current
        if key is None:
            return None, "select a node in the graph (arrow keys or the mouse) to inspect it"
        for node in graph.nodes:
            if node.key == key:
                return node, None
        return None, f"{key} is not in the graph of iteration {graph.iteration}"

    def build(self, snapshot: Snapshot, selected: str | None, width: int,
              height: int) -> list[Content]:
        node, reason = self._pick(snapshot, selected)
        if node is None:
            return _note(reason or "", width, indent=0)
        lines = [self._title(node, selected is None)]
        facts = []
        if node.module:
            facts.append(_field("module", node.module))
        if node.input_shapes:
            facts.append(_field("in", " ".join(format_shape(s) for s in node.input_shapes)))
        if node.output_shapes:
            facts.append(_field("out", " ".join(format_shape(s) for s in node.output_shapes)))
        if node.dtype or node.device:
            facts.append(Content(" ".join(x for x in (node.dtype, node.device) if x)))
        facts.append(_muted(_STATE_WORDS.get(node.state, node.state)))
        if node.duration is not None:
            facts.append(_field("time", f"{node.duration * 1e3:.3g} ms"))
        lines += flow(facts, width)

        lines.append(_heading("value"))
        if node.value is None:
            lines += _note("not recorded (this iteration was recorded without values)", width)
        else:
            lines += summary_lines(node.value, width)

        if node.tangent is not None:  # forward mode: the direction this value moves in
            lines.append(_heading("tangent (forward mode)"))
            lines += summary_lines(node.tangent, width)

        lines.append(_heading("gradient"))
        if node.grad is None:
            lines += _note(_NO_GRAD.get(node.kind, _NO_GRAD["op"]), width)
        else:
            lines += summary_lines(node.grad, width)

        if node.grad_inputs:
            lines.append(_heading("gradient sent to each input"))
            for i, summary in enumerate(node.grad_inputs):
                lines += self._grad_input(i, summary, width)

        if node.derivative:
            lines.append(_heading("derivative"))
            lines += [Content("  " + line) for line in wrap_words(node.derivative, width - 2)]
        elif node.kind == "op":
            lines += _note("no derivative rule in words for this op", width, indent=0)
        return lines

    @staticmethod
    def _title(node: NodeSnapshot, following: bool) -> Content:
        parts: list[str | tuple[str, str]] = [(node.label, "bold"), " ",
                                              (_KIND_WORDS.get(node.kind, node.kind), "$accent")]
        if node.key != f"param:{node.label}":  # a parameter's key only repeats its name
            parts += [" ", (node.key, "$text-muted")]
        if node.backward_name:
            parts += [" ", (node.backward_name, "$text-muted")]
        if following:
            parts += [" ", ("(current)", "italic $text-muted")]
        return Content.assemble(*parts)

    @staticmethod
    def _grad_input(i: int, summary: TensorSummary | None, width: int) -> list[Content]:
        if summary is None:
            return [Content.assemble(f"  [{i}] ", ("none (needs no gradient)", "$text-muted"))]
        cells: list[Content | str] = [f"[{i}] {format_shape(summary.shape)}",
                                      _field("norm", format_number(summary.norm)),
                                      _field("min", format_number(summary.min)),
                                      _field("max", format_number(summary.max))]
        if not summary.finite:
            cells.append(Content.styled(f"NaN {summary.nan} Inf {summary.inf}", "bold $error"))
        return flow(cells, width, indent=2)

