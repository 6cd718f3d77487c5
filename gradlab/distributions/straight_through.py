"""``OneHotCategoricalStraightThrough``: a ``OneHotCategorical`` with a biased ``rsample``.

A one-hot draw is a step function of the probabilities, so its true gradient
is zero almost everywhere. The straight-through estimator (Bengio et al.,
2013, "Estimating or propagating gradients through stochastic neurons")
pretends the draw was its expectation, E[one_hot] = probs, on the way back:

    rsample() = sample + probs - probs.detach()

The forward value is the exact one-hot sample (probs - probs.detach() is 0),
while d rsample / d probs is the identity, so gradients reach the logits as if
the network had output ``probs``. Biased, but cheap and low-variance: the
usual trick for discrete latents and hard attention (compare the Gumbel-softmax
relaxation). Everything else (log_prob, entropy, moments, KL) is
``OneHotCategorical``'s.
"""

from __future__ import annotations

from .one_hot_categorical import OneHotCategorical

__all__ = ["OneHotCategoricalStraightThrough"]


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """``OneHotCategorical`` whose ``rsample`` passes gradients straight through to
    ``probs``."""

    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs  # a lazy_property: computed once, with gradients
        return samples + (probs - probs.detach())

    def __repr__(self) -> str:
        return repr(self._categorical).replace("Categorical", type(self).__name__, 1)
