"""Implicit reparameterisation: gamma draws (and Beta, Dirichlet) with a gradient.

The oracle for dx/dα is the definition: a draw is the quantile x = P⁻¹(α, u)
of its CDF value u, so dx/dα at fixed u is a derivative of the quantile
function, computed here by inverting ``gammainc`` in float64 and
differentiating numerically. Then the estimator's point: averaged over
draws, d/dθ f(x) estimates d/dθ E[f(x)] (closed forms for the moments).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
import gradlab.autograd.forward_ad as fwAD
from gradlab.distributions import Beta, Dirichlet, Gamma
from tests.oracle import needs_torch, torch


def f64(values):
    return gradlab.tensor(values, dtype=gradlab.float64)


def slope(alpha, x):
    return gradlab._standard_gamma_grad(f64(alpha), f64(x)).numpy()


def log_quantile(alpha, u):
    """ln P⁻¹(α, u) (float64 arrays of one shape) by Newton steps on t = ln x for
    ln P(α, eᵗ) = ln u: d ln P/dt = x·p(x)/P, p(x) = exp((α-1) ln x - x - lgamma α) the
    density. Steps are capped at about one standard deviation of ln x."""
    a, lga = f64(alpha), gradlab.lgamma(f64(alpha)).numpy()
    # Start in the bulk, or for α <= 1 from P ≈ xᵃ/Γ(α+1) (exact as x -> 0)
    t = np.where(alpha > 1, np.log(alpha) + np.where(u > 0.5, 1.0, -1.0) / np.sqrt(alpha),
                 np.minimum((np.log(u) + lga + np.log(alpha)) / alpha, 1.0))
    cap = 1 / np.sqrt(np.maximum(alpha, 1.0))
    for _ in range(60):
        log_p = np.log(gradlab.special.gammainc(a, f64(np.exp(t))).numpy())
        slope_t = np.exp(alpha * t - np.exp(t) - lga - log_p)
        step = np.clip((log_p - np.log(u)) / slope_t, -cap, cap)
        t = t - step
        if np.all(np.abs(step) < 1e-11):  # quadratic convergence: t is exact to rounding now
            return t
    raise AssertionError("log_quantile did not converge")


def quantile_slope(alpha, u, rel_step=1e-3):
    """dx/dα at fixed u: x · d ln x/dα by the 5-point difference of ln P⁻¹(α, u)."""
    h = rel_step * alpha
    steps = (0, -2, -1, 1, 2)  # one solve for all five points
    lq = log_quantile(np.concatenate([alpha + k * h for k in steps]), np.tile(u, 5))
    centre, m2, m1, p1, p2 = np.split(lq, 5)
    x = np.exp(centre)
    return x, x * (m2 - 8 * m1 + 8 * p1 - p2) / (12 * h)


# --- (a) dx/dα against the quantile's derivative ----------------------------------------------

ALPHAS = np.array([0.05, 0.4, 1.0, 3.7, 20.0, 150.0, 1000.0])
US = np.array([0.02, 0.3, 0.7, 0.98])


def test_slope_is_the_derivative_of_the_quantile_at_fixed_cdf_value():
    alpha, u = (g.ravel() for g in np.meshgrid(ALPHAS, US, indexing="ij"))
    x, reference = quantile_slope(alpha, u)
    np.testing.assert_allclose(slope(alpha, x), reference, rtol=1e-6)
    # The two expansions (series below x = α + 1, continued fraction above) meet smoothly
    a = np.array([0.5, 3.0, 40.0, 700.0])
    below, above = slope(a, a + 1 - 1e-9), slope(a, a + 1 + 1e-9)
    np.testing.assert_allclose(below, above, rtol=1e-8)


def test_slope_at_the_edges():
    out = slope([0.5, 0.5, 2.0, -1.0, 0.0], [0.0, np.inf, -1.0, 1.0, 1.0])
    assert out[0] == 0.0  # x = 0: the quantile u = 0 doesn't move
    assert np.isnan(out[1:]).all()
    # The smallest normal float as a draw (an underflowed one): finite, tiny and positive
    tiny = np.finfo(np.float64).tiny
    edge = slope([1e-3, 0.05], [tiny, tiny])
    np.testing.assert_allclose(edge, tiny / np.array([1e-3, 0.05]) * -np.log(tiny), rtol=0.01)


# --- (c) per-sample values against PyTorch's _standard_gamma_grad ------------------------------

@needs_torch
def test_slope_matches_torch_where_torch_is_accurate():
    """PyTorch approximates dx/dα (a 6-term Taylor series for x < 0.8, a rational fit, a
    saddle-point formula for α > 8): it agrees to 1e-6 for x < 0.3 and to ~2e-3 elsewhere.
    Where the two disagree most, the quantile's derivative sides with gradlab."""
    gradlab.manual_seed(0)
    alpha = f64(np.repeat([0.02, 0.3, 1.0, 2.5, 7.0, 9.0, 40.0, 500.0], 500))
    x = gradlab._standard_gamma(alpha)
    mine = gradlab._standard_gamma_grad(alpha, x).numpy()
    theirs = torch._standard_gamma_grad(torch.tensor(alpha.numpy()), torch.tensor(x.numpy()))
    theirs = theirs.numpy()
    small = x.numpy() < 0.3
    assert small.sum() > 500 and (~small).sum() > 2000
    np.testing.assert_allclose(mine[small], theirs[small], rtol=1e-6)
    np.testing.assert_allclose(mine[~small], theirs[~small], rtol=3e-3)
    worst = np.argsort(np.abs(theirs / mine - 1))[-3:]  # torch's largest errors (~1e-3)
    a, xs = alpha.numpy()[worst], x.numpy()[worst]
    u = gradlab.special.gammainc(f64(a), f64(xs)).numpy()
    _, reference = quantile_slope(a, u)
    np.testing.assert_allclose(mine[worst], reference, rtol=1e-6)
    assert np.all(np.abs(theirs[worst] / reference - 1) > 1e-4)


