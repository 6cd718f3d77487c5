"""cov, corrcoef, trapezoid, cumulative_trapezoid, trapz, renorm: vs NumPy and PyTorch."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch


def _floats_and_counts(rng, dtype, shapes):
    """x (floats), then fweights (ints 1..3), then aweights in [0.5, 2] if a third shape."""
    out = [rng.uniform(-2, 2, shapes[0]).astype(dtype), rng.integers(1, 4, shapes[1])]
    if len(shapes) > 2:
        out.append(rng.uniform(0.5, 2, shapes[2]).astype(dtype))
    return out


def _np_cumulative(np, y, x=None, dx=1.0, axis=-1):
    y = np.moveaxis(y, axis, -1)
    steps = dx if x is None else np.diff(np.moveaxis(x, axis, -1) if np.ndim(x) > 1 else x)
    return np.moveaxis(np.cumsum(steps * (y[..., 1:] + y[..., :-1]) / 2, -1), -1, axis)


def _np_renorm(np, x, p, dim, maxnorm):
    others = tuple(d for d in range(x.ndim) if d != dim)
    size = (np.abs(x).max(axis=others, keepdims=True) if math.isinf(p)
            else (np.abs(x) ** p).sum(axis=others, keepdims=True) ** (1 / p))
    return x * np.where(size > maxnorm, maxnorm / (size + 1e-7), 1.0)


def _slices_with_norms(p, dim, norms=(0.5, 2.5, 1.0, 3.0)):
    """Inputs whose slices along ``dim`` have p-norms ``norms`` (maxnorm 1.5 sits between
    them, away from the kink), entries away from 0 (|x|'s kink for p=1)."""
    def make(rng, dtype, shapes):
        x = rng.uniform(0.5, 1.5, shapes[0]) * rng.choice([-1, 1], shapes[0])
        x = np.moveaxis(x, dim, 0)
        for i in range(x.shape[0]):
            size = np.abs(x[i]).max() if math.isinf(p) else (np.abs(x[i]) ** p).sum() ** (1 / p)
            x[i] *= norms[i % len(norms)] / size
        return [np.moveaxis(x, 0, dim).astype(dtype)]
    return make


CASES = [
    OpCase("cov", lambda lib, x: lib.cov(x), ((3, 5),), numpy=lambda np, x: np.cov(x),
           variants=(((5,),), ((1, 4),), ((4, 2),))),
    OpCase("cov_method_correction0", lambda lib, x: x.cov(correction=0), ((3, 5),),
           numpy=lambda np, x: np.cov(x, ddof=0)),
    OpCase("cov_correction2", lambda lib, x: lib.cov(x, correction=2), ((2, 6),),
           numpy=lambda np, x: np.cov(x, ddof=2)),
    OpCase("cov_fweights", lambda lib, x, f: lib.cov(x, fweights=f), ((3, 5), (5,)),
           numpy=lambda np, x, f: np.cov(x, fweights=f), inputs=_floats_and_counts),
    OpCase("cov_aweights", lambda lib, x, a: lib.cov(x, aweights=a), ((3, 5), (5,)),
           numpy=lambda np, x, a: np.cov(x, aweights=a), domain=[(-2, 2), (0.5, 2)]),
    OpCase("cov_both_weights_correction0",
           lambda lib, x, f, a: lib.cov(x, correction=0, fweights=f, aweights=a),
           ((3, 5), (5,), (5,)), numpy=lambda np, x, f, a: np.cov(x, ddof=0, fweights=f,
                                                                   aweights=a),
           inputs=_floats_and_counts),
    OpCase("cov_both_weights", lambda lib, x, f, a: lib.cov(x, fweights=f, aweights=a),
           ((3, 5), (5,), (5,)), numpy=lambda np, x, f, a: np.cov(x, fweights=f, aweights=a),
           inputs=_floats_and_counts),
    OpCase("corrcoef", lambda lib, x: lib.corrcoef(x), ((3, 5),),
           numpy=lambda np, x: np.corrcoef(x), variants=(((6,),),)),
    OpCase("corrcoef_method", lambda lib, x: x.corrcoef(), ((4, 3),),
           numpy=lambda np, x: np.corrcoef(x)),
    OpCase("trapezoid", lambda lib, y: lib.trapezoid(y), ((3, 5),),
           numpy=lambda np, y: np.trapezoid(y), variants=(((4,),), ((3, 1),), ((3, 0),))),
    OpCase("trapezoid_dx_dim0", lambda lib, y: lib.trapezoid(y, dx=0.5, dim=0), ((4, 3),),
           numpy=lambda np, y: np.trapezoid(y, dx=0.5, axis=0), variants=(((0, 2),),)),
    OpCase("trapezoid_x_1d", lambda lib, y, x: lib.trapezoid(y, x, dim=0), ((4, 3), (4,)),
           numpy=lambda np, y, x: np.trapezoid(y, x[:, None], axis=0)),
    OpCase("trapezoid_x_full", lambda lib, y, x: lib.trapezoid(y, x=x), ((3, 4), (3, 4)),
           numpy=lambda np, y, x: np.trapezoid(y, x)),
    OpCase("trapezoid_x_broadcast", lambda lib, y, x: lib.trapezoid(y, x), ((2, 3, 4), (3, 4)),
           numpy=lambda np, y, x: np.trapezoid(y, x)),
    OpCase("trapz_x", lambda lib, y, x: lib.trapz(y, x), ((3, 4), (4,)),
           numpy=lambda np, y, x: np.trapezoid(y, x)),
    OpCase("trapz_dx", lambda lib, y: lib.trapz(y, dx=2.0, dim=1), ((2, 5, 3),),
           numpy=lambda np, y: np.trapezoid(y, dx=2.0, axis=1)),
    OpCase("cumulative_trapezoid", lambda lib, y: lib.cumulative_trapezoid(y), ((3, 5),),
           numpy=lambda np, y: _np_cumulative(np, y), variants=(((4,),), ((3, 1),), ((3, 0),))),
    OpCase("cumulative_trapezoid_dx", lambda lib, y: lib.cumulative_trapezoid(y, dx=0.3, dim=0),
           ((4, 3),), numpy=lambda np, y: _np_cumulative(np, y, dx=0.3, axis=0)),
    OpCase("cumulative_trapezoid_x", lambda lib, y, x: lib.cumulative_trapezoid(y, x),
           ((3, 5), (5,)), numpy=lambda np, y, x: _np_cumulative(np, y, x)),
    OpCase("cumulative_trapezoid_x_full", lambda lib, y, x: lib.cumulative_trapezoid(y, x, dim=0),
           ((4, 3), (4, 3)), numpy=lambda np, y, x: _np_cumulative(np, y, x, axis=0)),
    OpCase("renorm", lambda lib, x: lib.renorm(x, 2, 0, 1.5), ((4, 3),),
           numpy=lambda np, x: _np_renorm(np, x, 2, 0, 1.5), inputs=_slices_with_norms(2, 0)),
    OpCase("renorm_method_p1_dim1", lambda lib, x: x.renorm(1, 1, 1.5), ((2, 4, 3),),
           numpy=lambda np, x: _np_renorm(np, x, 1, 1, 1.5), inputs=_slices_with_norms(1, 1)),
    OpCase("renorm_p3_dim_last", lambda lib, x: lib.renorm(x, 3, -1, 1.5), ((3, 2, 4),),
           numpy=lambda np, x: _np_renorm(np, x, 3, 2, 1.5), inputs=_slices_with_norms(3, 2)),
    OpCase("renorm_inf", lambda lib, x: lib.renorm(x, math.inf, 0, 1.5), ((4, 3),),
           numpy=lambda np, x: _np_renorm(np, x, math.inf, 0, 1.5),
           inputs=_slices_with_norms(math.inf, 0)),
]

globals().update(standard_op_tests(CASES))


# --- dtypes -------------------------------------------------------------------------------------

DTYPE_CALLS = [
    ("cov_int", lambda lib: lib.cov(lib.arange(12).reshape(3, 4))),
    ("cov_int_fweights", lambda lib: lib.cov(lib.arange(12).reshape(3, 4),
                                             fweights=lib.tensor([1, 2, 1, 3]))),
    ("cov_float32_aweights_float64", lambda lib: lib.cov(
        lib.arange(12.).reshape(3, 4), aweights=lib.tensor([1., 2, 1, 3], dtype=lib.float64))),
    ("cov_half", lambda lib: lib.cov(lib.arange(12.).reshape(3, 4).half())),
    ("corrcoef_int", lambda lib: lib.corrcoef(lib.tensor([[1, 2, 4], [3, 1, 0]]))),
    ("corrcoef_constant_row", lambda lib: lib.corrcoef(lib.tensor([[1., 2, 4], [1, 1, 1]]))),
    ("corrcoef_constant_vector", lambda lib: lib.corrcoef(lib.tensor([2., 2, 2]))),
    ("trapezoid_int", lambda lib: lib.trapezoid(lib.arange(12).reshape(3, 4))),
    ("trapezoid_int_dx_float", lambda lib: lib.trapezoid(lib.arange(6), dx=2.5)),
    ("trapezoid_int_x_int", lambda lib: lib.trapezoid(lib.arange(6), lib.arange(6) ** 2)),
    ("trapezoid_empty_int", lambda lib: lib.trapezoid(lib.zeros((3, 0), dtype=lib.int64))),
    ("trapezoid_dx_tensor", lambda lib: lib.trapezoid(lib.arange(6.), dx=lib.tensor(0.5))),
    ("trapezoid_half_x_double", lambda lib: lib.trapezoid(
        lib.arange(6.).half(), lib.arange(6.).double())),
    ("trapz_dx_bool", lambda lib: lib.trapz(lib.arange(6.), dx=True)),
    ("cumulative_trapezoid_int", lambda lib: lib.cumulative_trapezoid(lib.arange(6), dx=3)),
    ("cumulative_trapezoid_half", lambda lib: lib.cumulative_trapezoid(lib.arange(6.).half())),
    ("renorm_half", lambda lib: lib.renorm(lib.arange(12.).reshape(3, 4).half() / 3, 2, 0, 1)),
    ("renorm_maxnorm_0", lambda lib: lib.renorm(lib.arange(12.).reshape(3, 4), 2, 1, 0)),
    ("renorm_empty", lambda lib: lib.renorm(lib.ones(0, 3), 2, 0, 0.5)),
]


@needs_torch
@pytest.mark.parametrize("call", [c for _, c in DTYPE_CALLS], ids=[n for n, _ in DTYPE_CALLS])
def test_dtypes_and_values_match_torch(call):
    ours, theirs = call(gradlab), call(torch)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=2e-3,
                               atol=1e-6)


