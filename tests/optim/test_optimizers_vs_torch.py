"""Every optimizer, with every option set, follows PyTorch's trajectory step for step.

Both libraries start from the same float64 parameters; at each step each
gets the gradient of the same smooth loss at *its own* current values
(``grad_of`` below), so a wrong update formula shows up as a drifting path.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.oracle import needs_torch, torch

STEPS = 25
SHAPES = ((3, 4), (4,))

# (optimizer, options): each row is one trajectory compared with PyTorch's.
CASES = [
    ("SGD", {}),
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.5)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.05, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, weight_decay=0.1, maximize=True)),
    ("SGD", dict(lr=0.05, maximize=True)),
    ("Adam", {}),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.9), eps=1e-6)),
    ("Adam", dict(lr=0.05, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", {}),
    ("AdamW", dict(lr=0.05, weight_decay=0.3)),
    ("AdamW", dict(lr=0.05, weight_decay=0.3, amsgrad=True, maximize=True)),
    ("RMSprop", {}),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("Adagrad", {}),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, maximize=True)),
    ("Adadelta", {}),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5)),
    ("Adadelta", dict(weight_decay=0.1)),
    ("Adadelta", dict(weight_decay=0.1, maximize=True)),
]


def case_id(case) -> str:
    name, options = case
    return name + "".join(f"-{k}={v}" for k, v in options.items())


def start_values(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in SHAPES]


def grad_of(values: list[np.ndarray], step: int) -> list[np.ndarray]:
    """Gradient of a smooth non-quadratic loss, with a step-dependent pull (not too regular)."""
    w, b = values
    r = w @ b - np.array([1.0, -2.0, 0.5])
    return [np.outer(r, b) + 0.1 * w ** 3 + 0.01 * step, w.T @ r + 0.2 * np.sin(b)]


def run(lib, name, options, steps=STEPS, values=None):
    """The parameters after ``steps`` steps of optimizer ``name`` in ``lib`` (as NumPy)."""
    params = [lib.tensor(v.copy(), requires_grad=True) for v in (values or start_values())]
    opt = getattr(lib.optim, name)(params, **options)
    sign = -1.0 if options.get("maximize") else 1.0  # maximize -loss: the same bounded path
    for step in range(steps):
        current = [p.detach().numpy().copy() for p in params]
        for p, g in zip(params, grad_of(current, step)):
            p.grad = lib.tensor(sign * g)
        opt.step()
    return [p.detach().numpy().copy() for p in params], opt


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_trajectory_matches_torch(case):
    name, options = case
    ours, opt = run(gradlab, name, options)
    theirs, topt = run(torch, name, options)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-12)
    assert all(np.isfinite(a).all() for a in ours)
    assert not np.allclose(ours[0], start_values()[0])  # the parameters did move
    # the state holds the same values as PyTorch's, under the same names
    for p, tp in zip(opt.param_groups[0]["params"], topt.param_groups[0]["params"]):
        mine, theirs_state = opt.state[p], topt.state[tp]
        assert set(k for k in mine if mine[k] is not None) == \
            set(k for k in theirs_state if theirs_state[k] is not None)
        for key, value in mine.items():
            expected = theirs_state[key]
            if key == "step":
                assert value == int(expected)
            else:
                np.testing.assert_allclose(value.numpy(), expected.numpy(), rtol=1e-7,
                                           atol=1e-12)


@needs_torch
@pytest.mark.parametrize("name", sorted({c[0] for c in CASES}))
def test_defaults_and_repr_match_torch(name):
    values = start_values()
    ours = getattr(gradlab.optim, name)([gradlab.tensor(values[1], requires_grad=True)])
    theirs = getattr(torch.optim, name)([torch.tensor(values[1], requires_grad=True)])
    assert ours.defaults == theirs.defaults
    assert repr(ours) == repr(theirs)
    saved, tsaved = ours.state_dict(), theirs.state_dict()
    assert saved["param_groups"] == tsaved["param_groups"]
    assert set(saved["state"]) == set(tsaved["state"])  # Adagrad has state from the start


@needs_torch
@pytest.mark.parametrize("name, options", [("SGD", dict(lr=0.1, momentum=0.9)),
                                           ("Adam", dict(lr=0.05, amsgrad=True)),
                                           ("RMSprop", dict(centered=True, momentum=0.5)),
                                           ("Adagrad", dict(lr=0.1)),
                                           ("Adadelta", {})])
def test_loading_a_torch_state_dict_converted_to_numpy(name, options):
    """Train 10 steps in PyTorch, load its state into gradlab, continue: same path as PyTorch."""
    half, topt = run(torch, name, options, steps=10)
    tstate = topt.state_dict()
    converted = {
        "state": {i: {k: (v.numpy() if isinstance(v, torch.Tensor) else v) for k, v in s.items()}
                  for i, s in tstate["state"].items()},
        "param_groups": tstate["param_groups"],
    }
    params = [gradlab.tensor(v.copy(), requires_grad=True) for v in half]
    opt = getattr(gradlab.optim, name)(params)
    opt.load_state_dict(converted)
    assert opt.param_groups[0]["lr"] == tstate["param_groups"][0]["lr"]
    tparams = topt.param_groups[0]["params"]
    for step in range(10, 20):
        for lib, ps, o in ((gradlab, params, opt), (torch, tparams, topt)):
            current = [p.detach().numpy().copy() for p in ps]
            for p, g in zip(ps, grad_of(current, step)):
                p.grad = lib.tensor(g)
            o.step()
    for p, tp in zip(params, tparams):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-7)
    assert name == "SGD" or type(opt.state[params[0]]["step"]) is int
