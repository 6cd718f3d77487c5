"""Lesson 19's pictures: the graph of the lesson's example f(x1, x2) = x1·x2 + sin(x1),
and what a full Jacobian of f: Rⁿ → Rᵐ costs in each mode: the passes each one makes,
counted as n grows, and a map of which mode needs fewer, with a few well-known jobs on it."""

from pathlib import Path

import numpy as np

import gradlab
from gradlab import events, viz
from gradlab.autograd import forward_ad

M = 16  # outputs of the maps whose passes are counted
NS = list(range(2, 41, 2))  # their numbers of inputs


def _network(n: int, rng):
    """A two-layer map f: Rⁿ → R^M, tanh(W2 tanh(W1 x)), with 32 hidden units."""
    w1 = gradlab.tensor(rng.normal(size=(32, n)) / np.sqrt(n), dtype=gradlab.float64)
    w2 = gradlab.tensor(rng.normal(size=(M, 32)) / np.sqrt(32), dtype=gradlab.float64)

    def f(x):
        return (w2 @ (w1 @ x).tanh()).tanh()
    return f


class _Counted:
    """``f``, counting its calls: all of them, and those on a dual tensor."""

    def __init__(self, f) -> None:
        self.f, self.calls, self.dual_calls = f, 0, 0

    def __call__(self, x):
        self.calls += 1
        self.dual_calls += forward_ad.unpack_dual(x).tangent is not None
        return self.f(x)


def _forward_jacobian(f, x):
    """n forward passes, one per input direction e_j: column j is J·e_j."""
    columns = []
    for e in gradlab.eye(x.numel(), dtype=x.dtype):
        with forward_ad.dual_level():
            columns.append(forward_ad.unpack_dual(f(forward_ad.make_dual(x, e))).tangent)
    return gradlab.stack(columns, dim=1)


def _reverse_jacobian(f, x):
    """One forward pass, then m backward passes, one per output: row i is e_iᵀJ."""
    x = x.detach().requires_grad_()
    y = f(x)
    return gradlab.stack([gradlab.autograd.grad(y, x, grad_outputs=e, retain_graph=True)[0]
                          for e in gradlab.eye(y.numel(), dtype=y.dtype)])


def _passes(method, f, x) -> tuple[int, int, np.ndarray]:
    """(forward passes, backward passes, Jacobian) of ``method(f, x)``, counted as it runs."""
    counted, backward = _Counted(f), [0]

    def listen(event) -> None:
        if isinstance(event, events.Phase) and event.kind == "backward_begin":
            backward[0] += 1

    with events.subscribe(listen, light=True):
        jacobian = method(counted, x).numpy()
    return counted.calls, backward[0], jacobian


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    # The example: forward mode follows this graph from the inputs up, carrying tangents
    # with the values; reverse mode walks it back down from y.
    x1 = gradlab.tensor(2.0, dtype=gradlab.float64, requires_grad=True)
    x2 = gradlab.tensor(3.0, dtype=gradlab.float64, requires_grad=True)
    x1.name, x2.name = "x1", "x2"
    y = x1 * x2 + x1.sin()
    y.name = "y"
    graph = viz.render(y, folder / "graph.svg", show_values=True)

    # Passes for the whole Jacobian of a network from Rⁿ to R¹⁶, both ways, counted.
    rng = np.random.default_rng(0)
    forward, reverse = [], []
    for n in NS:
        f = _network(n, rng)
        x = gradlab.tensor(rng.uniform(-1, 1, size=n), dtype=gradlab.float64)
        fwd_calls, fwd_backward, j_forward = _passes(_forward_jacobian, f, x)
        rev_calls, rev_backward, j_reverse = _passes(_reverse_jacobian, f, x)
        assert np.allclose(j_forward, j_reverse, rtol=1e-9, atol=1e-12)
        forward.append(fwd_calls + fwd_backward)
        reverse.append(rev_calls + rev_backward)

    fig = Figure(figsize=(8.4, 3.6), layout="constrained")
    passes_ax, map_ax = fig.subplots(1, 2)
    passes_ax.plot(NS, forward, "o-", markersize=4, label="forward mode: n passes")
    passes_ax.plot(NS, reverse, "s-", markersize=4,
                   label=f"reverse mode: 1 forward + {M} backward")
    passes_ax.axvline(M, color="gray", linestyle=":", linewidth=1)
    passes_ax.set_xlabel(f"n, the number of inputs (m = {M} outputs)")
    passes_ax.set_ylabel("passes for the whole Jacobian")
    passes_ax.set_title("counted on tanh(W2 tanh(W1 x))", fontsize=10)
    passes_ax.legend(loc="upper left")

    # Which mode needs fewer passes, for every n and m, and where some jobs fall.
    low, top = 0.5, 1e7
    map_ax.set_xscale("log")
    map_ax.set_yscale("log")
    map_ax.fill_between([low, top], [low, top], [top, top], color="C0", alpha=0.15)
    map_ax.fill_between([low, top], [low, low], [low, top], color="C1", alpha=0.15)
    map_ax.plot([low, top], [low, top], color="gray", linestyle=":", linewidth=1)
    map_ax.text(1, 1e5, "forward mode\nneeds fewer", color="C0")
    map_ax.text(1e4, 1e2, "reverse mode\nneeds fewer", color="C1")
    jobs = [(1e6, 1, "training: one loss,\n10⁶ weights", (-6, 6), "right"),
            (3, 1e4, "10⁴ outputs of a model\nwith 3 knobs", (6, 4), "left"),
            (2, 3, "g: R² → R³", (6, 4), "left")]
    for n, m, text, offset, align in jobs:
        map_ax.scatter([n], [m], color="black", zorder=3, s=16)
        map_ax.annotate(text, (n, m), textcoords="offset points", xytext=offset, fontsize=8,
                        ha=align)
    map_ax.set_xlim(low, top)
    map_ax.set_ylim(low, top)
    map_ax.set_xlabel("n, inputs")
    map_ax.set_ylabel("m, outputs")
    map_ax.set_title("forward: n passes, reverse: m", fontsize=10)
    cost = save_figure(fig, folder / "cost.png", dpi=100)
    return [Path(graph), Path(cost)]