@needs_torch
@pytest.mark.parametrize("correction", [4, 5])
def test_cov_with_no_degrees_of_freedom_warns_and_divides_by_zero(correction):
    x = np.arange(12.).reshape(3, 4)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        ours = gradlab.cov(gradlab.tensor(x), correction=correction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.cov(torch.tensor(x), correction=correction)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())  # nan (0/0) or inf
    assert not np.isfinite(ours.numpy()).any()


def test_cov_of_one_observation_warns():
    with pytest.warns(UserWarning, match="Correction should be strictly less"):
        out = gradlab.cov(gradlab.ones(3, 1))
    assert np.isnan(out.numpy()).all()  # 0 / 0


def test_renorm_gradient_flows_through_the_scale():
    """A slice above maxnorm ends at norm maxnorm whatever its length, so moving along
    the slice itself changes nothing: grad·x = 0 along x for a scaled slice."""
    x = gradlab.tensor([[3.0, 4.0], [0.3, 0.4]], dtype=gradlab.float64, requires_grad=True)
    out = gradlab.renorm(x, 2, 0, 1.0)
    np.testing.assert_allclose(out.detach().numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    out.sum().backward()
    g = x.grad.numpy()
    assert abs(g[0] @ np.array([3.0, 4.0])) < 1e-6  # the radial direction is flattened
    np.testing.assert_array_equal(g[1], [1.0, 1.0])  # under maxnorm: untouched


# --- hypothesis: shapes and dims ----------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 4), cols=st.integers(2, 6), correction=st.integers(0, 1),
       seed=st.integers(0, 2**16))
