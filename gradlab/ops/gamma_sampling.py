"""Gamma draws with a gradient: ``_standard_gamma`` and ``_standard_gamma_grad``.

A draw x ~ Gamma(α, 1) is made by rejection sampling, so x is not a smooth
function of α and noise, and the usual reparameterisation (x = μ + σε) does
not exist. Implicit reparameterisation gives the gradient anyway: keep the
draw's CDF value u = P(α, x) fixed while α moves (u is the uniform noise
that inverse-CDF sampling would use). Differentiating P(α, x(α)) = u,

    ∂P/∂α + ∂P/∂x · dx/dα = 0   so   dx/dα = -(∂P/∂α) / (∂P/∂x),

with ∂P/∂x = x^(α-1) e⁻ˣ/Γ(α), the density. ∂P/∂α comes from the same two
expansions that compute P (see incomplete_gamma.py), differentiated in α
term by term. Neither the density nor P itself is needed, only ratios, so
nothing over- or underflows:

* x < α + 1 or x < 1.5: P = xᵃe⁻ˣ/Γ(α+1) · S, S = Σₙ tₙ, tₙ = xⁿ/((α+1)…(α+n)).
  ∂tₙ/∂α = -tₙ Hₙ with Hₙ = Σ_{k<=n} 1/(α+k), so S' = -Σₙ tₙ Hₙ and
      dx/dα = -(x/α) · (S · (ln x - ψ(α+1)) + S').
* otherwise: Q = 1 - P = xᵃe⁻ˣ/Γ(α) · C, C the continued fraction
  1/(x+1-α - 1(1-α)/(x+3-α - 2(2-α)/(x+5-α - …))). The modified Lentz
  recursion is run on (value, α-derivative) pairs, which gives C'/C, and
      dx/dα = x · C · (ln x - ψ(α) + C'/C).

Both converge to float64 precision, in O(√α) terms near x ≈ α (about
9√α: 280 terms at α = 1000; the loops stop at 60,000, so α up to ~4·10⁷).
PyTorch's ``_standard_gamma_grad`` is an approximation instead (a 6-term
Taylor series for x < 0.8, a rational fit, a saddle-point formula for
α > 8): it agrees with this to ~1e-3, and to 1e-6 for x < 0.3.

The gradient of a draw is ``_standard_gamma_grad(α, x)`` computed on saved
arrays, as in PyTorch, so it has no derivative of its own: differentiating
a gradient through a gamma draw again (double backward) raises. Unlike
PyTorch, forward mode works: ẋ = dx/dα · α̇.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ..autograd.function import Function
from ..random import get_generator
from ..tensor import Tensor
from ._util import check_float, promote, xp_for
from .gamma_functions import _polygamma_array

__all__ = ["_standard_gamma", "_standard_gamma_grad"]
TENSOR_METHODS: list = []

_EPS = 1e-16
_ULPS = 4.5e-16  # |δ - 1| within 2 ulps of 1: rounding keeps δ from 1 itself
_TINY = 1e-300
_MAX_TERMS = 60000
_CHECK_EVERY = 8  # convergence is tested every few terms (a test is a sync on a GPU)
_SERIES_BELOW = 1.5  # the series also for x < 1.5, where the fraction converges slowly


def _run(xp, step, state, active):
    """Run ``step(state, n) -> (state, converged)`` for n = 1, 2, ... until every ``active``
    element has converged (checked every few terms) or _MAX_TERMS is reached."""
    for n in range(1, _MAX_TERMS + 1):
        state, converged = step(state, n)
        if n % _CHECK_EVERY == 0 and not bool(xp.any(active & ~converged)):
            break
    return state


def _series_slope(a, x, active):
    """dx/dα from P's series: -(x/α)(S (ln x - ψ(α+1)) + S') (x < α + 1)."""
    xp = xp_for(a)

    def step(state, n):
        term, harmonic, total, slope = state
        harmonic = harmonic + 1 / (a + n)  # Hₙ
        term = term * x / (a + n)  # tₙ
        total = total + term  # S
        slope = slope - term * harmonic  # S' = -Σ tₙ Hₙ
        converged = (term <= _EPS * total) & (term * harmonic <= _EPS * xp.abs(slope))
        return (term, harmonic, total, slope), converged

    one, zero = xp.ones_like(a), xp.zeros_like(a)
    _, _, total, slope = _run(xp, step, (one, zero, one, zero), active)
    return -(x / a) * (total * (xp.log(x) - _polygamma_array(0, a + 1)) + slope)


def _fraction_slope(a, x, active):
    """dx/dα from Q's continued fraction: x C (ln x - ψ(α) + C'/C) (x >= α + 1).

    Modified Lentz on (value, ∂/∂α) pairs: bₙ = x + 2n + 1 - α (∂ = -1), aₙ = -n(n - α)
    (∂ = n); D ← 1/(aₙD + bₙ), E ← bₙ + aₙ/E, C ← C · E·D, and ∂ ln C = Σ ∂(E·D)/(E·D).
    """
    xp = xp_for(a)
    b = x + 1 - a
    d = 1 / b  # D₀ = 1/b₀, ∂D₀ = -∂b₀/b₀² = D₀²
    e = xp.full_like(a, 1 / _TINY)  # E₀ "infinite" (Lentz's start), ∂E₀ = 0

    def step(state, n):
        b, d, dd, e, de, log_slope, value = state
        an = -n * (n - a)
        b = b + 2
        denominator = an * d + b
        d_denominator = n * d + an * dd - 1
        d = 1 / xp.where(xp.abs(denominator) < _TINY, _TINY, denominator)
        dd = -d_denominator * d * d
        ratio = an / e
        de = -1 + n / e - ratio * de / e
        e = b + ratio
        e = xp.where(xp.abs(e) < _TINY, _TINY, e)
        delta = e * d
        d_delta = (de * d + e * dd) / delta  # ∂ ln(E·D)
        value = value * delta
        log_slope = log_slope + d_delta
        converged = (xp.abs(delta - 1) <= _ULPS) & (xp.abs(d_delta) <= _EPS * xp.abs(log_slope))
        return (b, d, dd, e, de, log_slope, value), converged

    state = (b, d, d * d, e, xp.zeros_like(a), d, d)  # ∂ ln C₀ = ∂D₀/D₀ = D₀
    *_, log_slope, value = _run(xp, step, state, active)
    return x * value * (xp.log(x) - _polygamma_array(0, a) + log_slope)


def _gamma_slope(alpha, x):
    """dx/dα of a Gamma(α, 1) draw x at fixed CDF value, on raw arrays, in float64, cast
    back to ``alpha``'s dtype. 0 at x = 0 (the limit); NaN where α <= 0 or x < 0, and at
    x = inf or α = inf (no quantile moves there), as PyTorch gives NaN at x = inf."""
    xp = xp_for(alpha)
    a, x64 = xp.broadcast_arrays(alpha.astype(xp.float64), x.astype(xp.float64))
    regular = (a > 0) & (x64 > 0) & xp.isfinite(a) & xp.isfinite(x64)
    sa, sx = xp.where(regular, a, 1.0), xp.where(regular, x64, 1.0)
    use_series = (sx < sa + 1) | (sx < _SERIES_BELOW)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        # each formula runs only where it is used (elsewhere on a point where it converges)
        series = _series_slope(sa, xp.where(use_series, sx, 0.5 * sa), regular & use_series)
        fraction = _fraction_slope(sa, xp.where(use_series, sa + 2, sx), regular & ~use_series)
    out = xp.where(use_series, series, fraction)
    out = xp.where(regular, out, xp.where((x64 == 0) & (a > 0), 0.0, xp.nan))
    return out.astype(alpha.dtype, copy=False)


_NO_DOUBLE_BACKWARD = (
    "_standard_gamma_grad: the gradient of a gamma draw (dx/dα, in Gamma/Beta/Dirichlet "
    ".rsample) can't be differentiated again (double backward, or forward mode over "
    "reverse): it is computed from the incomplete gamma function's expansions on raw arrays, "
    "as PyTorch's is (PyTorch says \"the derivative for '_standard_gamma_grad' is not "
    "implemented\"). Fix: keep the gamma draws out of what you differentiate twice (e.g. "
    "compute a gradient penalty from the other terms), or use a score-function estimator")


class StandardGammaGrad(Function):
    """dx/dα of a Gamma(α, 1) draw x (implicit reparameterisation); no derivative itself."""

    raw = True
    name = "_standard_gamma_grad"

    @staticmethod
    def forward(ctx, alpha, x):
        return _gamma_slope(alpha, x)

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError(_NO_DOUBLE_BACKWARD)

    @staticmethod
    def jvp(ctx, *tangents):
        raise NotImplementedError(_NO_DOUBLE_BACKWARD)


class StandardGamma(Function):
    """x ~ Gamma(α, 1) per element of α.   dx/dα = _standard_gamma_grad(α, x) (implicit)."""

    raw = True
    name = "_standard_gamma"

    @staticmethod
    def forward(ctx, alpha, generator):
        xp = xp_for(alpha)
        a = alpha.astype(xp.float64)
        valid = a >= 0  # (NaN is not): NumPy refuses a negative shape, so draw 1s there
        draws = generator.rng.standard_gamma(xp.where(valid, a, 1.0))
        draws = xp.where(valid, draws, xp.nan).astype(alpha.dtype, copy=False)
        # A draw that underflowed to 0 (α << 1) becomes the smallest normal float, as PyTorch
        out = xp.maximum(draws, ml_dtypes.finfo(alpha.dtype).tiny)  # (NaN stays NaN)
        ctx.save_for_backward(alpha, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        return grad * StandardGammaGrad.apply(alpha, x), None

    @staticmethod
    def jvp(ctx, t_alpha, t_generator):
        """ẋ = dx/dα · α̇."""
        if t_alpha is None:
            return None
        return t_alpha * StandardGammaGrad.apply(ctx.primals[0], ctx.results[0])


def _float_tensor(op: str, name: str, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not "
                        f"{type(value).__name__}. Fix: gradlab.tensor({value!r})")
    check_float(op, value)


def _standard_gamma(input: Tensor, generator=None) -> Tensor:
    """Gamma(input, 1) draws (shape α = ``input``, rate 1), differentiable in α by implicit
    reparameterisation: dx/dα = -(∂P(α, x)/∂α)/(∂P(α, x)/∂x), P the gamma CDF.

    Draws that underflow are the smallest positive normal float; NaN where α < 0 or NaN.
    """
    _float_tensor("_standard_gamma", "input", input)
    gen = generator if generator is not None else get_generator(input.device)
    if gen.device is not input._device:
        raise RuntimeError(f"_standard_gamma: the generator is for {gen.device} but input is "
                           f"on {input.device}; use a Generator of the same device")
    return StandardGamma.apply(input, gen)


def _standard_gamma_grad(input: Tensor, output: Tensor) -> Tensor:
    """dx/dα of Gamma(α = ``input``, 1) draws x = ``output`` at a fixed CDF value (what
    ``_standard_gamma``'s backward multiplies by). Not differentiable itself."""
    _float_tensor("_standard_gamma_grad", "input", input)
    _float_tensor("_standard_gamma_grad", "output", output)
    return StandardGammaGrad.apply(*promote(input, output))
