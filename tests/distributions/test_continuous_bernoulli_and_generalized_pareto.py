"""ContinuousBernoulli and GeneralizedPareto: what the shared table can't express.

The table (cases.py) compares both with PyTorch away from their special points. Here:
the continuous Bernoulli near λ = ½ (cdf and icdf against the integral of its own
density, and the pathwise gradient there), its validation, and the generalized Pareto at
ξ = 0 (values, and the gradient in ξ), its special cases (exponential, Pareto, uniform),
its parameter-dependent support and its infinite moments.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
import gradlab.distributions as gd
from gradlab.distributions.exp_family import ExponentialFamily
from tests.oracle import needs_torch, torch

F64 = gradlab.float64


def _t(values, requires_grad=False):
    return gradlab.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def _integral_of_density(d, x_max, n=4001):
    """∫_0^x p(t) dt for each λ of ``d`` (batch (k,)), by Simpson's rule on [0, x_max]."""
    grid = np.linspace(0.0, x_max, n)
    density = d.log_prob(_t(grid).unsqueeze(-1)).exp().numpy()  # (n, k)
    weights = np.ones(n)
    weights[1:-1:2], weights[2:-1:2] = 4, 2
    return (weights[:, None] * density).sum(0) * (grid[1] - grid[0]) / 3


# --- ContinuousBernoulli -----------------------------------------------------------------

LAMBDAS = [0.2, 0.4995, 0.5, 0.50001, 0.5009, 0.9]  # four within lims = (0.499, 0.501]


@pytest.mark.parametrize("x", [0.1, 0.35, 0.8])
def test_continuous_bernoulli_cdf_is_the_integral_of_its_density_near_one_half(x):
    """Inside the Taylor region the cdf is expm1(ηx)/expm1(η), not x (PyTorch's), and
    icdf inverts it."""
    d = gd.ContinuousBernoulli(_t(LAMBDAS))
    np.testing.assert_allclose(d.cdf(_t(np.full(6, x))).numpy(), _integral_of_density(d, x),
                               rtol=1e-11, atol=1e-13)
    u = _t(np.full(6, x))
    np.testing.assert_allclose(d.cdf(d.icdf(u)).numpy(), u.numpy(), rtol=1e-12)
    assert d.cdf(_t(np.zeros(6))).tolist() == [0.0] * 6
    assert d.cdf(_t(np.ones(6))).tolist() == [1.0] * 6


def test_continuous_bernoulli_pathwise_gradient_near_one_half():
    """d/dλ E[x] two ways: through icdf on a fine grid of u (what rsample averages), and
    from the mean's Taylor series. PyTorch's icdf there is u itself, whose gradient is 0."""
    lam = _t(LAMBDAS, requires_grad=True)
    u = _t((np.arange(20000) + 0.5) / 20000).unsqueeze(-1)
    gd.ContinuousBernoulli(lam).icdf(u).mean(0).sum().backward()
    through_samples = lam.grad.numpy().copy()
    lam.grad = None
    gd.ContinuousBernoulli(lam).mean.sum().backward()
    np.testing.assert_allclose(through_samples, lam.grad.numpy(), rtol=1e-6)
    assert np.all(through_samples > 0.3)


def test_continuous_bernoulli_probs_are_validated_before_they_are_clamped():
    """PyTorch 2.13 checks the unclamped probs only when validate_args is passed, so by
    default probs=1.5 passes (as 1 - eps), and validate_args=False raises instead."""
    with pytest.raises(ValueError, match=r"parameter probs .* of distribution "
                                         r"ContinuousBernoulli.*Interval"):
        gd.ContinuousBernoulli(probs=_t([0.3, 1.5]))
    d = gd.ContinuousBernoulli(probs=_t([0.3, 1.5]), validate_args=False)
    eps = float(np.finfo(np.float64).eps)
    assert d.probs.tolist() == [0.3, 1 - eps]
    edge = gd.ContinuousBernoulli(probs=_t([0.0, 1.0]))  # clamped to [eps, 1 - eps]
    assert edge.probs.tolist() == [eps, 1 - eps]
    assert np.isfinite(edge.log_prob(_t([[0.0, 1.0], [1.0, 0.0]])).numpy()).all()
    with pytest.raises(ValueError, match=r"within the support \(Interval"):
        gd.ContinuousBernoulli(_t([0.3])).log_prob(_t([1.2]))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified"):
        gd.ContinuousBernoulli()


