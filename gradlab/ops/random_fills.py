"""Random fills: ``x.normal_()``, ``uniform_``, ``bernoulli_``, ``exponential_``.

Each overwrites a tensor with fresh draws from one of gradlab's generators
(``gradlab/random.py``). They are in-place ops like any other (the checks,
the version bump and the new history all come from ``apply_inplace`` in
``inplace.py``), but what they compute is sampling, not a function of the
old values, so they live apart from the in-place arithmetic. Nothing gets a
gradient: the old values are gone, and a draw is not a smooth function of
the distribution's parameters. For the same reason the result's tangent is 0.

They are methods only, as in PyTorch (there is no ``torch.normal_``).
``normal_`` and ``uniform_`` draw as ``randn`` and ``rand`` do, so one seed
gives the same numbers either way.
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from ..random import get_generator
from ..tensor import Tensor
from ._util import check_float
from .inplace import _check_target, _fits, apply_inplace

__all__: list[str] = []  # methods only: there is no torch.normal_
TENSOR_METHODS = ["normal_", "uniform_", "bernoulli_", "exponential_"]


class _RandomFill(Function):
    """Overwrite with draws from ``generator``: ``forward(ctx, a, generator, *params)``.
    Nothing gets a gradient: the old values are gone, and a draw is not a smooth function
    of the distribution's parameters."""

    raw = True

    @staticmethod
    def backward(ctx, grad):
        return (None,) * len(ctx.input_shapes)

    @staticmethod
    def jvp(ctx, *tangents):
        """ẏ = 0: fresh draws don't move with the old values."""
        return None


def _draw_dtype(a):
    """NumPy draws float32/float64 directly; half types are drawn in float32, then cast."""
    return a.dtype if a.dtype in (np.float32, np.float64) else np.float32


class Normal(_RandomFill):
    """mean + std · z, z standard normal (drawn as randn draws it: same seed, same z)."""

    @staticmethod
    def forward(ctx, a, generator, mean, std):
        z = generator.rng.standard_normal(a.shape, dtype=_draw_dtype(a))
        return (z * std + mean).astype(a.dtype, copy=False)


class Uniform(_RandomFill):
    """from + (to - from) · u, u uniform on [0, 1) (drawn as rand draws it)."""

    @staticmethod
    def forward(ctx, a, generator, low, high):
        u = generator.rng.random(a.shape, dtype=_draw_dtype(a))
        return (u * (high - low) + low).astype(a.dtype, copy=False)


class Exponential(_RandomFill):
    """e / lambd, e standard exponential: density lambd · exp(-lambd · x), mean 1/lambd."""

    @staticmethod
    def forward(ctx, a, generator, lambd):
        e = generator.rng.standard_exponential(a.shape, dtype=_draw_dtype(a))
        return (e / lambd).astype(a.dtype, copy=False)


class Bernoulli(_RandomFill):
    """1 with probability p, else 0: u < p for u uniform on [0, 1)."""

    @staticmethod
    def forward(ctx, a, generator, p):
        return (generator.rng.random(a.shape) < p).astype(a.dtype, copy=False)


def _random_fill(op, target, generator, *params, floats_only: bool = True) -> Tensor:
    _check_target(op.name + "_", target)
    if floats_only:
        check_float(op.name + "_", target)
    gen = generator if generator is not None else get_generator(target.device)
    if gen.device is not target._device:
        raise RuntimeError(f"{op.name}_: the generator is for {gen.device} but the tensor is "
                           f"on {target.device}; use a Generator of the same device")
    return apply_inplace(op, target, gen, *params, convert=False)


def normal_(input, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Overwrite with draws from N(mean, std²)."""
    if not std >= 0:
        raise RuntimeError(f"normal_: std must be >= 0, got {std}")
    return _random_fill(Normal, input, generator, float(mean), float(std))


def uniform_(input, from_: float = 0.0, to: float = 1.0, *, generator=None) -> Tensor:
    """Overwrite with draws from U[from, to) (PyTorch names the first bound ``from``, a
    Python keyword: pass it by position)."""
    if not (from_ <= to and math.isfinite(to - from_)):
        raise RuntimeError(f"uniform_: expects a finite range [from, to) with from <= to, got "
                           f"from={from_}, to={to}")
    return _random_fill(Uniform, input, generator, float(from_), float(to))


def exponential_(input, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Overwrite with draws from the exponential distribution of rate ``lambd``."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_: expects lambd > 0 (the rate), got lambd={lambd}")
    return _random_fill(Exponential, input, generator, float(lambd))


def bernoulli_(input, p=0.5, *, generator=None) -> Tensor:
    """Overwrite with 1 (probability ``p``) or 0, also in integer and bool tensors; ``p`` is
    a number or a float tensor of probabilities that broadcasts to ``input``'s shape."""
    _check_target("bernoulli_", input)
    if isinstance(p, Tensor):
        if not p.dtype.is_floating_point:
            raise RuntimeError(f"bernoulli_: p must be a float tensor of probabilities, got "
                               f"{p.dtype}. Fix: p.float()")
        p = p.detach().to(input.device)
        if not _fits(input, p):
            raise RuntimeError(f"bernoulli_: p of shape {tuple(p.shape)} can't be broadcast to "
                               f"the tensor's shape {tuple(input.shape)}")
        outside = not bool(((p >= 0) & (p <= 1)).all())  # NaN is outside too
        got = f"a p of shape {tuple(p.shape)} with values outside it"
    else:
        p = float(p)
        outside, got = not 0 <= p <= 1, f"p={p}"
    if outside:
        raise RuntimeError(f"bernoulli_: expects p in [0, 1], got {got}")
    return _random_fill(Bernoulli, input, generator, p, floats_only=False)
