"""Lesson 12: SGD and momentum.

Fill in the functions and the method marked TODO, then check them with
`gradlab check 12` (or press k in the app). Run this file under the debugger
with r in the app: o steps from one parameter update to the next.
"""

import gradlab
from gradlab.optim import Optimizer


def ravine(p):
    """f(x, y) = (x² + 50·y²) / 2: a valley 50 times steeper across than along."""
    return 0.5 * p[0] ** 2 + 25.0 * p[1] ** 2


def sgd_step(params, lr, weight_decay=0.0):
    """One step of plain SGD on every parameter that has a gradient: p ← p − lr·(g + wd·p)."""
    # TODO: under gradlab.no_grad(), for each p with a .grad: g = p.grad (+ weight_decay * p),
    #       then change p in place: p.sub_(lr * g)
    raise NotImplementedError("sgd_step")


def momentum_step(params, buffers, lr, momentum, nesterov=False):
    """One step of SGD with momentum, PyTorch's form: buf ← μ·buf + g, p ← p − lr·buf.

    ``buffers`` is a list as long as ``params``, None where a parameter has no buffer
    yet; the first step sets buf = g (a copy), later steps update it in place.
    With ``nesterov`` the step direction is g + μ·buf instead of buf.
    """
    # TODO: under gradlab.no_grad(), for each i, p with a .grad: start buffers[i] as a clone
    #       of the gradient, or update it in place; then step p along buf (or g + μ·buf)
    raise NotImplementedError("momentum_step")


class Momentum(Optimizer):
    """SGD with momentum, Nesterov and weight decay as options (same results as
    gradlab.optim.SGD with dampening 0)."""

    def __init__(self, params, lr, momentum=0.9, nesterov=False, weight_decay=0.0):
        # TODO: hand the parameters and a dict of the defaults (lr, momentum, nesterov,
        #       weight_decay) to Optimizer.__init__
        raise NotImplementedError("Momentum.__init__")

    def _update(self, param, grad, state, group):
        """Called under no_grad by Optimizer.step for each parameter with a gradient."""
        # TODO: weight decay, then state["momentum_buffer"] (new or updated), then step
        #       param in place; lr and the options are in group
        raise NotImplementedError("Momentum._update")


if __name__ == "__main__":
    # What the app runs when you press r: 30 steps down the ravine from (-4.5, 1.5),
    # first with plain SGD, then with your Momentum (o steps one update at a time).
    for name in ("SGD", "Momentum"):
        p = gradlab.tensor([-4.5, 1.5], dtype=gradlab.float64, requires_grad=True)
        opt = gradlab.optim.SGD([p], lr=0.02) if name == "SGD" else Momentum([p], lr=0.02)
        for _ in range(30):
            opt.zero_grad()
            loss = ravine(p)
            loss.backward()
            opt.step()
        print(f"{name:8s} after 30 steps: loss {ravine(p).item():.4f} at "
              f"({p[0].item():.3f}, {p[1].item():.3f})")
