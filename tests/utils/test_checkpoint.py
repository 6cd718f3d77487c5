"""gradlab.utils.checkpoint: gradients equal to the plain run's (and PyTorch's), the same
dropout mask when recomputing, less saved-activation memory, the recompute visible in events,
PyTorch's warnings and errors."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import gradlab
from gradlab import events, nn
from gradlab.utils.checkpoint import checkpoint, checkpoint_sequential
from tests.oracle import needs_torch, torch

VARIANTS = [True, False]  # use_reentrant


def mlp(lib, depth=4, width=6, dropout=0.0):
    layers = [lib.nn.Linear(3, width), lib.nn.Tanh()]
    for _ in range(depth - 1):
        layers += [lib.nn.Linear(width, width), lib.nn.Tanh()]
        if dropout:
            layers.append(lib.nn.Dropout(dropout))
    return lib.nn.Sequential(*layers, lib.nn.Linear(width, 2)).double()


def x_data(seed=0):
    return np.random.default_rng(seed).standard_normal((5, 3))


def grads_of(model, x, run):
    """d(sum(y²))/d(x and every parameter) when y = run(model, x)."""
    model.zero_grad()
    x = gradlab.tensor(x, dtype=gradlab.float64, requires_grad=True)
    (run(model, x) ** 2).sum().backward()
    return [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()]


def assert_all_close(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_gradients_equal_the_plain_run(use_reentrant):
    gradlab.manual_seed(0)
    model = mlp(gradlab)
    plain = grads_of(model, x_data(), lambda m, x: m(x))
    one = grads_of(model, x_data(), lambda m, x: checkpoint(m, x, use_reentrant=use_reentrant))
    seq = grads_of(model, x_data(), lambda m, x: checkpoint_sequential(
        m, 3, x, use_reentrant=use_reentrant))
    assert_all_close(plain, one)
    assert_all_close(plain, seq)


@needs_torch
@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_checkpoint_sequential_matches_torch(use_reentrant):
    gradlab.manual_seed(1)
    model, reference = mlp(gradlab), mlp(torch)
    with torch.no_grad():
        for p, q in zip(model.parameters(), reference.parameters()):
            q.copy_(torch.from_numpy(p.detach().numpy().copy()))
    got = grads_of(model, x_data(), lambda m, x: checkpoint_sequential(
        m, 2, x, use_reentrant=use_reentrant))
    x = torch.tensor(x_data(), requires_grad=True)
    y = torch.utils.checkpoint.checkpoint_sequential(reference, 2, x,
                                                     use_reentrant=use_reentrant)
    (y ** 2).sum().backward()
    expected = [x.grad.numpy()] + [q.grad.numpy() for q in reference.parameters()]
    assert_all_close(got, expected)


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_recompute_sees_the_same_dropout_mask(use_reentrant):
    model = mlp(gradlab, dropout=0.5)

    def run_from_seed(run):
        gradlab.manual_seed(7)
        grads = grads_of(model, x_data(), run)
        return grads, gradlab.rand(3).numpy()  # where the stream stands afterwards

    plain, after_plain = run_from_seed(lambda m, x: m(x))
    kept, after_kept = run_from_seed(lambda m, x: checkpoint(m, x, use_reentrant=use_reentrant))
    assert_all_close(plain, kept)
    np.testing.assert_array_equal(after_plain, after_kept)  # the stream moved on as usual
    fresh, _ = run_from_seed(lambda m, x: checkpoint(m, x, use_reentrant=use_reentrant,
                                                      preserve_rng_state=False))
    assert not all(np.allclose(a, b) for a, b in zip(plain, fresh))  # another mask


def test_less_saved_activation_memory_between_forward_and_backward():
    gradlab.manual_seed(0)
    layers = []
    for _ in range(16):
        layers += [nn.Linear(64, 64), nn.ReLU()]
    model = nn.Sequential(*layers).double()
    x = gradlab.randn(128, 64, dtype=gradlab.float64, requires_grad=True)

    def held(run):
        before = gradlab.memory_stats()["activation_bytes"]
        y = run(x)
        kept = gradlab.memory_stats()["activation_bytes"] - before
        y.sum().backward()
        return kept

    one = 128 * 64 * 8  # bytes of one layer's activation
    # Plain: x and the 16 ReLU outputs (each Linear keeps its input: x or the previous ReLU's
    # output, the same buffer).
    assert held(model) == 17 * one
    # 4 segments of 4 layers: the inputs of the 3 checkpointed segments, then the last
    # segment as usual (its input is the third checkpoint's output, plus 4 ReLU outputs).
    checkpointed = held(lambda x: checkpoint_sequential(model, 4, x, use_reentrant=True))
    assert checkpointed == (3 + 1 + 4) * one
    assert held(lambda x: checkpoint_sequential(model, 4, x, use_reentrant=False)) == 8 * one


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_recompute_runs_through_the_dispatcher_during_backward(use_reentrant):
    gradlab.manual_seed(0)
    model = mlp(gradlab, depth=2)
    x = gradlab.tensor(x_data(), dtype=gradlab.float64, requires_grad=True)
    seen = []
    with events.subscribe(seen.append):
        y = checkpoint(model, x, use_reentrant=use_reentrant)
        y.sum().backward()
    begin = next(i for i, e in enumerate(seen) if isinstance(e, events.Phase)
                 and e.kind == "backward_begin")
    ops = lambda part: [e.op for e in part if isinstance(e, events.OpForward)]  # noqa: E731
    forward_ops, backward_ops = ops(seen[:begin]), ops(seen[begin:])
    assert "checkpoint" in forward_ops
    linear = [op for op in forward_ops if op != "checkpoint"]
    assert linear and all(op in backward_ops for op in set(linear))  # run again in backward


def test_non_reentrant_works_with_autograd_grad_kwargs_and_plain_inputs():
    gradlab.manual_seed(0)
    model = mlp(gradlab, depth=2)
    x = gradlab.tensor(x_data(), dtype=gradlab.float64)  # needs no gradient
    params = list(model.parameters())
    plain = gradlab.autograd.grad((model(x) * 3).sum(), params)
    y = checkpoint(lambda x, scale: model(x) * scale, x, use_reentrant=False, scale=3.0)
    assert y.requires_grad
    got = gradlab.autograd.grad(y.sum(), params)
    assert_all_close([g.numpy() for g in plain], [g.numpy() for g in got])
    assert all(p.grad is None for p in params)  # autograd.grad leaves .grad alone


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_gradcheck_through_a_checkpoint(use_reentrant):
    def f(a, b):
        return checkpoint(lambda a, b: ((a * b).sin(), a.exp() * 2), a, b,
                          use_reentrant=use_reentrant)

    rng = np.random.default_rng(3)
    a, b = (gradlab.tensor(rng.standard_normal(4), dtype=gradlab.float64, requires_grad=True)
            for _ in range(2))
    if use_reentrant:  # its backward writes .grad itself: autograd.grad refuses, as PyTorch's
        with pytest.raises(RuntimeError, match="use_reentrant=False"):
            gradlab.autograd.gradcheck(f, (a, b))
        return
    assert gradlab.autograd.gradcheck(f, (a, b))
    assert gradlab.autograd.gradgradcheck(f, (a, b))  # its backward is differentiable again


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_recomputation_runs_under_the_forward_autocast(use_reentrant):
    gradlab.manual_seed(0)
    model = gradlab.nn.Sequential(gradlab.nn.Linear(4, 8), gradlab.nn.Tanh(),
                                  gradlab.nn.Linear(8, 2))
    x = gradlab.randn(3, 4, requires_grad=True)
    grads = []
    for wrap in (False, True):
        model.zero_grad()
        x.grad = None
        with gradlab.autocast("cpu"):
            out = checkpoint(model, x, use_reentrant=use_reentrant) if wrap else model(x)
        assert out.dtype is gradlab.bfloat16
        out.float().sum().backward()
        grads.append([p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy()])
    for plain, checkpointed in zip(*grads):
        np.testing.assert_array_equal(plain, checkpointed)


@pytest.mark.filterwarnings("ignore:None of the inputs have requires_grad")  # x needs none
@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_forward_mode_passes_through_a_checkpoint(use_reentrant):
    gradlab.manual_seed(0)
    model = mlp(gradlab, depth=2, dropout=0.5)
    x, t = (gradlab.tensor(x_data(seed), dtype=gradlab.float64) for seed in (0, 1))

    def jvp_from_seed(f):
        gradlab.manual_seed(3)
        return gradlab.func.jvp(f, (x,), (t,))

    plain = jvp_from_seed(model)
    through = jvp_from_seed(lambda x: checkpoint(model, x, use_reentrant=use_reentrant))
    for a, b in zip(plain, through):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


def test_context_fn_wraps_the_forward_and_the_recompute():
    calls = []

    @contextlib.contextmanager
    def note(what):
        calls.append(what)
        yield

    x = gradlab.tensor([0.5, 1.0], dtype=gradlab.float64, requires_grad=True)
    y = checkpoint(lambda x: x.sin(), x, use_reentrant=False,
                   context_fn=lambda: (note("forward"), note("recompute")))
    assert calls == ["forward"]
    y.sum().backward()
    assert calls == ["forward", "recompute"]
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5, 1.0]))


def test_use_reentrant_not_passed_warns_and_means_true():
    x = gradlab.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        y = checkpoint(gradlab.sin, x)
    assert y.grad_fn.name() == "CheckpointFunctionBackward"
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter"):
        checkpoint_sequential([gradlab.sin, gradlab.cos], 1, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint(gradlab.sin, x, use_reentrant=False)  # passed: no warning


def test_reentrant_with_no_input_requiring_grad_warns_as_torch():
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(gradlab.sin, gradlab.tensor([1.0]), use_reentrant=True)
    assert not y.requires_grad


def test_errors_that_teach():
    x = gradlab.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda x, scale: x * scale, x, use_reentrant=True, scale=2)
    with pytest.raises(ValueError, match="`context_fn` or `debug` is only supported when"):
        checkpoint(gradlab.sin, x, use_reentrant=True, debug=True)
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(gradlab.sin, x, use_reentrant=False, determinism_check="strict")
    with pytest.raises(TypeError, match="must return a Tensor or a tuple of Tensors"):
        checkpoint(lambda x: (x, 3), x, use_reentrant=True)
    with pytest.raises(TypeError, match="expected a function"):
        checkpoint(gradlab.sin(x), x, use_reentrant=True)
    with pytest.raises(ValueError, match="segments must be between 1 and the number"):
        checkpoint_sequential([gradlab.sin], 2, x, use_reentrant=True)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint_sequential([gradlab.sin], 1, x, use_reentrant=False, foo=1)
    y = checkpoint(lambda x: x.detach() * 2, x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="none of output has requires_grad=True"):
        y.sum().backward()
    outside = x * 2  # not a leaf, not an argument
    with pytest.raises(RuntimeError, match="not one of its arguments and is not a leaf"):
        checkpoint(lambda x: x * outside, x, use_reentrant=False)


def test_determinism_check_catches_a_different_recompute():
    shapes = iter([(2,), (1,)])
    x = gradlab.tensor([1.0, 2.0], requires_grad=True)
    f = lambda x: x[: next(shapes)[0]] * 2  # noqa: E731 - shorter the second time
    y = checkpoint(f, x, use_reentrant=False)
    with pytest.raises(RuntimeError, match="recomputed values have different metadata"):
        y.sum().backward()
    shapes = iter([(2,), (1,)])
    y = checkpoint(lambda x: x[: next(shapes)[0]] * 2, x, use_reentrant=False,
                   determinism_check="none")
    with pytest.raises(RuntimeError):  # unchecked, the mismatch surfaces later, less clearly
        y.sum().backward()
