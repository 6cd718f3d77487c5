"""Lesson 14's checks: the student's RMSprop and Adam step beside gradlab.optim's on random
problems (parameters and state compared after every step), and Adam's first step by hand."""

import math

import numpy as np

import gradlab
from lessons.expect import as_array, check, expect, expect_close, expect_equal, expect_tensor


def _problem(rng, grad_scale=1.0):
    """Random parameters and a loss whose gradient differs in scale from coordinate to
    coordinate (weights from 1e-2 to 1e2): what per-parameter step sizes are for."""
    shapes = [tuple(int(s) for s in rng.integers(1, 5, size=rng.integers(1, 3)))
              for _ in range(2)]
    starts = [rng.normal(size=s) for s in shapes]
    targets = [rng.normal(size=s) for s in shapes]
    weights = [10 ** rng.uniform(-2, 2, size=s) for s in shapes]

    def loss_fn(params):
        total = 0
        for p, t, w in zip(params, targets, weights):
            d = p - gradlab.tensor(t)
            total = total + (gradlab.tensor(w) * d * d).sum() + 0.1 * (d**4).sum()
        return total * grad_scale

    return starts, loss_fn


def _params(starts):
    return [gradlab.tensor(s, dtype=gradlab.float64, requires_grad=True) for s in starts]


def _groups(params, split_lr):
    """All parameters in one group, or (split_lr) the first in its own group with its own lr."""
    if split_lr is None:
        return params
    return [{"params": params[:1], "lr": split_lr}, {"params": params[1:]}]


def _side_by_side(student_cls, reference_cls, rng, options, steps, state_keys, label,
                  grad_scale=1.0, split_lr=None):
    """Run both optimizers from the same start on the same loss; compare after every step."""
    starts, loss_fn = _problem(rng, grad_scale)
    mine, ref = _params(starts), _params(starts)
    opt_mine = student_cls(_groups(mine, split_lr), **options)
    opt_ref = reference_cls(_groups(ref, split_lr), **options)
    for step in range(1, steps + 1):
        for params, opt in ((mine, opt_mine), (ref, opt_ref)):
            opt.zero_grad()
            loss_fn(params).backward()
            opt.step()
        for k, (p, q) in enumerate(zip(mine, ref)):
            # The report shows the first and the last step, and any step that differs.
            same = np.allclose(as_array(p), as_array(q), rtol=1e-7, atol=1e-12)
            if step in (1, steps) or not same:
                expect_close(p, q, f"{label}: parameter {k} {tuple(q.shape)} after step {step}",
                             rtol=1e-7, atol=1e-12)
    for k, (p, q) in enumerate(zip(mine, ref)):
        state, wanted = opt_mine.state[p], opt_ref.state[q]
        for key in state_keys:
            expect(key in state, f"{label}: optimizer.state[parameter {k}] has {key!r}",
                   f"a {key!r} entry", f"the keys {sorted(state)}",
                   "keep the running averages in the state dict, under PyTorch's names")
            expect_close(state[key], wanted[key], f"{label}: state {key!r} of parameter {k} "
                         f"after {steps} steps", rtol=1e-7, atol=1e-14)
        expect("step" in state and float(state["step"]) == steps,
               f"{label}: state['step'] of parameter {k} counts the steps", str(steps),
               repr(state.get("step")))


def _defaults_match(student_cls, reference_cls, names):
    """Built with no options, the student's optimizer has PyTorch's defaults."""
    mine = student_cls([gradlab.zeros(2, requires_grad=True)]).param_groups[0]
    ref = reference_cls([gradlab.zeros(2, requires_grad=True)]).param_groups[0]
    for name in names:
        expect_equal(_plain(mine.get(name)), _plain(ref[name]), f"PyTorch's default {name}")


def _plain(value):
    return tuple(value) if isinstance(value, list) else value


@check("rmsprop")
def rmsprop(student, rng):
    keys = ("square_avg",)
    ref = gradlab.optim.RMSprop
    _defaults_match(student.RMSprop, ref, ("lr", "alpha", "eps"))
    steps = int(rng.integers(4, 8))
    _side_by_side(student.RMSprop, ref, rng, {}, steps, keys, "defaults")
    options = dict(lr=float(10 ** rng.uniform(-3, -1)), alpha=float(rng.uniform(0.8, 0.99)),
                   eps=float(10 ** rng.uniform(-8, -5)))
    _side_by_side(student.RMSprop, ref, rng, options, steps, keys,
                  f"lr={options['lr']:.4g}, alpha={options['alpha']:.3f}, "
                  f"eps={options['eps']:.2g}, two groups (the first with lr=0.05)",
                  split_lr=0.05)
    # Gradients about 1e-4 with eps = 1e-4: only eps added outside the root passes.
    _side_by_side(student.RMSprop, ref, rng, dict(eps=1e-4), 3, keys,
                  "gradients near 1e-4 and eps=1e-4 (where eps goes matters)", grad_scale=1e-4)


