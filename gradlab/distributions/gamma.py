"""``Gamma(concentration, rate)``: density β^α x^(α-1) e^(-βx) / Γ(α) for x > 0.

    log p(x) = α log β + (α - 1) log x - βx - lgamma(α)
    entropy  = α - log β + lgamma(α) + (1 - α) digamma(α)
    mean = α/β,  variance = α/β²,  mode = max(α - 1, 0)/β

Draws: x = g / β with g ~ Gamma(α, 1) from the backend generator's
``standard_gamma`` (NumPy's / CuPy's), so ``gradlab.manual_seed`` repeats
them. ``_standard_gamma`` is shared with ``Beta`` and ``Dirichlet``, which are
normalised gamma draws.

No ``rsample``: a gamma draw is made by rejection sampling, so x is not a
smooth function of α for fixed noise; a pathwise gradient needs implicit
reparameterisation (dx/dα = -∂F(x; α)/∂α / p(x)), which needs the
derivative of the regularised incomplete gamma function, not in gradlab yet.
"""

from __future__ import annotations

from numbers import Number

from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from ..ops.gamma_functions import digamma, lgamma
from ..ops.incomplete_gamma import gammainc
from ..ops.special_math import xlogy
from ..random import get_generator
from ..size import Size
from ..type_info import finfo
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Gamma"]


class _StandardGammaDraw(Function):
    """g ~ Gamma(α, 1) per element of α (the backend generator's standard_gamma).
    No gradient: use implicit reparameterisation for one (not implemented)."""

    raw = True
    differentiable = False
    name = "_standard_gamma"

    @staticmethod
    def forward(ctx, concentration, generator):
        draws = generator.rng.standard_gamma(concentration.astype("float64"))
        return draws.astype(concentration.dtype)


def _standard_gamma(concentration):
    """Gamma(α, 1) draws shaped like ``concentration``, from the default generator."""
    with no_grad():
        return _StandardGammaDraw.apply(concentration.detach().contiguous(),
                                        get_generator(concentration.device))


def _no_rsample(name: str):
    raise NotImplementedError(
        f"{name}.rsample: no reparameterised draws yet (has_rsample=False). Gamma-family "
        "draws are made by rejection, so they need implicit reparameterisation gradients, "
        "which gradlab does not have. Use sample() with a score-function estimator "
        "(log_prob), or a Normal/LogNormal latent instead")


class Gamma(Distribution):
    """A batch of gamma distributions: shape ``concentration`` (α), ``rate`` (β)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = False

    def __init__(self, concentration, rate, validate_args=None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        numbers = isinstance(concentration, Number) and isinstance(rate, Number)
        super().__init__(Size() if numbers else self.concentration.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Gamma:
        return self._expanded(Gamma, batch_shape, _instance, "concentration", "rate")

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        _no_rsample(type(self).__name__)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            draws = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
            return draws.clamp(min=finfo(draws.dtype).tiny)  # a draw of 0 underflowed

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return xlogy(a, b) + xlogy(a - 1, value) - b * value - lgamma(a)

    def cdf(self, value):
        """P(a, rate·x), the regularised lower incomplete gamma function (differentiable in
        ``rate`` and ``value``, not in ``concentration``, as in PyTorch)."""
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)

    def entropy(self):
        a = self.concentration
        return a - self.rate.log() + lgamma(a) + (1.0 - a) * digamma(a)