def test_continuous_bernoulli_forms_shapes_and_its_exponential_family_entropy():
    logits = _t([-2.0, 0.5, 3.0])
    d = gd.ContinuousBernoulli(logits=logits)
    assert isinstance(d, ExponentialFamily) and d.has_rsample
    np.testing.assert_allclose(ExponentialFamily.entropy(d).detach().numpy(),
                               d.entropy().detach().numpy(), rtol=1e-10)
    same = gd.ContinuousBernoulli(probs=logits.sigmoid())
    np.testing.assert_allclose(same.mean.numpy(), d.mean.numpy(), rtol=1e-12)
    assert tuple(gd.ContinuousBernoulli(0.3).batch_shape) == ()
    wide = gd.ContinuousBernoulli(logits=logits, lims=(0.49, 0.51)).expand((4, 3))
    assert "logits" in wide.__dict__ and "probs" not in wide.__dict__  # (computed on use)
    assert tuple(wide.sample((2,)).shape) == (2, 4, 3) and wide._lims == (0.49, 0.51)


@needs_torch
def test_continuous_bernoulli_matches_torch_outside_its_taylor_region_only_for_cdf():
    lam = np.array([0.3, 0.4995])
    x = np.array([0.6, 0.6])
    ours = gd.ContinuousBernoulli(_t(lam))
    theirs = torch.distributions.ContinuousBernoulli(torch.tensor(lam))
    mine, torchs = ours.cdf(_t(x)).numpy(), theirs.cdf(torch.tensor(x)).numpy()
    assert mine[0] == pytest.approx(torchs[0], rel=1e-12)
    assert torchs[1] == 0.6 and abs(mine[1] - 0.6) > 1e-4  # PyTorch: the uniform's cdf


# --- GeneralizedPareto -------------------------------------------------------------------

def _gpd(loc, scale, xi, requires_grad=False):
    return gd.GeneralizedPareto(_t(loc, requires_grad), _t(scale, requires_grad),
                                _t(xi, requires_grad))


def test_generalized_pareto_special_cases():
    x = _t([[0.3, 1.2, 2.5]])
    sigma = 1.5
    exponential = _gpd([0.0] * 3, [sigma] * 3, [0.0] * 3)  # ξ = 0
    np.testing.assert_allclose(exponential.log_prob(x).numpy(),
                               gd.Exponential(_t(1 / sigma)).log_prob(x).numpy(), rtol=1e-12)
    np.testing.assert_allclose(exponential.cdf(x).numpy(),
                               gd.Exponential(_t(1 / sigma)).cdf(x).numpy(), rtol=1e-12)
    xi = 0.4  # GeneralizedPareto(σ/ξ, σ, ξ) = Pareto(σ/ξ, 1/ξ)
    pareto = gd.Pareto(_t(sigma / xi), _t(1 / xi))
    gpd = _gpd(sigma / xi, sigma, xi)
    y = _t([3.8, 5.0, 9.0])
    np.testing.assert_allclose(gpd.log_prob(y).numpy(), pareto.log_prob(y).numpy(), rtol=1e-12)
    np.testing.assert_allclose(gpd.cdf(y).numpy(), pareto.cdf(y).numpy(), rtol=1e-12)
    uniform = _gpd(1.0, 2.0, -1.0)  # ξ = -1: Uniform(μ, μ + σ)
    assert float(uniform.support.upper_bound) == 3.0
    np.testing.assert_allclose(uniform.log_prob(_t([1.0, 2.0, 3.0])).numpy(), -math.log(2.0))
    np.testing.assert_allclose(uniform.cdf(_t([1.5, 2.5])).numpy(), [0.25, 0.75], rtol=1e-12)


