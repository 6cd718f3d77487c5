"""Lesson 2's pictures: L = (a·b + c)·f in the forward and the backward view, and a
graph where one value is used twice."""

from pathlib import Path

import gradlab
from gradlab import viz


def _expression():
    """The lesson's example, with names, recorded by a trace (so e, d and f show)."""
    with viz.trace() as tape:
        a = gradlab.tensor(3.0, requires_grad=True)
        b = gradlab.tensor(-2.0, requires_grad=True)
        c = gradlab.tensor(4.0, requires_grad=True)
        f = gradlab.tensor(0.5)
        a.name, b.name, c.name, f.name = "a", "b", "c", "f"
        e = a * b
        e.name = "e"
        d = e + c
        d.name = "d"
        L = d * f
        L.name = "L"
    return L, tape, (a, b, c, f, e, d)  # alive, so the picture can read their names


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    L, tape, keep = _expression()
    forward = viz.render(L, folder / "forward.svg", show_values=True, trace=tape)
    backward = viz.render(L, folder / "backward.svg", view="backward")

    # One value used twice: h = a·b feeds both exp and the last mul.
    a = gradlab.tensor(3.0, requires_grad=True)
    b = gradlab.tensor(-2.0, requires_grad=True)
    a.name, b.name = "a", "b"
    h = a * b
    h.name = "h"
    y = h * h.exp()
    y.name = "y"
    shared = viz.render(y, folder / "shared.svg", view="backward")
    del keep
    return [Path(forward), Path(backward), Path(shared)]