@needs_torch
def test_double_backward_raises_as_in_torch():
    messages = {torch: "derivative for '_standard_gamma_grad' is not implemented",
                gradlab: r"_standard_gamma_grad: .*can't be differentiated again.*Fix: keep"}
    for lib, message in messages.items():
        alpha = lib.tensor([0.5, 3.0], dtype=lib.float64, requires_grad=True)
        (grad,) = lib.autograd.grad(lib._standard_gamma(alpha).sum(), alpha, create_graph=True)
        assert grad.requires_grad
        with pytest.raises(NotImplementedError, match=message):
            lib.autograd.grad(grad.sum(), alpha)


# --- the op: draws, gradient, forward mode, errors ----------------------------------------------

def test_the_gradient_is_the_slope_at_the_draw_and_forward_mode_agrees():
    alpha = f64([0.3, 2.0, 50.0]).requires_grad_()
    gradlab.manual_seed(7)
    x = gradlab._standard_gamma(alpha)
    (x * f64([1.0, -2.0, 0.5])).sum().backward()
    expected = slope(alpha.detach().numpy(), x.detach().numpy()) * [1.0, -2.0, 0.5]
    np.testing.assert_allclose(alpha.grad.numpy(), expected, rtol=1e-14)
    with fwAD.dual_level():
        gradlab.manual_seed(7)
        dual = gradlab._standard_gamma(fwAD.make_dual(alpha.detach(), f64([1.0, -2.0, 0.5])))
        primal, tangent = fwAD.unpack_dual(dual)
    np.testing.assert_array_equal(primal.numpy(), x.detach().numpy())  # same seed, same draws
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-14)


def test_underflowed_draws_are_the_smallest_normal_float_and_bad_shapes_give_nan():
    gradlab.manual_seed(0)
    x = gradlab._standard_gamma(gradlab.full((200,), 1e-3, requires_grad=True))
    assert x.dtype is gradlab.float32
    assert float(x.min()) == np.finfo(np.float32).tiny  # (most of these underflow)
    x.sum().backward()  # a finite gradient there, as PyTorch's
    out = gradlab._standard_gamma(f64([-1.0, float("nan"), 0.0]))
    assert np.isnan(out.numpy()[:2]).all() and out.numpy()[2] == np.finfo(np.float64).tiny


