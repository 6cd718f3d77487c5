"""The rest of gradlab.linalg (solve_triangular, lu*, *_ex, pinv, matrix_rank, cond, lstsq,
multi_dot, householder_product, tensorinv, tensorsolve, the thin wrappers), vs NumPy and
PyTorch: values, gradients, forward mode, errors, named tuples."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import gradlab
from gradlab import return_types
from gradlab.ops.matrix_chain import chain_order
from tests import oracle
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch

INF = math.inf
LA = gradlab.linalg


def _orthogonal(rng, n, batch=()):
    q, r = np.linalg.qr(rng.standard_normal((*batch, n, n)))
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def _with_spectrum(rng, shape, low=1.0, high=3.0):
    """U diag(σ) Vᵀ with σ spread over [low, high] (distinct): condition number <= high/low."""
    *batch, m, n = shape
    k = min(m, n)
    sigma = np.linspace(high, low, k) * rng.uniform(0.95, 1.0, (*batch, k))
    u = _orthogonal(rng, m, batch)[..., :k]
    v = _orthogonal(rng, n, batch)[..., :k]
    return (u * sigma[..., None, :]) @ np.swapaxes(v, -1, -2)


def conditioned(rng, dtype, shapes):
    """Every input of two dims or more well conditioned, the others plain."""
    return [(_with_spectrum(rng, s) if len(s) >= 2 else rng.uniform(-1, 1, s)).astype(dtype)
            for s in shapes]


def symmetric(rng, dtype, shapes):
    """Q diag(λ) Qᵀ / 2 with λ of both signs (|λ| in [1, 3]); the rows add the transpose."""
    out = []
    for s in shapes:
        q = _orthogonal(rng, s[-1], s[:-2])
        lam = np.linspace(1, 3, s[-1]) * np.resize([1, -1], s[-1])
        out.append(((q * lam[..., None, :]) @ np.swapaxes(q, -1, -2) / 2).astype(dtype))
    return out


def dominant(rng, dtype, shapes):
    """Plain entries plus 3 on the diagonal of square inputs: both triangles invertible."""
    return [(rng.uniform(-1, 1, s) + (3 * np.eye(s[-1]) if len(s) >= 2 and s[-1] == s[-2]
                                      else 0)).astype(dtype) for s in shapes]


def _lu_solve(left, adjoint):
    return lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, left=left,
                                                 adjoint=adjoint)


def _spd(lib, a):
    return a @ a.mT + lib.eye(a.shape[-1], dtype=a.dtype)


SQ, BSQ = ((3, 3),), ((2, 3, 3),)
CASES = [
    OpCase("matrix_exp", lambda lib, a: lib.linalg.matrix_exp(a), SQ, domain=(-1, 1),
           variants=(BSQ,)),
    OpCase("matrix_power_3", lambda lib, a: lib.linalg.matrix_power(a, 3), SQ,
           numpy=lambda np, a: np.linalg.matrix_power(a, 3), inputs=conditioned),
    OpCase("matrix_power_neg_2", lambda lib, a: lib.linalg.matrix_power(a, -2), BSQ,
           numpy=lambda np, a: np.linalg.matrix_power(a, -2), inputs=conditioned),
    OpCase("matmul", lambda lib, a, b: lib.linalg.matmul(a, b), ((2, 3, 4), (4, 2)),
           numpy=lambda np, a, b: a @ b),
    OpCase("diagonal", lambda lib, a: lib.linalg.diagonal(a, offset=1), ((2, 3, 4),),
           numpy=lambda np, a: np.diagonal(a, 1, -2, -1)),
    OpCase("vander", lambda lib, x: lib.linalg.vander(x), ((2, 3),), domain=(0.5, 1.5),
           numpy=lambda np, x: x[..., None] ** np.arange(3)),
    OpCase("vander_n", lambda lib, x: lib.linalg.vander(x, N=4), ((3,),),
           numpy=lambda np, x: np.vander(x, 4, increasing=True)),
    OpCase("vecdot", lambda lib, x, y: lib.linalg.vecdot(x, y), ((3, 4), (4,)),
           numpy=lambda np, x, y: (x * y).sum(-1)),
    OpCase("vecdot_dim0", lambda lib, x, y: lib.linalg.vecdot(x, y, dim=0), ((2, 3), (2, 1)),
           numpy=lambda np, x, y: (x * y).sum(0)),
    OpCase("multi_dot", lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]),
           ((2, 5), (5, 3), (3, 4)), numpy=lambda np, a, b, c: a @ b @ c),
    OpCase("multi_dot_vectors", lambda lib, a, b, c, d: lib.linalg.multi_dot((a, b, c, d)),
           ((4,), (4, 2), (2, 5), (5,)), numpy=lambda np, a, b, c, d: a @ b @ c @ d),
    OpCase("householder_product", lambda lib, a, t: lib.linalg.householder_product(a, t),
           ((4, 3), (2,)), variants=(((2, 3, 3), (2, 3)),), domain=(-0.5, 0.5)),
    OpCase("solve_triangular", lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True),
           ((3, 3), (3, 2)), numpy=lambda np, a, b: np.linalg.solve(np.triu(a), b),
           inputs=dominant, variants=(((2, 3, 3), (3, 1)),), jvp=False),
    OpCase("solve_triangular_right_unit",
           lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=False, left=False,
                                                         unitriangular=True),
           ((3, 3), (2, 3)), inputs=dominant, jvp=False,
           numpy=lambda np, a, b: b @ np.linalg.inv(np.tril(a, -1) + np.eye(3))),
    OpCase("lu_factor", lambda lib, a: tuple(lib.linalg.lu_factor(a)), SQ, inputs=conditioned,
           variants=(BSQ,)),
    OpCase("lu_factor_ex", lambda lib, a: tuple(lib.linalg.lu_factor_ex(a)), SQ,
           inputs=conditioned),
    OpCase("lu", lambda lib, a: tuple(lib.linalg.lu(a)), BSQ, inputs=conditioned),
    OpCase("lu_rectangular", lambda lib, a: tuple(lib.linalg.lu(a)), ((3, 5),), grad=False,
           variants=(((5, 3),),)),
    OpCase("lu_solve", _lu_solve(True, False), ((3, 3), (3, 2)), inputs=conditioned,
           numpy=lambda np, a, b: np.linalg.solve(a, b), variants=(((2, 3, 3), (3, 1)),),
           jvp=False),
    OpCase("lu_solve_adjoint", _lu_solve(True, True), ((3, 3), (3, 2)), inputs=conditioned,
           numpy=lambda np, a, b: np.linalg.solve(a.T, b), jvp=False),
    OpCase("lu_solve_right", _lu_solve(False, False), ((3, 3), (2, 3)), inputs=conditioned,
           numpy=lambda np, a, b: b @ np.linalg.inv(a), jvp=False),
    OpCase("lu_solve_right_adjoint", _lu_solve(False, True), ((3, 3), (2, 3)),
           inputs=conditioned, numpy=lambda np, a, b: b @ np.linalg.inv(a.T), jvp=False),
    OpCase("inv_ex", lambda lib, a: tuple(lib.linalg.inv_ex(a)), BSQ, inputs=conditioned,
           numpy=lambda np, a: (np.linalg.inv(a), np.zeros(2, np.int32))),
    OpCase("solve_ex", lambda lib, a, b: tuple(lib.linalg.solve_ex(a, b)), ((2, 3, 3), (3,)),
           inputs=conditioned, numpy=lambda np, a, b: (np.linalg.solve(a, b),
                                                        np.zeros(2, np.int32))),
    OpCase("solve_ex_left_false", lambda lib, a, b: lib.linalg.solve_ex(a, b, left=False)[0],
           ((3, 3), (2, 3)), inputs=conditioned, numpy=lambda np, a, b: b @ np.linalg.inv(a)),
    OpCase("cholesky_ex", lambda lib, a: tuple(lib.linalg.cholesky_ex(_spd(lib, a))), BSQ,
           numpy=lambda np, a: (np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + np.eye(3)),
                                np.zeros(2, np.int32))),
    OpCase("cholesky_ex_upper", lambda lib, a: lib.linalg.cholesky_ex(_spd(lib, a),
                                                                      upper=True).L, SQ),
    OpCase("pinv", lambda lib, a: lib.linalg.pinv(a), ((4, 3),), inputs=conditioned,
           numpy=lambda np, a: np.linalg.pinv(a), variants=(((2, 3, 4),),)),
    OpCase("pinv_hermitian", lambda lib, a: lib.linalg.pinv(a + a.mT, hermitian=True), SQ,
           inputs=symmetric, numpy=lambda np, a: np.linalg.pinv(a + np.swapaxes(a, -1, -2)),
           variants=(BSQ,)),
    OpCase("matrix_rank", lambda lib, a: lib.linalg.matrix_rank(a), ((2, 4, 3),), grad=False,
           numpy=lambda np, a: np.linalg.matrix_rank(a)),
    OpCase("matrix_rank_atol", lambda lib, a: lib.linalg.matrix_rank(a, atol=1.5), ((4, 3),),
           grad=False, inputs=conditioned, numpy=lambda np, a: np.array(2)),
    # (σ spread over [1, 3]: two of the three are above 1.5 — _with_spectrum's linspace)
    OpCase("matrix_rank_hermitian",
           lambda lib, a: lib.linalg.matrix_rank(a + a.mT, rtol=0.5, hermitian=True), SQ,
           grad=False, inputs=symmetric, numpy=lambda np, a: np.array(2)),
    OpCase("tensorinv", lambda lib, a: lib.linalg.tensorinv(a.reshape(4, 2, 2), ind=1),
           ((4, 4),), inputs=conditioned,
           numpy=lambda np, a: np.linalg.tensorinv(a.reshape(4, 2, 2), ind=1)),
    OpCase("tensorsolve", lambda lib, a, b: lib.linalg.tensorsolve(a.reshape(2, 3, 6), b),
           ((6, 6), (2, 3)), inputs=conditioned,
           numpy=lambda np, a, b: np.linalg.tensorsolve(a.reshape(2, 3, 6), b)),
    OpCase("tensorsolve_dims",
           lambda lib, a, b: lib.linalg.tensorsolve(a.reshape(2, 3, 2, 3), b, dims=(0,)),
           ((6, 6), (3, 2)), inputs=conditioned, jvp=False),
    # (jvp=False: torch.func.jvp can't go through tensorsolve's dims= permute; ours is
    # checked against finite differences below)
]

# cond: PyTorch 2.13's backward fails for the orders that go through inv_ex ("modified by an
# inplace operation", its masked_fill_ on the inverse), so for those PyTorch checks the values
# only and our gradients are checked against finite differences (COND_GRADIENTS).
COND_GRADIENTS = []
for _p in [None, 2, -2, "fro", "nuc", INF, -INF, 1, -1]:
    _row = OpCase(f"cond_{_p}", lambda lib, a, p=_p: lib.linalg.cond(a, p), BSQ,
                  inputs=conditioned, gradgrad=_p in ("fro", "nuc", None, 2, -2),
                  numpy=lambda np, a, p=_p: np.linalg.cond(a, p))
    # (gradgrad=False where a max/min over column or row sums picks one entry)
    if _p in (None, 2, -2):
        CASES.append(_row)
    else:
        COND_GRADIENTS.append(_row)
        CASES.append(OpCase(_row.name + "_values", _row.fn, BSQ, inputs=conditioned,
                            grad=False, numpy=_row.numpy))
CASES.append(OpCase("cond_wide", lambda lib, a: lib.linalg.cond(a), ((3, 5),),
                    inputs=conditioned, numpy=lambda np, a: np.linalg.cond(a)))

for _driver in ("gels", "gelsy", "gelsd", "gelss"):
    CASES.append(OpCase(f"lstsq_{_driver}", lambda lib, a, b, d=_driver: tuple(
        lib.linalg.lstsq(a, b, driver=d))[:2], ((2, 5, 3), (2, 5, 2)), inputs=conditioned,
        variants=(((5, 3), (5,)),)))
    CASES.append(OpCase(f"lstsq_{_driver}_all", lambda lib, a, b, d=_driver: tuple(
        lib.linalg.lstsq(a, b, driver=d)), ((5, 3), (5, 2)), grad=False, inputs=conditioned))
CASES.append(OpCase("lstsq_wide", lambda lib, a, b: lib.linalg.lstsq(a, b).solution,
                    ((3, 5), (3, 2)), inputs=conditioned, jvp=False,
                    numpy=lambda np, a, b: np.linalg.lstsq(a, b, rcond=None)[0]))
globals().update(standard_op_tests(CASES))

# Forward mode of the triangular solves: PyTorch's disagrees with its own backward (it doesn't
# project the tangent onto the triangle read, see tests/ops/test_legacy_linalg.py), so these
# are checked against finite differences only.
TRUE_DERIVATIVE = [c for c in CASES if c.name.startswith(("solve_triangular", "lu_solve",
                                                          "tensorsolve_dims"))]


@pytest.mark.parametrize("case", TRUE_DERIVATIVE, ids=[c.id for c in TRUE_DERIVATIVE])
def test_jvp_matches_finite_differences(case, device, monkeypatch):
    monkeypatch.setattr(oracle, "torch", None)
    oracle.check_jvp(case, device)


@pytest.mark.parametrize("case", COND_GRADIENTS, ids=[c.id for c in COND_GRADIENTS])
def test_cond_derivatives_match_finite_differences(case, device, monkeypatch):
    monkeypatch.setattr(oracle, "torch", None)
    oracle.check_gradcheck(case, device)
    if case.gradgrad:
        oracle.check_gradcheck(case, device, second_order=True)
    oracle.check_jvp(case, device)


def _singular_batch():
    """A batch of three: invertible and positive-definite, zero, rank 2 (column 1 is 0)."""
    rng = np.random.default_rng(7)
    good = _with_spectrum(rng, (3, 3))
    rank2 = rng.standard_normal((3, 3))
    rank2[:, 1] = 0
    return np.stack([good @ good.T, np.zeros((3, 3)), rank2])


@needs_torch
@pytest.mark.parametrize("name", ["inv_ex", "solve_ex", "cholesky_ex", "lu_factor_ex"])
def test_ex_variants_report_info_as_torch_and_keep_the_good_results(name):
    a = _singular_batch()
    b = np.arange(3.0)
    args = (lambda lib, t: (t, lib.tensor(b))) if name == "solve_ex" else (
        lambda lib, t: (t,))
    ag = gradlab.tensor(a, requires_grad=True)
    ours = getattr(LA, name)(*args(gradlab, ag))
    theirs = getattr(torch.linalg, name)(*args(torch, torch.tensor(a)))
    assert type(ours).__name__ == type(theirs).__name__ == f"linalg_{name}"
    assert ours.info.dtype is gradlab.int32 and ours.info.tolist() == theirs.info.tolist()
    assert ours.info.tolist()[0] == 0 and min(ours.info.tolist()[1:]) > 0
    np.testing.assert_allclose(ours[0][0].detach().numpy(), theirs[0][0].numpy(), atol=1e-10)
    if name != "lu_factor_ex":  # the factor of a singular matrix is defined; the rest is NaN
        assert np.isnan(ours[0][1:].detach().numpy()).all()
        ours[0][0].sum().backward()  # the good matrix has a gradient, the bad ones none
        assert np.isfinite(ag.grad.numpy()).all() and not ag.grad.numpy()[1:].any()
    with pytest.raises(RuntimeError):
        getattr(LA, name)(*args(gradlab, ag), check_errors=True)


def test_singular_and_not_positive_definite_matrices_raise_linalg_error():
    assert issubclass(LA.LinAlgError, RuntimeError)
    zeros = gradlab.zeros(2, 3, 3, dtype=gradlab.float64)
    for call in (lambda: LA.inv(zeros), lambda: LA.solve(zeros, gradlab.ones(3, 1).double()),
                 lambda: LA.cholesky(zeros), lambda: gradlab.inverse(zeros),
                 lambda: LA.inv_ex(zeros, check_errors=True),
                 lambda: LA.cholesky_ex(zeros, check_errors=True),
                 lambda: LA.lu_factor_ex(zeros, check_errors=True),
                 lambda: LA.tensorinv(gradlab.zeros(4, 2, 2, dtype=gradlab.float64), ind=1)):
        with pytest.raises(LA.LinAlgError, match=r"singular|positive-definite"):
            call()
    with pytest.raises(RuntimeError, match=r"lu_factor: U\[0,0\] is zero.*linalg.lu"):
        LA.lu_factor(zeros)


@needs_torch
def test_pinv_and_matrix_rank_drop_singular_values_below_the_tolerance_as_torch():
    spectrum = np.diag([3.0, 1.0, 0.05])
    q = _orthogonal(np.random.default_rng(3), 3)
    a = q @ spectrum @ q.T @ _orthogonal(np.random.default_rng(4), 3)
    for kwargs in ({"atol": 0.1}, {"rtol": 0.1}, {"atol": 0.01, "rtol": 0.5}, {}):
        ours = LA.pinv(gradlab.tensor(a), **kwargs)
        np.testing.assert_allclose(ours.numpy(), torch.linalg.pinv(torch.tensor(a),
                                                                   **kwargs).numpy(),
                                   atol=1e-10)
        rank = LA.matrix_rank(gradlab.tensor(a), **kwargs)
        assert rank.dtype is gradlab.int64
        assert rank.item() == torch.linalg.matrix_rank(torch.tensor(a), **kwargs).item()
    assert LA.matrix_rank(gradlab.tensor(a), tol=0.5).item() == 2
    assert LA.matrix_rank(gradlab.zeros(2, 0, 3)).tolist() == [0, 0]
    x = gradlab.tensor(a, requires_grad=True)  # the derivative of the thresholded pinv
    assert gradlab.autograd.gradcheck(lambda t: LA.pinv(t, atol=0.1), [x])


@needs_torch
@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_rank_deficient_gives_the_minimum_norm_solution_as_torch(driver):
    rng = np.random.default_rng(8)
    a = rng.standard_normal((6, 4))
    a[:, 3] = a[:, 0] + a[:, 1]  # rank 3
    b = rng.standard_normal((6, 2))
    ours = LA.lstsq(gradlab.tensor(a), gradlab.tensor(b), driver=driver)
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    assert type(ours).__name__ == "linalg_lstsq"
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape)
        if driver != "gels":  # (gels assumes full rank: its solution is not the minimal one)
            np.testing.assert_allclose(o.numpy(), t.numpy(), atol=1e-8)
    np.testing.assert_allclose(ours.solution.numpy(), np.linalg.pinv(a) @ b, atol=1e-10)


def _brute_force_cost(sizes):
    if len(sizes) <= 2:
        return 0
    return min(_brute_force_cost(sizes[:s + 1]) + _brute_force_cost(sizes[s:])
               + sizes[0] * sizes[s] * sizes[-1] for s in range(1, len(sizes) - 1))


def _cost_of(split, sizes, i, j):
    if i == j:
        return 0
    s = split[i][j]
    return (_cost_of(split, sizes, i, s) + _cost_of(split, sizes, s + 1, j)
            + sizes[i] * sizes[s + 1] * sizes[j + 1])


def test_multi_dot_picks_the_cheapest_order():
    assert chain_order([10, 100, 5, 50])[0][2] == 1  # (A B) C: 7,500 against 75,000
    assert chain_order([50, 5, 100, 10])[0][2] == 0  # A (B C): 7,500 against 75,000
    rng = np.random.default_rng(0)
    for _ in range(30):
        sizes = list(rng.integers(1, 30, rng.integers(3, 8)))
        split = chain_order(sizes)
        assert _cost_of(split, sizes, 0, len(sizes) - 2) == _brute_force_cost(sizes)


def test_multi_dot_builds_the_chosen_tree_of_matmuls(monkeypatch):
    from gradlab.ops import matrix_chain

    a, b, c = (gradlab.ones(*s) for s in ((50, 5), (5, 100), (100, 10)))
    calls = []
    original = matrix_chain.matmul
    monkeypatch.setattr(matrix_chain, "matmul", lambda x, y: calls.append(
        (tuple(x.shape), tuple(y.shape))) or original(x, y))
    out = LA.multi_dot([a, b, c])
    assert calls == [((5, 100), (100, 10)), ((50, 5), (5, 10))]  # A (B C)
    assert out.shape == (50, 10) and out.tolist()[0][0] == 500.0


@needs_torch
def test_householder_product_of_geqrf_is_the_q_of_qr():
    a = np.random.default_rng(2).standard_normal((2, 5, 3))
    packed, tau = torch.geqrf(torch.tensor(a))
    q = LA.householder_product(gradlab.tensor(packed.numpy()), gradlab.tensor(tau.numpy()))
    np.testing.assert_allclose(np.abs(q.numpy()), np.abs(np.linalg.qr(a)[0]), atol=1e-12)


@needs_torch
@pytest.mark.filterwarnings("ignore:torch.* is deprecated")  # torch.qr, lu, triangular_solve
def test_named_tuples_have_pytorchs_names_fields_and_pickle():
    a = _with_spectrum(np.random.default_rng(1), (3, 3))
    b = np.ones((3, 2))
    pairs = [(lambda lib, t, u: lib.linalg.lu_factor(t)), (lambda lib, t, u: lib.linalg.lu(t)),
             (lambda lib, t, u: lib.linalg.lstsq(t, u)), (lambda lib, t, u: lib.qr(t)),
             (lambda lib, t, u: lib.svd(t)), (lambda lib, t, u: lib.lu_unpack(*lib.lu(t))),
             (lambda lib, t, u: lib.triangular_solve(u, t))]
    for call in pairs:
        ours = call(gradlab, gradlab.tensor(a), gradlab.tensor(b))
        theirs = call(torch, torch.tensor(a), torch.tensor(b))
        name = type(theirs).__name__
        assert type(ours) is getattr(return_types, name), name
        for i, field in enumerate(type(ours)._fields):  # same order and names as PyTorch's
            assert getattr(theirs, field) is theirs[i], (name, field)
        copy = pickle.loads(pickle.dumps(ours))
        assert type(copy) is type(ours) and copy[0].tolist() == ours[0].tolist()
    assert gradlab.ops.legacy_linalg.svd_result is return_types.svd


def test_lu_without_pivoting_has_an_empty_p_and_vander_keeps_integers():
    a = gradlab.tensor([[4.0, 3.0], [6.0, 3.0]], dtype=gradlab.float64)
    p, low, up = LA.lu(a, pivot=False)
    assert p.shape == (0,) and (low @ up).tolist() == a.tolist()
    v = LA.vander(gradlab.tensor([1, 2, 3]))
    assert v.dtype is gradlab.int64 and v.tolist() == [[1, 1, 1], [1, 2, 4], [1, 3, 9]]


F64 = gradlab.float64
SQUARE = gradlab.eye(3, dtype=F64)
ERRORS = [
    (lambda: LA.eig(gradlab.ones(2, 3, dtype=F64)), RuntimeError,
     r"linalg.eig: expected square matrices"),
    (lambda: LA.eigvals(SQUARE.to(gradlab.int64)), RuntimeError,
     r"linalg.eigvals: expected a floating point tensor"),
    (lambda: LA.solve_triangular(SQUARE, [1.0], upper=True), TypeError, r"B must be a Tensor"),
    (lambda: LA.solve_triangular(SQUARE, gradlab.ones(3, dtype=F64), upper=True), RuntimeError,
     r"solve_triangular: B must be a matrix.*unsqueeze"),
    (lambda: LA.solve_triangular(SQUARE, gradlab.ones(3, 2, dtype=F64), upper=True,
                                 left=False), RuntimeError, r"B needs 3 columns.*left=False"),
    (lambda: LA.solve_triangular(SQUARE, gradlab.ones(3, 2), upper=True), RuntimeError,
     r"same dtype.*B.to"),
    (lambda: LA.matrix_rank(SQUARE, tol=1.0, atol=1.0), RuntimeError, r"either tol"),
    (lambda: LA.pinv(gradlab.ones(2, 3, dtype=F64), hermitian=True), RuntimeError,
     r"linalg.pinv: expected square"),
    (lambda: LA.cond(SQUARE, 3), RuntimeError, r"linalg.cond: p must be"),
    (lambda: LA.cond(gradlab.ones(2, 3, dtype=F64), "fro"), RuntimeError,
     r"cond\(p='fro'\): A must be square.*p=None"),
    (lambda: LA.lstsq(SQUARE, 1.0), TypeError, r"lstsq: B must be a Tensor"),
    (lambda: LA.lstsq(SQUARE, gradlab.ones(3, 1)), RuntimeError, r"lstsq: .*same dtype"),
    (lambda: LA.lstsq(SQUARE, gradlab.ones(3, 1, dtype=F64), driver="gelsx"), RuntimeError,
     r"driver must be one of"),
    (lambda: LA.lstsq(SQUARE, gradlab.ones(2, 1, dtype=F64)), RuntimeError,
     r"A has 3 rows.*B needs 3 rows"),
    (lambda: LA.multi_dot(SQUARE), TypeError, r"multi_dot\(\[A, B, C\]\)"),
    (lambda: LA.multi_dot([SQUARE]), RuntimeError, r"at least 2 tensors, got 1"),
    (lambda: LA.multi_dot([SQUARE, 1.0]), TypeError, r"tensor 1 must be a Tensor"),
    (lambda: LA.multi_dot([SQUARE, gradlab.ones(3, dtype=F64), SQUARE]), RuntimeError,
     r"tensor 1 has shape \(3,\).*middle must be 2-D"),
    (lambda: LA.multi_dot([SQUARE, gradlab.ones(3, 3)]), RuntimeError, r"same dtype"),
    (lambda: LA.multi_dot([SQUARE, gradlab.ones(2, 3, dtype=F64)]), RuntimeError,
     r"tensors 0 and 1 can't be multiplied.*3 != 2"),
    (lambda: LA.multi_dot([SQUARE, SQUARE], out=SQUARE), TypeError, r"out= is not supported"),
    (lambda: LA.householder_product(SQUARE, [1.0]), TypeError, r"tau must be a Tensor"),
    (lambda: LA.householder_product(gradlab.ones(2, 3, dtype=F64), gradlab.ones(2, dtype=F64)),
     RuntimeError, r"needs m >= n"),
    (lambda: LA.householder_product(SQUARE, gradlab.ones(2)), RuntimeError, r"same dtype"),
    (lambda: LA.householder_product(SQUARE, SQUARE, out=SQUARE), TypeError, r"out="),
    (lambda: LA.tensorinv([1.0]), TypeError, r"tensorinv: expected a Tensor"),
    (lambda: LA.tensorinv(SQUARE, ind=0), RuntimeError, r"ind .* positive int"),
    (lambda: LA.tensorinv(gradlab.ones(2, 3, 4, dtype=F64), ind=1), RuntimeError,
     r"must be square: .* is 2 but .* is 12"),
    (lambda: LA.tensorinv(SQUARE, out=SQUARE), TypeError, r"out="),
    (lambda: LA.tensorsolve(SQUARE, 1.0), TypeError, r"B must be a Tensor"),
    (lambda: LA.tensorsolve(gradlab.ones(2, 3, 4, dtype=F64), gradlab.ones(2, dtype=F64)),
     RuntimeError, r"as many unknowns as equations"),
    (lambda: LA.tensorsolve(SQUARE, SQUARE, out=SQUARE), TypeError, r"out="),
    (lambda: LA.vander([1.0]), TypeError, r"vander: expected a Tensor"),
    (lambda: LA.vander(gradlab.ones(3), N=1), RuntimeError, r"N .* greater than 1"),
    (lambda: LA.vander(gradlab.tensor(2.0)), RuntimeError, r"at least 1-D"),
    (lambda: LA.vecdot(SQUARE, 1.0), TypeError, r"vecdot: y must be a Tensor"),
    (lambda: LA.vecdot(gradlab.ones(3, dtype=gradlab.int64), gradlab.ones(3,
                                                                          dtype=gradlab.int64)),
     RuntimeError, r"vecdot"),
    (lambda: LA.vecdot(gradlab.ones(3), gradlab.ones(3, dtype=F64)), RuntimeError,
     r"same dtype.*y.to"),
]


@pytest.mark.parametrize("call, error, match", ERRORS, ids=[m[:30] for _, _, m in ERRORS])
def test_errors_name_the_op_and_the_fix(call, error, match):
    with pytest.raises(error, match=match):
        call()


@needs_torch
@pytest.mark.parametrize("kwargs", [{"atol": [0.5, 3.0]}, {"rtol": 0.6}, {"atol": 0.0},
                                    {"atol": [0.0, 0.0], "rtol": [0.5, 0.1]}])
def test_tolerances_given_as_tensors_broadcast_over_the_batch_as_torch(kwargs):
    a = np.random.default_rng(0).standard_normal((2, 4, 3))
    ours = {k: gradlab.tensor(v, dtype=F64) for k, v in kwargs.items()}
    theirs = {k: torch.tensor(v, dtype=torch.float64) for k, v in kwargs.items()}
    assert LA.matrix_rank(gradlab.tensor(a), **ours).tolist() == \
        torch.linalg.matrix_rank(torch.tensor(a), **theirs).tolist()
    np.testing.assert_allclose(LA.pinv(gradlab.tensor(a), **ours).numpy(),
                               torch.linalg.pinv(torch.tensor(a), **theirs).numpy(), atol=1e-12)
