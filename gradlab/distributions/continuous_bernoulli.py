"""``ContinuousBernoulli(probs=λ)`` or ``(logits=l)``: the Bernoulli likelihood made a density.

A VAE with pixel intensities x in [0, 1] often scores them with the Bernoulli
log-likelihood x log λ + (1 - x) log(1 - λ), which is not a density for a
continuous x (it does not integrate to 1 over [0, 1]). The continuous Bernoulli
adds the missing normaliser C(λ) (Loaiza-Ganem & Cunningham, NeurIPS 2019):

    p(x) = C(λ) λˣ (1 - λ)¹⁻ˣ,   x in [0, 1]
    C(λ) = 2 atanh(1 - 2λ) / (1 - 2λ) = log(λ / (1 - λ)) / (2λ - 1),   C(½) = 2
    log p(x) = -BCEWithLogits(l, x) + log C(λ)

λ is not a probability here (``probs`` and ``logits`` keep Bernoulli's names):
λ < ½ tilts the density towards 0, λ > ½ towards 1, λ = ½ is Uniform(0, 1).
With η = logit λ it is an exponential family, p(x) ∝ exp(η x), and

    mean     = λ/(2λ - 1) + 1/(log(1 - λ) - log λ)
    variance = λ(λ - 1)/(1 - 2λ)² + 1/(log(1 - λ) - log λ)²
    entropy  = mean · (log(1 - λ) - log λ) - log C(λ) - log(1 - λ)
    cdf(x)   = (λˣ (1 - λ)¹⁻ˣ + λ - 1) / (2λ - 1)
    icdf(u)  = (log1p(u (2λ - 1) - λ) - log1p(-λ)) / (log λ - log1p(-λ))

Each has 0/0 at λ = ½, so inside ``lims`` = (0.499, 0.501] the formulas are
evaluated at λ = 0.499 (to keep their gradients finite) and replaced by their
Taylor series in (λ - ½): log C ≈ log 2 + (4/3 + 104/45 d²) d² with d = λ - ½,
mean ≈ ½ + (1/3 + 16/45 d²) d, variance ≈ 1/12 - (1/15 - 128/945 d²) d².
cdf and icdf there use the same law written with η, which has no cancellation:

    cdf(x) = expm1(ηx) / expm1(η),   icdf(u) = log1p(u expm1(η)) / η

(at η = 0 exactly: x ∓ (η/2) x(1 - x), the value x with the right slope in η).
PyTorch 2.13 returns x itself for both in that region: the uniform's cdf, off by
up to 5e-4, and with no dependence on λ, so its rsample's gradient there is 0.
``rsample`` is icdf(u) for u ~ U(0, 1), differentiable in λ everywhere. λ is
clamped to [eps, 1 - eps] so every log stays finite.

Validation (deliberately unlike PyTorch 2.13, which is buggy here): ``probs``
is checked against [0, 1] *before* that clamp whenever validation is on, with the
usual message. PyTorch checks the unclamped value only when ``validate_args`` is
passed explicitly, so by default ``probs=1.5`` is silently clamped to 1 - eps,
and ``validate_args=False`` raises for it instead of skipping the check.
"""

from __future__ import annotations

import math
from numbers import Number

from ..ops.losses import binary_cross_entropy_with_logits
from ..ops.sampling import rand
from ..ops.selection import where
from ..size import Size
from . import constraints
from .bernoulli import ChanceOfSuccess
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ChanceOfSuccess, ExponentialFamily):
    """A batch of continuous Bernoulli densities on [0, 1] with shape parameter ``probs``
    (λ in (0, 1), not a probability) or ``logits`` (logit λ)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501),
                 validate_args=None) -> None:
        _, value, param = self._take_chance(probs, logits)
        self._lims = lims
        super().__init__(Size() if isinstance(param, Number) else value.size(),
                         validate_args=validate_args)  # (checks probs before the clamp)
        if "probs" in self.__dict__:
            self.probs = self._param = clamp_probs(self.probs)

    def expand(self, batch_shape, _instance=None) -> ContinuousBernoulli:
        new = self._expanded_chance(ContinuousBernoulli, batch_shape, _instance)
        new._lims = self._lims
        return new

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    # --- the region around λ = ½ where the closed forms are 0/0 -----------------------------

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """λ, or lims[0] inside the unstable region (the Taylor series is used there)."""
        return where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self):
        """log C(λ) = log|log(1-λ) - log λ| - log|1 - 2λ|, or its Taylor series near ½."""
        cut = self._cut_probs()
        below_half = where(cut <= 0.5, cut, 0.0)  # safe values for the branch not taken
        above_half = where(cut >= 0.5, cut, 1.0)
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - where(
            cut <= 0.5, (-2.0 * below_half).log1p(), (2.0 * above_half - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    def _eta_near_half(self):
        """(η = logit λ, η with 1 where it is 0): for cdf and icdf inside the region."""
        eta = self.logits
        return eta, where(eta == 0, 1.0, eta)

    # --- moments ------------------------------------------------------------------------------

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / (
            (-cut).log1p() - cut.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), variances, taylor)

    # --- sampling and densities ---------------------------------------------------------------

    def rsample(self, sample_shape=()):
        """icdf(u), u ~ Uniform(0, 1): differentiable in λ."""
        shape = self._extended_shape(sample_shape)
        return self.icdf(rand(*shape, dtype=self.probs.dtype, device=self.probs.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        eta, safe = self._eta_near_half()
        near_half = where(eta == 0, value - 0.5 * eta * value * (1 - value),
                          (safe * value).expm1() / safe.expm1())
        unbounded = where(self._outside_unstable_region(), cdfs, near_half)
        return where(value <= 0.0, 0.0, where(value >= 1.0, 1.0, unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        inverted = (((-cut) + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (
            cut.log() - (-cut).log1p())
        eta, safe = self._eta_near_half()
        near_half = where(eta == 0, value + 0.5 * eta * value * (1 - value),
                          (value * safe.expm1()).log1p() / safe)
        return where(self._outside_unstable_region(), inverted, near_half)

    def entropy(self):
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    # --- exponential family: θ = η = logit λ, T(x) = x, A(η) = log((eᶯ - 1)/η) ------------

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """A(η) = log|expm1(η)| - log|η|, or its Taylor series ½η + η²/24 - η⁴/2880 near 0."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = where(outside, x, self._lims[0] - 0.5)
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(outside, log_norm, taylor)

