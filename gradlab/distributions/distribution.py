"""``Distribution``: the interface every distribution shares (PyTorch's).

Shapes. A distribution object holds a whole *batch* of independent
distributions of the same family (``Normal(zeros(3), ones(3))`` is three
normals): ``batch_shape`` is (3,). ``event_shape`` is the shape of one draw
of one of them: () for a number, (k,) for a vector (``Dirichlet``,
``MultivariateNormal``). ``sample(sample_shape)`` returns
``sample_shape + batch_shape + event_shape``, and ``log_prob(x)`` one number
per event: ``x.shape`` without the event dims.

Gradients. ``log_prob``, ``entropy`` and ``kl_divergence`` are compositions
of gradlab ops, so they differentiate with respect to the parameters (the
score-function / REINFORCE gradient uses ``log_prob``). ``sample`` runs
under ``no_grad``: a draw is not a smooth function of the parameters.
Where a draw can be written ``x = f(params, noise)`` with noise that does
not depend on the parameters (``loc + scale * eps``), ``rsample`` does so
and gradients flow through the sample: the pathwise / reparameterisation
gradient of VAEs (``has_rsample`` says which do).

Validation. With ``validate_args`` (on by default, as in PyTorch; switch off
for all with ``Distribution.set_default_validate_args(False)``) the
parameters are checked against ``arg_constraints`` when the distribution is
made, and values against ``support`` in ``log_prob``, so a negative scale or
an out-of-range value fails where it enters, with the parameter, its shape
and the constraint in the message.
"""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..ops.repetition import broadcast_shapes
from ..size import Size
from ..tensor import Tensor
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


def _as_size(shape, what: str = "sample_shape") -> Size:
    if isinstance(shape, int):
        return Size((shape,))
    if isinstance(shape, (str, bytes)):
        raise TypeError(f"{what} must be a tuple of ints (e.g. (100,)), got {shape!r}")
    try:
        return Size(tuple(int(s) for s in shape))
    except TypeError:
        raise TypeError(f"{what} must be a tuple of ints (e.g. (100,)), got {shape!r}") from None


class Distribution:
    """Base class: a batch of probability distributions of one family."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True  # the default for every distribution made later

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument / support checks on or off for distributions made from now on."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args expects True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None) -> None:
        self._batch_shape = _as_size(batch_shape, "batch_shape")
        self._event_shape = _as_size(event_shape, "event_shape")
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self) -> None:
        name = type(self).__name__
        for param, constraint in self.arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                         lazy_property):
                continue  # given the other form (probs vs logits): nothing to check
            value = getattr(self, param)
            valid = constraint.check(value)
            if not bool(valid.all()):
                bad = int((~valid).sum())
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                    f"{constraint!r}, but found invalid values ({bad} of {valid.numel()} "
                    f"{'events' if constraint.event_dim else 'entries'} fail):\n{value}\n"
                    f"({name}: pass validate_args=False to skip this check)")

    # --- shapes -----------------------------------------------------------------------------

    @property
    def batch_shape(self) -> Size:
        """The shape of the batch of independent distributions this object holds."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of one draw of one distribution (() for numbers)."""
        return self._event_shape

    def _extended_shape(self, sample_shape=()) -> Size:
        """sample_shape + batch_shape + event_shape: the shape of ``sample(sample_shape)``."""
        return Size(_as_size(sample_shape) + self._batch_shape + self._event_shape)

    def expand(self, batch_shape, _instance=None) -> Distribution:
        """A new distribution with parameters expanded (views, no copies) to ``batch_shape``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement expand")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                f"__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _expanded(self, cls, batch_shape, _instance, *names):
        """expand() for a class ``cls`` whose parameters all have the batch shape."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = _as_size(batch_shape, "batch_shape")
        for name in names:
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    # --- constraints ------------------------------------------------------------------------

    @property
    def arg_constraints(self) -> dict:
        """Parameter name -> the constraint it must satisfy."""
        raise NotImplementedError(f"{type(self).__name__} does not define arg_constraints")

    @property
    def support(self):
        """The constraint a value must satisfy to have non-zero probability."""
        raise NotImplementedError(f"{type(self).__name__} does not define support")

    # --- moments ----------------------------------------------------------------------------

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    # --- sampling ---------------------------------------------------------------------------

    def sample(self, sample_shape=()) -> Tensor:
        """Draws of shape ``sample_shape + batch_shape + event_shape``, no gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        """Reparameterised draws: gradients flow through them to the parameters."""
        raise NotImplementedError(
            f"{type(self).__name__} has no rsample (has_rsample=False): its draws can't be "
            "differentiated. Use sample() with a score-function estimator (log_prob) instead")

    def sample_n(self, n: int) -> Tensor:
        return self.sample(Size((n,)))

    # --- densities --------------------------------------------------------------------------

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError(
            f"{type(self).__name__} does not implement enumerate_support (only discrete "
            "distributions with finitely many values do)")

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self) -> Tensor:
        """exp(entropy): the effective number of equally likely outcomes."""
        return self.entropy().exp()

    def _validate_sample(self, value) -> None:
        """Check a value's type, shape and support before log_prob / cdf use it."""
        name = type(self).__name__
        if not isinstance(value, Tensor):
            raise ValueError(f"The value argument to log_prob must be a Tensor, got "
                             f"{type(value).__name__} ({name})")
        event_dim = len(self._event_shape)
        shape = tuple(value.shape)
        if shape[len(shape) - event_dim:] != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{shape} vs {tuple(self._event_shape)} ({name})")
        try:
            broadcast_shapes(shape, tuple(self._batch_shape + self._event_shape))
        except (RuntimeError, ValueError):
            raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {shape} "
                             f"vs {tuple(self._batch_shape + self._event_shape)} ({name})") \
                from None
        support = self.support
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {shape}) to be "
                f"within the support ({support!r}) of the distribution {self!r}, but found "
                f"invalid values ({int((~valid).sum())} of {valid.numel()} fail):\n{value}")

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names)
        return f"{type(self).__name__}({args})"
