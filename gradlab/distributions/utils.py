"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits.

A discrete distribution can be given its probabilities or their logits; the
other form is computed on first use (``lazy_property``), so a policy built
from logits never pays for ``softmax`` unless it asks for ``probs``.

    binary:       logit = log p - log(1 - p)      p = sigmoid(logit)
    categorical:  logit = log p (up to a shift)   p = softmax(logit)

``clamp_probs`` keeps p in [eps, 1 - eps] before a log, so a probability of
exactly 0 or 1 gives a large finite logit instead of ±inf.
"""

from __future__ import annotations

from numbers import Number

from .. import dtypes as _dt
from ..autograd.grad_mode import enable_grad
from ..ops.creation import as_tensor
from ..ops.repetition import broadcast_tensors
from ..tensor import Tensor
from ..type_info import finfo

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits"]


def broadcast_all(*values) -> tuple[Tensor, ...]:
    """Numbers and tensors -> tensors of one broadcast shape. Numbers take the dtype
    and device of the first tensor (the default dtype if there is none)."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        kinds = ", ".join(type(v).__name__ for v in values)
        raise ValueError(f"Input arguments must all be instances of numbers.Number or "
                         f"gradlab.Tensor, got ({kinds})")
    ref = next((v for v in values if isinstance(v, Tensor)), None)
    if ref is None:
        dtype, device = _dt.get_default_dtype(), None
    else:
        dtype, device = ref.dtype, ref.device
        if not dtype.is_floating_point:  # int parameters with float numbers: compute in floats
            dtype = _dt.get_default_dtype()
    tensors = [v if isinstance(v, Tensor) else as_tensor(float(v), dtype=dtype, device=device)
               for v in values]
    return tuple(broadcast_tensors(*tensors))


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped to [eps, 1 - eps] so their logs stay finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log p (categorical) or log p - log(1 - p) (binary), from clamped probabilities."""
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid (binary) or softmax over the last dim (categorical)."""
    return logits.sigmoid() if is_binary else logits.softmax(dim=-1)


class lazy_property:  # noqa: N801 - PyTorch's name
    """A property computed on first use, then stored on the instance (one computation).

    It is computed with gradients on, so ``Categorical(logits=w).probs`` stays
    differentiable even when first read inside ``no_grad`` (e.g. in ``sample``).
    """

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value
