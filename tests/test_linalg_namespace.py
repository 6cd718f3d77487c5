"""gradlab.linalg (vector_norm, matrix_norm, norm) and F.normalize, against NumPy and PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
from tests.oracle import OpCase, away_from_zero, needs_torch, standard_op_tests, torch

INF = math.inf


def _np_vector_norm(ord, axis=None, keepdims=False):
    def ref(np, x):
        a = np.abs(x)
        if ord == INF:
            return a.max(axis=axis, keepdims=keepdims)
        if ord == -INF:
            return a.min(axis=axis, keepdims=keepdims)
        return (a ** ord).sum(axis=axis, keepdims=keepdims) ** (1 / ord)
    return ref


NORMS = [
    OpCase("vector_norm_2", lambda lib, x: lib.linalg.vector_norm(x), ((3, 4),),
           numpy=_np_vector_norm(2), inputs=away_from_zero, variants=(((),), ((5,),))),
    OpCase("vector_norm_1_dim", lambda lib, x: lib.linalg.vector_norm(x, 1, dim=1),
           ((3, 4),), numpy=_np_vector_norm(1, axis=1), inputs=away_from_zero),
    OpCase("vector_norm_3_keepdim",
           lambda lib, x: lib.linalg.vector_norm(x, 3, dim=(0, 2), keepdim=True), ((2, 3, 4),),
           numpy=_np_vector_norm(3, axis=(0, 2), keepdims=True), inputs=away_from_zero),
    OpCase("vector_norm_inf", lambda lib, x: lib.linalg.vector_norm(x, INF, dim=-1),
           ((3, 4),), numpy=_np_vector_norm(INF, axis=-1), inputs=away_from_zero,
           gradgrad=False),
    OpCase("vector_norm_neg_inf", lambda lib, x: lib.linalg.vector_norm(x, -INF),
           ((3, 4),), numpy=_np_vector_norm(-INF), inputs=away_from_zero, gradgrad=False),
    OpCase("vector_norm_neg_1", lambda lib, x: lib.linalg.vector_norm(x, -1, dim=0),
           ((3, 4),), numpy=_np_vector_norm(-1, axis=0), inputs=away_from_zero),
    OpCase("matrix_norm_fro", lambda lib, x: lib.linalg.matrix_norm(x), ((2, 3, 4),),
           numpy=lambda np, x: np.linalg.norm(x, "fro", axis=(-2, -1)),
           inputs=away_from_zero),
    OpCase("matrix_norm_1", lambda lib, x: lib.linalg.matrix_norm(x, 1), ((2, 3, 4),),
           numpy=lambda np, x: np.linalg.norm(x, 1, axis=(-2, -1)), inputs=away_from_zero,
           gradgrad=False),
    OpCase("matrix_norm_neg_1_keepdim",
           lambda lib, x: lib.linalg.matrix_norm(x, -1, keepdim=True), ((3, 4),),
           numpy=lambda np, x: np.linalg.norm(x, -1, axis=(-2, -1), keepdims=True),
           inputs=away_from_zero, gradgrad=False),
    OpCase("matrix_norm_inf_dims", lambda lib, x: lib.linalg.matrix_norm(x, INF, dim=(2, 0)),
           ((3, 2, 4),), numpy=lambda np, x: np.linalg.norm(x, INF, axis=(2, 0)),
           inputs=away_from_zero, gradgrad=False),
    OpCase("matrix_norm_neg_inf", lambda lib, x: lib.linalg.matrix_norm(x, -INF), ((3, 4),),
           numpy=lambda np, x: np.linalg.norm(x, -INF), inputs=away_from_zero, gradgrad=False),
    OpCase("norm_default", lambda lib, x: lib.linalg.norm(x), ((2, 3, 4),),
           numpy=lambda np, x: np.sqrt((x * x).sum()), inputs=away_from_zero),
    OpCase("norm_matrix_ord", lambda lib, x: lib.linalg.norm(x, 1), ((3, 4),),
           numpy=lambda np, x: np.linalg.norm(x, 1), inputs=away_from_zero, gradgrad=False),
    OpCase("norm_vector_ord", lambda lib, x: lib.linalg.norm(x, 3), ((5,),),
           numpy=lambda np, x: np.linalg.norm(x, 3), inputs=away_from_zero),
    OpCase("norm_dim_int", lambda lib, x: lib.linalg.norm(x, dim=1, keepdim=True), ((3, 4),),
           numpy=lambda np, x: np.linalg.norm(x, axis=1, keepdims=True), inputs=away_from_zero),
    OpCase("norm_dim_pair", lambda lib, x: lib.linalg.norm(x, INF, dim=(0, 1)), ((3, 4, 2),),
           numpy=lambda np, x: np.linalg.norm(x, INF, axis=(0, 1)), inputs=away_from_zero,
           gradgrad=False),
]


def _np_normalize(p, axis):
    def ref(np, x):
        return x / np.maximum(np.linalg.norm(x, p, axis=axis, keepdims=True), 1e-12)
    return ref


NORMALIZE = [
    OpCase("normalize", lambda lib, x: lib.nn.functional.normalize(x), ((3, 4),),
           numpy=_np_normalize(2, 1), variants=(((2, 3, 5),),)),
    OpCase("normalize_p1_dim0", lambda lib, x: lib.nn.functional.normalize(x, p=1, dim=0),
           ((3, 4),), numpy=_np_normalize(1, 0), inputs=away_from_zero),
    OpCase("normalize_1d_last", lambda lib, x: lib.nn.functional.normalize(x, dim=-1),
           ((6,),), numpy=_np_normalize(2, -1)),
]

globals().update(standard_op_tests(NORMS, prefix="norms_"))
globals().update(standard_op_tests(NORMALIZE, prefix="normalize_"))


def test_normalize_keeps_a_zero_vector_zero_and_its_gradient_finite():
    x = gradlab.tensor([[0.0, 0.0], [3.0, 4.0]], requires_grad=True)
    y = gradlab.nn.functional.normalize(x, dim=1)
    np.testing.assert_allclose(y.detach().numpy(), [[0, 0], [0.6, 0.8]], rtol=1e-6)
    y.sum().backward()
    assert np.all(np.isfinite(x.grad.numpy())) and np.all(x.grad.numpy()[0] != 0)


@needs_torch
def test_normalize_zero_row_gradient_matches_torch():
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    xg = gradlab.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    gradlab.nn.functional.normalize(xg).pow(2).sum().backward()
    torch.nn.functional.normalize(xt).pow(2).sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("ord", [2, 1, 3, -1, -1.5, INF, -INF])
def test_norm_at_a_zero_has_derivative_zero_in_both_modes(ord):
    """Row 0 is a zero vector (every norm is 0, not differentiable there); row 1 has one zero
    entry (|0|^p is infinite for p < 0, so those norms are 0 too). PyTorch defines the
    derivative as 0 where the norm is 0: gradients and tangents are 0, never nan."""
    from gradlab.autograd import forward_ad as fwAD

    x = gradlab.tensor([[0.0, 0.0, 0.0], [0.0, 1.0, -2.0]], requires_grad=True)
    v = gradlab.tensor([[1.0, -2.0, 0.5], [0.3, 0.0, 0.0]])
    gradlab.linalg.vector_norm(x, ord, dim=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0], 0.0)
    with fwAD.dual_level():
        y = gradlab.linalg.vector_norm(fwAD.make_dual(x.detach(), v), ord, dim=1)
        tangent = fwAD.unpack_dual(y).tangent.numpy()
    assert tangent[0] == 0.0
    if ord < 0:
        np.testing.assert_array_equal(y.numpy()[1], 0.0)
        np.testing.assert_array_equal(x.grad.numpy()[1], 0.0)
        assert tangent[1] == 0.0
    if torch is not None:
        from torch.func import jvp

        xt = torch.tensor(x.detach().numpy(), requires_grad=True)
        torch.linalg.vector_norm(xt, ord, dim=1).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
        _, theirs = jvp(lambda a: torch.linalg.vector_norm(a, ord, dim=1),
                        (xt.detach(),), (torch.tensor(v.numpy()),))
        np.testing.assert_allclose(tangent, theirs.numpy(), rtol=1e-6)


def test_linalg_is_the_namespace_and_ops_linalg_is_the_family():
    assert gradlab.linalg.__name__ == "gradlab.linalg"
    assert gradlab.matmul is gradlab.ops.linalg.matmul


@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.linalg.vector_norm(gradlab.ones(3), "fro"), RuntimeError,
     r"linalg.vector_norm: ord must be a number .* in linalg.matrix_norm"),
    (lambda: gradlab.linalg.vector_norm(gradlab.tensor([1, 2])), RuntimeError,
     r"linalg.vector_norm: expected a floating point tensor, got .*int64"),
    (lambda: gradlab.linalg.vector_norm([1.0, 2.0]), TypeError,
     r"linalg.vector_norm: expected a Tensor, got list"),
    (lambda: gradlab.linalg.matrix_norm(gradlab.ones(3)), RuntimeError,
     r"linalg.matrix_norm: the input must have at least 2 dimensions .*vector_norm"),
    (lambda: gradlab.linalg.matrix_norm(gradlab.ones(2, 2), 3), RuntimeError,
     r"matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got 3"),
    (lambda: gradlab.linalg.matrix_norm(gradlab.ones(2, 2), dim=(0, -2)), RuntimeError,
     r"matrix_norm: dim=\(0, -2\) must name two different dims"),
    (lambda: gradlab.linalg.matrix_norm(gradlab.ones(2, 2), dim=0), RuntimeError,
     r"matrix_norm: dim must be a pair of dims"),
    (lambda: gradlab.linalg.norm(gradlab.ones(2, 2, 2), 1), RuntimeError,
     r"linalg.norm: with ord=1 and no dim, the input must be 1-D or 2-D, got 3-D"),
    (lambda: gradlab.linalg.norm(gradlab.ones(2, 2, 2), dim=(0, 1, 2)), RuntimeError,
     r"linalg.norm: dim must be one dim .* or two"),
    (lambda: gradlab.nn.functional.normalize(gradlab.tensor([1, 2])), RuntimeError,
     r"normalize: expected a floating point tensor"),
    (lambda: gradlab.nn.functional.normalize(gradlab.ones(2), dim=0, out=gradlab.ones(2)),
     TypeError, r"normalize: out= is not supported"),
])
def test_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()


@needs_torch
@pytest.mark.parametrize("ord", [None, 2, 1, INF, -INF, 0])
def test_linalg_norm_of_a_vector_matches_torch_for_every_ord(ord):
    x = np.array([3.0, -4.0, 0.0, 1.5])
    ours = gradlab.linalg.norm(gradlab.tensor(x), ord).item()
    assert ours == pytest.approx(torch.linalg.norm(torch.tensor(x), ord).item())


def test_linalg_cross_defaults_to_the_last_dim():
    a = gradlab.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    b = gradlab.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    # rows: x × y = z, y × z = x, z × x = y (along the last dim; dim 0 would mix rows)
    assert gradlab.linalg.cross(a, b).tolist() == [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0],
                                                   [0.0, 1.0, 0.0]]
    assert gradlab.linalg.cross(a, b).tolist() != gradlab.cross(a, b, dim=0).tolist()
