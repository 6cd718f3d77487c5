"""Adamax, NAdam, RAdam, ASGD, Rprop and Adafactor against PyTorch: trajectories for every
option set, signatures and defaults, state and state_dict layout, events, memory, errors.

The trajectories reuse test_optimizers_vs_torch's helper: float64 parameters, the same smooth
loss, each library's gradient at its own current values, 25 steps, compared at 1e-7.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import gradlab
from gradlab import events
from gradlab.optim import ASGD, Adafactor, Adamax, NAdam, RAdam, Rprop
from tests.optim.test_optimizers_vs_torch import case_id, grad_of, run, start_values
from tests.oracle import needs_torch, torch

NAMES = ["Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "Adafactor"]

CASES = [
    ("Adamax", {}),
    ("Adamax", dict(lr=0.05, betas=(0.8, 0.9), eps=1e-4)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("NAdam", {}),
    ("NAdam", dict(lr=0.05, betas=(0.8, 0.9), eps=1e-6)),
    ("NAdam", dict(lr=0.05, momentum_decay=0.05)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", {}),
    ("RAdam", dict(lr=0.05, betas=(0.8, 0.9), eps=1e-6)),  # rho_t > 5 from step 6 on
    ("RAdam", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("RAdam", dict(lr=0.05, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True)),
    ("ASGD", {}),
    ("ASGD", dict(lr=0.05, lambd=0.1, alpha=0.5, t0=5)),  # averaging starts at step 6
    ("ASGD", dict(lr=0.02, weight_decay=0.1, t0=3)),
    ("ASGD", dict(lr=0.02, maximize=True, t0=10)),
    ("Rprop", {}),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))),  # both clamps bite
    ("Rprop", dict(lr=0.05, maximize=True)),
    ("Adafactor", {}),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-3, 1e-2), d=1.5)),
    ("Adafactor", dict(lr=0.05, weight_decay=0.1)),
    ("Adafactor", dict(maximize=True, eps=(None, 0.1), d=2.0)),
]

# PyTorch keeps these per-parameter numbers as float32 0-d tensors (the default scalar dtype);
# gradlab keeps Python floats, so they agree to float32 precision only.
FLOAT32_SCALARS = {"eta", "mu", "mu_product"}


def assert_state_matches(state, tstate, scalar_rtol=1e-6, rtol=1e-7):
    """Same keys in the same order, same values (arrays to ``rtol`` of their largest entry:
    an entry that crosses zero can't be compared relative to itself)."""
    assert list(state) == list(tstate)  # the same keys, in PyTorch's order
    for key, value in state.items():
        expected = tstate[key]
        if key == "step":
            assert type(value) is int and value == int(expected)
        elif key in FLOAT32_SCALARS:
            assert isinstance(value, float)
            assert value == pytest.approx(expected.item(), rel=scalar_rtol)
        else:
            assert value.dtype is gradlab.float64
            expected = expected.numpy()
            np.testing.assert_allclose(value.numpy(), expected, rtol=rtol,
                                       atol=rtol * np.abs(expected).max() + 1e-15)


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_trajectory_and_state_match_torch(case):
    name, options = case
    ours, opt = run(gradlab, name, options)
    theirs, topt = run(torch, name, options)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-12)
    assert not np.allclose(ours[0], start_values()[0], atol=1e-3)  # the parameters did move
    for p, tp in zip(opt.param_groups[0]["params"], topt.param_groups[0]["params"]):
        assert_state_matches(opt.state[p], topt.state[tp])


@pytest.fixture
def torch_float64_scalars():
    """PyTorch's scalar optimizer state (step, eta, mu, mu_product) in float64."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


@needs_torch
@pytest.mark.parametrize("case", [c for c in CASES if c[0] in ("NAdam", "ASGD")],
                         ids=case_id)
def test_with_float64_scalar_state_the_match_is_to_rounding(case, torch_float64_scalars):
    """The 1e-8 gaps above come only from PyTorch's float32 eta/mu/mu_product: with them in
    float64 the paths agree to 1e-12."""
    name, options = case
    ours, opt = run(gradlab, name, options)
    theirs, topt = run(torch, name, options)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    tp = topt.param_groups[0]["params"][0]
    assert_state_matches(opt.state[opt.param_groups[0]["params"][0]], topt.state[tp],
                         scalar_rtol=1e-13, rtol=1e-12)


@needs_torch
def test_radam_takes_both_branches():
    """betas[1]=0.9: rho_t <= 5 for the first steps (plain momentum), > 5 after."""
    beta2 = 0.9
    rho_inf = 2 / (1 - beta2) - 1
    rho = [rho_inf - 2 * t * beta2 ** t / (1 - beta2 ** t) for t in range(1, 26)]
    assert rho[0] <= 5 < rho[-1]
    ours, _ = run(gradlab, "RAdam", dict(lr=0.05, betas=(0.9, beta2)), steps=3)
    theirs, _ = run(torch, "RAdam", dict(lr=0.05, betas=(0.9, beta2)), steps=3)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)


@needs_torch
@pytest.mark.parametrize("shape", [(2, 3, 4), (), (5,)], ids=str)
@pytest.mark.parametrize("options", [{}, dict(lr=0.1, weight_decay=0.1, d=1.2)], ids=str)
def test_adafactor_factors_the_last_two_dims_and_keeps_vectors_whole(shape, options):
    rng = np.random.default_rng(3)
    start = rng.standard_normal(shape)
    results = []
    for lib in (gradlab, torch):
        p = lib.tensor(start.copy(), requires_grad=True)
        opt = lib.optim.Adafactor([p], **options)
        for step in range(20):
            value = p.detach().numpy()
            p.grad = lib.tensor(value ** 3 - 0.5 * value + 0.1 * step)
            opt.step()
        results.append((p.detach().numpy().copy(), opt.state[p]))
    (ours, state), (theirs, tstate) = results
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-12)
    assert_state_matches(state, tstate)
    if len(shape) > 1:
        assert state["row_var"].shape == (2, 3, 1) and state["col_var"].shape == (2, 1, 4)


@needs_torch
def test_adafactor_eps1_none_is_the_parameters_dtype_epsilon():
    """float32 parameters: eps1 = finfo(float32).eps; with gradients this small it decides
    the step, so float64's epsilon would give a different path."""
    start = np.array([[0.5, -1.0], [2.0, 0.25]], dtype=np.float32)

    def train(lib, eps):
        p = lib.tensor(start.copy(), requires_grad=True)
        opt = lib.optim.Adafactor([p], lr=0.1, eps=eps)
        for step in range(5):
            p.grad = lib.tensor(np.full((2, 2), 1e-9 * (step + 1), dtype=np.float32))
            opt.step()
        return p.detach().numpy().copy()

    ours, theirs = train(gradlab, (None, 1e-3)), train(torch, (None, 1e-3))
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    np.testing.assert_allclose(train(gradlab, (float(np.finfo(np.float32).eps), 1e-3)), ours,
                               rtol=1e-6)
    assert not np.allclose(train(gradlab, (float(np.finfo(np.float64).eps), 1e-3)), ours,
                           rtol=1e-3)


# --- signatures, defaults, repr, state_dict ----------------------------------------------------

def _signature(cls):
    return [(p.name, p.kind, p.default) for p in inspect.signature(cls).parameters.values()]


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_signature_defaults_and_repr_match_torch(name):
    assert _signature(getattr(gradlab.optim, name)) == _signature(getattr(torch.optim, name))
    values = start_values()
    ours = getattr(gradlab.optim, name)([gradlab.tensor(values[1], requires_grad=True)])
    theirs = getattr(torch.optim, name)([torch.tensor(values[1], requires_grad=True)])
    assert ours.defaults == theirs.defaults
    assert list(ours.defaults) == list(theirs.defaults)
    assert repr(ours) == repr(theirs)
    assert ours.state_dict() == {"state": {}, "param_groups": theirs.state_dict()["param_groups"]}


def _numpy_state_dict(saved):
    def plain(v):
        return v.numpy() if isinstance(v, (torch.Tensor, gradlab.Tensor)) else v

    return {"state": {i: {k: plain(v) for k, v in s.items()} for i, s in saved["state"].items()},
            "param_groups": saved["param_groups"]}


