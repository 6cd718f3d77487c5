"""gradcheck and gradgradcheck: they pass on correct ops and fail loudly on wrong ones."""

from __future__ import annotations

import pytest

import gradlab
from gradlab.autograd import Function, GradcheckError, gradcheck, gradgradcheck


def f64(values):
    return gradlab.tensor(values, dtype=gradlab.float64, requires_grad=True)


class WrongSquare(Function):
    """x^2 with the factor 2 forgotten in backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x  # should be grad * 2 * x


class DetachedSquare(Function):
    """x^2 whose backward is right but not differentiable (it detaches x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x.detach()


def test_correct_ops_pass():
    x, y = f64([[0.5, -1.0], [2.0, 1.5]]), f64([1.0, 2.0])
    assert gradcheck(lambda a, b: (a * b).exp().sum(0), (x, y))
    assert gradgradcheck(lambda a, b: (a * b).exp().sum(0), (x, y))
    assert gradcheck(lambda a: a.tanh() @ a, (f64([[0.1, 0.2], [0.3, 0.4]]),))


def test_only_inputs_that_require_grad_are_checked():
    x = f64([1.0, 2.0])
    const = gradlab.tensor([3.0, 4.0], dtype=gradlab.float64)
    assert gradcheck(lambda a, c, k: a * c * k, (x, const, 2.0))


def test_a_wrong_backward_fails_with_the_numbers():
    x = f64([1.0, 3.0])
    with pytest.raises(GradcheckError, match=r"gradcheck: Jacobian mismatch for output 0 with "
                                             r"respect to input 0 \(shape \(2,\)\).*backward "
                                             r"gives 1 but finite differences give 2.*"
                                             r"derivative formula") as info:
        gradcheck(WrongSquare.apply, (x,))
    assert "analytic:" in str(info.value) and "numerical:" in str(info.value)
    assert gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False


def test_a_non_differentiable_backward_fails_gradgradcheck_only():
    x = f64([1.0, 3.0])
    assert gradcheck(DetachedSquare.apply, (x,))
    with pytest.raises(GradcheckError, match=r"gradgradcheck: Jacobian mismatch.*"
                                             r"Second derivatives are wrong.*detach"):
        gradgradcheck(DetachedSquare.apply, (x,))
    assert gradgradcheck(DetachedSquare.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_leaves_the_global_random_stream_alone():
    gradlab.manual_seed(5)
    expected = gradlab.rand(3).tolist()
    gradlab.manual_seed(5)
    gradgradcheck(lambda a: a * a * a, (f64([1.0, 2.0, 3.0]),))
    assert gradlab.rand(3).tolist() == expected


def test_gradcheck_input_errors():
    with pytest.raises(ValueError, match="no input requires grad"):
        gradcheck(lambda a: a * 2, (gradlab.ones(2, dtype=gradlab.float64),))
    with pytest.raises(GradcheckError, match="no output that requires grad"):
        gradcheck(lambda a: a.detach(), (f64([1.0]),))
    with pytest.warns(UserWarning, match="gradlab.float32 is not float64"):
        gradcheck(lambda a: a * 2, (gradlab.ones(2, requires_grad=True),), eps=1e-2)


def test_several_outputs_are_all_checked():
    x = f64([1.0, 2.0])
    assert gradcheck(lambda a: (a * 2, a * a), (x,))
    with pytest.raises(GradcheckError, match="output 1 with respect to input 0"):
        gradcheck(lambda a: (a * 2, WrongSquare.apply(a)), (x,))
