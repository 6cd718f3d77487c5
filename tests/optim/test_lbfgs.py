"""LBFGS: the same iterates as PyTorch on Rosenbrock's function, with and without line search."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.optim.lbfgs import cubic_minimizer
from tests.oracle import needs_torch, torch

START = [-1.5, 2.0]


def rosenbrock(x):
    """(1 - x₀)² + 100 (x₁ - x₀²)²: a curved valley, minimum 0 at (1, 1)."""
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def path(lib, steps, **options):
    """The iterate after each ``step``, the closure's return values, and the optimizer."""
    x = lib.tensor(START, dtype=lib.float64, requires_grad=True)
    opt = lib.optim.LBFGS([x], **options)

    def closure():
        opt.zero_grad()
        loss = rosenbrock(x)
        loss.backward()
        return loss

    points, losses = [], []
    for _ in range(steps):
        losses.append(opt.step(closure).item())
        points.append(x.detach().numpy().copy())
    return np.array(points), losses, opt, x


OPTIONS = [
    dict(),
    dict(line_search_fn="strong_wolfe"),
    dict(max_iter=2, lr=0.5),
    dict(max_iter=2, line_search_fn="strong_wolfe"),
    dict(max_iter=3, history_size=2),
    dict(max_iter=3, history_size=2, line_search_fn="strong_wolfe"),
    dict(max_iter=5, max_eval=6, lr=0.8, line_search_fn="strong_wolfe"),
    dict(max_iter=1, max_eval=4, line_search_fn="strong_wolfe"),  # the search may use 3
]


@needs_torch
@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) for o in OPTIONS])
def test_iterates_match_torch(options):
    # Without a line search, lr = 1 overshoots in Rosenbrock's valley and rounding
    # differences (PyTorch fuses a + αb) grow: 2 steps of 20 iterations stay within 1e-7.
    steps = 2 if "max_iter" not in options else 12
    ours, our_losses, opt, x = path(gradlab, steps, **options)
    theirs, their_losses, topt, tx = path(torch, steps, **options)
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-7, atol=1e-12)
    state, tstate = opt.state[x], topt.state[tx]
    assert (state["func_evals"], state["n_iter"]) == (tstate["func_evals"], tstate["n_iter"])
    assert len(state["old_dirs"]) == len(tstate["old_dirs"])
    assert len(set(map(tuple, ours.round(6)))) > 1  # it moved from step to step


def test_reaches_rosenbrock_minimum_with_strong_wolfe():
    points, losses, opt, _ = path(gradlab, 5, line_search_fn="strong_wolfe")
    # it stops once the loss changes by less than tolerance_change (1e-9)
    np.testing.assert_allclose(points[-1], [1.0, 1.0], atol=1e-5)
    assert rosenbrock(points[-1]) < 1e-9
    assert losses[0] == pytest.approx(rosenbrock(np.array(START)))


def test_stops_at_once_when_the_gradient_is_zero():
    x = gradlab.tensor([1.0, 1.0], dtype=gradlab.float64, requires_grad=True)
    opt = gradlab.optim.LBFGS([x])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = rosenbrock(x)
        loss.backward()
        return loss

    assert float(opt.step(closure)) == 0.0
    assert len(calls) == 1 and x.tolist() == [1.0, 1.0]


def test_cubic_minimizer_finds_the_minimum_of_a_cubic():
    # f(x) = x³ - 3x has its local minimum at x = 1; f' = 3x² - 3
    f = lambda x: x ** 3 - 3 * x  # noqa: E731
    df = lambda x: 3 * x ** 2 - 3  # noqa: E731
    assert cubic_minimizer(0.0, f(0.0), df(0.0), 2.0, f(2.0), df(2.0)) == pytest.approx(1.0)
    assert cubic_minimizer(2.0, f(2.0), df(2.0), 0.0, f(0.0), df(0.0)) == pytest.approx(1.0)
    # clipped to the bounds
    assert cubic_minimizer(0.0, f(0.0), df(0.0), 2.0, f(2.0), df(2.0), (1.5, 3.0)) == 1.5
    # no minimum (d₁² < g₁g₂): the middle of the bounds
    # rising with slope 2 at both ends, f(0) = 0, f(1) = 1.9: the cubic has no minimum
    # (d₁ = -1.7, d₁² - g₁g₂ < 0), so the answer is the middle of the bounds
    assert cubic_minimizer(0.0, 0.0, 2.0, 1.0, 1.9, 2.0, (0.0, 4.0)) == 2.0


