"""``OneHotCategorical``: a ``Categorical`` whose draws are one-hot vectors.

Same parameters and probabilities as ``Categorical`` (it holds one), but a
value is a length-K vector with a single 1, so ``event_shape`` is (K,):
``log_prob(one_hot(k)) = Categorical.log_prob(k)``. Handy when the draw is
fed straight into a layer, as in a VAE with discrete latents.
"""

from __future__ import annotations

from ..ops.creation import eye
from ..ops.lookup import one_hot
from ..size import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical"]


class OneHotCategorical(Distribution):
    """A batch of distributions over the K one-hot vectors of length K (K = last dim)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(
        constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits, validate_args=False)
        param = self._categorical._param
        super().__init__(self._categorical.batch_shape, param.size()[-1:],
                         validate_args=validate_args)

    def _check_parameters(self) -> None:  # check the given form only, as Categorical would
        cat = self._categorical
        name = "probs" if cat._param is cat.__dict__.get("probs") else "logits"
        valid = self.arg_constraints[name].check(cat._param)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected parameter {name} (Tensor of shape {tuple(cat._param.shape)}) of "
                f"distribution {self!r} to satisfy the constraint "
                f"{self.arg_constraints[name]!r}, but found invalid values:\n{cat._param}")

    def expand(self, batch_shape, _instance=None) -> OneHotCategorical:
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, Size(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        probs = self._categorical.probs
        return probs * (1 - probs)

    def sample(self, sample_shape=()):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(dim=-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True):
        n = self._event_shape[0]
        values = eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self._batch_shape) + (n,))
        return values.expand((n,) + tuple(self._batch_shape) + (n,)) if expand else values

    def __repr__(self) -> str:
        return repr(self._categorical).replace("Categorical", "OneHotCategorical", 1)
