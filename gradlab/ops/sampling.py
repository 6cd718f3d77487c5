"""Random tensors: uniform, normal, integers, permutations, draws from weights.

Every sampler takes a ``generator`` (else the device's default one, seeded by
``gradlab.manual_seed``) and draws on the tensor's device, so a seeded run
gives the same numbers on each run. None differentiates through the draw:
``normal`` of tensors is in the graph but sends its mean and std zero
gradients, as PyTorch's does.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..autograd.tracing import recorded
from ..backends import default_device
from ..backends import device as as_device
from ..random import get_generator
from ..tensor import Tensor
from ._factory_keywords import factory_keywords
from ._util import xp_for
from .creation import _like, _new, _size

__all__ = ["rand", "randn", "randint", "normal", "randperm", "multinomial", "rand_like",
           "randn_like", "randint_like"]
# The one sampler that is also a method: x.multinomial(n) draws from the weights in x.
TENSOR_METHODS = ["multinomial"]


def _random(sample, size, dtype, device, generator, requires_grad) -> Tensor:
    dtype = _dt.to_dtype(dtype or _dt.get_default_dtype())
    dev = as_device(device if device is not None else
                    (generator.device if generator is not None else default_device()))
    gen = generator if generator is not None else get_generator(dev)
    if gen.device is not dev:
        raise RuntimeError(f"the generator is for {gen.device} but the tensor goes to {dev}; "
                           "use a Generator of the same device")
    with dev.get_backend().use_device(dev.index):
        arr = sample(gen.rng, size, dtype)
    return _new(arr, dev, requires_grad)


def _sampling_dtype(op: str, dtype):
    """NumPy samples float32/float64 directly; half types are drawn in float32 then cast."""
    if not dtype.is_floating_point and not dtype.is_complex:
        raise RuntimeError(
            f"{op}: draws floating point values, which a {dtype} tensor can't hold. "
            "Fix: use a floating dtype, or randint() for random integers."
        )
    return dtype.np if dtype in (_dt.float32, _dt.float64) else np.float32


@recorded
@factory_keywords()
def rand(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform on [0, 1)."""
    def sample(rng, shape, d):
        return _complex_parts(rng.random, shape, d, "rand", scale=1.0)

    return _random(sample, _size(size), dtype, device, generator, requires_grad)