def test_errors_name_the_op_and_the_fix():
    with pytest.raises(RuntimeError, match=r"_standard_gamma: expected a floating point.*float"):
        gradlab._standard_gamma(gradlab.tensor([1, 2]))
    with pytest.raises(TypeError, match=r"_standard_gamma\(\): argument 'input' must be a Tensor"):
        gradlab._standard_gamma([1.0, 2.0])
    with pytest.raises(TypeError, match=r"_standard_gamma_grad\(\): argument 'output'"):
        gradlab._standard_gamma_grad(f64([1.0]), 2.0)
    with pytest.raises(RuntimeError, match=r"_standard_gamma: the generator is for cuda"):
        gradlab._standard_gamma(f64([1.0]), generator=gradlab.Generator("cuda"))


# --- (b) unbiasedness: the mean of per-draw gradients is the gradient of the mean ------------

N = 20000


def _check_unbiased(per_draw_grads, exact):
    """Each parameter's gradient, averaged over N draws, within 4.5 standard errors."""
    for grads, target in zip(per_draw_grads, exact):
        grads = grads.numpy()
        mean, se = grads.mean(0), grads.std(0) / math.sqrt(len(grads))
        assert np.all(np.abs(mean - target) < 4.5 * se), (mean, target, se)


def _per_draw_params(values):
    """Parameters repeated N times (one row per draw), so each row's .grad is one draw's."""
    return [f64(np.tile(v, (N, 1))).requires_grad_() for v in values]


@pytest.mark.parametrize("power", [1, 2])
def test_gamma_pathwise_gradient_is_unbiased(power):
    a, b = np.array([0.3, 2.5]), np.array([1.5, 0.7])
    alpha, rate = _per_draw_params([a, b])
    gradlab.manual_seed(11)
    Gamma(alpha, rate).rsample().pow(power).sum().backward()
    if power == 1:  # E x = α/β
        exact = [1 / b, -a / b ** 2]
    else:  # E x² = α(α+1)/β²
        exact = [(2 * a + 1) / b ** 2, -2 * a * (a + 1) / b ** 3]
    _check_unbiased([alpha.grad, rate.grad], exact)


def _moment_gradients(moment, values):
    """∂/∂θ of a closed-form moment, by autograd on the formula."""
    params = [f64(v).requires_grad_() for v in values]
    moment(*params).sum().backward()
    return [p.grad.numpy() for p in params]


@pytest.mark.parametrize("power", [1, 2])
def test_beta_pathwise_gradient_is_unbiased(power):
    a, b = np.array([0.4, 3.0]), np.array([1.7, 0.6])
    c1, c0 = _per_draw_params([a, b])
    gradlab.manual_seed(12)
    Beta(c1, c0).rsample().pow(power).sum().backward()
    mean = (lambda p, q: p / (p + q)) if power == 1 else \
        (lambda p, q: p * (p + 1) / ((p + q) * (p + q + 1)))
    _check_unbiased([c1.grad, c0.grad], _moment_gradients(mean, [a, b]))


def test_dirichlet_pathwise_gradient_is_unbiased():
    """f(x) = Σ wᵢ xᵢ + Σ vᵢ xᵢ² (weights, since Σ xᵢ = 1 makes plain sums constant)."""
    a = np.array([0.3, 1.5, 4.0])
    w, v = f64([1.0, -2.0, 0.5]), f64([0.7, 1.3, -1.0])
    (alpha,) = _per_draw_params([a])
    gradlab.manual_seed(13)
    x = Dirichlet(alpha).rsample()
    (x * w + x * x * v).sum().backward()

    def moments(c):
        c0 = c.sum()
        return (w * c / c0 + v * c * (c + 1) / (c0 * (c0 + 1))).sum()

    _check_unbiased([alpha.grad], _moment_gradients(moments, [a]))