@needs_torch
@pytest.mark.parametrize("case", [c for c in CASES if c[1]], ids=case_id)
def test_state_dict_has_torchs_layout_and_loading_it_continues_torchs_path(case):
    """Train 10 steps in PyTorch; gradlab's state_dict after the same 10 steps has the same
    structure; PyTorch's state loaded into gradlab continues on PyTorch's path."""
    name, options = case
    half, topt = run(torch, name, options, steps=10)
    _, opt = run(gradlab, name, options, steps=10)
    ours, tsaved = opt.state_dict(), topt.state_dict()
    assert ours["param_groups"] == tsaved["param_groups"]
    assert {i: list(s) for i, s in ours["state"].items()} == \
        {i: list(s) for i, s in tsaved["state"].items()}
    params = [gradlab.tensor(v.copy(), requires_grad=True) for v in half]
    resumed = getattr(gradlab.optim, name)(params, lr=123.0)  # the saved options win
    resumed.load_state_dict(_numpy_state_dict(tsaved))
    assert resumed.param_groups[0]["lr"] == options.get("lr", topt.defaults["lr"])
    for key, value in resumed.state[params[0]].items():  # numbers stay numbers
        assert isinstance(value, gradlab.Tensor) or type(value) is \
            (int if key == "step" else float)
    tparams = topt.param_groups[0]["params"]
    sign = -1.0 if options.get("maximize") else 1.0
    for step in range(10, 20):
        for lib, ps, o in ((gradlab, params, resumed), (torch, tparams, topt)):
            current = [p.detach().numpy().copy() for p in ps]
            for p, g in zip(ps, grad_of(current, step)):
                p.grad = lib.tensor(sign * g)
            o.step()
    for p, tp in zip(params, tparams):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-7,
                                   atol=1e-12)


@pytest.mark.parametrize("case", [c for c in CASES if c[1]], ids=case_id)
def test_own_state_dict_round_trip_continues_the_same_path(case):
    name, options = case
    expected, _ = run(gradlab, name, options, steps=20)
    half, opt = run(gradlab, name, options, steps=10)
    saved = opt.state_dict()
    params = [gradlab.tensor(v.copy(), requires_grad=True) for v in half]
    resumed = getattr(gradlab.optim, name)(params)
    resumed.load_state_dict(saved)
    sign = -1.0 if options.get("maximize") else 1.0
    for step in range(10, 20):
        current = [p.detach().numpy().copy() for p in params]
        for p, g in zip(params, grad_of(current, step)):
            p.grad = gradlab.tensor(sign * g)
        resumed.step()
    for p, e in zip(params, expected):
        np.testing.assert_allclose(p.detach().numpy(), e, rtol=1e-12)
    tensors = [k for k, v in opt.state[opt.param_groups[0]["params"][0]].items()
               if isinstance(v, gradlab.Tensor)]
    assert tensors and all(resumed.state[params[0]][k] is not
                           opt.state[opt.param_groups[0]["params"][0]][k] for k in tensors)


# --- events and memory --------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_one_optimizer_step_event_per_parameter_with_the_state_before_and_after(name):
    ps = [gradlab.tensor(v, requires_grad=True) for v in start_values()]
    opt = getattr(gradlab.optim, name)(ps, lr=0.05)
    seen = []
    with events.subscribe(seen.append):
        for step in range(2):
            for p, g in zip(ps, grad_of([p.detach().numpy() for p in ps], step)):
                p.grad = gradlab.tensor(g)
            opt.step()
    updates = [e for e in seen if isinstance(e, events.OptimizerStep)]
    assert [(e.optimizer, e.group, e.param.tensor) for e in updates] == \
        [(name, 0, ps[0]), (name, 0, ps[1])] * 2
    assert updates[0].state_before == {} and updates[0].state_after["step"] == 1
    assert updates[2].state_before.keys() == updates[0].state_after.keys()
    for key, value in updates[0].state_after.items():  # step 2 starts where step 1 ended
        np.testing.assert_array_equal(updates[2].state_before[key], value)
    assert updates[2].state_after["step"] == 2
    assert all(e.update_norm > 0 and e.lr == 0.05 for e in updates)


@pytest.mark.parametrize("cls, buffers", [(Adamax, 2), (NAdam, 2), (RAdam, 2), (ASGD, 1),
                                          (Rprop, 2)])
def test_state_counts_as_optimizer_memory(cls, buffers):
    def optimizer_bytes():
        return gradlab.memory_stats()["optimizer_bytes"]

    start = optimizer_bytes()
    ps = [gradlab.tensor(v, requires_grad=True) for v in start_values()]
    opt = cls(ps)
    for p in ps:
        p.grad = gradlab.ones_like(p)
    opt.step()
    assert optimizer_bytes() - start == buffers * sum(p.nbytes for p in ps)
    del opt
    assert optimizer_bytes() == start


