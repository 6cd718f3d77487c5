"""Sampling an image at arbitrary points: ``affine_grid`` and ``grid_sample``.

A spatial transformer warps an image by *asking* where each output pixel
comes from. ``affine_grid`` turns a batch of affine matrices θ into such a
grid of source points, and ``grid_sample`` reads the input there::

    grid[n, h, w] = θ[n] · (x_w, y_h, 1)          x, y in [-1, 1]: the image's extent
    out[n, c, h, w] = input[n, c] read at grid[n, h, w], interpolated

Coordinates are normalized: -1 is the left (top) edge and +1 the right
(bottom) edge, so one θ works at any resolution. With
``align_corners=True`` ±1 are the *centres* of the corner pixels; with
``False`` (the default) they are the outer edges of the corner pixels.

Reading at a point between pixels (``mode``):

    nearest   the pixel whose centre is nearest (ties to even, as PyTorch)
    bilinear  the 2 (2-D: 4, 3-D: 8) pixels around it, weighted by closeness
    bicubic   the 4 x 4 around it, Keys' cubic convolution (A = -0.75)

and for a point off the image (``padding_mode``): ``zeros`` reads zeros
there, ``border`` moves the point onto the nearest edge, ``reflection``
mirrors it back in at the edges (repeatedly, for points far outside).

Both ops are compositions of differentiable gradlab ops, so backward,
double backward and forward mode come for free: ``affine_grid`` is a
constant base grid times θᵀ; ``grid_sample`` computes per axis the integer
taps (a constant: no gradient flows into an index) and their weights (which
depend on the point, so the gradient w.r.t. the grid flows through them).
The taps of all axes become one flat position per (point, tap) into the
flattened image, with an off-image tap sent to a zero slot one past the end,
and one op, :class:`~._gather_weights.TapSum`, reads them all with a single
``take`` and sums value x weight; its backward scatter-adds into the input
with a single flat ``add.at`` and reads the taps again for the weights'
gradient. Where PyTorch's derivative is 0 (a point clipped onto a border,
taps read from outside with ``zeros``, any grid point with ``nearest``) the
gradient stops with ``where``, as PyTorch's.

Speed (forward + backward, one thread, best of 15, PyTorch 2.13 CPU in
brackets): (8, 3, 64, 64) sampled at (8, 64, 64, 2), align_corners=False,
bilinear/zeros 11.7 ms before (gather on an index expanded over channels,
its backward a multi-dimensional add.at) -> 4.6 ms (1.2); nearest 3.6 ->
1.7 (0.4); bicubic 46 -> 14-16 (4.6-6.4); 3-D (2, 3, 16, 16, 16) at 16³
points bilinear 8.8 -> 3.4 (1.2).

Non-finite grid points give what PyTorch's CPU kernels give: with ``zeros``
a NaN or ±inf coordinate reads no pixel, and its weights are NaN, so the
output is NaN (4-D input; 0 for 5-D, and with ``nearest``); ``border`` and
``reflection`` hold such a point on an edge (±inf on the edge it points to
with ``border``; NaN on pixel 0 for 4-D input, on the last for 5-D), with a
zero gradient. (PyTorch's 5-D backward treats such a point as
off the image, unlike its forward: gradlab sends its gradient to the pixel
the forward read.)

One known difference: at a point within a rounding error of a pixel centre
(a kink of the interpolation, where the derivative w.r.t. the grid is
one-sided), PyTorch's vectorized kernel computes the pixel coordinate with a
fused multiply-add, which NumPy lacks; the two may then round to different
sides and take the slope of different neighbouring cells. Values and the
gradient w.r.t. the input agree.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor
from ._gather_weights import TapGather, Taps, TapSum
from ._util import xp_for
from .creation import as_tensor, ones, tensor, zeros
from .joining import stack
from .linalg import matmul
from .selection import where

__all__: list[str] = []  # torch.affine_grid_generator, torch.grid_sampler: PyTorch internals
FUNCTIONAL = ["affine_grid", "grid_sample"]
TENSOR_METHODS: list = []

_MODES = ("bilinear", "nearest", "bicubic")
_PADDING_MODES = ("zeros", "border", "reflection")
_A = -0.75  # the cubic convolution's free parameter, PyTorch's (and OpenCV's) choice

_DEFAULT_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                    "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                    "old behavior is desired. See the documentation of grid_sample for details.")


def _align_corners(align_corners) -> bool:
    """None means False, with PyTorch's warning (its default changed in 1.3)."""
    if align_corners is None:
        warnings.warn(_DEFAULT_WARNING, UserWarning, stacklevel=3)
        return False
    if not isinstance(align_corners, (bool, np.bool_)):
        raise TypeError(f"grid_sampler(): argument 'align_corners' must be bool, not "
                        f"{type(align_corners).__name__}")
    return bool(align_corners)


