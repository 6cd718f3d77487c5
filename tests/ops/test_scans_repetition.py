"""cumprod, cummax, cummin, logcumsumexp (scans.py) and repeat_interleave, diff, take,
broadcast_tensors, ravel (repetition.py): vs NumPy and PyTorch, zeros in cumprod, ties and NaN
in cummax, extreme values in logcumsumexp, and the errors."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
import gradlab.autograd.forward_ad as fwAD
from gradlab.ops.scans import inclusive_scan
from tests.oracle import EMPTY, SCALAR, M, OpCase, T, needs_torch, standard_op_tests, torch

NAN = float("nan")


def with_zeros(rng, dtype, shapes):
    """Values with one zero in some rows and two in others (and none in the last)."""
    x = rng.uniform(0.5, 1.5, shapes[0]).astype(dtype) * rng.choice([-1, 1], shapes[0])
    x[0, 1] = 0.0
    x[1, 2] = x[1, 4] = 0.0
    x[2, 0] = 0.0
    return [x]


def np_cummax(x, axis, largest=True):
    """(values, indices) with the latest index on ties, as a plain loop."""
    x = np.moveaxis(x, axis, -1)
    values, indices = np.empty_like(x), np.zeros(x.shape, dtype=np.int64)
    for row in np.ndindex(x.shape[:-1]):
        best, at = None, 0
        for i, v in enumerate(x[row]):
            if best is None or np.isnan(v) or (not np.isnan(best) and
                                               (v >= best if largest else v <= best)):
                best, at = v, i
            values[row + (i,)], indices[row + (i,)] = best, at
    return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)


def np_logcumsumexp(x, axis):
    return np.logaddexp.accumulate(x, axis=axis) if x.ndim else x.copy()


def ints_index(lib, values):
    return lib.tensor(values, dtype=lib.int64)


SCANS = [
    OpCase("cumprod", lambda lib, x: lib.cumprod(x, 1), T,
           numpy=lambda np, x: np.cumprod(x, 1), variants=(M,)),
    OpCase("cumprod_0d_empty", lambda lib, x: x.cumprod(0), SCALAR,
           numpy=lambda np, x: x.copy(), variants=(EMPTY,)),
    OpCase("cumprod_with_zeros", lambda lib, x: x.cumprod(-1), ((4, 6),), inputs=with_zeros,
           numpy=lambda np, x: np.cumprod(x, -1)),
    OpCase("cumprod_with_zeros_dim0", lambda lib, x: lib.cumprod(x.t(), 0), ((4, 6),),
           inputs=with_zeros, numpy=lambda np, x: np.cumprod(x.T, 0)),
    OpCase("cummax", lambda lib, x: lib.cummax(x, 1), T, numpy=lambda np, x: np_cummax(x, 1),
           variants=(M, EMPTY)),
    OpCase("cummin_dim0", lambda lib, x: x.cummin(0), M,
           numpy=lambda np, x: np_cummax(x, 0, False)),
    OpCase("cummax_0d", lambda lib, x: x.cummax(0), SCALAR,
           numpy=lambda np, x: (x.copy(), np.array(0))),
    OpCase("logcumsumexp", lambda lib, x: lib.logcumsumexp(x, 2), T,
           numpy=lambda np, x: np_logcumsumexp(x, 2), variants=(((5, 1, 1),),)),
    # jvp=False: PyTorch's forward-mode formula drops terms below 1e-13 of a row's largest
    # exp, so torch.func.jvp is off for values this far apart; see the test further down.
    OpCase("logcumsumexp_wide", lambda lib, x: x.logcumsumexp(0), ((9, 3),), domain=(-60, 60),
           numpy=lambda np, x: np_logcumsumexp(x, 0), variants=(SCALAR, EMPTY), jvp=False),
]

REPETITION = [
    OpCase("repeat_interleave_int", lambda lib, x: x.repeat_interleave(2), M,
           numpy=lambda np, x: np.repeat(x, 2), variants=(SCALAR, EMPTY)),
    OpCase("repeat_interleave_tensor",
           lambda lib, x: lib.repeat_interleave(x, ints_index(lib, [2, 0, 1]), dim=1),
           ((4, 3),), numpy=lambda np, x: np.repeat(x, [2, 0, 1], axis=1)),
    OpCase("repeat_interleave_one_count",
           lambda lib, x: x.repeat_interleave(ints_index(lib, [3]), dim=-2, output_size=9), T,
           numpy=lambda np, x: np.repeat(x, 3, axis=-2)),
    OpCase("diff", lambda lib, x: lib.diff(x), M, numpy=lambda np, x: np.diff(x),
           variants=(EMPTY, ((5,),))),
    OpCase("diff_n2_dim0", lambda lib, x: x.diff(2, 0), T, numpy=lambda np, x: np.diff(x, 2, 0)),
    OpCase("diff_order_past_the_size", lambda lib, x: x.diff(5), ((2, 3),),
           numpy=lambda np, x: np.diff(x, 5)),
    OpCase("diff_prepend_append", lambda lib, x, p, a: lib.diff(x, 2, 0, prepend=p, append=a),
           ((3, 4), (1, 4), (2, 4)),
           numpy=lambda np, x, p, a: np.diff(x, 2, 0, prepend=p, append=a)),
    OpCase("take", lambda lib, x: lib.take(x, ints_index(lib, [[0, -1, 5], [11, 3, 3]])), M,
           numpy=lambda np, x: np.take(x, [[0, -1, 5], [11, 3, 3]])),
    OpCase("take_method_0d", lambda lib, x: x.take(ints_index(lib, 0)), SCALAR,
           numpy=lambda np, x: x.copy()),
    OpCase("broadcast_tensors", lambda lib, x, y: lib.broadcast_tensors(x, y), ((2, 1, 4), (3, 1)),
           numpy=lambda np, x, y: np.broadcast_arrays(x, y),
           variants=(((3,), ()), ((0, 3), (1,)))),
    OpCase("broadcast_tensors_three", lambda lib, x, y, z: lib.broadcast_tensors(x, y, z)[2] * 2,
           ((2, 1), (3,), ()), numpy=lambda np, x, y, z: np.broadcast_to(z, (2, 3)) * 2),
    OpCase("ravel", lambda lib, x: x.t().ravel(), M, numpy=lambda np, x: x.T.ravel(),
           variants=(EMPTY,)),
    OpCase("ravel_0d", lambda lib, x: lib.ravel(x), SCALAR, numpy=lambda np, x: x.ravel()),
]

globals().update(standard_op_tests(SCANS, prefix="scan_"))
globals().update(standard_op_tests(REPETITION, prefix="repetition_"))


# --- cumprod: zeros, double backward, forward over reverse ------------------------------------

@needs_torch
@pytest.mark.parametrize("zeros_at", [[0], [3], [1, 4], [0, 5], [2, 2], [], [0, 1, 2, 3, 4, 5]])
def test_cumprod_gradients_with_zeros_match_torch_to_second_order(zeros_at):
    rng = np.random.default_rng(len(zeros_at))
    x = rng.uniform(0.5, 1.5, 6)
    x[zeros_at] = 0.0
    g = rng.standard_normal(6)
    ours = gradlab.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    (grad_ours,) = gradlab.autograd.grad(ours.cumprod(0), ours, gradlab.tensor(g),
                                         create_graph=True)
    (grad_theirs,) = torch.autograd.grad(theirs.cumprod(0), theirs, torch.tensor(g),
                                         create_graph=True)
    np.testing.assert_allclose(grad_ours.detach().numpy(), grad_theirs.detach().numpy(),
                               atol=1e-12)
    # Hessian-vector products: the derivative of the zeros' gradients in a_z is not 0.
    v = rng.standard_normal(6)
    (hv_ours,) = gradlab.autograd.grad(grad_ours, ours, gradlab.tensor(v))
    (hv_theirs,) = torch.autograd.grad(grad_theirs, theirs, torch.tensor(v))
    np.testing.assert_allclose(hv_ours.numpy(), hv_theirs.numpy(), atol=1e-12)
    # Without create_graph the O(n) masks path runs: the same first derivative.
    fresh = gradlab.tensor(x, requires_grad=True)
    fresh.cumprod(0).backward(gradlab.tensor(g))
    np.testing.assert_allclose(fresh.grad.numpy(), grad_theirs.detach().numpy(), atol=1e-12)


def test_cumprod_forward_over_reverse_with_a_zero():
    """The tangent of the gradient (H·v) through the exact path, vs a central difference."""
    x0 = np.array([0.7, 0.0, 1.3, -0.9, 1.1])
    v = np.array([0.3, -1.0, 0.5, 0.2, -0.4])
    with fwAD.dual_level():
        x = fwAD.make_dual(gradlab.tensor(x0, requires_grad=True), gradlab.tensor(v))
        (g,) = gradlab.autograd.grad(x.cumprod(0).sum(), x, create_graph=True)
        hv = fwAD.unpack_dual(g).tangent.detach().numpy()

    def grad_at(at):
        t = gradlab.tensor(at, requires_grad=True)
        return gradlab.autograd.grad(t.cumprod(0).sum(), t)[0].numpy()

    eps = 1e-6
    np.testing.assert_allclose(hv, (grad_at(x0 + eps * v) - grad_at(x0 - eps * v)) / (2 * eps),
                               rtol=1e-6, atol=1e-8)


def test_cumprod_of_integers_and_bools_is_int64():
    assert gradlab.tensor([1, 2, 3], dtype=gradlab.int32).cumprod(0).dtype is gradlab.int64
    assert gradlab.tensor([True, False]).cumprod(0).tolist() == [1, 0]
    assert gradlab.tensor([1, 2]).cumprod(0, dtype=gradlab.float64).dtype is gradlab.float64


# --- cummax, cummin, logcumsumexp -------------------------------------------------------------

@needs_torch
@settings(max_examples=30, deadline=None)
@given(data=st.data(), largest=st.booleans())
def test_cummax_cummin_with_ties_and_nan_match_torch(data, largest):
    shape = data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3), label="shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    x = rng.integers(0, 3, size=shape).astype(np.float64)
    x[rng.random(shape) < 0.15] = NAN
    fn = "cummax" if largest else "cummin"
    ours = getattr(gradlab.tensor(x, requires_grad=True), fn)(dim)
    theirs = getattr(torch.tensor(x, requires_grad=True), fn)(dim)
    np.testing.assert_array_equal(ours.values.detach().numpy(), theirs.values.detach().numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    assert type(ours).__name__ == fn and type(ours.values.grad_fn).__name__ == \
        type(theirs.values.grad_fn).__name__


def test_cummax_results_pickle_and_send_the_gradient_to_the_index():
    x = gradlab.tensor([1.0, 3.0, 2.0, 3.0, 0.0], requires_grad=True)
    result = x.cummax(0)
    assert result.indices.tolist() == [0, 1, 1, 3, 3]
    again = pickle.loads(pickle.dumps(result))
    assert type(again) is type(result) and again.values.tolist() == [1.0, 3.0, 3.0, 3.0, 3.0]
    result.values.sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 0.0, 2.0, 0.0]
    assert gradlab.tensor([True, False]).cummax(0).indices.tolist() == [0, 0]


@needs_torch
def test_logcumsumexp_is_finite_for_extreme_values_and_so_is_its_gradient():
    x = np.array([-1000.0, 0.0, 800.0, -np.inf, 1.0])
    g = np.array([1.0, -2.0, 0.0, 0.5, 3.0])
    ours = gradlab.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    out = ours.logcumsumexp(0)
    np.testing.assert_allclose(out.detach().numpy(), theirs.logcumsumexp(0).detach().numpy())
    out.backward(gradlab.tensor(g))
    theirs.logcumsumexp(0).backward(torch.tensor(g))
    assert np.isfinite(ours.grad.numpy()).all()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-12)


def test_logcumsumexp_tangent_is_exact_for_values_far_apart():
    """ẏ_k = Σ_{i<=k} exp(a_i - out_k) ȧ_i: out_0 = a_0, so ẏ_0 = ȧ_0 however small e^a_0 is."""
    x0 = np.array([-50.0, 40.0, -30.0, 45.0, 0.0])
    v = np.array([1.5, -0.5, 2.0, 0.25, -1.0])
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(fwAD.make_dual(gradlab.tensor(x0), gradlab.tensor(v))
                                   .logcumsumexp(0)).tangent.numpy()
    weights = np.exp(x0[None, :] - np_logcumsumexp(x0, 0)[:, None]) * np.tri(5)
    np.testing.assert_allclose(tangent, weights @ v, rtol=1e-12)
    assert tangent[0] == pytest.approx(1.5, rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 40), seed=st.integers(0, 2**16))
def test_inclusive_scan_equals_numpys_accumulate(n, seed):
    x = np.random.default_rng(seed).standard_normal((3, n))
    for ufunc in (np.maximum, np.minimum, np.logaddexp, np.add):
        np.testing.assert_allclose(inclusive_scan(ufunc, x, 1), ufunc.accumulate(x, axis=1))


# --- repetition -------------------------------------------------------------------------------

def test_repeat_interleave_of_counts_alone_gives_positions():
    out = gradlab.repeat_interleave(gradlab.tensor([1, 0, 2]))
    assert out.tolist() == [0, 2, 2] and out.dtype is gradlab.int64


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_diff_with_edges_matches_numpy_for_any_dim_and_order(data):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3), label="shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    n = data.draw(st.integers(0, 4), label="n")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    x = rng.standard_normal(shape)
    edge = list(shape)
    edge[dim] = data.draw(st.integers(0, 2), label="edge size")
    p = rng.standard_normal(edge)
    out = gradlab.diff(gradlab.tensor(x), n, dim, prepend=gradlab.tensor(p))
    np.testing.assert_allclose(out.numpy(), np.diff(x, n, dim, prepend=p), rtol=1e-12)
    flags = gradlab.tensor(x > 0).diff(dim=dim)
    assert flags.dtype is gradlab.bool
    np.testing.assert_array_equal(flags.numpy(), np.diff(x > 0, axis=dim))


def test_ravel_is_a_view_when_contiguous_and_take_reads_the_flat_values():
    x = gradlab.arange(6.0).reshape(2, 3)
    assert np.shares_memory(x.ravel().numpy(), x.numpy())
    assert x.t().ravel().tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    x.requires_grad_()
    x.take(gradlab.tensor([5, 5, 0])).sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]]


# --- errors that teach ------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.tensor([1, 2]).logcumsumexp(0), RuntimeError,
     r"logcumsumexp: expected a floating point tensor.*\.float\(\)"),
    (lambda: gradlab.ones(3).cumprod(1), IndexError, r"cumprod: dimension 1 is out of range"),
    (lambda: gradlab.repeat_interleave([1, 2], 2), TypeError, r"expected a Tensor, got list"),
    (lambda: gradlab.repeat_interleave(gradlab.ones(2, 2)), RuntimeError,
     r"with no repeats, the input is the counts and must be 1-D, got shape \(2, 2\)"),
    (lambda: gradlab.ones(2, 3).repeat_interleave(gradlab.tensor([1.0, 2.0]), 0), RuntimeError,
     r"repeats must be an integer tensor.*repeats.long\(\)"),
    (lambda: gradlab.ones(2).repeat_interleave(gradlab.ones(1, 2, dtype=gradlab.int64)),
     RuntimeError, r"0-d or 1-D tensor .* got shape \(1, 2\)"),
    (lambda: gradlab.ones(2, 3).repeat_interleave(gradlab.tensor([1, 2, 3]), 0), RuntimeError,
     r"repeats has 3 counts but dim 0 of the input \(shape \(2, 3\)\) has 2 positions"),
    (lambda: gradlab.ones(2).repeat_interleave(2.5), TypeError,
     r"repeats must be an int or an integer tensor, got float"),
    (lambda: gradlab.ones(2).repeat_interleave(-1), RuntimeError, r"repeats must be >= 0, got -1"),
    (lambda: gradlab.ones(2).repeat_interleave(2, output_size=5), RuntimeError,
     r"output_size=5, but the repeats add up to 4"),
    (lambda: gradlab.ones(()).repeat_interleave(2, dim=0), IndexError,
     r"a 0-d tensor has no dim 0 to repeat along.*dim=None"),
    (lambda: gradlab.diff([1.0, 2.0]), TypeError, r"diff: expected a Tensor"),
    (lambda: gradlab.ones(()).diff(), RuntimeError, r"diff: the input must have at least one dim"),
    (lambda: gradlab.ones(3).diff(-1), RuntimeError, r"diff: the order n must be >= 0, got -1"),
    (lambda: gradlab.ones(3).diff(prepend=1.0), TypeError, r"diff: prepend must be a Tensor"),
    (lambda: gradlab.ones(2, 2).diff(dim=0, append=gradlab.ones(2)), RuntimeError,
     r"diff: append must have the input's number of dims \(2\), got shape \(2,\)"),
    (lambda: gradlab.ones(2, 2).diff(dim=0, prepend=gradlab.ones(1, 3)), RuntimeError,
     r"every dim but dim 0; dim 1 has 3 vs 2"),
    (lambda: gradlab.take([1.0], gradlab.tensor([0])), TypeError, r"take: expected a Tensor"),
    (lambda: gradlab.ones(3).take(gradlab.tensor([0.0])), TypeError,
     r"take: index must be an int64 tensor.*index.long\(\)"),
    (lambda: gradlab.ones(0).take(gradlab.tensor([0])), IndexError,
     r"take: the input \(shape \(0,\)\) is empty"),
    (lambda: gradlab.ones(2, 2).take(gradlab.tensor([4])), IndexError,
     r"take: index 4 is out of range for dim 0 of size 4"),
    (lambda: gradlab.broadcast_tensors([gradlab.ones(2)]), TypeError,
     r"argument 0 is a list, not a Tensor"),
    (lambda: gradlab.broadcast_tensors(gradlab.ones(2, 1), gradlab.ones(3, 2)), RuntimeError,
     r"broadcast_tensors: shapes \(2, 1\), \(3, 2\) don't broadcast"),
])
def test_errors_name_the_op_and_the_fix(call, error, match):
    with pytest.raises(error, match=match):
        call()
