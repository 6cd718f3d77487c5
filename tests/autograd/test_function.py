"""Custom ops: ``gradlab.autograd.Function`` with forward(ctx, ...) and backward(ctx, ...)."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.autograd import Function, gradcheck, gradgradcheck
from tests.oracle import needs_torch, torch


class ScaledCube(Function):
    """scale * x^3, with a non-tensor argument.   d/dx = 3 * scale * x^2."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        ctx.seen_needs = ctx.needs_input_grad
        return x * x * x * scale

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x * ctx.scale, None


class MulAdd(Function):
    """a * b + c.   d/da = b, d/db = a, d/dc = 1; skips the gradients nobody needs."""

    @staticmethod
    def forward(ctx, a, b, c):
        ctx.save_for_backward(a, b)
        return a * b + c

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = grad * b if ctx.needs_input_grad[0] else None
        gb = grad * a if ctx.needs_input_grad[1] else None
        gc = grad if ctx.needs_input_grad[2] else None
        return ga, gb, gc


def f64(values, requires_grad=True):
    return gradlab.tensor(values, dtype=gradlab.float64, requires_grad=requires_grad)


def test_forward_and_backward():
    x = f64([1.0, 2.0])
    y = ScaledCube.apply(x, 2.0)
    assert y.tolist() == [2.0, 16.0]
    assert y.grad_fn.name() == "ScaledCubeBackward0" and y.grad_fn.op == "scaledCube"
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]


def test_needs_input_grad_reports_each_argument():
    node = ScaledCube.apply(f64([1.0]), 2.0).grad_fn
    assert node.seen_needs == (True, False)
    a, b, c = f64([1.0]), f64([2.0], requires_grad=False), f64([3.0])
    out = MulAdd.apply(a, b, c)
    assert out.grad_fn.needs_input_grad == (True, False, True)
    out.sum().backward()
    assert a.grad.tolist() == [2.0] and b.grad is None and c.grad.tolist() == [1.0]


