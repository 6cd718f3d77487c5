"""torch.qr/svd/lu/lu_unpack/lu_solve/cholesky_solve/cholesky_inverse/triangular_solve:
vs NumPy and PyTorch (values and gradients)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests import oracle
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch


def _factor_first(rng, dtype, shapes, lower=True):
    """A triangular factor with a diagonal in [1, 2] (well conditioned) and plain inputs."""
    out = []
    for i, s in enumerate(shapes):
        a = rng.uniform(-1, 1, s)
        if i == len(shapes) - 1:  # the factor is the last input
            a = np.tril(a, -1) if lower else np.triu(a, 1)
            a = a + np.eye(s[-1]) * rng.uniform(1, 2, s[:-1])[..., None, :]
        out.append(a.astype(dtype))
    return out


def _upper_factor(rng, dtype, shapes):
    return _factor_first(rng, dtype, shapes, lower=False)


def _dominant(which):
    """Inputs whose input ``which`` has a big diagonal: invertible, for the solves."""
    def inputs(rng, dtype, shapes):
        out = [rng.uniform(-1, 1, s) for s in shapes]
        out[which] = out[which] + 3 * np.eye(shapes[which][-1])
        return [a.astype(dtype) for a in out]
    return inputs


def _spd_inverse(np, factor, upper=False):
    a = factor.swapaxes(-1, -2) @ factor if upper else factor @ factor.swapaxes(-1, -2)
    return np.linalg.inv(a)


def _lu_parts(lib, a):
    lu, pivots = lib.lu(a)
    p, low, up = lib.lu_unpack(lu, pivots)
    return lu, pivots, p, low, up


CASES = [
    OpCase("qr", lambda lib, a: tuple(lib.qr(a)), ((4, 3),),
           numpy=lambda np, a: tuple(np.linalg.qr(a))),
    OpCase("qr_complete_wide", lambda lib, a: tuple(a.qr(some=False)), ((2, 3, 4),),
           numpy=lambda np, a: tuple(np.linalg.qr(a, mode="complete")), jvp=False),
    # (jvp=False: linalg.qr has forward mode only for mode='reduced' with rows >= columns)
    # U and V are defined up to sign: compare what doesn't depend on it (S, U Vᵀ, |V|)
    OpCase("svd", lambda lib, a: (lambda r: (r.S, r.U @ r.V.mT, r.V.abs()))(lib.svd(a)),
           ((4, 3),), numpy=lambda np, a: (lambda u, s, vh: (s, u @ vh, np.abs(vh.T)))(
               *np.linalg.svd(a, full_matrices=False)), gradgrad=False),
    OpCase("svd_wide_batch", lambda lib, a: (lambda r: (r.S, r.U @ r.V.mT))(a.svd()),
           ((2, 3, 4),), numpy=lambda np, a: (lambda u, s, vh: (s, u @ vh))(
               *np.linalg.svd(a, full_matrices=False)), gradgrad=False),
    OpCase("svd_no_uv", lambda lib, a: tuple(lib.svd(a, compute_uv=False)), ((3, 4),),
           numpy=lambda np, a: (np.zeros((3, 3)), np.linalg.svd(a, compute_uv=False),
                                np.zeros((4, 4))), jvp=False),
    # (jvp=False: the singular values come from linalg.svdvals, which has no tangent rule yet)
    OpCase("lu", lambda lib, a: tuple(lib.lu(a)), ((4, 4),), variants=(((2, 3, 3),),)),
    OpCase("lu_unpack", _lu_parts, ((4, 4),), variants=(((2, 3, 3),),)),
    OpCase("lu_unpack_rectangular", _lu_parts, ((3, 5),), grad=False, variants=(((5, 3),),)),
    # (grad=False: lu's derivative is for square matrices; the values are checked)
    OpCase("lu_solve", lambda lib, a, b: lib.lu_solve(b, *lib.lu(a)), ((4, 4), (4, 2)),
           numpy=lambda np, a, b: np.linalg.solve(a, b), inputs=_dominant(0),
           variants=(((2, 3, 3), (3, 1)),)),
    OpCase("cholesky_solve", lambda lib, b, f: lib.cholesky_solve(b, f), ((3, 2), (3, 3)),
           numpy=lambda np, b, f: _spd_inverse(np, f) @ b, inputs=_factor_first,
           variants=(((2, 3, 1), (3, 3)),)),
    OpCase("cholesky_solve_upper", lambda lib, b, f: b.cholesky_solve(f, upper=True),
           ((3, 2), (3, 3)), numpy=lambda np, b, f: _spd_inverse(np, f, True) @ b,
           inputs=_upper_factor),
    OpCase("cholesky_inverse", lambda lib, f: lib.cholesky_inverse(f), ((3, 3),), jvp=False,
           numpy=lambda np, f: _spd_inverse(np, f), inputs=_factor_first,
           variants=(((2, 3, 3),),)),
    OpCase("cholesky_inverse_upper", lambda lib, f: f.cholesky_inverse(True), ((3, 3),),
           numpy=lambda np, f: _spd_inverse(np, f, True), inputs=_upper_factor, jvp=False),
    OpCase("triangular_solve", lambda lib, b, a: tuple(lib.triangular_solve(b, a)),
           ((3, 2), (3, 3)), numpy=lambda np, b, a: (np.linalg.solve(np.triu(a), b),
                                   np.broadcast_to(a, b.shape[:-2] + a.shape)),
           inputs=_dominant(1), variants=(((2, 3, 2), (3, 3)),), jvp=False),
    OpCase("triangular_solve_lower_t_unit",
           lambda lib, b, a: tuple(b.triangular_solve(a, upper=False, transpose=True,
                                                      unitriangular=True)),
           ((3, 2), (3, 3)), inputs=_dominant(1), jvp=False,
           numpy=lambda np, b, a: (np.linalg.solve((np.tril(a, -1) + np.eye(3)).T, b), a)),
]

globals().update(standard_op_tests(CASES))

# jvp=False above for the triangular solves and cholesky_inverse: PyTorch's forward mode
# disagrees there with its own backward and with finite differences (it does not project the
# tangent onto the triangle that is read, nor treat the factor as a full matrix, as its
# backward does). Ours follows the function, so it is checked against finite differences only.
TRUE_DERIVATIVE = [c for c in CASES if c.name.startswith(("triangular", "cholesky_inverse"))]


@pytest.mark.parametrize("case", TRUE_DERIVATIVE, ids=[c.id for c in TRUE_DERIVATIVE])
def test_jvp_matches_finite_differences_where_torch_forward_mode_differs(case, device,
                                                                         monkeypatch):
    monkeypatch.setattr(oracle, "torch", None)  # finite differences only
    oracle.check_jvp(case, device)


@needs_torch
def test_lu_pivots_and_infos_match_torch_including_singular_matrices():
    rng = np.random.default_rng(5)
    singular = rng.standard_normal((4, 4))
    singular[:, 1] = 0  # rank 3, and no rounding decides a pivot (all candidates are 0)
    for a in (rng.standard_normal((2, 4, 4)), singular, np.zeros((3, 3)),
              rng.standard_normal((3, 6)), rng.standard_normal((6, 3))):
        ours = gradlab.lu(gradlab.tensor(a), get_infos=True)
        theirs = torch.lu(torch.tensor(a), get_infos=True)
        np.testing.assert_allclose(ours[0].numpy(), theirs[0].numpy(), atol=1e-12)
        for o, t in zip(ours[1:], theirs[1:]):
            assert o.dtype is gradlab.int32 and o.tolist() == t.tolist()
        p, low, up = gradlab.lu_unpack(ours[0], ours[1])
        np.testing.assert_allclose((p @ low @ up).numpy(), a, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.lists(st.integers(1, 3), max_size=2))
def test_lu_reconstructs_any_shape(m, n, batch):
    a = np.random.default_rng(m * 10 + n).standard_normal((*batch, m, n))
    lu, pivots = gradlab.lu(gradlab.tensor(a))
    p, low, up = gradlab.lu_unpack(lu, pivots)
    k = min(m, n)
    assert tuple(low.shape[-2:]) == (m, k) and tuple(up.shape[-2:]) == (k, n)
    np.testing.assert_allclose((p @ low @ up).numpy(), a, atol=1e-12)
    assert (np.abs(low.numpy()) <= 1 + 1e-12).all()  # partial pivoting keeps |l_ij| <= 1


def test_svd_returns_v_not_vh_and_lu_unpack_skips_what_is_not_asked():
    a = gradlab.tensor(np.random.default_rng(0).standard_normal((4, 3)))
    u, s, v = gradlab.svd(a)
    np.testing.assert_allclose((u * s.unsqueeze(-2) @ v.mT).numpy(), a.numpy(), atol=1e-12)
    assert gradlab.svd(a, some=False).U.shape == (4, 4)
    lu, pivots = gradlab.lu(a @ a.mT)
    p, low, up = gradlab.lu_unpack(lu, pivots, unpack_pivots=False)
    assert p.shape == (0,) and low.shape == (4, 4)
    assert gradlab.lu_unpack(lu, pivots, unpack_data=False).L.shape == (0,)
    assert gradlab.triangular_solve(a[:3], gradlab.eye(3, dtype=a.dtype)).solution.shape == (3, 3)


def test_lu_without_pivoting_is_a_plain_elimination():
    a = gradlab.tensor([[4.0, 3.0], [6.0, 3.0]], dtype=gradlab.float64)
    lu, pivots = gradlab.lu(a, pivot=False)
    assert pivots.tolist() == [1, 2]
    assert lu.tolist() == [[4.0, 3.0], [1.5, -1.5]]


def test_errors_name_the_op_and_the_fix():
    square = gradlab.eye(3, dtype=gradlab.float64)
    with pytest.raises(RuntimeError, match=r"lu: the derivative is implemented for square"):
        lu, _ = gradlab.lu(gradlab.ones(2, 3, dtype=gradlab.float64, requires_grad=True))
        lu.sum().backward()
    with pytest.raises(RuntimeError, match=r"svd: expected a matrix"):
        gradlab.svd(gradlab.ones(3))
    with pytest.raises(RuntimeError, match=r"lu: LAPACK works in float32, float64, complex64"):
        gradlab.lu(gradlab.ones(2, 2, dtype=gradlab.float16))
    with pytest.raises(TypeError, match=r"lu_unpack: LU_pivots must be an int32 tensor"):
        gradlab.lu_unpack(square, gradlab.ones(3))
    with pytest.raises(RuntimeError, match=r"lu_solve: LU_pivots has shape \(2,\) but LU_data "
                                           r"\(3, 3\) needs \(3,\)"):
        gradlab.lu_solve(square, square, gradlab.tensor([1, 2], dtype=gradlab.int32))
    pivots = gradlab.tensor([1, 2, 3], dtype=gradlab.int32)
    with pytest.raises(RuntimeError, match=r"lu_solve: b must be a matrix.*unsqueeze"):
        gradlab.lu_solve(gradlab.ones(3, dtype=gradlab.float64), square, pivots)
    with pytest.raises(RuntimeError, match=r"lu_solve: the matrix is 3×3.*2 rows"):
        gradlab.lu_solve(gradlab.ones(2, 1, dtype=gradlab.float64), square, pivots)
    with pytest.raises(RuntimeError, match=r"cholesky_solve: the right-hand side must be a "
                                           r"matrix.*unsqueeze"):
        gradlab.cholesky_solve(gradlab.ones(3, dtype=gradlab.float64), square)
    with pytest.raises(RuntimeError, match=r"cholesky_solve: the batch dims of"):
        gradlab.cholesky_solve(gradlab.ones(4, 3, 1, dtype=gradlab.float64),
                               gradlab.eye(3, dtype=gradlab.float64).expand(2, 3, 3))
    with pytest.raises(RuntimeError, match=r"cholesky_solve: the right-hand side has dtype "
                                           r"gradlab.float32.*b.to"):
        gradlab.cholesky_solve(gradlab.ones(3, 1), square)
    with pytest.raises(RuntimeError, match=r"cholesky_inverse: expected square matrices"):
        gradlab.cholesky_inverse(gradlab.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"triangular_solve: the input matrix.*singular"):
        gradlab.triangular_solve(gradlab.ones(3, 1, dtype=gradlab.float64),
                                 gradlab.zeros(3, 3, dtype=gradlab.float64))
    with pytest.raises(RuntimeError, match=r"qr: mode must be"):
        from gradlab.ops.decompositions import qr_of
        qr_of("qr", square, "bad")