# --- affine_grid: a constant base grid times θᵀ -------------------------------------------------

def _linspace_from_neg_one(steps: int, align_corners: bool, real) -> np.ndarray:
    """The normalized centres of ``steps`` pixels, in PyTorch's exact arithmetic.

    align_corners=True: -1 ... 1. False: the same shrunk by (n - 1)/n, so the outer
    pixel edges (not centres) sit at ±1. One pixel sits at 0.
    """
    if steps <= 1:
        return np.zeros(1, dtype=real)
    step = (real(1) - real(-1)) / real(steps - 1)
    i = np.arange(steps)
    half = steps // 2  # torch.linspace counts the second half back from the end
    values = np.where(i < half, real(-1) + step * i.astype(real),
                      real(1) - step * (steps - 1 - i).astype(real)).astype(real)
    if not align_corners:
        values = (values * real(steps - 1) / real(steps)).astype(real)
    return values


def _base_grid(spatial, align_corners: bool, real) -> np.ndarray:
    """(prod(spatial), d + 1) rows (x, y[, z], 1): x runs along the last dim (width)."""
    axes = [_linspace_from_neg_one(n, align_corners, real) for n in spatial]  # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")
    columns = [m.reshape(-1) for m in reversed(mesh)]  # x first, as grid_sample reads it
    return np.stack([*columns, np.ones_like(columns[0])], axis=-1)


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine maps: (N, H, W, 2) from θ (N, 2, 3) for size
    (N, C, H, W), or (N, D, H, W, 3) from θ (N, 3, 4) for size (N, C, D, H, W).

    grid = base · θᵀ, with base the normalized (x, y[, z], 1) of each output pixel.
    d grid / d θ: base (the gradient w.r.t. θ is gradᵀ · base, summed over pixels).
    """
    align_corners = _align_corners(align_corners)
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise NotImplementedError(
            f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}.")
    d = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (d, d + 1):
        raise ValueError(
            f"Expected a batch of {d}D affine matrices of shape Nx{d}x{d + 1} for size {size}. "
            f"Got {tuple(theta.shape)}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", UserWarning,
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(
            f"affine_grid: theta holds {theta.shape[0]} matrices but size {size} asks for a "
            f"batch of {size[0]}; size[0] must equal theta.shape[0] (pass input.shape)")
    real = np.float64 if theta.dtype is _dt.float64 else np.float32
    base = tensor(_base_grid(spatial, align_corners, real), dtype=theta.dtype,
                  device=theta.device)
    return matmul(base, theta.transpose(1, 2)).reshape(size[0], *spatial, d)


# --- grid_sample: where each point lands, per axis -----------------------------------------------

def _unnormalize(coord: Tensor, size: int, align_corners: bool, scalar: bool) -> Tensor:
    """From [-1, 1] to pixel units: -1 is pixel 0's centre (align_corners) or its outer edge.

    (Written as PyTorch's CPU kernels write it, so that a point that lands exactly on a
    pixel lands there bit for bit, and floor picks the same pixel.)
    """
    if scalar:  # 5-D input: PyTorch's scalar kernel
        if align_corners:
            return (coord + 1) / 2 * (size - 1)
        return ((coord + 1) * size - 1) / 2
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return (coord + 1) * (size / 2) - 0.5


def _clip(coord: Tensor, size: int, scalar: bool) -> Tensor:
    """Clamp into [0, size - 1] with PyTorch's derivative: 1 strictly inside, 0 on a border
    and beyond (so a point held at the border gets no gradient). A NaN lands where
    PyTorch's CPU kernels put it: on 0 (4-D input), on size - 1 (5-D: its scalar kernel)."""
    inside = (coord > 0) & (coord < size - 1)
    high = coord.detach() >= size - 1
    if scalar:
        high = high | coord.detach().isnan()
    high = high.to(coord.dtype) * (size - 1)  # size - 1 or 0
    return where(inside, coord, high)