def test_generalized_pareto_gradient_in_the_shape_at_zero():
    """At ξ = 0 exactly the value is the exponential's and the ξ-derivative is the true one,
    the limit of the derivatives at ξ = ±1e-5 (PyTorch's is 0 there)."""
    z = _t([0.4, 1.5, 3.0])
    u = _t([0.2, 0.5, 0.9])
    grads = {}
    for xi in (-1e-5, 0.0, 1e-5):
        shape = _t(np.full(3, xi), requires_grad=True)
        d = gd.GeneralizedPareto(_t(np.zeros(3)), _t(np.ones(3)), shape)
        rows = []
        for value in (d.log_prob(z), d.log_survival_function(z), d.icdf(u)):
            (g,) = gradlab.autograd.grad(value.sum(), [shape])
            rows.append(g.numpy())
        grads[xi] = np.array(rows)
    np.testing.assert_allclose(grads[0.0], (grads[-1e-5] + grads[1e-5]) / 2, rtol=1e-4)
    assert np.abs(grads[0.0]).min() > 0.01


@needs_torch
def test_generalized_pareto_at_zero_shape_matches_torch_values():
    saved = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # (PyTorch's log_prob needs it with float64)
    try:
        args = ([0.5, -1.0], [2.0, 0.7], [0.0, 0.0])
        ours = _gpd(*args)
        theirs = torch.distributions.GeneralizedPareto(*map(torch.tensor, args))
        x, u = [1.5, 0.4], [0.3, 0.95]
        for name, value in (("log_prob", x), ("cdf", x), ("icdf", u)):
            np.testing.assert_allclose(getattr(ours, name)(_t(value)).numpy(),
                                       getattr(theirs, name)(torch.tensor(value)).numpy(),
                                       rtol=1e-13)
        np.testing.assert_allclose(ours.entropy().numpy(), theirs.entropy().numpy())
    finally:
        torch.set_default_dtype(saved)


def test_generalized_pareto_infinite_moments_and_unbounded_mode():
    d = _gpd([0.0] * 5, [1.0] * 5, [-1.5, -1.0, 0.3, 0.6, 1.5])
    mean, variance, mode = d.mean.numpy(), d.variance.numpy(), d.mode.numpy()
    assert np.isfinite(mean[:4]).all() and mean[4] == math.inf
    assert np.isfinite(variance[:3]).all() and (variance[3:] == math.inf).all()
    np.testing.assert_allclose(mode, [1 / 1.5, 0.0, 0.0, 0.0, 0.0])  # ξ < -1: the upper end
    pareto = gd.Pareto(_t(1 / 1.5), _t(1 / 1.5))  # = GPD(σ/ξ, σ, ξ) with σ = 1, ξ = 1.5
    with np.errstate(divide="ignore"):  # (Pareto's mean divides by α - 1 < 0 on the way)
        assert float(pareto.mean) == float(_gpd(1 / 1.5, 1.0, 1.5).mean) == math.inf


def test_generalized_pareto_support_depends_on_the_parameters():
    d = _gpd([0.0, 0.0], [1.0, 1.0], [-0.5, 0.5])
    assert d.support.upper_bound.tolist() == [2.0, math.inf]
    with np.errstate(divide="ignore"):  # log S = log1p(-1)/... = -inf at the upper end
        assert d.cdf(_t([2.0, 50.0])).tolist()[0] == 1.0
    with pytest.raises(ValueError, match=r"within the support \(Interval"):
        d.log_prob(_t([2.5, 1.0]))
    with pytest.raises(ValueError, match=r"within the support \(Interval"):
        d.log_prob(_t([-0.1, 1.0]))
    with pytest.raises(ValueError, match=r"parameter scale .*GreaterThan"):
        _gpd(0.0, -1.0, 0.1)
    x = _t([0.3, 4.0])
    np.testing.assert_allclose(d.icdf(d.cdf(x)).numpy(), x.numpy(), rtol=1e-12)
    np.testing.assert_allclose(d.cdf(x).numpy(),
                               1 - d.log_survival_function(x).exp().numpy(), rtol=1e-12)


def test_generalized_pareto_draws_follow_its_cdf():
    """A Kolmogorov-Smirnov distance under a fixed seed, for each sign of ξ and ξ = 0."""
    d = _gpd([0.5, 0.0, -1.0], [1.0, 2.0, 0.5], [-0.4, 0.0, 0.3])
    gradlab.manual_seed(8)
    x = d.sample((5000,))
    assert bool(d.support.check(x).all())
    cdf = np.sort(d.cdf(x).numpy(), axis=0)
    ranks = (np.arange(5000) + 0.5)[:, None] / 5000
    assert np.abs(cdf - ranks).max() < 1.63 / math.sqrt(5000) + 1e-3  # (1% level)