@recorded
@factory_keywords()
def randn(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal: mean 0, variance 1 (complex: each part has variance 1/2, so
    E|z|² = 1, as PyTorch)."""
    def sample(rng, shape, d):
        return _complex_parts(rng.standard_normal, shape, d, "randn", scale=0.5 ** 0.5)

    return _random(sample, _size(size), dtype, device, generator, requires_grad)


def _complex_parts(draw, shape, d, op: str, scale: float):
    """``draw(shape)`` in dtype ``d``; for a complex ``d``, real and imaginary parts drawn
    one after the other (times ``scale``) in its real dtype."""
    if not d.is_complex:
        return draw(shape, dtype=_sampling_dtype(op, d)).astype(d.np, copy=False)
    part = d.to_real().np
    real = draw(shape, dtype=part) * part.type(scale)
    imag = draw(shape, dtype=part) * part.type(scale)
    out = xp_for(real).empty(shape, dtype=d.np)  # (NumPy or CuPy: where the draws are)
    out.real, out.imag = real, imag
    return out


@recorded
@factory_keywords()
def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False) -> Tensor:
    """Integers uniform on ``[low, high)``; ``randint(high, size)`` starts at 0."""
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint: size is required, e.g. randint(0, 10, (3,))")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(
            f"randint: the range [low, high) = [{low}, {high}) is empty; low must be less "
            "than high (high itself is never drawn)."
        )
    dtype = _dt.to_dtype(dtype or _dt.int64)
    if dtype.category == 1 and not dtype._int_range[0] <= low < high <= dtype._int_range[1] + 1:
        raise RuntimeError(f"randint: the range [low, high) = [{low}, {high}) is out of bounds "
                           f"for {dtype}, which holds {dtype._int_range[0]}.."
                           f"{dtype._int_range[1]}. Fix: narrow it, or use the default int64")
    return _random(lambda g, s, d: g.integers(low, high, size=s).astype(d.np),
                   _size((size,)), dtype, device, generator, requires_grad)


@recorded
@factory_keywords()
def randperm(n: int, *, generator=None, dtype=None, device=None) -> Tensor:
    """A random permutation of ``0 .. n-1``."""
    dtype = _dt.to_dtype(dtype or _dt.int64)
    return _random(lambda g, s, d: g.permutation(n).astype(d.np), (n,), dtype, device,
                   generator, False)


def multinomial(input, num_samples: int, replacement: bool = False, *,
                generator=None) -> Tensor:
    """Draw ``num_samples`` category indices, category ``i`` with probability
    ``input[i] / input.sum()``: the weights need not add up to 1. A 2-D ``input`` is one
    distribution per row, drawn independently. Returns int64 indices, no gradient.

    With replacement each draw is independent: a uniform ``u`` in [0, 1) picks the
    first category whose cumulative share of the weights exceeds it. Without
    replacement each category gets the key ``E / w`` (``E`` exponential); taking the
    ``num_samples`` smallest keys, in order, is the same as drawing one category at
    a time and removing it. Categories of weight 0 come last (in index order).
    """
    op = "multinomial"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor of weights, got {type(input).__name__}")
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
        raise TypeError(f"{op}: num_samples must be an int, got {type(num_samples).__name__}")
    num_samples = int(num_samples)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: the weights must be floating point, got {input.dtype}. "
                           "Fix: input.float()")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"{op}: the weights must be 1-D (one distribution) or 2-D (one per "
                           f"row), got shape {tuple(input.shape)}")
    if num_samples <= 0:
        raise RuntimeError(f"{op}: cannot sample n_sample <= 0 samples (num_samples="
                           f"{num_samples})")
    categories = input.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError(
            f"{op}: cannot sample n_sample > prob_dist.size(-1) samples without replacement: "
            f"{num_samples} draws from {categories} categories. Fix: replacement=True, or "
            "fewer samples")
    dev = input._device
    gen = generator if generator is not None else get_generator(dev)
    if gen.device is not dev:
        raise RuntimeError(f"{op}: the generator is for {gen.device} but the weights are on "
                           f"{dev}; use a Generator of the same device")
    xp = dev.get_backend().xp
    with dev.get_backend().use_device(dev.index):
        weights = input._data.astype(np.float64).reshape(-1, categories)
        _check_weights(op, xp, weights, tuple(input.shape))
        if replacement:
            u = gen.rng.random((weights.shape[0], num_samples))
            cdf = xp.cumsum(weights, axis=1)
            cdf /= cdf[:, -1:]  # the last entry becomes exactly 1, so u < 1 always lands
            out = xp.zeros((0, num_samples), dtype=np.int64) if not len(cdf) else \
                xp.stack([xp.searchsorted(c, draws, side="right") for c, draws in zip(cdf, u)])
        else:
            u = gen.rng.random(weights.shape)
            keys = -xp.log1p(-u) / xp.where(weights > 0, weights, 1.0)  # E / w
            keys = xp.where(weights > 0, keys, xp.inf)
            out = xp.argsort(keys, axis=1, kind="stable")[:, :num_samples]
        out = out.astype(np.int64, copy=False).reshape(
            (num_samples,) if input.ndim == 1 else (-1, num_samples))
    return _new(out, dev)


def _check_weights(op, xp, weights, shape) -> None:
    """Multinomial weights must be finite, >= 0, and not all zero in any row."""
    bad = ~(xp.isfinite(weights) & (weights >= 0))
    if bool(bad.any()):
        row = int(xp.nonzero(bad.any(axis=1))[0][0])
        raise RuntimeError(
            f"{op}: probability tensor contains either `inf`, `nan` or element < 0 (row {row} "
            f"of weights with shape {shape}). Weights must be finite and >= 0; they need not "
            "add up to 1")
    empty = weights.sum(axis=1) <= 0
    if bool(empty.any()):
        row = int(xp.nonzero(empty)[0][0])
        raise RuntimeError(
            f"{op}: invalid multinomial distribution (sum of probabilities <= 0): row {row} "
            f"of weights with shape {shape} has no positive weight, so there is nothing "
            "to draw")


@recorded
@factory_keywords()
def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False) -> Tensor:
    """Normal samples: ``normal(mean, std, size)`` for numbers, elementwise for tensors."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        if isinstance(std, Tensor) and std.numel() and bool((std < 0).any()):
            raise RuntimeError(f"normal expects all elements of std >= 0.0, got a std of "
                               f"shape {tuple(std.shape)} with negative entries. Fix: pass a "
                               "standard deviation (e.g. log_std.exp()), not a log or a variance")
        shape = np.broadcast_shapes(getattr(mean, "shape", ()), getattr(std, "shape", ()))
        noise = randn(*shape, generator=generator, dtype=ref.dtype, device=ref.device)
        return Normal.apply(mean, std, noise)
    if size is None:
        raise TypeError("normal: give size for float mean and std, e.g. normal(0, 1, (3,))")
    if std < 0:
        raise RuntimeError(f"normal: std must be >= 0, got {std}")
    z = randn(*_size((size,)), generator=generator, dtype=dtype, device=device)
    z._data *= std
    z._data += mean
    if requires_grad:
        z.requires_grad = True
    return z


class Normal(Function):
    """``mean + std · noise`` for tensor ``mean``/``std``: a draw, not a function of them.

    As in PyTorch, the sample is in the graph but sends mean and std exactly
    zero gradients (the reparameterised ``mean + std * randn_like(std)`` is
    what differentiates through the draw).
    """

    raw = True

    @staticmethod
    def forward(ctx, mean, std, noise):
        ctx.node_name = _NORMAL_NODE_NAMES[hasattr(mean, "shape"), hasattr(std, "shape")]
        return noise * std + mean

    @staticmethod
    def backward(ctx, grad):
        return tuple(None if shape is None else grad.new_zeros(shape)
                     for shape in ctx.input_shapes)

    @staticmethod
    def jvp(ctx, *tangents):
        """ẏ = 0: the draw doesn't move with its parameters."""
        return None


_NORMAL_NODE_NAMES = {(True, False): "NormalBackward1", (False, True): "NormalBackward2",
                      (True, True): "NormalBackward3"}


@recorded
@factory_keywords(like=True, out=False)
def rand_like(input: Tensor, *, dtype=None, device=None, requires_grad=False,
              generator=None) -> Tensor:
    return _like(rand, input, dtype, device, requires_grad, generator=generator)


@recorded
@factory_keywords(like=True, out=False)
def randn_like(input: Tensor, *, dtype=None, device=None, requires_grad=False,
               generator=None) -> Tensor:
    return _like(randn, input, dtype, device, requires_grad, generator=generator)


@recorded
@factory_keywords(like=True, out=False)
def randint_like(input: Tensor, low, high=None, *, dtype=None, device=None,
                 generator=None) -> Tensor:
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype,
                   device=device or input.device, generator=generator)
