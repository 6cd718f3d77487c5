"""The Optimizer base: parameter groups, errors, zero_grad, closures, state_dict, hooks,
events and memory accounting, checked on the algorithms that use them."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab import events
from gradlab.optim import SGD, Adadelta, Adagrad, Adam, AdamW, RMSprop
from gradlab.optim import optimizer as optimizer_module
from tests.oracle import needs_torch, torch

ALGORITHMS = [
    (SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
    (Adam, dict(lr=0.1, amsgrad=True)),
    (AdamW, dict(lr=0.1)),
    (RMSprop, dict(lr=0.01, centered=True, momentum=0.5)),
    (Adagrad, dict(lr=0.1, lr_decay=0.01)),
    (Adadelta, dict()),
]
ALGORITHM_IDS = [cls.__name__ for cls, _ in ALGORITHMS]


def params(seed=0, lib=gradlab):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal(s), requires_grad=True) for s in ((3, 2), (2,))]


def set_grads(ps, step, lib=gradlab):
    """A gradient that depends on the current values and the step (a non-trivial path)."""
    for k, p in enumerate(ps):
        value = p.detach().numpy()
        p.grad = lib.tensor(value ** 3 - 0.5 * value + 0.1 * (step + k))


def train(opt, ps, steps, start=0, lib=gradlab):
    for step in range(start, start + steps):
        set_grads(ps, step, lib)
        opt.step()
    return [p.detach().numpy().copy() for p in ps]


# --- construction and parameter groups -----------------------------------------------------

def test_params_may_be_any_iterable_of_tensors():
    ps = params()
    opt = SGD((p for p in ps), lr=0.1)
    assert len(opt.param_groups) == 1 and opt.param_groups[0]["params"] == ps
    assert opt.param_groups[0]["lr"] == 0.1 and opt.defaults["lr"] == 0.1


def test_per_group_options_override_the_defaults():
    w, b = params()
    opt = SGD([{"params": [w]}, {"params": b, "lr": 1.0, "momentum": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0]
    assert [g["momentum"] for g in opt.param_groups] == [0, 0.5]
    w0, b0 = w.detach().numpy().copy(), b.detach().numpy().copy()
    w.grad, b.grad = gradlab.ones(3, 2, dtype=gradlab.float64), gradlab.ones(2,
                                                                             dtype=gradlab.float64)
    opt.step()
    np.testing.assert_allclose(w.detach().numpy(), w0 - 0.1)
    np.testing.assert_allclose(b.detach().numpy(), b0 - 1.0)
    assert "momentum_buffer" in opt.state[b] and "momentum_buffer" not in opt.state[w]


@needs_torch
def test_per_group_trajectory_and_repr_match_torch():
    def build(lib):
        w, b = params(lib=lib)
        return lib.optim.Adam([{"params": [w], "lr": 0.05, "amsgrad": True},
                               {"params": [b], "betas": (0.5, 0.9)}], lr=0.2), [w, b]

    (opt, ps), (topt, tps) = build(gradlab), build(torch)
    assert repr(opt) == repr(topt)
    ours, theirs = train(opt, ps, 20), train(topt, tps, 20, lib=torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-7)


def test_add_param_group_fills_defaults_and_trains_the_new_group():
    w, b = params()
    opt = Adam([w], lr=0.1)
    opt.add_param_group({"params": b, "eps": 1e-3})
    group = opt.param_groups[1]
    assert group["params"] == [b] and group["eps"] == 1e-3 and group["lr"] == 0.1
    before = b.detach().numpy().copy()
    set_grads([w, b], 0)
    opt.step()
    assert not np.allclose(b.detach().numpy(), before) and opt.state[b]["step"] == 1


def test_a_frozen_parameter_may_be_passed_and_is_skipped():
    frozen = gradlab.nn.Parameter(gradlab.ones(2), requires_grad=False)
    w = gradlab.ones(2, requires_grad=True)
    opt = SGD([frozen, w], lr=0.5)
    w.grad = gradlab.ones(2)
    opt.step()
    assert frozen.tolist() == [1.0, 1.0] and w.tolist() == [0.5, 0.5]


def test_construction_errors_teach():
    w = gradlab.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match=r"single Tensor of shape \(2,\).*wrap it in a list"):
        SGD(w)
    with pytest.raises(TypeError, match="got a set: a set's order changes between runs.*use "
                                        "a list"):
        SGD({w})
    with pytest.raises(TypeError, match="got a set"):
        SGD([{"params": {w}}])
    with pytest.raises(ValueError, match="SGD got an empty parameter list"):
        SGD([])
    with pytest.raises(TypeError, match="parameter 1 of group 0 is a list, not a Tensor"):
        SGD([w, [1.0]])
    with pytest.raises(ValueError, match=r"parameter 0 of group 0 \(shape \(2,\)\) is not a "
                                         "leaf: it was computed by 'mul'"):
        SGD([w * 2])
    with pytest.raises(ValueError, match=r"doesn't require grad.*requires_grad=True"):
        SGD([gradlab.zeros(2)])
    with pytest.raises(ValueError, match="lists parameter 1 .* twice"):
        SGD([w, w])
    with pytest.raises(ValueError, match=r"is in parameter group 0 and again in group 1"):
        SGD([{"params": [w]}, {"params": [w]}])
    with pytest.raises(TypeError, match="add_param_group: expected a dict"):
        SGD([w]).add_param_group([gradlab.zeros(1, requires_grad=True)])
    with pytest.raises(ValueError, match="needs a 'params' entry, got the keys \\['lr'\\]"):
        SGD([{"lr": 0.1}])


@pytest.mark.parametrize("make, error, match", [
    (lambda p: SGD(p, lr=-0.1), ValueError, r"SGD: lr must be >= 0, got -0.1"),
    (lambda p: SGD(p, momentum=-1), ValueError, r"SGD: momentum must be >= 0, got -1"),
    (lambda p: SGD(p, weight_decay=-1), ValueError, r"SGD: weight_decay must be >= 0"),
    (lambda p: SGD(p, nesterov=True), ValueError, r"nesterov=True needs momentum > 0 and "
                                                  r"dampening = 0, got momentum=0"),
    (lambda p: SGD(p, momentum=0.9, dampening=0.1, nesterov=True), ValueError,
     r"dampening=0.1"),
    (lambda p: SGD(p, lr="0.1"), TypeError, r"SGD: lr must be a number, got str '0.1'"),
    (lambda p: SGD([{"params": p, "lr": -1}]), ValueError, r"SGD: lr must be >= 0, got -1"),
    (lambda p: Adam(p, betas=(1.2, 0.999)), ValueError,
     r"Adam: betas\[0\] must be in \[0, 1\), got 1.2 \(the decay of the gradient's"),
    (lambda p: Adam(p, betas=(0.9, 1.0)), ValueError, r"Adam: betas\[1\] must be in \[0, 1\)"),
    (lambda p: Adam(p, betas=0.9), ValueError, r"Adam: betas must be a pair"),
    (lambda p: Adam(p, eps=-1e-8), ValueError, r"Adam: eps must be >= 0"),
    (lambda p: Adam(p, lr=-1), ValueError, r"Adam: lr must be >= 0"),
    (lambda p: Adam(p, weight_decay=-1), ValueError, r"Adam: weight_decay must be >= 0"),
    (lambda p: AdamW(p, betas=(0.9, -0.1)), ValueError, r"AdamW: betas\[1\] must be in"),
    (lambda p: RMSprop(p, alpha=-0.5), ValueError, r"RMSprop: alpha must be >= 0, got -0.5"),
    (lambda p: RMSprop(p, momentum=-1), ValueError, r"RMSprop: momentum must be >= 0"),
    (lambda p: RMSprop(p, eps=-1), ValueError, r"RMSprop: eps must be >= 0"),
    (lambda p: RMSprop(p, lr=-1), ValueError, r"RMSprop: lr must be >= 0"),
    (lambda p: RMSprop(p, weight_decay=-1), ValueError, r"RMSprop: weight_decay must be >= 0"),
    (lambda p: Adagrad(p, lr_decay=-1), ValueError, r"Adagrad: lr_decay must be >= 0"),
    (lambda p: Adagrad(p, initial_accumulator_value=-1), ValueError,
     r"Adagrad: initial_accumulator_value must be >= 0"),
    (lambda p: Adagrad(p, eps=-1), ValueError, r"Adagrad: eps must be >= 0"),
    (lambda p: Adadelta(p, rho=1.5), ValueError, r"Adadelta: rho must be in \[0, 1\], got 1.5"),
    (lambda p: Adadelta(p, eps=-1), ValueError, r"Adadelta: eps must be >= 0"),
    (lambda p: Adadelta(p, lr=-1), ValueError, r"Adadelta: lr must be >= 0"),
    (lambda p: Adadelta(p, weight_decay=-1), ValueError, r"Adadelta: weight_decay must be >= 0"),
    (lambda p: SGD(p, fused=True), NotImplementedError, r"SGD: fused=True is not supported"),
    (lambda p: Adam(p, capturable=True), NotImplementedError, r"capturable=True is not "),
    (lambda p: RMSprop(p, differentiable=True), NotImplementedError, r"leave differentiable "
                                                                      r"at False"),
])
def test_hyperparameter_errors_teach(make, error, match):
    with pytest.raises(error, match=match):
        make([gradlab.zeros(2, requires_grad=True)])


def test_foreach_is_accepted_and_changes_nothing():
    a, b = params(), params()
    assert np.array_equal(train(Adam(a, foreach=True), a, 3)[0],
                          train(Adam(b, foreach=False), b, 3)[0])


# --- zero_grad, step, closure ---------------------------------------------------------------

def test_zero_grad_sets_to_none_or_fills_zeros():
    w, b = params()
    opt = SGD([w, b])
    set_grads([w, b], 0)
    opt.zero_grad()
    assert w.grad is None and b.grad is None
    set_grads([w, b], 0)
    grad = w.grad
    opt.zero_grad(set_to_none=False)
    assert w.grad is grad and w.grad.tolist() == [[0.0, 0.0]] * 3


def test_zero_grad_detaches_a_gradient_with_history():
    w = gradlab.tensor([1.0, 2.0], requires_grad=True)
    (w ** 3).sum().backward(create_graph=True)
    assert w.grad.grad_fn is not None
    SGD([w]).zero_grad(set_to_none=False)
    assert w.grad.grad_fn is None and w.grad.tolist() == [0.0, 0.0]


def test_parameters_without_grad_are_skipped():
    w, b = params()
    opt = Adam([w, b])
    b_before = b.detach().numpy().copy()
    w.grad = gradlab.ones_like(w)
    opt.step()
    assert b not in opt.state and np.array_equal(b.detach().numpy(), b_before)


def test_step_evaluates_the_closure_with_grad_on_and_returns_its_loss():
    w = gradlab.tensor([3.0], requires_grad=True)
    opt = SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()  # gradient 2w
        loss.backward()
        return loss

    with gradlab.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 9.0 and w.tolist() == [1.5]
    assert opt.step() is None and w.tolist() == [0.0]  # the same gradient (6), used again


# --- state_dict -------------------------------------------------------------------------------

@pytest.mark.parametrize("cls, options", ALGORITHMS, ids=ALGORITHM_IDS)
def test_state_dict_round_trip_continues_the_same_path(cls, options):
    uninterrupted = params()
    expected = train(cls(uninterrupted, **options), uninterrupted, 20)
    first = params()
    opt = cls(first, **options)
    train(opt, first, 10)
    saved = opt.state_dict()
    second = [gradlab.tensor(p.detach().numpy().copy(), requires_grad=True) for p in first]
    resumed = cls(second, lr=123.0)  # the saved options replace these
    resumed.load_state_dict(saved)
    assert resumed.param_groups[0]["lr"] == options.get("lr", opt.defaults["lr"])
    assert resumed.param_groups[0]["params"] == second
    got = train(resumed, second, 10, start=10)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    # the loaded state is a copy: training on did not touch the saved tensors
    state = opt.state[first[0]]
    key = next(k for k, v in state.items() if isinstance(v, gradlab.Tensor))
    assert saved["state"][0][key] is state[key]
    assert resumed.state[second[0]][key] is not state[key]


def test_state_dict_format_is_pytorchs():
    w, b = params()
    opt = SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    set_grads([w, b], 0)
    b.grad = None
    opt.step()
    saved = opt.state_dict()
    assert [g["params"] for g in saved["param_groups"]] == [[0], [1]]
    assert saved["param_groups"][1]["lr"] == 0.5 and "params" not in opt.defaults
    assert list(saved["state"]) == [0]  # only parameters that have state
    assert set(saved["state"][0]) == {"momentum_buffer"}


def test_load_state_dict_copies_to_the_parameters_dtype():
    w32 = gradlab.zeros(2, dtype=gradlab.float32, requires_grad=True)
    opt = Adam([w32])
    state = {"step": np.float32(3.0), "exp_avg": np.array([1.0, 2.0]),
             "exp_avg_sq": np.array([1.0, 4.0])}
    opt.load_state_dict({"state": {0: state}, "param_groups": [{**opt.defaults,
                                                                "params": [0]}]})
    loaded = opt.state[w32]
    assert loaded["step"] == 3 and type(loaded["step"]) is int
    assert loaded["exp_avg"].dtype is gradlab.float32 and loaded["exp_avg"].tolist() == [1, 2]


def test_load_state_dict_errors_teach():
    w, b = params()
    opt = SGD([w, b], momentum=0.9)
    other = SGD([{"params": [w]}, {"params": [b]}]).state_dict()
    with pytest.raises(ValueError, match="the saved state has 2 parameter group.*this "
                                         "optimizer has 1"):
        opt.load_state_dict(other)
    with pytest.raises(ValueError, match=r"parameter group 0 has 2 parameter\(s\) here but 1 "
                                         "in the saved state"):
        opt.load_state_dict(SGD([w]).state_dict())
    with pytest.raises(ValueError, match=r"expected a dict with the keys 'state' and "
                                         r"'param_groups'.*got \['lr'\]"):
        opt.load_state_dict({"lr": 0.1})
    bad = opt.state_dict()
    bad["state"] = {7: {"momentum_buffer": np.zeros(2)}}
    with pytest.raises(ValueError, match="refers to parameter 7, which no saved parameter"):
        opt.load_state_dict(bad)


# --- hooks ----------------------------------------------------------------------------------

def test_step_hooks_run_in_order_around_the_update_and_can_be_removed():
    w = gradlab.tensor([1.0], requires_grad=True)
    opt = SGD([w], lr=0.5)
    calls = []
    first = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre1", w.item())))
    opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre2", w.item())))
    opt.register_step_post_hook(lambda o, a, k: calls.append(("post", w.item(), o is opt)))
    w.grad = gradlab.ones(1)
    opt.step()
    assert calls == [("pre1", 1.0), ("pre2", 1.0), ("post", 0.5, True)]
    first.remove()
    calls.clear()
    opt.step()
    assert calls == [("pre2", 0.5), ("post", 0.0, True)]


def test_a_pre_hook_can_replace_the_arguments():
    w = gradlab.tensor([1.0], requires_grad=True)
    opt = SGD([w], lr=0.5)
    w.grad = gradlab.ones(1)
    opt.register_step_pre_hook(lambda o, args, kwargs: ((lambda: "replaced",), kwargs))
    assert opt.step() == "replaced"
    bad = SGD([w])
    bad.register_step_pre_hook(lambda o, a, k: "oops")
    with pytest.raises(RuntimeError, match="pre-hook must return None or a tuple"):
        bad.step()


# --- events ----------------------------------------------------------------------------------

def record(fn):
    seen = []
    with events.subscribe(seen.append):
        fn()
    return [e for e in seen if isinstance(e, (events.OptimizerStep, events.Phase))]


def test_events_one_per_updated_parameter_and_one_phase_per_step():
    w, b = params()
    opt = SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)

    grads = []

    def two_steps():
        for step in range(2):
            set_grads([w, b], step)
            grads.append(w.grad.numpy().copy())
            opt.step()

    seen = record(two_steps)
    assert [type(e).__name__ for e in seen] == \
        ["Phase", "OptimizerStep", "OptimizerStep", "Phase"] * 2
    assert [(e.kind, e.iteration) for e in seen if isinstance(e, events.Phase)] == \
        [("step", 1), ("step_end", 1), ("step", 2), ("step_end", 2)]
    assert {e.source for e in seen} == {id(opt)}
    updates = [e for e in seen if isinstance(e, events.OptimizerStep)]
    assert [(e.optimizer, e.group, e.lr, e.param.tensor) for e in updates[:2]] == \
        [("SGD", 0, 0.1, w), ("SGD", 1, 0.5, b)]
    assert "params" not in updates[1].options
    assert (updates[1].options["lr"], updates[1].options["momentum"]) == (0.5, 0.9)
    # step 1 with an empty buffer moves w by lr * grad: its size and the grad's norm
    assert updates[0].grad_norm == pytest.approx(np.linalg.norm(grads[0]))
    assert updates[0].update_norm == pytest.approx(0.1 * np.linalg.norm(grads[0]))
    # step 1: no state before; the buffer starts as the gradient
    assert updates[0].state_before == {}
    np.testing.assert_array_equal(updates[0].state_after["momentum_buffer"], grads[0])
    # step 2: before is step 1's after; after is the new buffer 0.9·buf + grad
    np.testing.assert_array_equal(updates[2].state_before["momentum_buffer"], grads[0])
    np.testing.assert_allclose(updates[2].state_after["momentum_buffer"],
                               0.9 * grads[0] + grads[1])
    assert seen[0].seq < seen[1].seq < seen[2].seq


def test_event_state_is_a_copy_with_numbers_as_numbers():
    w = gradlab.tensor([2.0], requires_grad=True)
    opt = Adam([w], lr=0.1)

    def steps():
        for _ in range(2):
            w.grad = gradlab.tensor([1.0])
            opt.step()

    updates = [e for e in record(steps) if isinstance(e, events.OptimizerStep)]
    assert updates[0].state_after["step"] == 1 and updates[1].state_before["step"] == 1
    assert updates[1].state_after["step"] == 2
    np.testing.assert_allclose(updates[0].state_after["exp_avg"], [0.1])  # (1 - 0.9)·1
    np.testing.assert_allclose(updates[1].state_after["exp_avg"], [0.19])  # 0.9·0.1 + 0.1
    assert isinstance(updates[0].state_after["exp_avg"], np.ndarray)


def test_nothing_is_emitted_or_copied_without_listeners(monkeypatch):
    assert not events.listeners
    emitted = []
    monkeypatch.setattr(events, "emit", emitted.append)

    def no_snapshot(state):
        raise AssertionError("snapshot taken with nobody listening")

    monkeypatch.setattr(optimizer_module, "snapshot", no_snapshot)
    w, b = params()
    opt = Adam([w, b])
    train(opt, [w, b], 3)
    assert emitted == [] and opt.state[w]["step"] == 3


# --- memory ------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls, options, buffers", [
    (SGD, dict(momentum=0.9), 1), (Adam, dict(), 2), (Adam, dict(amsgrad=True), 3),
    (RMSprop, dict(centered=True, momentum=0.5), 3), (Adagrad, dict(), 1), (Adadelta, dict(), 2),
])
def test_state_counts_as_optimizer_memory(cls, options, buffers):
    def optimizer_bytes():
        return gradlab.memory_stats()["optimizer_bytes"]

    start = optimizer_bytes()
    ps = params()
    opt = cls(ps, **options)
    train(opt, ps, 2)
    param_bytes = sum(p.nbytes for p in ps)
    assert optimizer_bytes() - start == buffers * param_bytes
    resumed = cls(params(1), **options)
    resumed.load_state_dict(opt.state_dict())
    assert optimizer_bytes() - start == 2 * buffers * param_bytes
    del opt, resumed
    assert optimizer_bytes() == start
