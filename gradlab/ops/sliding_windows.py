"""Sliding windows: ``F.unfold`` (im2col), ``F.fold`` (col2im) and ``Tensor.unfold``.

A window op copies values, it computes nothing: each output value IS one
input value (or zero padding). So the op is linear, and its backward is its
adjoint, which puts every gradient back where its value came from. Where
windows overlap, one input value went to several places; its gradient is
the SUM of theirs. That sum is exactly what the other op of the pair does::

    unfold   cols[n, (c, i, j), p] = x[n, c, row(p) + i·dh, col(p) + j·dw]   (copy out)
    fold     x[n, c, row(p) + i·dh, col(p) + j·dw] += cols[n, (c, i, j), p]  (add back)

``p`` runs over the window positions, row-major over the (Oh, Ow) grid, and
``row(p) = (p // Ow)·sh − ph``. ``fold`` is ``unfold``'s backward and
``unfold`` is ``fold``'s: two Functions, each the other's derivative, so
gradients of gradients come for free (as for ``narrow`` and ``pad``).
Note that ``fold(unfold(x))`` is not ``x``: each value comes back once per
window that covered it.

``Tensor.unfold(dim, size, step)`` is the 1-D form along any dim, and it
copies nothing: the windows are a strided view of the input (a window starts
``step`` values after the previous one). Its backward adds each window's
gradient back onto the values it viewed: one strided add per offset in the
window.

Both loops below run over offsets *inside* a window (kh·kw of them, or
``size``); each step moves the values at that offset for all windows at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import wrap_dim, xp_for

__all__: list[str] = []  # PyTorch has no torch.unfold / torch.fold: F.* and Tensor.unfold only
FUNCTIONAL = ["unfold", "fold"]
TENSOR_METHODS = [("unfold", "tensor_unfold")]


# --- F.unfold and F.fold: 2-D windows, in the (N, C·kh·kw, L) layout --------------------------

@dataclass(frozen=True)
class WindowGrid:
    """Where the windows of a 2-D image lie: ``size`` is the image's (H, W), ``blocks``
    the (Oh, Ow) grid of window positions. Fixed by shapes, not values."""

    size: tuple
    kernel: tuple
    dilation: tuple
    padding: tuple
    stride: tuple
    blocks: tuple

    @property
    def padded(self) -> tuple:
        return tuple(s + 2 * p for s, p in zip(self.size, self.padding))

    def offset(self, i: int, j: int) -> tuple:
        """The slices of the padded image that kernel offset (i, j) reads: one value per window."""
        (dh, dw), (sh, sw), (oh, ow) = self.dilation, self.stride, self.blocks
        return (slice(i * dh, i * dh + sh * (oh - 1) + 1, sh),
                slice(j * dw, j * dw + sw * (ow - 1) + 1, sw))


class Im2Col(Function):
    """Every kh×kw window of (N, C, H, W) as a column of (N, C·kh·kw, L).

    Backward: col2im of the gradient (adds each column back onto its window).
    """

    raw = True
    name = "im2col"
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, x, grid):
        xp = xp_for(x)
        n, c = x.shape[:2]
        (kh, kw), (oh, ow), (ph, pw) = grid.kernel, grid.blocks, grid.padding
        padded = x
        if ph or pw:
            padded = xp.zeros((n, c) + grid.padded, dtype=x.dtype)
            padded[:, :, ph:ph + x.shape[2], pw:pw + x.shape[3]] = x
        cols = xp.empty((n, c, kh, kw, oh, ow), dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                cols[:, :, i, j] = padded[(slice(None), slice(None)) + grid.offset(i, j)]
        ctx.grid = grid
        return cols.reshape(n, c * kh * kw, oh * ow)

    @staticmethod
    def backward(ctx, grad):
        return Col2Im.apply(grad, ctx.grid), None


class Col2Im(Function):
    """Add each column of (N, C·kh·kw, L) back onto its window of (N, C, H, W).

    Backward: im2col of the gradient (each column gets what its window's values got).
    """

    raw = True
    name = "col2im"
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, cols, grid):
        xp = xp_for(cols)
        (kh, kw), (oh, ow), (ph, pw) = grid.kernel, grid.blocks, grid.padding
        n, c = cols.shape[0], cols.shape[1] // (kh * kw)
        cols = cols.reshape(n, c, kh, kw, oh, ow)
        padded = xp.zeros((n, c) + grid.padded, dtype=cols.dtype)
        for i in range(kh):
            for j in range(kw):
                padded[(slice(None), slice(None)) + grid.offset(i, j)] += cols[:, :, i, j]
        ctx.grid = grid
        if ph or pw:  # values that landed on the padding belong to no pixel: dropped
            h, w = grid.size
            padded = xp.ascontiguousarray(padded[:, :, ph:ph + h, pw:pw + w])
        return padded

    @staticmethod
    def backward(ctx, grad):
        return Im2Col.apply(grad, ctx.grid), None


def _pair(op: str, name: str, value) -> tuple:
    """An int or a pair of ints as a pair; anything else is an error that says what's wanted."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * 2
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        return tuple(int(v) for v in value)
    raise TypeError(f"{op}: {name} must be an int or a pair of ints (height, width), "
                    f"got {value!r}")


def _window_grid(op: str, size, kernel_size, dilation, padding, stride) -> WindowGrid:
    """Check the window arguments and find the (Oh, Ow) grid of window positions."""
    kernel = _pair(op, "kernel_size", kernel_size)
    dilation = _pair(op, "dilation", dilation)
    padding = _pair(op, "padding", padding)
    stride = _pair(op, "stride", stride)
    for name, value in (("kernel_size", kernel), ("dilation", dilation), ("stride", stride)):
        if min(value) <= 0:
            raise RuntimeError(f"{op}: {name} must be positive, got {value}")
    if min(padding) < 0:
        raise RuntimeError(f"{op}: padding must be non-negative, got {padding}")
    blocks = []
    for d in range(2):
        span = dilation[d] * (kernel[d] - 1) + 1
        padded = size[d] + 2 * padding[d]
        if padded < span:
            raise RuntimeError(
                f"{op}: a window (kernel_size {kernel}, dilation {dilation}) spans {span} "
                f"along spatial dim {d}, more than the padded image's {padded} (size "
                f"{tuple(size)}, padding {padding}), so there are no windows. Fix: a smaller "
                f"kernel or dilation, or more padding")
        blocks.append((padded - span) // stride[d] + 1)
    return WindowGrid(tuple(size), kernel, dilation, padding, stride, tuple(blocks))


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """im2col: every sliding window of (N, C, H, W) as a column of (N, C·kh·kw, L).

    Rows run channel first, then kernel row, then kernel column; the L
    columns run row-major over the windows. Unbatched (C, H, W) gives
    (C·kh·kw, L). With a weight ``W`` of shape (out, C·kh·kw), ``W @ cols``
    is a convolution. Derivative: fold (overlapping windows add up).
    """
    if input.ndim not in (3, 4):
        raise RuntimeError(f"unfold: expected a 4-D (N, C, H, W) or unbatched 3-D (C, H, W) "
                           f"input, got shape {tuple(input.shape)} ({input.ndim}-D). For "
                           f"windows along one dim use Tensor.unfold(dim, size, step)")
    unbatched = input.ndim == 3
    if unbatched:
        input = input.unsqueeze(0)
    grid = _window_grid("unfold", input.shape[2:], kernel_size, dilation, padding, stride)
    out = Im2Col.apply(input, grid)
    return out.squeeze(0) if unbatched else out


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0,
         stride=1) -> Tensor:
    """col2im: add the columns of (N, C·kh·kw, L) back onto their windows of (N, C, H, W).

    ``output_size`` is (H, W). Where windows overlap their values add, so
    ``fold(unfold(x))`` is ``x`` times the number of windows covering each
    pixel. Unbatched (C·kh·kw, L) gives (C, H, W). Derivative: unfold.
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"fold: expected a 3-D (N, C·kh·kw, L) or unbatched 2-D "
                           f"(C·kh·kw, L) input, got shape {tuple(input.shape)} "
                           f"({input.ndim}-D)")
    unbatched = input.ndim == 2
    if unbatched:
        input = input.unsqueeze(0)
    size = _pair("fold", "output_size", output_size)
    grid = _window_grid("fold", size, kernel_size, dilation, padding, stride)
    (kh, kw), (oh, ow) = grid.kernel, grid.blocks
    rows, length = input.shape[1:]
    if rows % (kh * kw):
        raise RuntimeError(
            f"fold: dim 1 of the input (shape {tuple(input.shape)}) holds C·kh·kw values per "
            f"window, so it must be divisible by kh·kw = {kh * kw} (kernel {grid.kernel}), "
            f"got {rows}. Fix: check kernel_size, or unfold with the same kernel")
    if length != oh * ow:
        raise RuntimeError(
            f"fold: expected L = {oh * ow} windows for output_size {size}, kernel "
            f"{grid.kernel}, stride {grid.stride} (a {oh} x {ow} grid with padding "
            f"{grid.padding}, dilation {grid.dilation}), got {length} (input shape "
            f"{tuple(input.shape)}). Fix: pass the output_size and window arguments the "
            f"columns were unfolded with")
    out = Col2Im.apply(input, grid)
    return out.squeeze(0) if unbatched else out


# --- Tensor.unfold: 1-D windows along one dim, as a view --------------------------------------

def _windows_view(a, dim: int, size: int, step: int, count: int):
    """The ``count`` windows of ``a`` along ``dim`` as a strided view: ``dim`` becomes the
    window index (stride ``step`` values), a new last dim runs along a window."""
    shape = a.shape[:dim] + (count,) + a.shape[dim + 1:] + (size,)
    strides = a.strides[:dim] + (a.strides[dim] * step,) + a.strides[dim + 1:] + \
        (a.strides[dim],)
    owner = a if a.base is None else a.base
    if type(owner) is np.ndarray and owner.flags.c_contiguous:
        # Built on the memory's owner, so the view's ``base`` says which input it aliases
        # (as_strided would hide it behind a helper object).
        start = a.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        view = np.ndarray(shape, a.dtype, owner, start, strides)
    else:  # CuPy, or memory NumPy doesn't own: the generic strided view
        view = xp_for(a).lib.stride_tricks.as_strided(a, shape, strides)
        if view.base is not None and not hasattr(view.base, "shape"):
            view = view.copy()  # its base names no array: a copy is honest about aliasing
    if step < size and isinstance(view, np.ndarray):  # CuPy has no read-only arrays
        view.flags.writeable = False  # windows overlap: one write would land in several
    return view


class Unfold(Function):
    """All windows of ``size`` values along ``dim``, ``step`` apart (a view).

    Backward: ``unfold_backward``, which adds each window's gradient back onto
    the values it viewed (overlapping windows add up).
    """

    raw = True
    supports_complex = True  # linear: its backward needs no conj
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a, dim, size, step):
        ctx.window = (dim, size, step)
        return _windows_view(a, dim, size, step, (a.shape[dim] - size) // step + 1)

    @staticmethod
    def backward(ctx, grad):
        shape = ctx.input_shapes[0]
        return UnfoldBackward.apply(grad, shape, *ctx.window), None, None, None


class UnfoldBackward(Function):
    """Add windows (the shape ``Tensor.unfold`` made) back into a zero tensor of ``shape``.

    One strided add per offset ``k`` in a window: offset k of window w lands on
    value ``w·step + k``. Backward: ``unfold`` of the gradient.
    """

    raw = True
    supports_complex = True  # linear (istft's overlap-add)
    name = "unfold_backward"
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, grad, shape, dim, size, step):
        ctx.window = (dim, size, step)
        out = xp_for(grad).zeros(shape, dtype=grad.dtype)
        count = grad.shape[dim]
        lead = (slice(None),) * dim
        for k in range(size):
            out[lead + (slice(k, k + step * (count - 1) + 1, step),)] += grad[..., k]
        return out

    @staticmethod
    def backward(ctx, grad):
        return (Unfold.apply(grad, *ctx.window), None, None, None, None)


def tensor_unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``x.unfold(dim, size, step)``: every slice of ``size`` values along ``dim``, ``step``
    apart, as a view. ``dim`` becomes the window index ((n − size) // step + 1 of them), a
    new last dim of length ``size`` runs along each window. Derivative: the window
    gradients added back where they came from (overlaps add up).
    """
    size, step = int(size), int(step)
    if step <= 0:
        raise RuntimeError(f"unfold: step must be positive, got {step}")
    if size < 0:
        raise RuntimeError(f"unfold: size must be non-negative, got {size}")
    if input.ndim == 0:  # as in PyTorch: a 0-d tensor is one value, a window of size 0 or 1
        if size > 1:
            raise RuntimeError(f"unfold: a 0-d tensor holds one value, so the window size "
                               f"must be 0 or 1, got {size}")
        wrap_dim(dimension, 0, "unfold")
        return tensor_unfold(input.reshape(1), 0, size, step).reshape(size)
    dim = wrap_dim(dimension, input.ndim, "unfold")
    n = input.shape[dim]
    if size > n:
        raise RuntimeError(f"unfold: window size {size} is larger than dim {dim} of size {n} "
                           f"(shape {tuple(input.shape)}). Fix: a size of at most {n}")
    return Unfold.apply(input, dim, size, step)