def _reflect(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    """Mirror coord back into the image at its edges, as often as needed.

    The mirrors sit at pixel centres 0 and size - 1 (align_corners) or at the outer
    edges -½ and size - ½. Measured from the low mirror, the pattern repeats every
    two spans: e = |x - low| mod 2·span, and the point is e or 2·span - e, whichever
    is inside. d/dx = ±1 (the sign flips with each mirror crossed).
    """
    twice_span = 2 * (size - 1) if align_corners else 2 * size
    if twice_span == 0:  # one pixel, its centre the only point: everything lands on it
        never = zeros(coord.shape, dtype=_dt.bool, device=coord.device)
        return where(never, coord, 0.0)  # 0, with a zero gradient (the grid stays in the graph)
    low = 0.0 if align_corners else -0.5
    dist = (coord - low).abs()
    laps = (dist.detach() / twice_span).trunc()  # whole round trips: a constant
    extra = dist - laps * twice_span
    back = twice_span - extra
    return where(extra > back, back, extra) + low


def _pad(coord: Tensor, size: int, padding_mode: str, align_corners: bool, scalar: bool):
    if padding_mode == "border":
        return _clip(coord, size, scalar)
    if padding_mode == "reflection":
        return _clip(_reflect(coord, size, align_corners), size, scalar)
    return coord


def _cubic_weights(t: Tensor) -> list:
    """Keys' cubic convolution at distances 1 + t, t, 1 - t, 2 - t from the 4 taps."""
    def near(x):  # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _axis_taps(coord: Tensor, size: int, mode: str, padding_mode: str, align_corners: bool,
               scalar: bool):
    """The taps of one axis: (positions (N, k, P) float, constant; weights (N, k, P) or None).

    A weight depends on the point (that is the grid's gradient); a position doesn't.
    """
    x = _unnormalize(coord, size, align_corners, scalar)
    if mode == "bicubic":  # the point itself isn't padded: its 4 taps are
        x0 = x.detach().floor()
        taps = [_pad(x0 + k, size, padding_mode, align_corners, False) for k in (-1, 0, 1, 2)]
        return stack(taps, 1), stack(_cubic_weights(x - x0), 1)
    x = _pad(x, size, padding_mode, align_corners, scalar)
    if mode == "nearest":
        return x.detach().round().unsqueeze(1), None
    x0 = x.detach().floor()
    x1 = x0 + 1
    weights = [x1 - x, x - x0]
    if scalar:  # (5-D) a point off the image adds nothing, not NaN, to the other axes' gradient
        finite = x.detach().isfinite()
        weights = [where(finite, w, 0.0) for w in weights]
    return stack([x0, x1], 1), stack(weights, 1)


def _tap_index(axes: list, sizes, channels: int):
    """Every combination of the axes' taps as one flat position into the image (raw
    arrays; positions are constants): (Taps (N, k^d · P), valid (N, k^d, P) bool).

    A tap off the image (or not a number) gets position ``S`` = the image's size,
    which :class:`~._gather_weights.Taps` reads as 0 and drops in backward.
    """
    d = len(sizes)
    positions = [axis[0]._data for axis in axes]
    xp = xp_for(positions[0])
    n, points = positions[0].shape[0], positions[0].shape[-1]
    flat, valid, stride = None, None, 1
    for a in reversed(range(d)):  # last axis (width) is contiguous
        shape = [n] + [1] * d + [points]
        shape[1 + a] = positions[a].shape[1]
        pos = positions[a].reshape(shape)
        inside = (pos >= 0) & (pos <= sizes[a] - 1)  # False for NaN
        term = xp.where(inside, pos, 0).astype(xp.int64) * stride
        flat = term if flat is None else flat + term
        valid = inside if valid is None else valid & inside
        stride *= sizes[a]
    taps = int(np.prod(flat.shape[1:-1]))
    index = xp.where(valid, flat, stride).reshape(n, taps * points)
    return Taps(index, stride, channels), valid.reshape(n, taps, points)


