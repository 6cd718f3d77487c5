"""Wishart, LKJCholesky and CorrCholeskyTransform: what the shared table can't express.

The table (cases.py) already compares their log_prob, moments, entropy, shapes, expand
and gradients with PyTorch. Here: their draws (shapes, positive-definite matrices,
Cholesky factors with unit rows, sample moments against the distribution's own mean and
variance or the LKJ marginals, under a fixed seed), the transform's round trip and
log-det against a numerical Jacobian of the map on its free coordinates, and the errors.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import gradlab
import gradlab.distributions as gd
from gradlab.autograd.functional import jacobian
from gradlab.distributions import constraints
from gradlab.distributions.exp_family import ExponentialFamily
from gradlab.distributions.transforms import CorrCholeskyTransform
from gradlab.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix
from tests.oracle import needs_torch, torch

F64 = gradlab.float64


def _t(values):
    return gradlab.tensor(np.asarray(values, dtype=np.float64))


def _spd(rng, k=3, batch=()):
    a = rng.normal(size=batch + (k, k))
    return a @ np.swapaxes(a, -1, -2) + np.eye(k)


# --- Wishart -----------------------------------------------------------------------------

@pytest.mark.parametrize("df, cov_batch, sample_shape, batch_shape", [
    (5.0, (), (4,), ()),
    ([4.0, 6.5], (), (3, 2), (2,)),
    ([[3.5], [9.0]], (3,), (), (2, 3)),
])
def test_wishart_draws_are_symmetric_positive_definite(df, cov_batch, sample_shape,
                                                       batch_shape):
    rng = np.random.default_rng(0)
    df = df if isinstance(df, float) else _t(df)
    d = gd.Wishart(df, covariance_matrix=_t(_spd(rng, batch=cov_batch)))
    assert tuple(d.batch_shape) == batch_shape and tuple(d.event_shape) == (3, 3)
    gradlab.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a regular draw warns of nothing (PyTorch always does)
        x = d.sample(sample_shape)
    assert tuple(x.shape) == tuple(sample_shape) + batch_shape + (3, 3)
    assert not x.requires_grad
    a = x.numpy()
    np.testing.assert_allclose(a, np.swapaxes(a, -1, -2), rtol=1e-12, atol=1e-12)
    assert (np.linalg.eigvalsh(a) > 0).all()
    assert bool(d.support.check(x).all())
    wider = d.expand((2,) + batch_shape)
    assert tuple(wider.sample((3,)).shape) == (3, 2) + batch_shape + (3, 3)


def test_wishart_sample_moments_match_its_mean_variance_and_log_determinant():
    """Bartlett draws under a fixed seed: the entries' mean ν Σ and variance
    ν (Σ_ij² + Σ_ii Σ_jj), and E log|X| = ψ_p(ν/2) + p log 2 + log|Σ| (which checks the χ²
    degrees of freedom on the diagonal one by one), each within a few standard errors."""
    n, p = 20000, 3
    rng = np.random.default_rng(1)
    df = _t([3.5, 8.0])
    d = gd.Wishart(df, scale_tril=_t(np.linalg.cholesky(_spd(rng) * 0.5)))
    gradlab.manual_seed(1)
    x = d.sample((n,))
    mean, var = d.mean.numpy(), d.variance.numpy()
    assert np.all(np.abs(x.numpy().mean(0) - mean) < 5 * np.sqrt(var / n))
    np.testing.assert_allclose(x.numpy().var(0), var, rtol=0.1)
    log_det = np.linalg.slogdet(x.numpy())[1]
    half = df.numpy()[:, None] / 2 - np.arange(p) / 2
    expected = (gradlab.digamma(_t(half)).numpy().sum(-1) + p * math.log(2)
                + 2 * np.log(np.diag(d.scale_tril.numpy()[0])).sum())
    variance = gradlab.polygamma(1, _t(half)).numpy().sum(-1)  # Var log|X| = Σ ψ'(ν/2 - j/2)
    assert np.all(np.abs(log_det.mean(0) - expected) < 5 * np.sqrt(variance / n))


def test_wishart_rsample_carries_gradients_to_df_and_the_scale():
    """E[tr X] = ν tr Σ: its pathwise gradient in ν is tr Σ, in Σ it is ν I."""
    df = gradlab.tensor(6.0, dtype=F64, requires_grad=True)
    cov = gradlab.tensor(_spd(np.random.default_rng(2)) * 0.2, dtype=F64, requires_grad=True)
    gradlab.manual_seed(2)
    x = gd.Wishart(df, cov).rsample((20000,))
    x.diagonal(dim1=-2, dim2=-1).sum(-1).mean().backward()
    trace = float(cov.detach().diagonal().sum())
    assert abs(float(df.grad) - trace) < 0.03 * trace
    np.testing.assert_allclose(cov.grad.numpy(), 6.0 * np.eye(3), atol=0.2)


def test_wishart_redraws_only_singular_draws_and_warns_then():
    d = gd.Wishart(4.0, covariance_matrix=_t(np.eye(2)))
    calls = []
    bartlett = d._bartlett_sampling

    def first_draw_singular(sample_shape):
        draw = bartlett(sample_shape)
        calls.append(1)
        return draw * 0.0 if len(calls) == 1 else draw  # the zero matrix: not invertible

    d._bartlett_sampling = first_draw_singular
    with pytest.warns(UserWarning, match="Singular sample detected"):
        x = d.rsample((5,))
    assert len(calls) == 2 and bool(constraints.positive_definite.check(x).all())
    calls.clear()
    with pytest.warns(UserWarning, match="Singular sample detected"):
        x = d.rsample((5,), max_try_correction=0)  # no retries: the draw is returned as is
    assert len(calls) == 1 and float(x.abs().sum()) == 0.0


def test_wishart_mode_needs_df_above_p_plus_one_and_low_df_warns():
    d = gd.Wishart(_t([3.5, 5.0]), covariance_matrix=_t(np.eye(3)))
    mode = d.mode.numpy()
    assert np.isnan(mode[0]).all() and np.allclose(mode[1], np.eye(3))
    with pytest.warns(UserWarning, match="Low df values detected"):
        gd.Wishart(2.5, covariance_matrix=_t(np.eye(3)))


def test_wishart_closed_form_entropy_is_the_exponential_family_one():
    """The generic A(θ) - ⟨θ, ∇A(θ)⟩ from _natural_params and _log_normalizer."""
    rng = np.random.default_rng(3)
    d = gd.Wishart(_t([3.2, 7.0]), precision_matrix=_t(_spd(rng, batch=(2,))))
    assert isinstance(d, ExponentialFamily)
    np.testing.assert_allclose(ExponentialFamily.entropy(d).detach().numpy(),
                               d.entropy().detach().numpy(), rtol=1e-10)


WISHART_ERRORS = [
    (lambda: gd.Wishart(4.0), (ValueError, AssertionError),
     "Exactly one of covariance_matrix or precision_matrix or scale_tril"),
    (lambda: gd.Wishart(4.0, _t(np.eye(2)), scale_tril=_t(np.eye(2))), AssertionError,
     r"got \['covariance_matrix', 'scale_tril'\]"),
    (lambda: gd.Wishart(2.0, _t(np.eye(3))), ValueError,
     r"df=2.0 expected to be greater than ndim - 1 = 2"),
    (lambda: gd.Wishart(_t([3.0, 0.5]), _t(np.eye(2))), ValueError, "greater than ndim - 1 = 1"),
    (lambda: gd.Wishart(4.0, _t([1.0, 2.0])), ValueError, "must be at least two-dimensional"),
    (lambda: gd.Wishart(4.0, _t(np.ones((2, 3)))), ValueError, r"must be square \(\.\.\., p, p\)"),
    (lambda: gd.Wishart(4.0, _t([[1.0, 2.0], [2.0, 1.0]])), ValueError,
     r"parameter covariance_matrix .* of distribution Wishart.*PositiveDefinite"),
    (lambda: gd.Wishart(4.0, scale_tril=_t([[1.0, 1.0], [0.0, 1.0]])), ValueError,
     r"parameter scale_tril .*LowerCholesky"),
    (lambda: gd.Wishart(4.0, _t(np.eye(2))).log_prob(_t([[1.0, 2.0], [2.0, 1.0]])),
     ValueError, r"within the support \(PositiveDefinite\(\)\)"),
]


@pytest.mark.parametrize("build, error, match", WISHART_ERRORS)
def test_wishart_errors_say_what_is_wrong(build, error, match):
    with pytest.raises(error, match=match):
        build()


@needs_torch
def test_wishart_errors_are_the_types_pytorch_raises():
    with pytest.raises(AssertionError):
        torch.distributions.Wishart(torch.tensor(4.0))
    with pytest.raises(AssertionError):
        gd.Wishart(gradlab.tensor(4.0))
    with pytest.raises(ValueError):
        torch.distributions.Wishart(torch.tensor(2.0), torch.eye(3))


# --- LKJCholesky -------------------------------------------------------------------------

@pytest.mark.parametrize("dim, eta, sample_shape", [(2, 1.0, (7,)), (3, [0.5, 2.0], (4,)),
                                                    (5, [[1.0], [3.0]], (2, 3))])
def test_lkj_draws_are_cholesky_factors_of_correlation_matrices(dim, eta, sample_shape):
    d = gd.LKJCholesky(dim, eta if isinstance(eta, float) else _t(eta))
    batch = tuple(np.shape(eta))
    assert tuple(d.batch_shape) == batch and tuple(d.event_shape) == (dim, dim)
    assert d.has_rsample is False
    gradlab.manual_seed(3)
    lower = d.sample(sample_shape)
    assert tuple(lower.shape) == tuple(sample_shape) + batch + (dim, dim)
    a = lower.numpy()
    assert np.array_equal(a, np.tril(a)) and (np.diagonal(a, axis1=-2, axis2=-1) > 0).all()
    corr = a @ np.swapaxes(a, -1, -2)
    rtol = 1e-14 if lower.dtype == F64 else 1e-6  # (a number η: the default float32)
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, rtol=rtol)
    assert bool(d.support.check(lower).all())
    assert tuple(d.expand((4,) + batch).sample().shape) == (4,) + batch + (dim, dim)
    assert np.isfinite(d.log_prob(lower).numpy()).all()


@pytest.mark.parametrize("dim, eta", [(3, 1.0), (4, 0.5), (5, 2.0)])
def test_lkj_correlations_all_follow_the_lkj_marginal(dim, eta):
    """Every off-diagonal correlation of an LKJ(η) matrix has (r + 1)/2 ~ Beta(a, a) with
    a = η - 1 + D/2: mean 0, variance 1/(2a + 1), E r⁴ = 3/((2a + 1)(2a + 3)). PyTorch
    2.13's onion sampler misses this for the entries of rows 2 and below (its Beta for row
    i has concentration1 = i - ½ instead of i/2), which is why gradlab differs."""
    n = 20000
    gradlab.manual_seed(4)
    lower = gd.LKJCholesky(dim, _t(eta)).sample((n,)).numpy()
    corr = lower @ np.swapaxes(lower, -1, -2)
    r = corr[:, *np.tril_indices(dim, -1)]  # (n, D(D-1)/2)
    a = eta - 1 + dim / 2
    var, fourth = 1 / (2 * a + 1), 3 / ((2 * a + 1) * (2 * a + 3))
    assert np.all(np.abs(r.mean(0)) < 5 * math.sqrt(var / n))
    assert np.all(np.abs((r ** 2).mean(0) - var) < 5 * math.sqrt((fourth - var ** 2) / n))


def _importance_weights(dim, eta, n, seed):
    """p(L(x)) |det J(x)| / q(x) for x ~ q = N(0, 1.5²): x maps to L by the transform, so
    E_q[w] = ∫ p(L) dL over the free coordinates (1 if log_prob is normalised)."""
    t = CorrCholeskyTransform()
    gradlab.manual_seed(seed)
    q = gd.Normal(_t(np.zeros(dim * (dim - 1) // 2)), 1.5)
    x = q.sample((n,))
    lower = t(x)
    log_w = (gd.LKJCholesky(dim, _t(eta)).log_prob(lower) + t.log_abs_det_jacobian(x, lower)
             - q.log_prob(x).sum(-1))
    return log_w.exp().numpy(), lower.numpy()


@pytest.mark.parametrize("dim, eta", [(2, 1.5), (3, 1.0), (4, 0.7)])
def test_lkj_log_prob_integrates_to_one_over_the_free_coordinates(dim, eta):
    w, _ = _importance_weights(dim, eta, 100000, seed=5)
    assert abs(w.mean() - 1) < 5 * w.std() / math.sqrt(len(w))


def test_lkj_draws_and_log_prob_describe_the_same_distribution():
    """E[log det(L Lᵀ)] from draws, and from log_prob by importance sampling."""
    dim, eta = 4, 0.7
    w, lower = _importance_weights(dim, eta, 200000, seed=6)
    f = 2 * np.log(np.diagonal(lower, axis1=-2, axis2=-1)).sum(-1)
    by_density = (w * f).sum() / w.sum()
    gradlab.manual_seed(7)
    draws = gd.LKJCholesky(dim, _t(eta)).sample((40000,)).numpy()
    g = 2 * np.log(np.diagonal(draws, axis1=-2, axis2=-1)).sum(-1)
    assert abs(g.mean() - by_density) < 5 * g.std() / math.sqrt(len(g)) + 0.02


LKJ_ERRORS = [
    (lambda: gd.LKJCholesky(1, 1.0), "Expected dim to be an integer greater than or equal to "
                                     "2. Found dim=1"),
    (lambda: gd.LKJCholesky(3, _t([1.0, -0.5])), r"parameter concentration .*GreaterThan"),
    (lambda: gd.LKJCholesky(2, 1.0).log_prob(_t([[1.0, 0.0], [0.6, 0.7]])),
     r"within the support \(CorrCholesky\(\)\)"),
    (lambda: gd.LKJCholesky(2, 1.0).log_prob(_t([[1.0, 0.2], [0.0, 1.0]])),
     r"within the support \(CorrCholesky\(\)\)"),
]


@pytest.mark.parametrize("build, match", LKJ_ERRORS)
def test_lkj_errors_say_what_is_wrong(build, match):
    with pytest.raises(ValueError, match=match):
        build()


# --- CorrCholeskyTransform ---------------------------------------------------------------

@pytest.mark.parametrize("dim", [2, 3, 4, 5])
def test_corr_cholesky_transform_round_trip_and_shapes(dim):
    t = CorrCholeskyTransform()
    n = dim * (dim - 1) // 2
    x = _t(np.random.default_rng(dim).normal(size=(2, n)) * 1.5)
    y = t(x)
    assert tuple(y.shape) == (2, dim, dim) and bool(constraints.corr_cholesky.check(y).all())
    np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-10, atol=1e-10)
    assert tuple(t.forward_shape((2, n))) == (2, dim, dim)
    assert tuple(t.inverse_shape((2, dim, dim))) == (2, n)
    assert t.bijective and t.domain.event_dim == 1 and t.codomain.event_dim == 2


@pytest.mark.parametrize("dim", [2, 3, 4])
def test_corr_cholesky_log_det_is_that_of_the_map_on_the_free_coordinates(dim):
    """L has D(D-1)/2 free coordinates, its strictly lower entries: the log-det is that of
    the square Jacobian of x -> tril_matrix_to_vec(L, -1), here by central differences and
    by autograd."""
    t = CorrCholeskyTransform()
    n = dim * (dim - 1) // 2
    x0 = np.random.default_rng(10 + dim).normal(size=n)

    def free(v):
        return tril_matrix_to_vec(t(_t(v)), diag=-1).numpy()

    h = 1e-6
    numerical = np.stack([(free(x0 + h * e) - free(x0 - h * e)) / (2 * h)
                          for e in np.eye(n)], axis=-1)
    x = _t(x0)
    log_det = float(t.log_abs_det_jacobian(x, t(x)))
    np.testing.assert_allclose(log_det, np.log(abs(np.linalg.det(numerical))), rtol=1e-7)
    exact = jacobian(lambda v: tril_matrix_to_vec(t(v), diag=-1), x).numpy()
    np.testing.assert_allclose(log_det, np.log(abs(np.linalg.det(exact))), rtol=1e-12,
                               atol=1e-15)


def test_corr_cholesky_transform_saturates_to_a_valid_factor():
    """tanh of a large |x| rounds to ±1; the clamp keeps every diagonal entry positive."""
    t = CorrCholeskyTransform()
    y = t(_t([40.0, -40.0, 40.0]))
    assert bool(constraints.corr_cholesky.check(y)) and bool((y.diagonal() > 0).all())


def test_corr_cholesky_is_the_bijection_for_its_constraint_and_shape_errors_teach():
    assert isinstance(gd.biject_to(constraints.corr_cholesky), CorrCholeskyTransform)
    assert isinstance(gd.transform_to(constraints.corr_cholesky), CorrCholeskyTransform)
    assert isinstance(gd.biject_to(gd.LKJCholesky(3).support), CorrCholeskyTransform)
    t = CorrCholeskyTransform()
    with pytest.raises(ValueError, match=r"last dim \(4\) is not D\(D-1\)/2"):
        t.forward_shape((2, 4))
    with pytest.raises(ValueError, match="must be square"):
        t.inverse_shape((2, 3, 4))
    with pytest.raises(ValueError, match="at least one dim"):
        t.forward_shape(())
    with pytest.raises(ValueError, match="cannot be expressed as the lower triangular part"):
        t(_t([0.1, 0.2, 0.3, 0.4]))


def test_tril_vector_helpers_are_inverse_and_differentiable():
    m = gradlab.tensor(np.random.default_rng(11).normal(size=(2, 4, 4)), dtype=F64,
                       requires_grad=True)
    for diag in (-3, -1, 0, 2):
        v = tril_matrix_to_vec(m, diag)
        back = vec_to_tril_matrix(v, diag)
        mask = np.tril(np.ones((4, 4)), diag).astype(bool)
        np.testing.assert_array_equal(back.detach().numpy(), np.where(mask, m.detach().numpy(),
                                                                      0.0))
    tril_matrix_to_vec(m, -1).sum().backward()
    np.testing.assert_array_equal(m.grad.numpy()[0], np.tril(np.ones((4, 4)), -1))
    with pytest.raises(ValueError, match=r"diag \(4\) provided is outside \[-4, 3\]"):
        tril_matrix_to_vec(m, 4)


@needs_torch
@pytest.mark.parametrize("dim", [2, 3, 5])
def test_corr_cholesky_transform_matches_torch(dim):
    n = dim * (dim - 1) // 2
    x = np.random.default_rng(20 + dim).normal(size=(3, n)) * 2.0
    x[0, 0] = 25.0  # saturated tanh: both clamp
    ours, theirs = CorrCholeskyTransform(), torch.distributions.transforms.CorrCholeskyTransform()
    y_ours, y_theirs = ours(_t(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(y_ours.numpy(), y_theirs.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ours.inv(y_ours).numpy(), theirs.inv(y_theirs).numpy(),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.log_abs_det_jacobian(_t(x), y_ours).numpy(),
                               theirs.log_abs_det_jacobian(torch.tensor(x), y_theirs).numpy(),
                               rtol=1e-12)
    for name in ("tril_matrix_to_vec", "vec_to_tril_matrix"):
        ours_fn = getattr(gd.utils, name)
        theirs_fn = getattr(torch.distributions.utils, name)
        value = x if name == "vec_to_tril_matrix" else y_theirs.numpy()
        np.testing.assert_array_equal(ours_fn(_t(value), -1).numpy(),
                                      theirs_fn(torch.tensor(value), -1).numpy())


@needs_torch
def test_a_normal_pushed_through_corr_cholesky_matches_torch():
    """TransformedDistribution(Normal on the free coordinates, CorrCholeskyTransform): the
    batch and event shapes, and log_prob with the transform's log-det, as PyTorch's."""
    rng = np.random.default_rng(30)
    loc, scale = rng.normal(size=(2, 3)), rng.uniform(0.5, 1.5, (2, 3))
    results = []
    value = CorrCholeskyTransform()(_t(rng.normal(size=(4, 2, 3)))).numpy()
    for lib, D in ((gradlab, gd), (torch, torch.distributions)):
        mu = lib.tensor(loc, dtype=lib.float64, requires_grad=True)
        d = D.TransformedDistribution(D.Normal(mu, lib.tensor(scale, dtype=lib.float64)),
                                      D.transforms.CorrCholeskyTransform())
        log_prob = d.log_prob(lib.tensor(value, dtype=lib.float64))
        log_prob.sum().backward()
        results.append((tuple(d.batch_shape), tuple(d.event_shape), log_prob.detach().numpy(),
                        mu.grad.numpy()))
    mine, theirs = results
    assert mine[:2] == theirs[:2] == ((2,), (3, 3))
    np.testing.assert_allclose(mine[2], theirs[2], rtol=1e-10)
    np.testing.assert_allclose(mine[3], theirs[3], rtol=1e-10)