def test_cov_and_corrcoef_match_numpy_for_any_shape(rows, cols, correction, seed):
    x = np.random.default_rng(seed).standard_normal((rows, cols))
    got = gradlab.cov(gradlab.tensor(x), correction=correction).numpy()
    np.testing.assert_allclose(got, np.cov(x, ddof=correction), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gradlab.corrcoef(gradlab.tensor(x)).numpy(), np.corrcoef(x),
                               rtol=1e-10, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_trapezoid_rules_match_numpy_along_any_dim(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    y, x = rng.standard_normal(shape), np.sort(rng.standard_normal(shape[dim]))
    x_along = x.reshape([-1 if d == dim % len(shape) else 1 for d in range(len(shape))])
    np.testing.assert_allclose(gradlab.trapezoid(gradlab.tensor(y), gradlab.tensor(x),
                                                 dim=dim).numpy(),
                               np.trapezoid(y, x_along, axis=dim), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gradlab.cumulative_trapezoid(gradlab.tensor(y), dx=0.7,
                                                            dim=dim).numpy(),
                               _np_cumulative(np, y, dx=0.7, axis=dim), rtol=1e-10, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=3), data=st.data())
def test_renorm_caps_every_slice_norm(shape, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    p = data.draw(st.sampled_from([1.0, 2.0, 3.0, math.inf]))
    x = np.random.default_rng(data.draw(st.integers(0, 2**16))).standard_normal(shape)
    got = gradlab.renorm(gradlab.tensor(x), p, dim, 1.0).numpy()
    np.testing.assert_allclose(got, _np_renorm(np, x, p, dim, 1.0), rtol=1e-12)
    others = tuple(d for d in range(len(shape)) if d != dim)
    norms = np.linalg.norm(np.moveaxis(got, dim, 0).reshape(shape[dim], -1), ord=p, axis=1)
    assert (norms <= 1.0 + 1e-9).all(), (others, norms)


# --- errors that teach --------------------------------------------------------------------------

X = gradlab.arange(12.).reshape(3, 4)
COUNTS = gradlab.tensor([1, 2, 1, 3])
ERRORS = [
    (lambda: gradlab.cov(gradlab.zeros(2, 2, 2)), RuntimeError, "two or fewer dimensions"),
    (lambda: gradlab.corrcoef(gradlab.zeros(2, 2, 2)), RuntimeError, r"corrcoef\(\): expected"),
    (lambda: gradlab.cov(X.bool()), RuntimeError, "bool dtype is not supported"),
    (lambda: gradlab.cov([[1.0, 2.0]]), TypeError, "expected a Tensor"),
    (lambda: gradlab.cov(X, correction=0.5), TypeError, "'correction' must be int"),
    (lambda: gradlab.cov(X, correction=True), TypeError, "'correction' must be int"),
    (lambda: gradlab.cov(X, fweights=[1, 2, 1, 3]), TypeError, "'fweights' must be Tensor"),
    (lambda: gradlab.cov(X, fweights=COUNTS.float()), RuntimeError, "integral dtype"),
    (lambda: gradlab.cov(X, fweights=COUNTS.reshape(1, 4)), RuntimeError, "one or fewer"),
    (lambda: gradlab.cov(X, fweights=COUNTS[:3]), RuntimeError, r"same numel .* 3 != 4"),
    (lambda: gradlab.cov(X, fweights=-COUNTS), RuntimeError, "fweights cannot be negative"),
    (lambda: gradlab.cov(X, aweights=COUNTS), RuntimeError, "floating point dtype"),
    (lambda: gradlab.cov(X, aweights=-COUNTS.float()), RuntimeError, "aweights cannot be neg"),
    (lambda: gradlab.cov(X, aweights=gradlab.zeros(4)), RuntimeError, "weights sum to zero"),
    (lambda: gradlab.trapezoid(X, gradlab.arange(5.)), RuntimeError,
     r"one `x` value for each sample point: x has 5 values"),
    (lambda: gradlab.cumulative_trapezoid(X, gradlab.arange(3.)), RuntimeError,
     "cumulative_trapezoid: There must be one `x`"),
    (lambda: gradlab.trapezoid(X, gradlab.arange(4.), dx=2), TypeError, "not both"),
    (lambda: gradlab.trapezoid(X, 2.0), TypeError, "pass dx=2.0"),
    (lambda: gradlab.trapezoid(X, dx=1j), RuntimeError, "dx as a real number"),
    (lambda: gradlab.cumulative_trapezoid(X, dx=True), RuntimeError, "dx as a real number"),
    (lambda: gradlab.trapz(X, dx=1j), TypeError, "dx as a real number"),
    (lambda: gradlab.trapezoid(X, dx=gradlab.ones(2)), TypeError, "uneven spacings"),
    (lambda: gradlab.trapezoid(X.bool()), RuntimeError, "bool is not supported"),
    (lambda: gradlab.trapezoid(X, gradlab.ones(4).bool()), RuntimeError, "bool is not"),
    (lambda: gradlab.trapezoid(gradlab.tensor(3.0)), IndexError, "0-d tensor"),
    (lambda: gradlab.cumulative_trapezoid(X, dim=2), IndexError, "out of range"),
    (lambda: gradlab.trapezoid(X, gradlab.ones(3, 5)), RuntimeError, "does not broadcast"),
    (lambda: gradlab.renorm(X, 0, 0, 1), RuntimeError, "non-positive-norm not supported"),
    (lambda: gradlab.renorm(X, 1j, 0, 1), RuntimeError, "p must be real-valued"),
    (lambda: gradlab.renorm(X, 2, 0, -1), RuntimeError, "maxnorm to be >= 0 but got -1"),
    (lambda: gradlab.renorm(X, 2, 0, 1j), RuntimeError, "maxnorm must be real-valued"),
    (lambda: gradlab.renorm(X[0], 2, 0, 1), RuntimeError, "at least 2 dimensions, got 1"),
    (lambda: gradlab.renorm(X, 2, 2, 1), IndexError, "out of range"),
    (lambda: gradlab.renorm(X, 2, 0.5, 1), TypeError, "dim must be an int"),
    (lambda: gradlab.renorm(X.long(), 2, 0, 1), RuntimeError, "floating point"),
]


@pytest.mark.parametrize("call, error, match", ERRORS, ids=[m for _, _, m in ERRORS])
def test_errors_that_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()
