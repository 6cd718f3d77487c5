"""Forward-mode AD (gradlab.autograd.forward_ad): PyTorch's API, its errors, its rules.

Each op's tangent rule is checked by the op tables (tests/oracle.py's
test_jvp_matches_finite_differences); this file checks the machinery itself.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
import gradlab.autograd.forward_ad as fwAD
from gradlab.autograd import Function
from tests.oracle import needs_torch, torch


def f64(values):
    return gradlab.tensor(values, dtype=gradlab.float64)


def test_a_tangent_travels_through_ops():
    x, t = f64([0.5, -1.0, 2.0]), f64([1.0, 2.0, -0.5])
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        y = dual * dual * 3.0  # dy = 6 x dx
        primal, tangent = fwAD.unpack_dual(y)
        np.testing.assert_allclose(primal.numpy(), 3 * x.numpy() ** 2)
        np.testing.assert_allclose(tangent.numpy(), 6 * x.numpy() * t.numpy())
        assert fwAD.unpack_dual(primal).tangent is None  # the primal carries no tangent


def test_make_dual_shares_the_primal_memory_and_leaving_the_level_drops_tangents():
    x = f64([1.0, 2.0])
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, f64([1.0, 1.0]))
        assert np.shares_memory(dual.numpy(), x.numpy())
        y = dual * 2
    with fwAD.dual_level():
        assert fwAD.unpack_dual(y).tangent is None


def test_tensors_without_tangent_count_as_zero():
    x, w = f64([1.0, 2.0]), f64([3.0, 4.0])
    with fwAD.dual_level():
        y = fwAD.make_dual(x, f64([1.0, 0.0])) * w
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), [3.0, 0.0])
        assert fwAD.unpack_dual(w * w).tangent is None  # nothing dual in: no tangent out


def test_reverse_mode_still_works_on_dual_tensors():
    x = f64([1.0, 2.0]).requires_grad_()
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, f64([1.0, 1.0]))
        y = (dual * dual).sum()
        y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_forward_over_reverse_gives_a_hessian_vector_product():
    """The backward formulas are tensor code, so tangents flow through them too."""
    x = f64([0.3, -0.7, 1.1]).requires_grad_()
    v = f64([1.0, -2.0, 0.5])
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, v)
        y = (dual * dual * dual).sum()  # H = diag(6x)
        (g,) = gradlab.autograd.grad(y, dual, create_graph=True)
        hvp = fwAD.unpack_dual(g).tangent
    np.testing.assert_allclose(hvp.detach().numpy(), 6 * x.detach().numpy() * v.numpy())


class Cube(Function):
    """A custom op with its own tangent rule, as in PyTorch (jvp next to backward)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x

    @staticmethod
    def jvp(ctx, tangent):
        (x,) = ctx.primals
        return tangent * 3 * x * x


def test_a_custom_function_can_define_jvp():
    x, t = f64([1.0, -2.0]), f64([0.5, 0.5])
    with fwAD.dual_level():
        y = Cube.apply(fwAD.make_dual(x, t))
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), [1.5, 6.0])


class NoRule(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def test_an_op_without_a_rule_says_so_and_what_to_do():
    with fwAD.dual_level():
        dual = fwAD.make_dual(f64([1.0]), f64([1.0]))
        with pytest.raises(NotImplementedError, match="'noRule' has no tangent rule.*jvp"):
            NoRule.apply(dual)
    assert gradlab.tensor([1.0]).sum().item() == 1.0  # the level ended cleanly


class WrongShape(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def jvp(ctx, tangent):
        return tangent.sum()


def test_a_rule_returning_the_wrong_shape_is_caught():
    with fwAD.dual_level():
        dual = fwAD.make_dual(f64([1.0, 2.0]), f64([1.0, 1.0]))
        with pytest.raises(RuntimeError, match=r"wrongShape: its jvp returned a tangent of "
                                               r"shape \(\) for an output of shape \(2,\)"):
            WrongShape.apply(dual)


def test_errors_teach():
    x = f64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="no forward-mode level is active.*dual_level"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="nested forward-mode levels"):
            fwAD.enter_dual_level()
        with pytest.raises(ValueError, match=r"tangent must have the primal's shape, got "
                                             r"primal \(2,\) and tangent \(3,\)"):
            fwAD.make_dual(x, f64([1.0, 2.0, 3.0]))
        with pytest.raises(ValueError, match="primal's dtype, got gradlab.float64 and "
                                             "gradlab.float32"):
            fwAD.make_dual(x, gradlab.ones(2))
        with pytest.raises(ValueError, match="must be floating point"):
            fwAD.make_dual(gradlab.tensor([1, 2]), gradlab.tensor([1, 2]))
        with pytest.raises(TypeError, match="expects two tensors"):
            fwAD.make_dual(x, [1.0, 2.0])
    with pytest.raises(RuntimeError, match="no forward-mode level is active"):
        fwAD.exit_dual_level()


def test_enter_and_exit_by_hand_and_unpack_outside_a_level():
    level = fwAD.enter_dual_level()
    try:
        dual = fwAD.make_dual(f64([1.0]), f64([2.0]), level=level)
        assert fwAD.unpack_dual(dual, level=level).tangent.item() == 2.0
    finally:
        fwAD.exit_dual_level(level=level)
    primal, tangent = fwAD.unpack_dual(dual)
    assert primal is dual and tangent is None


def test_levels_are_per_thread():
    import threading

    seen = []
    with fwAD.dual_level():
        worker = threading.Thread(target=lambda: seen.append(gradlab.autograd.grad_mode.state.dual))
        worker.start()
        worker.join()
    assert seen == [None]


@needs_torch
def test_matches_torch_forward_ad():
    import torch.autograd.forward_ad as tfw

    rng = np.random.default_rng(0)
    x, t = rng.standard_normal(5), rng.standard_normal(5)
    with fwAD.dual_level():
        y = fwAD.make_dual(f64(x), f64(t))
        ours = fwAD.unpack_dual((y * y - y * 3.0) * y).tangent.numpy()
    with tfw.dual_level():
        y = tfw.make_dual(torch.from_numpy(x), torch.from_numpy(t))
        theirs = tfw.unpack_dual((y * y - y * 3.0) * y).tangent.numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_every_differentiable_op_in_gradlab_has_a_tangent_rule():
    import gradlab.nn  # noqa: F401 - its modules define ops too

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    def has_rule(cls):
        if cls.tangent_rule is not None:
            return True
        return any("jvp" in vars(base) for base in cls.__mro__ if base is not Function)

    missing = sorted(f"{c.__module__}.{c.__name__}" for c in subclasses(Function)
                     if c.__module__.startswith("gradlab.") and c.differentiable
                     and not has_rule(c))
    # CopySlices only runs with forward mode off: the in-place op carries the tangents.
    assert missing == ["gradlab.autograd.views.CopySlices"]