def test_forward_runs_without_recording():
    class Peek(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.recording = gradlab.is_grad_enabled()
            inner = x * 2
            ctx.inner_has_graph = inner.grad_fn is not None
            return inner

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    y = Peek.apply(f64([1.0]))
    assert not y.grad_fn.recording and not y.grad_fn.inner_has_graph


def test_no_node_when_nothing_requires_grad():
    y = ScaledCube.apply(f64([1.0], requires_grad=False), 2.0)
    assert y.grad_fn is None and not y.requires_grad
    with gradlab.no_grad():
        assert ScaledCube.apply(f64([1.0]), 2.0).grad_fn is None


def test_user_defined_ops_pass_gradcheck_and_gradgradcheck():
    x = f64([0.5, -1.0, 2.0])
    assert gradcheck(lambda t: ScaledCube.apply(t, 1.5), (x,))
    assert gradgradcheck(lambda t: ScaledCube.apply(t, 1.5), (x,))
    a, b, c = f64([1.0, 2.0]), f64([3.0, -1.0]), f64([0.5, 0.5])
    assert gradcheck(MulAdd.apply, (a, b, c))
    assert gradgradcheck(MulAdd.apply, (a, b, c))


@needs_torch
def test_matches_the_same_function_in_torch():
    class TorchScaledCube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x * x * x * scale

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x * x * ctx.scale, None

    x_np = np.array([0.3, -1.2, 2.0])
    ours = gradlab.tensor(x_np, requires_grad=True)
    theirs = torch.tensor(x_np, requires_grad=True)
    (ScaledCube.apply(ours, 2.0) * gradlab.tensor([1.0, 2.0, 3.0], dtype=gradlab.float64)) \
        .sum().backward()
    (TorchScaledCube.apply(theirs, 2.0) * torch.tensor([1.0, 2.0, 3.0],
                                                       dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def test_raw_functions_see_arrays():
    class RawSquare(Function):
        raw = True

        @staticmethod
        def forward(ctx, a):
            ctx.kind = type(a)
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, grad):
            (a,) = ctx.saved_tensors
            return grad * 2 * a

    x = f64([1.0, 3.0])
    y = RawSquare.apply(x)
    assert y.grad_fn.kind is np.ndarray
    assert gradcheck(RawSquare.apply, (x,)) and gradgradcheck(RawSquare.apply, (x,))


def test_mark_non_differentiable():
    class SumAndArgmax(Function):
        @staticmethod
        def forward(ctx, x):
            index = gradlab.tensor(int(np.argmax(x.detach().numpy())))
            ctx.mark_non_differentiable(index)
            ctx.shape = x.shape
            return x.sum(), index

        @staticmethod
        def backward(ctx, grad_sum, grad_index):
            ctx.grad_index = grad_index
            return grad_sum * gradlab.ones(ctx.shape, dtype=grad_sum.dtype)

    x = f64([1.0, 5.0, 2.0])
    total, index = SumAndArgmax.apply(x)
    assert total.requires_grad and not index.requires_grad and index.grad_fn is None
    assert index.item() == 1
    node = total.grad_fn
    total.backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    assert node.grad_index.tolist() == 0  # materialized: zeros for the index output


def test_mark_non_differentiable_float_output():
    class KeptAndFrozen(Function):
        @staticmethod
        def forward(ctx, x):
            kept, frozen = x * 2, x * 3
            ctx.mark_non_differentiable(frozen)
            return kept, frozen

        @staticmethod
        def backward(ctx, g_kept, g_frozen):
            return g_kept * 2

    kept, frozen = KeptAndFrozen.apply(f64([1.0]))
    assert kept.requires_grad and not frozen.requires_grad


class TwoOutputs(Function):
    """(x, 2x); records which output gradients arrived as None."""

    @staticmethod
    def forward(ctx, x, materialize):
        ctx.set_materialize_grads(materialize)
        return x * 1, x * 2

    @staticmethod
    def backward(ctx, g1, g2):
        ctx.got = (g1 is None, g2 is None)
        total = g1 if g1 is not None else 0
        if g2 is not None:
            total = total + 2 * g2
        return total, None


def test_set_materialize_grads_false_passes_none():
    x = f64([1.0, 2.0])
    first, _ = TwoOutputs.apply(x, False)
    node = first.grad_fn
    first.sum().backward()
    assert node.got == (False, True) and x.grad.tolist() == [1.0, 1.0]


def test_materialized_grads_are_zeros_by_default():
    x = f64([1.0, 2.0])
    _, second = TwoOutputs.apply(x, True)
    node = second.grad_fn
    second.sum().backward()
    assert node.got == (False, False) and x.grad.tolist() == [2.0, 2.0]


def test_returning_an_input_unchanged():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 5

    x = f64([1.0, 2.0])
    y = Identity.apply(x)
    assert y is not x and y.grad_fn is not None and x.grad_fn is None
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_a_function_without_backward_explains():
    class ForwardOnly(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(NotImplementedError, match="defines no backward"):
        ForwardOnly.apply(f64([1.0])).sum().backward()


def test_calling_a_node_runs_its_backward():
    x = f64([1.0, 2.0])
    y = ScaledCube.apply(x, 1.0)
    gx, gscale = y.grad_fn(gradlab.ones(2, dtype=gradlab.float64))
    assert gx.tolist() == [3.0, 12.0] and gscale is None


def test_custom_forward_may_read_back_what_it_set_on_ctx_under_no_grad():
    class Scale(gradlab.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * ctx.k

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.k, None

    x = gradlab.tensor([1.0, 2.0], requires_grad=True)
    with gradlab.no_grad():
        assert Scale.apply(x, 3.0).tolist() == [3.0, 6.0]
    Scale.apply(x, 3.0).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_each_op_has_a_node_class_named_like_pytorchs():
    """``type(y.grad_fn).__name__`` is PyTorch's (torchviz and tutorials read it)."""
    x = gradlab.ones(2, requires_grad=True)
    y = (x + 1) * x.exp()
    assert type(y.grad_fn).__name__ == "MulBackward0" == y.grad_fn.name()
    add_node = y.grad_fn.next_functions[0][0]
    assert type(add_node).__name__ == "AddBackward0"
    assert isinstance(y.grad_fn, gradlab.autograd.Node)
    assert type((x * 2).grad_fn) is type(y.grad_fn)  # one class per op, not per call


def test_a_raw_forward_that_raises_after_saving_leaves_nothing_behind(monkeypatch):
    class SavesThenFails(gradlab.autograd.Function):
        raw = True

        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            raise ArithmeticError("forward failed on purpose")

    import gc
    import sys

    unraisable = []  # errors raised in __del__ (Python can only report them)
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    x = gradlab.ones(3, requires_grad=True)
    before = gradlab.memory_allocated()
    with pytest.raises(ArithmeticError, match="on purpose"):
        SavesThenFails.apply(x)
    gc.collect()
    assert unraisable == []
    assert gradlab.memory_allocated() == before


def test_an_unused_output_without_metadata_gets_no_zero_gradient():
    class TwoOutputs(gradlab.autograd.Function):
        raw = True

        @staticmethod
        def forward(ctx, a):
            return a * 2, None

        @staticmethod
        def backward(ctx, grad, grad_none):
            assert grad_none is None
            return grad * 2

    x = gradlab.ones(3, requires_grad=True)
    out, nothing = TwoOutputs.apply(x)
    assert nothing is None
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


class ExpSavingItsOutput(Function):
    """exp's derivative is its output: saving the output, as PyTorch allows."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


def test_a_saved_output_unpacks_as_the_output_so_double_backward_works():
    x = gradlab.randn(3, dtype=gradlab.float64, requires_grad=True)
    y = ExpSavingItsOutput.apply(x)
    assert y.grad_fn.saved_tensors[0].grad_fn is y.grad_fn  # the output itself, not a copy
    assert gradcheck(ExpSavingItsOutput.apply, (x,))
    # The saved output carries its grad_fn, so the second derivative (exp again) is right.
    assert gradgradcheck(ExpSavingItsOutput.apply, (x,))
