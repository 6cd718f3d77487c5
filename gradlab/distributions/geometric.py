"""``Geometric(probs=p)`` or ``Geometric(logits=l)``: the failures before the first success.

Flip a coin that lands heads with probability p until it does; k counts the
tails that came first (k = 0, 1, 2, ...):

    P(k)     = (1 - p)^k p
    log p(k) = k log(1 - p) + log p
    mean = (1 - p)/p = 1/p - 1,   variance = (1 - p)/p²,   mode = 0
    entropy  = [-p log p - (1 - p) log(1 - p)] / p = BCEWithLogits(l, p) / p

(the entropy of one flip times 1/p, the expected number of flips). p must be
> 0: with p = 0 no success ever comes, so on top of ``unit_interval`` the
probabilities are checked to be positive, as PyTorch does.

Draws by inversion: P(k >= n) = (1 - p)^n, so for u uniform on (0, 1]
k = floor(log u / log(1 - p)). (PyTorch's ``Tensor.geometric_`` counts the
flips *including* the success, k >= 1; this distribution counts failures.)
"""

from __future__ import annotations

from numbers import Number

from ..autograd.grad_mode import no_grad
from ..ops.creation import zeros_like
from ..ops.losses import binary_cross_entropy_with_logits
from ..ops.sampling import rand
from ..ops.selection import where
from ..size import Size
from ..type_info import finfo
from . import constraints
from .bernoulli import ChanceOfSuccess
from .distribution import Distribution
from .kl import register_kl
from .utils import broadcast_all

__all__ = ["Geometric"]


class Geometric(ChanceOfSuccess, Distribution):
    """A batch of geometric distributions: failures before a success of chance ``probs``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        _, value, param = self._take_chance(probs, logits)
        is_probs = probs is not None
        super().__init__(Size() if isinstance(param, Number) else value.size(),
                         validate_args=validate_args)
        if self._validate_args and is_probs:  # p = 0: a success never comes
            valid = self.probs > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but found "
                    f"invalid values ({int((~valid).sum())} of {valid.numel()} entries are 0):"
                    f"\n{value}\n(Geometric: with probs 0 no success ever comes; pass "
                    "validate_args=False to skip this check)")

    def expand(self, batch_shape, _instance=None) -> Geometric:
        return self._expanded_chance(Geometric, batch_shape, _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = self.probs.detach()
        with no_grad():
            u = rand(tuple(shape), dtype=probs.dtype, device=probs.device)
            u = u.clamp(min=finfo(probs.dtype).tiny)  # u in (0, 1): log u is finite
            return (u.log() / (-probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1, k = 0: P = 1, but 0 · log(1 - 1) would be 0 · (-inf) = NaN
        probs = where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        bce = binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
        return bce / self.probs


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    """KL = E_p[k] log((1 - p)/(1 - q)) + log(p/q) = -H(p) - log(1 - q)/p - logit(q)."""
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits
