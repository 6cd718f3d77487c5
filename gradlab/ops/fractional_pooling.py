"""Fractional max pooling: fractional_max_pool2d/3d (Graham 2014, "Fractional Max-Pooling").

A max pool with stride 2 halves every side; stride 1 hardly shrinks it. Fractional
max pooling shrinks by any factor in between (say 1/√2), so a network can pool
gently many times over. Its windows all have the kernel's size ``k``, but their
starts step unevenly: along a dim of ``n`` inputs pooled to ``o`` outputs, with
``α = (n - k) / (o - 1)`` (at least 1) and a number ``u`` drawn from [0, 1)::

    start[i] = int((i + u)·α) - int(u·α)     for i < o - 1,       start[o - 1] = n - k

so consecutive starts differ by ⌊α⌋ or ⌈α⌉ in a pseudo-random pattern that ``u``
shifts, the first window starts at 0 and the last one ends at the input's end.
That is PyTorch's sequence, computed, as PyTorch computes it, in the input's own
dtype (float32 rounds ``(i + u)·α`` differently from float64) and truncated
toward zero. Each (sample, channel) plane draws its own ``u`` per dim:
``_random_samples`` of shape (N, C, 2) holds u for W then H; (N, C, 3) for T, H
then W. Pass the same samples to gradlab and PyTorch and the windows, values and
indices are the same; leave them out and they are drawn with ``rand``.

Forward: PyTorch's scan of a window, run for every window at once. Each window
is its first element's flat position (``base``, one per output) plus the
kernel's offsets (the same for all windows); one kernel offset at a time, the
values at ``base + offset`` are gathered and take over where greater than the
best so far, or NaN. So ties keep the first max in scan order, the last NaN
wins, and a window of -inf keeps its first position, as in PyTorch, and only
arrays of the output's size are ever made. ``return_indices`` gives the
winner's flat H·W (T·H·W) index, what ``max_unpool2d``/``3d`` take.

d/dx: each output's gradient added onto its winner (windows overlap when k
exceeds the step, so gradients add up): one flat scatter-add
(:class:`~._gather_weights.TapScatter`) whose own derivative is the gather at
the same positions, so double backward and forward mode come with it.

Speed (forward + backward, float32, output_ratio 0.5, one thread, best of 7;
PyTorch 2.13 CPU alongside): (8, 32, 64, 64) with k=3 19 ms (PyTorch 10);
(4, 8, 16, 32, 32) with k=2 5.4 ms (2.7). A first version that gathered whole
windows and took an argmax over them took 32 and 7.7 ms.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

from ..autograd.function import Function
from ..tensor import Tensor
from ._gather_weights import TapGather, Taps, TapScatter
from ._util import xp_for

__all__: list = []  # like PyTorch: only in nn.functional
FUNCTIONAL = ["fractional_max_pool2d", "fractional_max_pool3d",
              "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]
TENSOR_METHODS: list = []

_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}
_SAMPLE_OF_DIM = {2: (1, 0), 3: (0, 1, 2)}  # which of a plane's samples steers each dim


# --- the window sequence and the pool -----------------------------------------------------------

def _starts(xp, u, n: int, o: int, k: int):
    """Window starts (P, o) along a dim of ``n`` pooled to ``o`` by windows of ``k``, for the
    samples ``u`` (P,): PyTorch's sequence, in ``u``'s dtype (the input's)."""
    starts = xp.empty(u.shape + (o,), dtype=xp.int64)
    if o > 1:
        one = u.dtype.type
        alpha = one(n - k) / one(o - 1)
        i = xp.arange(o - 1, dtype=u.dtype)
        starts[:, :-1] = ((i + u[:, None]) * alpha).astype(xp.int64) \
            - (u * alpha).astype(xp.int64)[:, None]  # astype truncates toward 0, as C's cast
    if o > 0:
        starts[:, -1] = n - k
    return starts


def _scan_windows(xp, flat_x, base, offsets):
    """The max of every window and which kernel offset holds it: PyTorch's scan (a value
    takes over if greater than the best so far, or NaN), one offset at a time for all
    windows. ``base`` (any shape): each window's first position in ``flat_x``."""
    best = flat_x.take(base + offsets[0])
    won = xp.zeros(best.shape, dtype=xp.int32)
    for k in range(1, len(offsets)):
        candidate = flat_x.take(base + offsets[k])
        take = (candidate > best) | xp.isnan(candidate)
        best = xp.where(take, candidate, best)
        xp.copyto(won, k, where=take)
    return best, won


class Windows:
    """A fractional pool's windows: the starts (P, o_d) per spatial dim, and the kernel."""

    def __init__(self, starts: tuple, kernel: tuple) -> None:
        self.starts, self.kernel = starts, kernel


class FractionalMaxPool(Function):
    """The max of each window, and its flat index in the plane (non-differentiable).

    d/dx = each gradient added onto its window's winner (TapScatter); jvp: the input's
    tangent read at the winners.
    """

    raw = True

    @staticmethod
    def forward(ctx, x, windows):
        xp = xp_for(x)
        n, c, size = x.shape[0], x.shape[1], x.shape[2:]
        out_size = tuple(s.shape[1] for s in windows.starts)
        planes, volume, spatial = n * c, math.prod(size), len(size)
        strides = [math.prod(size[d + 1:]) for d in range(spatial)]  # of a plane, in elements
        base = xp.zeros((planes,) + out_size, dtype=xp.int64)  # each window's first position
        offsets = xp.zeros(windows.kernel, dtype=xp.int64)  # the kernel's, in scan order
        for d, (starts, stride) in enumerate(zip(windows.starts, strides)):
            base += (starts * stride).reshape((planes,) + (1,) * d + (out_size[d],)
                                              + (1,) * (spatial - d - 1))
            offsets += (xp.arange(windows.kernel[d]) * stride).reshape(
                (1,) * d + (-1,) + (1,) * (spatial - d - 1))
        offsets = offsets.reshape(-1)
        into_input = (xp.arange(planes) * volume).reshape((planes,) + (1,) * spatial)
        out, won = _scan_windows(xp, x.reshape(-1), base + into_input, offsets)
        flat = (base + offsets[won]).reshape(planes, math.prod(out_size))  # per plane
        if ctx.needs_input_grad:
            ctx.taps = Taps(flat, volume, 1)
            ctx.shapes = (tuple(x.shape), (n, c) + out_size)
        indices = flat.reshape((n, c) + out_size)
        ctx.mark_non_differentiable(indices)
        return out.reshape((n, c) + out_size), indices

    @staticmethod
    def backward(ctx, grad, *_grad_indices):
        in_shape, out_shape = ctx.shapes
        planes, outputs = in_shape[0] * in_shape[1], math.prod(out_shape[2:])
        return TapScatter.apply(grad.reshape(planes, 1, outputs), ctx.taps).reshape(in_shape), \
            None

    @staticmethod
    def jvp(ctx, t, *_):
        """jvp: ẏ = ẋ at each window's winner (the indices have no tangent)."""
        in_shape, out_shape = ctx.shapes
        planes, volume = in_shape[0] * in_shape[1], math.prod(in_shape[2:])
        return TapGather.apply(t.reshape(planes, 1, volume), ctx.taps).reshape(out_shape), None


class FractionalMaxPool2d(FractionalMaxPool):
    name, node_name = "fractional_max_pool2d", "FractionalMaxPool2DBackward0"


class FractionalMaxPool3d(FractionalMaxPool):
    name, node_name = "fractional_max_pool3d", "FractionalMaxPool3DBackward0"


# --- argument checks and the public functions ---------------------------------------------------

def _ints(op, value, spatial, what) -> tuple:
    """An int or ``spatial`` ints as a tuple (PyTorch raises RuntimeError for the wrong count)."""
    if isinstance(value, Integral) and not isinstance(value, bool):
        return (int(value),) * spatial
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(values) == 1:
        values *= spatial
    if len(values) != spatial or not all(isinstance(v, Integral) and not isinstance(v, bool)
                                         for v in values):
        raise RuntimeError(f"{op}: {what} must be an int or a tuple of {spatial} ints, got "
                           f"{value!r}")
    return tuple(int(v) for v in values)


def _check_input(op, input, spatial) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {type(input).__name__}")
    dims = ", ".join("THW"[3 - spatial:])
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"{op}: expected a {spatial + 1}-D (C, {dims}) or {spatial + 2}-D (N, C, {dims}) "
            f"input, got shape {tuple(input.shape)}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point input, got {input.dtype}. "
                           f"Fix: convert with .float()")
    if any(s == 0 for s in input.shape[-spatial - 1:]):
        raise RuntimeError(f"{op}: expected an input with non-zero size in every dim but the "
                           f"batch dim, got shape {tuple(input.shape)}")


def _output_size(op, input, kernel, output_size, output_ratio, spatial) -> tuple:
    """``output_size``, or ``int(size · ratio)`` per dim (PyTorch's rule); checked to fit."""
    size = tuple(input.shape[-spatial:])
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio "
                         f"(e.g. output_ratio=0.5 halves every side)")
    if output_size is None:
        ratios = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else \
            (output_ratio,)
        ratios = ratios * spatial if len(ratios) == 1 else ratios
        if len(ratios) != spatial or not all(isinstance(r, Real) for r in ratios):
            raise ValueError(f"{op}: output_ratio must be a number or a tuple of {spatial} "
                             f"numbers in (0, 1), got {output_ratio!r}")
        output_size = tuple(int(s * r) for s, r in zip(size, ratios))
    out = _ints(op, output_size, spatial, "output_size")
    spare = spatial == 3  # PyTorch's 3-D check wants one input to spare; its 2-D one does not
    for name, n, o, k in zip(_DIM_NAMES[spatial], size, out, kernel):
        if o < 0:
            raise RuntimeError(f"{op}: output_size must not be negative, got {out}")
        if o + k - 1 + spare > n:
            raise RuntimeError(
                f"{op}: pool {name} {k} too large relative to input {name} {n}: {o} windows "
                f"of {k} need an input {name} of at least {o + k - 1 + spare} (output + kernel "
                f"- 1{', + 1 in 3-D, as PyTorch checks it' if spare else ''}). Fix: use an "
                f"output size of at most {n - k + 1 - spare} or a smaller kernel_size")
    return out


def _samples(op, input, random_samples, batch, spatial):
    """The (N, C, spatial) samples in [0, 1): given (checked as PyTorch checks them) or drawn."""
    channels = input.shape[-spatial - 1]
    if random_samples is None:
        from .sampling import rand

        return rand(batch, channels, spatial, dtype=input.dtype, device=input.device)
    if not isinstance(random_samples, Tensor):
        raise TypeError(f"{op}: _random_samples must be a tensor, got "
                        f"{type(random_samples).__name__}")
    shape = tuple(random_samples.shape)
    want = f"(N={batch}, C={channels}, {spatial})"
    if random_samples.dtype is not input.dtype:
        raise RuntimeError(f"{op}: Expect _random_samples to have the same dtype as input: "
                           f"{random_samples.dtype} vs {input.dtype}. Fix: "
                           f"_random_samples.to(input.dtype)")
    if random_samples.ndim != 3:
        raise RuntimeError(f"{op}: Expect _random_samples to have 3 dimensions {want}, got "
                           f"shape {shape}")
    if shape[0] < batch or shape[1] != channels or shape[2] != spatial:
        raise RuntimeError(f"{op}: _random_samples of shape {shape} don't fit an input of shape "
                           f"{tuple(input.shape)}: expected {want}, one sample per dim for "
                           f"each (batch, channel) plane (extra batch rows are ignored)")
    if random_samples.device != input.device:
        raise RuntimeError(f"{op}: input is on {input.device} but _random_samples on "
                           f"{random_samples.device}. Fix: _random_samples.to(input.device)")
    return random_samples[:batch]


def _fractional_max_pool(fn, op, spatial, input, kernel_size, output_size, output_ratio,
                         random_samples):
    """(values, indices) of a fractional max pool; an unbatched input gets a batch dim."""
    _check_input(op, input, spatial)
    kernel = _ints(op, kernel_size, spatial, "kernel_size")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"{op}: kernel_size must be positive, got {kernel}")
    out = _output_size(op, input, kernel, output_size, output_ratio, spatial)
    unbatched = input.ndim == spatial + 1
    x = input.unsqueeze(0) if unbatched else input
    samples = _samples(op, input, random_samples, x.shape[0], spatial)._data
    xp = xp_for(samples)
    u = samples.reshape(-1, spatial)  # (planes, spatial)
    starts = tuple(_starts(xp, xp.ascontiguousarray(u[:, _SAMPLE_OF_DIM[spatial][d]]), n, o, k)
                   for d, (n, o, k) in enumerate(zip(x.shape[2:], out, kernel)))
    if any(s.size and (int(s.min()) < 0 or int(s.max()) > n - k)
           for s, n, k in zip(starts, x.shape[2:], kernel)):
        raise RuntimeError(f"{op}: _random_samples put a window outside the input: the "
                           f"samples must lie in [0, 1) (rand draws them so)")
    values, indices = fn.apply(x, Windows(starts, kernel))
    return (values.squeeze(0), indices.squeeze(0)) if unbatched else (values, indices)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """(values, indices) of :func:`fractional_max_pool2d`, whatever ``return_indices``."""
    return _fractional_max_pool(FractionalMaxPool2d, "fractional_max_pool2d", 2, input,
                                kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Max over kH x kW windows of (N, C, H, W) whose starts step pseudo-randomly, so the
    output is ``output_size`` (or ``output_ratio`` x the input's size, e.g. 0.7).

    ``_random_samples`` (N, C, 2) in [0, 1): the u of W and H for each plane (drawn with
    rand when not given). With ``return_indices``, also each max's flat H·W index.
    """
    values, indices = fractional_max_pool2d_with_indices(input, kernel_size, output_size,
                                                         output_ratio, True, _random_samples)
    return (values, indices) if return_indices else values


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """(values, indices) of :func:`fractional_max_pool3d`, whatever ``return_indices``."""
    return _fractional_max_pool(FractionalMaxPool3d, "fractional_max_pool3d", 3, input,
                                kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Max over kT x kH x kW windows of (N, C, T, H, W) with pseudo-random steps, so the
    output is ``output_size`` (or ``output_ratio`` x the input's size).

    ``_random_samples`` (N, C, 3) in [0, 1): the u of T, H and W for each plane. With
    ``return_indices``, also each max's flat T·H·W index.
    """
    values, indices = fractional_max_pool3d_with_indices(input, kernel_size, output_size,
                                                         output_ratio, True, _random_samples)
    return (values, indices) if return_indices else values
