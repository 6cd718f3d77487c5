"""Random fills: ``x.normal_()``, ``uniform_``, ``bernoulli_``, ``exponential_``,
``cauchy_``, ``log_normal_``, ``geometric_`` and ``random_`` (integers).

Each overwrites a tensor with fresh draws from one of gradlab's generators
(``gradlab/random.py``). They are in-place ops like any other (the checks,
the version bump and the new history all come from ``apply_inplace`` in
``inplace.py``), but what they compute is sampling, not a function of the
old values, so they live apart from the in-place arithmetic. Nothing gets a
gradient: the old values are gone, and a draw is not a smooth function of
the distribution's parameters. For the same reason the result's tangent is 0.

They are methods only, as in PyTorch (there is no ``torch.normal_``).
``normal_`` and ``uniform_`` draw as ``randn`` and ``rand`` do, so one seed
gives the same numbers either way. The other continuous ones transform a
uniform or normal draw (inverse-CDF), which any backend's generator offers:

    cauchy_       median + sigma · tan(π (u - 1/2))
    log_normal_   exp(mean + std · z)              (mean and std of the log)
    geometric_    ceil(log(1 - u) / log(1 - p))    (trials up to the first success: 1, 2 ...)

``random_`` draws integers uniformly, in a range its dtype can hold exactly:
``[0, max]`` by default (for floats ``[0, 2^digits]``, e.g. 2^24 for float32,
so every draw is representable), ``random_(to)`` in ``[0, to)`` and
``random_(from, to)`` in ``[from, to)``.
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from ..random import get_generator
from ..tensor import Tensor
from ._util import check_float, xp_for
from .inplace import _check_target, _fits, apply_inplace

__all__: list[str] = []  # methods only: there is no torch.normal_
TENSOR_METHODS = ["normal_", "uniform_", "bernoulli_", "exponential_", "cauchy_", "log_normal_",
                  "geometric_", "random_"]


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


class Cauchy(_RandomFill):
    """median + sigma · tan(π (u - 1/2)): the inverse CDF of the Cauchy distribution."""

    @staticmethod
    def forward(ctx, a, generator, median, sigma):
        xp = xp_for(a)
        u = generator.rng.random(a.shape)
        return (median + sigma * xp.tan(math.pi * (u - 0.5))).astype(a.dtype, copy=False)


class LogNormal(_RandomFill):
    """exp(mean + std · z), z standard normal: its log is N(mean, std²)."""

    name = "log_normal"

    @staticmethod
    def forward(ctx, a, generator, mean, std):
        z = generator.rng.standard_normal(a.shape)
        return xp_for(a).exp(mean + std * z).astype(a.dtype, copy=False)


class Geometric(_RandomFill):
    """ceil(log(1 - u) / log(1 - p)): the number of trials up to the first success, >= 1
    (P(k) = (1 - p)^(k - 1) · p)."""

    @staticmethod
    def forward(ctx, a, generator, p):
        xp = xp_for(a)
        u = generator.rng.random(a.shape)
        k = xp.maximum(xp.ceil(xp.log1p(-u) / math.log1p(-p)), 1)
        return k.astype(a.dtype, copy=False)


class RandomIntegers(_RandomFill):
    """Integers uniform on [low, high], both included."""

    name = "random"

    @staticmethod
    def forward(ctx, a, generator, low, high):
        return generator.rng.integers(low, high, size=a.shape, endpoint=True).astype(
            a.dtype, copy=False)


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


def cauchy_(input, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Overwrite with draws from the Cauchy distribution (heavy tails: no mean, no variance)."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma} (the scale: "
                           "half the width where the density is half its peak)")
    return _random_fill(Cauchy, input, generator, float(median), float(sigma))


def log_normal_(input, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """Overwrite with exp(N(mean, std²)) draws; ``mean`` and ``std`` are those of the log."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return _random_fill(LogNormal, input, generator, float(mean), float(std))


def geometric_(input, p: float, *, generator=None) -> Tensor:
    """Overwrite with the number of Bernoulli(p) trials up to and including the first
    success (1, 2, 3 ...), also in integer tensors."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p} (the chance "
                           "of success of each trial)")
    return _random_fill(Geometric, input, generator, float(p), floats_only=False)


_NOT_GIVEN = object()
# Floats hold every integer up to 2^digits exactly: random_ stays within +-2^digits.
_FLOAT_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _representable(dtype) -> tuple[int, int]:
    if dtype.is_floating_point:
        top = 2 ** _FLOAT_DIGITS[dtype.name]
        return -top, top
    if dtype.category == 0:  # bool
        return 0, 1
    return dtype._int_range


def random_(input, from_=None, to=_NOT_GIVEN, *, generator=None) -> Tensor:
    """Overwrite with integers drawn uniformly: ``random_()`` from [0, max of the dtype]
    (floats: [0, 2^digits]), ``random_(to)`` from [0, to), ``random_(from, to)`` from
    [from, to) and ``random_(from, None)`` from [from, max]."""
    _check_target("random_", input)
    low_limit, high_limit = _representable(input.dtype)
    if to is _NOT_GIVEN:  # random_() or random_(to)
        low, high = (0, high_limit) if from_ is None else (0, _whole("to", from_) - 1)
    else:
        low = 0 if from_ is None else _whole("from", from_)
        high = high_limit if to is None else _whole("to", to) - 1
    if low > high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high + 1}: the range [from, to) is empty (to itself is "
                           "never drawn)")
    for name, value in (("from", low), ("to - 1", high)):
        if low_limit <= value <= high_limit:
            continue
        if input.dtype.is_floating_point:  # PyTorch warns here (and draws anyway)
            import warnings

            warnings.warn(f"random_: {name} is out of bounds [-(2^{_FLOAT_DIGITS[input.dtype.name]}"
                          f"), 2^{_FLOAT_DIGITS[input.dtype.name]}]: {input.dtype} can't hold "
                          "every integer there, so draws get rounded", UserWarning, stacklevel=2)
            break
        raise RuntimeError(f"random_: {name} is out of bounds for {input.dtype}, which holds "
                           f"{low_limit}..{high_limit}; got {value}. Fix: a narrower range, or "
                           "a wider dtype")
    return _random_fill(RandomIntegers, input, generator, low, high, floats_only=False)


def _whole(name: str, value) -> int:
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, float) and not value.is_integer():
        raise RuntimeError(f"random_: '{name}' must be a whole number, got {value}")
    return int(value)