def test_adafactor_state_is_n_plus_m_numbers_for_an_n_by_m_matrix():
    start = gradlab.memory_stats()["optimizer_bytes"]
    w = gradlab.zeros(30, 40, dtype=gradlab.float64, requires_grad=True)
    b = gradlab.zeros(40, dtype=gradlab.float64, requires_grad=True)
    opt = Adafactor([w, b])
    w.grad, b.grad = gradlab.ones_like(w), gradlab.ones_like(b)
    opt.step()
    assert gradlab.memory_stats()["optimizer_bytes"] - start == (30 + 40 + 40) * 8
    assert set(opt.state[w]) == {"step", "row_var", "col_var"}
    assert set(opt.state[b]) == {"step", "variance"}


def test_asgd_keeps_the_average_of_the_iterates_once_averaging_starts():
    w = gradlab.tensor([0.0], dtype=gradlab.float64, requires_grad=True)
    opt = ASGD([w], lr=0.1, lambd=0.0, t0=2)
    iterates = []
    for _ in range(6):
        w.grad = gradlab.tensor([-1.0], dtype=gradlab.float64)  # w rises by eta each step
        opt.step()
        iterates.append(w.item())
    np.testing.assert_allclose(iterates, [0.1 * k for k in range(1, 7)])
    # step t uses mu = 1/max(1, t-1 - t0), set after step t-1: ax copies w through step 4,
    # then is the mean of the iterates from step 4 on
    assert opt.state[w]["ax"].item() == pytest.approx(np.mean(iterates[3:]), rel=1e-12)
    assert opt.state[w]["mu"] == 1 / 4 and opt.state[w]["eta"] == 0.1


def test_rprop_grows_steps_while_the_sign_holds_and_shrinks_them_when_it_flips():
    w = gradlab.tensor([0.0], dtype=gradlab.float64, requires_grad=True)
    opt = Rprop([w], lr=0.1)
    moves = []
    for g in (1.0, 1.0, -1.0, -1.0):
        w.grad = gradlab.tensor([g], dtype=gradlab.float64)
        before = w.item()
        opt.step()
        moves.append(w.item() - before)
    # 0.1, then ×1.2; the flip halves the step and skips the move; then a neutral step
    np.testing.assert_allclose(moves, [-0.1, -0.12, 0.0, 0.06])


def test_foreach_is_accepted_and_changes_nothing():
    for name in NAMES:
        a, _ = run(gradlab, name, dict(foreach=True), steps=3)
        b, _ = run(gradlab, name, dict(foreach=False), steps=3)
        assert np.array_equal(a[0], b[0])


# --- errors ----------------------------------------------------------------------------------

