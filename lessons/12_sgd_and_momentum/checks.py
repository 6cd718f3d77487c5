"""Lesson 12's checks: the student's updates and gradlab.optim.SGD side by side on random
least-squares problems, step by step, in float64; and momentum on a ravine."""

import numpy as np

import gradlab
from lessons.expect import check, expect, expect_close, expect_equal


class _Problem:
    """A random least-squares problem: loss = mean((X Wᵀ + b − Y)²), over the parameters
    W, b and an unused one (it never gets a gradient)."""

    def __init__(self, rng):
        n, n_in, n_out = (int(v) for v in rng.integers([10, 2, 1], [30, 6, 4]))
        self.X = gradlab.tensor(rng.normal(size=(n, n_in)))
        self.Y = gradlab.tensor(rng.normal(size=(n, n_out)))
        self.start = [rng.normal(size=(n_out, n_in)), rng.normal(size=n_out),
                      rng.normal(size=3)]

    def params(self):
        """Fresh float64 leaves at the start point: W, b, unused."""
        return [gradlab.tensor(a, dtype=gradlab.float64, requires_grad=True)
                for a in self.start]

    def backward(self, params):
        """Zero the gradients in place (as zero_grad(set_to_none=False)), then backward."""
        for p in params:
            if p.grad is not None:
                p.grad.zero_()
        W, b, _ = params
        ((self.X @ W.T + b - self.Y) ** 2).mean().backward()


def _leaves_kept(params, originals, what):
    if not all(p is q for p, q in zip(params, originals)):
        got = "other tensor objects in the list"
    elif not all(p.grad_fn is None and p.requires_grad for p in params):
        got = "tensors that are no longer leaves requiring grad"
    else:
        got = "the same leaf tensors"
    expect(got == "the same leaf tensors", what, "the same leaf tensors", got,
           "update with p.sub_(...) or p -= ... under gradlab.no_grad()")


@check("sgd_step")
def sgd_step(student, rng):
    problem = _Problem(rng)
    lr, steps = float(rng.uniform(0.05, 0.3)), int(rng.integers(4, 8))
    for weight_decay in (0.0, float(rng.uniform(0.01, 0.2))):
        mine, theirs = problem.params(), problem.params()
        originals = list(theirs)
        reference = gradlab.optim.SGD(mine, lr=lr, weight_decay=weight_decay)
        for _ in range(steps):
            problem.backward(mine)
            reference.step()
            problem.backward(theirs)
            if weight_decay:
                student.sgd_step(theirs, lr, weight_decay=weight_decay)
            else:
                student.sgd_step(theirs, lr)
        _leaves_kept(theirs, originals, "sgd_step changes the parameters themselves")
        where = f"after {steps} steps, lr = {lr:.3f}, weight_decay = {weight_decay:.3f}"
        for name, got, want in zip(("W", "b"), theirs, mine):
            expect_close(got, want, f"{name} {where}, against gradlab.optim.SGD", rtol=1e-10,
                         atol=1e-12)
        expect_close(theirs[2], problem.start[2],
                     "a parameter without a gradient is left alone", rtol=0, atol=0)


def _run_momentum(student, problem, lr, momentum, nesterov, steps):
    mine, theirs = problem.params(), problem.params()
    reference = gradlab.optim.SGD(mine, lr=lr, momentum=momentum, nesterov=nesterov)
    buffers = [None] * len(theirs)
    for _ in range(steps):
        problem.backward(mine)
        reference.step()
        problem.backward(theirs)
        student.momentum_step(theirs, buffers, lr, momentum, nesterov=nesterov)
    return mine, theirs, buffers, reference


@check("momentum_step")
def momentum_step(student, rng):
    problem = _Problem(rng)
    lr, momentum = float(rng.uniform(0.02, 0.1)), float(rng.uniform(0.5, 0.95))
    steps = int(rng.integers(5, 9))
    for nesterov in (False, True):
        mine, theirs, buffers, reference = _run_momentum(student, problem, lr, momentum,
                                                         nesterov, steps)
        kind = "Nesterov" if nesterov else "momentum"
        where = f"after {steps} steps of {kind}, lr = {lr:.3f}, μ = {momentum:.3f}"
        expect(isinstance(buffers, list) and len(buffers) == 3,
               "buffers stays a list with one entry per parameter", "a list of 3",
               f"a {type(buffers).__name__} of {len(buffers)}")
        for name, got, want, buf in zip(("W", "b"), theirs, mine, buffers):
            expect_close(got, want, f"{name} {where}, against gradlab.optim.SGD", rtol=1e-10,
                         atol=1e-12)
            expect_close(buf, reference.state[want]["momentum_buffer"],
                         f"{name}'s momentum buffer {where}", rtol=1e-10, atol=1e-12)
        expect(buffers[2] is None, "no buffer for a parameter that never had a gradient",
               "None", "None" if buffers[2] is None else f"a {type(buffers[2]).__name__}")
        expect_close(theirs[2], problem.start[2],
                     "a parameter without a gradient is left alone", rtol=0, atol=0)


