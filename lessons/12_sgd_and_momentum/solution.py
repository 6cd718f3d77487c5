"""Lesson 12: SGD and momentum (the reference solution)."""

import gradlab
from gradlab.optim import Optimizer


def ravine(p):
    """f(x, y) = (x² + 50·y²) / 2: a valley 50 times steeper across than along."""
    return 0.5 * p[0] ** 2 + 25.0 * p[1] ** 2


def sgd_step(params, lr, weight_decay=0.0):
    """One step of plain SGD on every parameter that has a gradient: p ← p − lr·(g + wd·p)."""
    with gradlab.no_grad():  # the update is not part of the model: record nothing
        for p in params:
            if p.grad is None:
                continue
            g = p.grad
            if weight_decay:
                g = g + weight_decay * p  # the gradient of (wd/2)·|p|²
            p.sub_(lr * g)  # in place: the model and the optimizer keep the same tensor


def momentum_step(params, buffers, lr, momentum, nesterov=False):
    """One step of SGD with momentum, PyTorch's form: buf ← μ·buf + g, p ← p − lr·buf.

    ``buffers`` is a list as long as ``params``, None where a parameter has no buffer
    yet; the first step sets buf = g (a copy), later steps update it in place.
    With ``nesterov`` the step direction is g + μ·buf instead of buf.
    """
    with gradlab.no_grad():
        for i, p in enumerate(params):
            if p.grad is None:
                continue
            g = p.grad
            if buffers[i] is None:
                buffers[i] = g.clone()  # a copy: .grad may be zeroed in place later
            else:
                buffers[i].mul_(momentum).add_(g)
            step = g + momentum * buffers[i] if nesterov else buffers[i]
            p.sub_(lr * step)


class Momentum(Optimizer):
    """SGD with momentum, Nesterov and weight decay as options (same results as
    gradlab.optim.SGD with dampening 0)."""

    def __init__(self, params, lr, momentum=0.9, nesterov=False, weight_decay=0.0):
        defaults = dict(lr=lr, momentum=momentum, nesterov=nesterov, weight_decay=weight_decay)
        super().__init__(params, defaults)

    def _update(self, param, grad, state, group):
        """Called under no_grad by Optimizer.step for each parameter with a gradient."""
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = state["momentum_buffer"] = grad.clone()
        else:
            buf.mul_(group["momentum"]).add_(grad)
        step = grad + group["momentum"] * buf if group["nesterov"] else buf
        param.sub_(group["lr"] * step)


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