INVALID = [
    ("Adamax", dict(lr=-1), r"Adamax: lr must be >= 0, got -1"),
    ("Adamax", dict(eps=-1), r"Adamax: eps must be >= 0"),
    ("Adamax", dict(betas=(1.0, 0.9)), r"Adamax: betas\[0\] must be in \[0, 1\), got 1.0"),
    ("Adamax", dict(betas=(0.9, -0.1)), r"Adamax: betas\[1\] must be in \[0, 1\)"),
    ("Adamax", dict(weight_decay=-1), r"Adamax: weight_decay must be >= 0"),
    ("NAdam", dict(lr=-1), r"NAdam: lr must be >= 0"),
    ("NAdam", dict(eps=-1), r"NAdam: eps must be >= 0"),
    ("NAdam", dict(betas=(1.5, 0.9)), r"NAdam: betas\[0\] must be in \[0, 1\)"),
    ("NAdam", dict(betas=(0.9, 1.0)), r"NAdam: betas\[1\] must be in \[0, 1\)"),
    ("NAdam", dict(weight_decay=-1), r"NAdam: weight_decay must be >= 0"),
    ("NAdam", dict(momentum_decay=-1), r"NAdam: momentum_decay must be >= 0, got -1 \(how "
                                       r"fast the momentum warms up"),
    ("RAdam", dict(lr=-1), r"RAdam: lr must be >= 0"),
    ("RAdam", dict(eps=-1), r"RAdam: eps must be >= 0"),
    ("RAdam", dict(betas=(-0.1, 0.9)), r"RAdam: betas\[0\] must be in \[0, 1\)"),
    ("RAdam", dict(betas=(0.9, 2.0)), r"RAdam: betas\[1\] must be in \[0, 1\)"),
    ("RAdam", dict(weight_decay=-1), r"RAdam: weight_decay must be >= 0"),
    ("ASGD", dict(lr=-1), r"ASGD: lr must be >= 0"),
    ("ASGD", dict(weight_decay=-1), r"ASGD: weight_decay must be >= 0"),
    ("Rprop", dict(lr=-1), r"Rprop: lr must be >= 0"),
    ("Rprop", dict(etas=(1.2, 0.5)), r"Rprop: etas must satisfy 0 < etas\[0\] < 1 < etas\[1\], "
                                     r"got 1.2, 0.5.*Fix: e.g. etas=\(0.5, 1.2\)"),
    ("Rprop", dict(etas=(0.0, 1.2)), r"etas must satisfy .* got 0.0, 1.2"),
    ("Rprop", dict(etas=(0.5, 1.0)), r"etas must satisfy .* got 0.5, 1.0"),
    ("Adafactor", dict(lr=-1), r"Adafactor: lr must be >= 0"),
    ("Adafactor", dict(beta2_decay=0.5), r"Adafactor: beta2_decay must be <= 0, got 0.5"),
    ("Adafactor", dict(eps=(-1e-3, 1e-3)), r"Adafactor: eps\[0\] must be >= 0"),
    ("Adafactor", dict(eps=(None, -1.0)), r"Adafactor: eps\[1\] must be >= 0"),
    ("Adafactor", dict(d=0.5), r"Adafactor: d must be >= 1, got 0.5 \(the update's RMS"),
    ("Adafactor", dict(weight_decay=-1), r"Adafactor: weight_decay must be >= 0"),
]


@pytest.mark.parametrize("name, options, match", INVALID,
                         ids=[case_id(c[:2]) for c in INVALID])
def test_invalid_options_raise_where_torch_raises(name, options, match):
    with pytest.raises(ValueError, match=match):
        getattr(gradlab.optim, name)([gradlab.zeros(2, requires_grad=True)], **options)
    with pytest.raises(ValueError, match=match):  # per group, too
        getattr(gradlab.optim, name)([{"params": [gradlab.zeros(2, requires_grad=True)],
                                       **options}])
    if torch is not None:
        with pytest.raises(ValueError):  # PyTorch refuses the same value
            getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **options)


@pytest.mark.parametrize("make, error, match", [
    (lambda p: Adamax(p, betas=0.9), ValueError, r"Adamax: betas must be a pair"),
    (lambda p: Rprop(p, step_sizes=1e-6), ValueError, r"Rprop: step_sizes must be a pair"),
    (lambda p: Adafactor(p, eps=1e-3), ValueError, r"Adafactor: eps must be a pair"),
    (lambda p: NAdam(p, lr="1e-3"), TypeError, r"NAdam: lr must be a number, got str"),
    (lambda p: Adamax(p, capturable=True), NotImplementedError, r"Adamax: capturable=True"),
    (lambda p: NAdam(p, differentiable=True), NotImplementedError, r"NAdam: differentiable"),
    (lambda p: RAdam(p, capturable=True), NotImplementedError, r"RAdam: capturable=True"),
    (lambda p: ASGD(p, differentiable=True), NotImplementedError, r"ASGD: differentiable"),
    (lambda p: Rprop(p, capturable=True), NotImplementedError, r"Rprop: capturable=True"),
])
def test_other_errors_teach(make, error, match):
    with pytest.raises(error, match=match):
        make([gradlab.zeros(2, requires_grad=True)])


@needs_torch
def test_options_torch_accepts_are_accepted():
    """ASGD checks only lr and weight_decay, Rprop no step_sizes order, as in PyTorch."""
    for name, options in (("ASGD", dict(lambd=-1.0, alpha=-2.0, t0=-5)),
                          ("Rprop", dict(step_sizes=(1.0, 0.1))),
                          ("Adafactor", dict(eps=(0.0, 0.0), beta2_decay=0.0, d=1.0))):
        w = gradlab.zeros(2, requires_grad=True)
        assert getattr(gradlab.optim, name)([w], **options).param_groups[0]["params"] == [w]
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **options)