@check("adam")
def adam(student, rng):
    keys = ("exp_avg", "exp_avg_sq")
    ref = gradlab.optim.Adam
    _defaults_match(student.Adam, ref, ("lr", "betas", "eps"))
    steps = int(rng.integers(4, 8))
    _side_by_side(student.Adam, ref, rng, {}, steps, keys, "defaults")
    betas = (float(rng.uniform(0.5, 0.95)), float(rng.uniform(0.9, 0.9999)))
    options = dict(lr=float(10 ** rng.uniform(-3, -1)), betas=betas,
                   eps=float(10 ** rng.uniform(-8, -5)))
    _side_by_side(student.Adam, ref, rng, options, steps, keys,
                  f"lr={options['lr']:.4g}, betas=({betas[0]:.3f}, {betas[1]:.4f}), "
                  f"eps={options['eps']:.2g}, two groups (the first with lr=0.05)",
                  split_lr=0.05)
    # Gradients about 1e-6 and eps=1e-6: eps belongs after the bias correction of v.
    _side_by_side(student.Adam, ref, rng, dict(eps=1e-6), 3, keys,
                  "gradients near 1e-6 and eps=1e-6 (where eps goes matters)", grad_scale=1e-6)


def _gradient(rng, scale, shape):
    """Magnitudes from 0.5 to 2 times scale, random signs: never near zero."""
    return rng.uniform(0.5, 2, size=shape) * rng.choice([-1.0, 1.0], size=shape) * scale


@check("first_adam_step")
def first_adam_step(student, rng):
    shape = tuple(int(s) for s in rng.integers(2, 5, size=2))
    scale = float(10 ** rng.uniform(-3, 3))
    lr = float(10 ** rng.uniform(-4, -1))
    betas = (float(rng.uniform(0.5, 0.95)), float(rng.uniform(0.9, 0.9999)))
    grad = gradlab.tensor(_gradient(rng, scale, shape))
    got = student.first_adam_step(grad, lr=lr, betas=betas)
    expect_tensor(got, "first_adam_step returns a tensor")
    # The real thing: one step of gradlab's Adam from zero with this gradient.
    p = gradlab.zeros(*shape, dtype=gradlab.float64, requires_grad=True)
    p.grad = grad.clone()
    gradlab.optim.Adam([p], lr=lr, betas=betas).step()
    expect_close(got, p.detach(), f"first step of Adam, lr={lr:.3g}, betas=({betas[0]:.3f}, "
                 f"{betas[1]:.4f}), gradient scale {scale:.3g}", rtol=1e-9, atol=1e-15)

    # Bias-corrected, the first step is lr in every coordinate, whatever the gradient's scale.
    for scale in (1e-3, 1e3):
        g = gradlab.tensor(_gradient(rng, scale, shape))
        size = np.abs(as_array(student.first_adam_step(g, lr=lr)))
        expect_close(size / lr, np.ones(shape), f"|first step| / lr for gradients of size "
                     f"{scale:g} (default betas)", rtol=1e-4)
    # Without it the step is lr * (1 - beta1) / sqrt(1 - beta2): 3.16 lr with the defaults.
    ratio = (1 - betas[0]) / math.sqrt(1 - betas[1])
    raw = student.first_adam_step(grad, lr=lr, betas=betas, eps=0.0, bias_correction=False)
    expect_close(raw, -lr * ratio * np.sign(grad.numpy()),
                 f"first step without bias correction (eps=0): lr * (1 - beta1) / "
                 f"sqrt(1 - beta2) = {ratio:.4g} lr, against the gradient's sign", rtol=1e-9)
    raw = student.first_adam_step(grad, lr=lr, betas=betas, bias_correction=False)
    g = grad.numpy()
    wanted = -lr * (1 - betas[0]) * g / (np.sqrt(1 - betas[1]) * np.abs(g) + 1e-8)
    expect_close(raw, wanted, "first step without bias correction, default eps", rtol=1e-9,
                 atol=1e-15)