def _ravine_loss(factory, curvatures, start, steps):
    p = gradlab.tensor(start, dtype=gradlab.float64, requires_grad=True)
    lam = gradlab.tensor(curvatures, dtype=gradlab.float64)
    optimizer = factory([p])
    for _ in range(steps):
        optimizer.zero_grad()
        (0.5 * (lam * p * p).sum()).backward()
        optimizer.step()
    with gradlab.no_grad():
        return (0.5 * (lam * p * p).sum()).item()


@check("momentum_class")
def momentum_class(student, rng):
    problem = _Problem(rng)
    steps = int(rng.integers(5, 9))
    groups = [(float(rng.uniform(0.02, 0.1)), float(rng.uniform(0.5, 0.95))) for _ in range(2)]
    for nesterov, weight_decay in ((False, 0.0), (True, 0.0),
                                   (bool(rng.integers(2)), float(rng.uniform(0.01, 0.1)))):
        mine, theirs = problem.params(), problem.params()
        originals = list(theirs)
        # Two parameter groups: W with the first lr and μ, b and the unused one with the second.
        reference = gradlab.optim.SGD(
            [{"params": mine[:1], "lr": groups[0][0], "momentum": groups[0][1]},
             {"params": mine[1:]}], lr=groups[1][0], momentum=groups[1][1],
            nesterov=nesterov, weight_decay=weight_decay)
        optimizer = student.Momentum(
            [{"params": theirs[:1], "lr": groups[0][0], "momentum": groups[0][1]},
             {"params": theirs[1:]}], lr=groups[1][0], momentum=groups[1][1],
            nesterov=nesterov, weight_decay=weight_decay)
        bases = " < ".join(c.__name__ for c in type(optimizer).__mro__[:-1])
        expect(isinstance(optimizer, gradlab.optim.Optimizer), "Momentum is an Optimizer",
               "a subclass of gradlab.optim.Optimizer", bases)
        for _ in range(steps):
            problem.backward(mine)
            reference.step()
            problem.backward(theirs)
            optimizer.step()
        _leaves_kept(theirs, originals, "Momentum.step changes the parameters themselves")
        where = (f"after {steps} steps (nesterov={nesterov}, weight_decay={weight_decay:.3f}, "
                 f"two groups: lr, μ = {groups[0][0]:.3f}, {groups[0][1]:.2f} and "
                 f"{groups[1][0]:.3f}, {groups[1][1]:.2f})")
        for name, got, want in zip(("W", "b"), theirs, mine):
            expect_close(got, want, f"{name} {where}, against gradlab.optim.SGD", rtol=1e-10,
                         atol=1e-12)
            state = optimizer.state[got]
            expect("momentum_buffer" in state, f"state[{name}] has a 'momentum_buffer'",
                   "the key 'momentum_buffer'", repr(sorted(state)))
            expect_close(state["momentum_buffer"], reference.state[want]["momentum_buffer"],
                         f"{name}'s momentum buffer", rtol=1e-10, atol=1e-12)
        expect_close(theirs[2], problem.start[2],
                     "a parameter without a gradient is left alone", rtol=0, atol=0)
    # A ravine: curvatures from 1 to 50 (condition number 50), 200 steps at lr = 1/50,
    # from a start 1 to 2 away from the minimum along every axis.
    dims = int(rng.integers(4, 9))
    curvatures = np.concatenate([[1.0, 50.0], rng.uniform(1, 50, size=dims - 2)])
    start = rng.choice([-1.0, 1.0], size=dims) * rng.uniform(1, 2, size=dims)
    plain = _ravine_loss(lambda ps: gradlab.optim.SGD(ps, lr=0.02), curvatures, start, 200)
    heavy = _ravine_loss(lambda ps: student.Momentum(ps, lr=0.02, momentum=0.9), curvatures,
                         start, 200)
    expect(heavy < plain / 10,
           f"a {dims}-D ravine with curvatures 1 to 50, loss after 200 steps at lr = 0.02: "
           "momentum 0.9 beats plain SGD",
           f"below a tenth of plain SGD's {plain:.3g}", f"{heavy:.3g}")
    expect_equal(len(optimizer.param_groups), 2, "the optimizer keeps both parameter groups")