def test_state_dict_round_trip_continues_the_same_path():
    full, _, _, _ = path(gradlab, 6, max_iter=2, line_search_fn="strong_wolfe")
    half, _, opt, x = path(gradlab, 3, max_iter=2, line_search_fn="strong_wolfe")
    y = gradlab.tensor(half[-1], requires_grad=True)
    fresh = gradlab.optim.LBFGS([y], max_iter=2, line_search_fn="strong_wolfe")
    fresh.load_state_dict(opt.state_dict())

    def closure():
        fresh.zero_grad()
        loss = rosenbrock(y)
        loss.backward()
        return loss

    for k in range(3, 6):
        fresh.step(closure)
        np.testing.assert_allclose(y.detach().numpy(), full[k], rtol=1e-12)


def test_events_one_per_parameter_per_step():
    x = gradlab.tensor(START, dtype=gradlab.float64, requires_grad=True)
    opt = gradlab.optim.LBFGS([x], max_iter=3, max_eval=10)

    def closure():
        opt.zero_grad()
        loss = rosenbrock(x)
        loss.backward()
        return loss

    seen = []
    with gradlab.events.subscribe(lambda e: isinstance(e, gradlab.events.OptimizerStep)
                                  and seen.append(e)):
        opt.step(closure)
        opt.step(closure)
    assert [e.optimizer for e in seen] == ["LBFGS", "LBFGS"]
    assert seen[0].state_before == {}
    assert seen[0].state_after["n_iter"] == 3 and seen[1].state_after["n_iter"] == 6
    assert seen[1].state_before["func_evals"] == seen[0].state_after["func_evals"]
    np.testing.assert_array_equal(seen[1].state_before["d"], seen[0].state_after["d"])


def test_state_counts_as_optimizer_memory():
    before = gradlab.memory_stats()["optimizer_bytes"]
    _, _, opt, x = path(gradlab, 1, max_iter=4)
    state = opt.state[x]
    expected = sum(t.nbytes for t in [state["d"], state["prev_flat_grad"], *state["old_dirs"],
                                      *state["old_stps"]])
    assert gradlab.memory_stats()["optimizer_bytes"] - before == expected > 0


def test_errors_teach():
    x = gradlab.zeros(2, requires_grad=True)
    w = gradlab.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"(?s)LBFGS.step needs a closure.*def closure"):
        gradlab.optim.LBFGS([x]).step()
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        gradlab.optim.LBFGS([{"params": [x]}, {"params": [w]}])
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        gradlab.optim.LBFGS([x]).add_param_group({"params": [w]})
    with pytest.raises(ValueError, match="line_search_fn must be None or 'strong_wolfe', got "
                                         "'armijo'"):
        gradlab.optim.LBFGS([x], line_search_fn="armijo")
    with pytest.raises(ValueError, match="LBFGS: history_size must be >= 1, got 0"):
        gradlab.optim.LBFGS([x], history_size=0)
    with pytest.raises(ValueError, match="LBFGS: tolerance_grad must be >= 0, got -1"):
        gradlab.optim.LBFGS([x], tolerance_grad=-1)


@needs_torch
def test_defaults_and_repr_match_torch():
    ours = gradlab.optim.LBFGS([gradlab.zeros(2, requires_grad=True)])
    theirs = torch.optim.LBFGS([torch.zeros(2, requires_grad=True)])
    assert ours.defaults == theirs.defaults and repr(ours) == repr(theirs)