def _combined_weights(axes: list) -> Tensor:
    """The product of the axes' tap weights, for every combination: (N, k^d, P)."""
    d = len(axes)
    total = None
    for a, (_, weight) in enumerate(axes):
        shape = [weight.shape[0]] + [1] * d + [weight.shape[-1]]
        shape[1 + a] = weight.shape[1]
        weight = weight.reshape(shape)
        total = weight if total is None else total * weight
    n, points = total.shape[0], total.shape[-1]
    return total.reshape(n, int(np.prod(total.shape[1:-1])), points)


def _check_sample_args(input, grid, mode: str, padding_mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    shapes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got {shapes}. Fix: add a batch dim with "
                           f"unsqueeze(0) to both")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got {shapes}")
    d = input.ndim - 2
    if grid.shape[-1] != d:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {d} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)} (one (x, y[, z]) point "
                           f"per output pixel for {input.ndim}-D input)")
    for dim in range(2, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {dim} being empty")
    if mode == "bicubic" and d != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.dtype.is_floating_point or not grid.dtype.is_floating_point:
        raise NotImplementedError(f"grid_sample: input and grid must be floating point, got "
                                  f"{input.dtype} and {grid.dtype}. Fix: convert with .float()")
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have the same dtype, "
                           f"but input has {input.dtype} and grid has {grid.dtype}. Fix: "
                           f"grid.to(input.dtype)")


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Read ``input`` (N, C, H, W) at the points ``grid`` (N, H_out, W_out, 2) gives, each
    (x, y) in [-1, 1]; or (N, C, D, H, W) at (N, D_out, H_out, W_out, 3) points (x, y, z).

    out = Σ_taps w(point) · input[tap]. d out / d input: w at each tap (scatter-added).
    d out / d point: Σ_taps input[tap] · dw/dpoint (0 for ``nearest``, and wherever
    the padding holds the point on a border).
    """
    _check_sample_args(input, grid, mode, padding_mode)
    align_corners = _align_corners(align_corners)
    n, d = input.shape[0], input.ndim - 2
    out_sizes = tuple(grid.shape[1:-1])
    points = grid.reshape(n, int(np.prod(out_sizes)), d)
    scalar = d == 3  # PyTorch's CPU kernel for 5-D input is scalar code, for 4-D vectorized
    axes = [_axis_taps(points[..., d - 1 - a], input.shape[2 + a], mode, padding_mode,
                       align_corners, scalar) for a in range(d)]  # axis a (D, H, W): z, y, x
    taps, valid = _tap_index(axes, input.shape[2:], input.shape[1])
    image = input.reshape(n, input.shape[1], int(np.prod(input.shape[2:])))
    if mode == "nearest":
        out = TapGather.apply(image, taps)
        if grid.requires_grad:
            # The output depends on the grid only through rounding (derivative 0), but
            # PyTorch keeps the grid in the graph, with a zero gradient: join it with a
            # where that never picks it.
            keep = ones(out.shape[:2] + (1,), dtype=_dt.bool, device=out.device)
            out = where(keep, out, points[:, None, :, 0])
    else:
        weights = _combined_weights(axes)
        if scalar:  # it skips a tap off the image (its weight may be NaN) rather than add 0·w
            weights = where(as_tensor(valid, device=input.device), weights, 0.0)
        out = TapSum.apply(image, weights, taps)
    return out.reshape(n, input.shape[1], *out_sizes)
