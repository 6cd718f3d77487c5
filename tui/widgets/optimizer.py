"""The optimizer panel: each optimizer's groups and hyperparameters, and every parameter's state.

Per parameter: its learning rate, the norm of the gradient it stepped on,
the norm of the update it took, the update-to-parameter ratio (when the
graph recorded the parameter's norm: a healthy ratio is often around 1e-3),
and the norms of its state tensors (``exp_avg``, ``momentum_buffer``...) and
state scalars (``step``). Wide panels get one table; narrow ones a card per
parameter.
"""

from __future__ import annotations

from textual.content import Content

from gradlab.debug.snapshot import OptimizerSnapshot, ParamStateSnapshot, Snapshot

from .charts import TextPanel, flow, format_number, format_shape, format_value, table

__all__ = ["OptimizerPanel"]


def _param_norms(snapshot: Snapshot) -> dict[str, float]:
    """Parameter norms by name, from the graph's parameter nodes (when it recorded values)."""
    graph = snapshot.graph
    if graph is None:
        return {}
    return {node.key[len("param:"):]: node.value.norm for node in graph.nodes
            if node.kind == "parameter" and node.value is not None
            and node.value.norm is not None}


def _ratio(param: ParamStateSnapshot, norms: dict[str, float]) -> float | None:
    norm = norms.get(param.name)
    if param.update_norm is None or not norm:
        return None
    return param.update_norm / norm


class OptimizerPanel(TextPanel):
    """Optimizers, their groups and per-parameter state: ``OptimizerPanel(id="optimizer")``.

    :meth:`show` rebuilds the text only when the optimizers' figures (or the
    parameter norms the ratio column uses) changed.
    """

    DEFAULT_CSS = """
    OptimizerPanel { height: 1fr; }
    """

    def key(self, snapshot: Snapshot, selected: str | None) -> object:
        if not snapshot.optimizers:
            return ()
        return snapshot.optimizers, _param_norms(snapshot)

    def build(self, snapshot: Snapshot, selected: str | None, width: int,
              height: int) -> list[Content]:
        if not snapshot.optimizers:
            return [Content.styled("no optimizer step yet: the figures appear after the "
                                   "first optimizer.step()", "$text-muted")]
        norms = _param_norms(snapshot)
        lines: list[Content] = []
        for optimizer in snapshot.optimizers:
            if lines:
                lines.append(Content(""))
            lines += self._optimizer(optimizer, norms, width)
        return lines

    def _optimizer(self, optimizer: OptimizerSnapshot, norms: dict[str, float],
                   width: int) -> list[Content]:
        groups = len(optimizer.groups)
        lines = flow([Content.styled(optimizer.name, "bold $primary"),
                      f"{optimizer.steps} steps",
                      f"{groups} group" + ("" if groups == 1 else "s")], width)
        for i, group in enumerate(optimizer.groups):
            cells: list[Content | str] = [Content.styled(f"group {i}", "$text-muted")]
            # Switches left off (False / None: amsgrad, foreach, fused...) would only add noise.
            cells += [f"{name} {format_value(value)}" for name, value in group.items()
                      if name != "params" and value is not None and value is not False]
            lines += flow(cells, width, indent=1)
        if not optimizer.params:
            return lines + [Content.styled(" no parameter state yet", "$text-muted")]
        lines += self._table(optimizer.params, norms, width) or self._cards(
            optimizer.params, norms, width)
        return lines

    @staticmethod
    def _state_names(params: tuple[ParamStateSnapshot, ...]) -> tuple[list[str], list[str]]:
        norms: dict[str, None] = {}
        scalars: dict[str, None] = {}
        for p in params:
            norms.update(dict.fromkeys(p.state_norms))
            scalars.update(dict.fromkeys(p.state_scalars))
        return list(norms), list(scalars)

    def _table(self, params: tuple[ParamStateSnapshot, ...], norms: dict[str, float],
               width: int) -> list[Content] | None:
        """One row per parameter, or None when the columns do not fit ``width``."""
        state_norms, state_scalars = self._state_names(params)
        show_ratio = any(_ratio(p, norms) is not None for p in params)
        header = ["param", "shape", "lr", "|grad|", "|upd|"]
        header += ["upd/param"] if show_ratio else []
        header += [f"|{s}|" for s in state_norms] + state_scalars
        rows = []
        for p in params:
            row = [p.name, format_shape(p.shape), format_number(p.lr, 3),
                   format_number(p.grad_norm, 3), format_number(p.update_norm, 3)]
            row += [format_number(_ratio(p, norms), 2)] if show_ratio else []
            row += [format_number(p.state_norms.get(s), 3) for s in state_norms]
            row += [format_number(p.state_scalars.get(s), 4) for s in state_scalars]
            rows.append(row)
        lines = table(header, rows, width, numeric_from=2)
        return None if lines is None else [Content("")] + lines

    @staticmethod
    def _cards(params: tuple[ParamStateSnapshot, ...], norms: dict[str, float],
               width: int) -> list[Content]:
        """A few lines per parameter, for narrow panels."""
        lines: list[Content] = []
        for p in params:
            lines += flow([Content.styled(p.name, "bold"), format_shape(p.shape),
                           f"lr {format_number(p.lr, 3)}"], width)
            cells = [f"|grad| {format_number(p.grad_norm, 3)}",
                     f"|upd| {format_number(p.update_norm, 3)}"]
            ratio = _ratio(p, norms)
            if ratio is not None:
                cells.append(f"upd/param {format_number(ratio, 2)}")
            cells += [f"|{name}| {format_number(v, 3)}" for name, v in p.state_norms.items()]
            cells += [f"{name} {format_number(v, 4)}" for name, v in p.state_scalars.items()]
            lines += flow(cells, width, indent=2)
        return lines
