"""im2col and col2im: a convolution as ONE matrix product, on raw arrays.

A convolution's output pixel is a dot product of the kernel with one window
of the input. ``unfold`` (im2col) copies every window into a column, so that
every output pixel of every sample comes out of one 2-D matrix product::

    cols[(c, i, j), (p, n)] = x[n, c, row(p) + i·dh, col(p) + j·dw]     (zero padded)
    out[o, (p, n)]          = Σ_(c,i,j) W[o, (c, i, j)] · cols[(c, i, j), (p, n)]

Batch last. The columns hold the batch index ``n`` as their fastest axis:
the input is first transposed to (C, H, W, N), where one row of pixels of
all N samples is a single contiguous run. Then, for stride 1, the windows
at one kernel offset (i, j) are runs of ``Ow·N`` contiguous values, so the
copy into columns (and col2im's adds) move long runs instead of rows of a
few pixels; the matrix product is one big GEMM instead of N small ones.
The price is a transpose of the input, of the output (``out`` is laid out
(C_out, Oh, Ow, N)) and of the output gradient: each moves N·C·H·W values,
far fewer than the C·kh·kw·Oh·Ow·N in the columns.

``fold`` (col2im) is unfold's adjoint: it adds each column back onto the
window it came from. Windows overlap, so values add up; it takes one
vectorised add per kernel row ``i``, then one per kernel column ``j``,
the first of each copied in rather than added onto zeros.

What bounds the speed, measured on LeNet-5 (batch 64, one thread): these
arrays (the columns of the first layer are 3.7 MB) outgrow the 2 MB L2
cache, so every pass over them runs at memory speed (~25 GB/s here, a
float32 add of 221K values takes 95 µs, 4.5 µs at 32K), and an
elementwise op pays ~0.15 µs per row it walks: a (48, 512) slice adds 3x
slower than 24K contiguous values. So the rule is fewer passes and longer
runs. Tried and dropped (no clear win, same process, best of many):
batch-first columns (N, C·kh·kw, pixels): no output transpose and faster
per-sample products, but unfold copies runs of Ow values (8 on LeNet's
second layer): 430-510 µs instead of 130-200; "wide" batch-first columns
(runs of whole image rows, the Wp - Ow extra columns cropped after):
1.2-1.5x the product and a slow crop; unfold + product in blocks of
output rows to stay in L2 (the weight gradient then unfolds again: up to
2x slower); per-kernel-offset products added into the input gradient
(747 vs 640 µs: 25 strided adds); other transpose block sizes (128 rows
is best, 110 µs for the first layer's output).

Everything here is 2-D (``H, W``); 1-D convolutions run with ``H = 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .linalg import host_operands

__all__ = ["ConvGeometry", "unfold", "fold", "grid", "from_grid", "product", "product_t"]

_TILE = 128  # rows per block of a transpose: a block of both arrays stays in the L1 cache
_COLUMNS = 256  # columns per block of a product: a block of columns stays in the L1/L2 cache
_SUM_COLUMNS = 512  # columns per block of a product that sums over them


@dataclass(frozen=True)
class ConvGeometry:
    """Where every window of a 2-D convolution lies; fixed by shapes, not values.

    ``in_size`` is the convolution's input (for a transposed convolution: its
    output), ``pads`` the ``(before, after)`` zeros of each dim, ``out_size``
    the output grid. ``spatial`` is 1 or 2: the caller's number of spatial
    dims (a 1-D convolution is a 2-D one with ``H = 1``).
    """

    in_size: tuple
    kernel: tuple
    stride: tuple
    pads: tuple
    dilation: tuple
    groups: int
    out_size: tuple
    spatial: int = 2

    @property
    def padded(self) -> tuple:
        return tuple(n + b + e for n, (b, e) in zip(self.in_size, self.pads))

    @property
    def pixels(self) -> int:
        return self.out_size[0] * self.out_size[1]


def batch_first(xp, a):
    """A (R, N) array as a contiguous (N, R) one: a transpose, copied block by block.

    A plain copy reads ``a`` with a stride of N elements per value and walks
    out of the cache; blocks of rows keep both sides of the copy cached. The
    number of blocks is capped, so that a GPU launches few copies.
    """
    rows, n = a.shape
    tile = max(_TILE, -(-rows // 32))
    if tile >= rows:
        return xp.ascontiguousarray(a.T)
    out = xp.empty((n, rows), dtype=a.dtype)
    for start in range(0, rows, tile):
        out[:, start:start + tile] = a[start:start + tile].T
    return out


def _in_blocks(a, block: int):
    """(..., R, L) as (..., L // block, R, block): the first whole blocks of columns (a view)."""
    whole = a.shape[-1] // block
    cut = a[..., :whole * block].reshape(a.shape[:-1] + (whole, block))
    return cut.swapaxes(-2, -3)


def product(xp, a, b):
    """``a @ b`` for (g, M, K) by (g, K, L), as a batch of products of blocks of columns.

    The columns are long (L = pixels · batch) and M, K small. OpenBLAS runs
    such skinny shapes far below its speed on square ones (up to 2x slower
    measured on LeNet's); one batched call on blocks of ``_COLUMNS`` columns
    keeps each block in the cache, its loop over blocks in C, not Python.
    """
    dtype, (a, b) = a.dtype, host_operands(a, b)  # NumPy half floats: multiplied in float32
    length = b.shape[-1]
    whole = length // _COLUMNS * _COLUMNS
    if whole == 0:
        return xp.matmul(a, b).astype(dtype, copy=False)
    out = xp.empty(a.shape[:-1] + (length,), dtype=a.dtype)
    xp.matmul(a[..., None, :, :], _in_blocks(b, _COLUMNS), out=_in_blocks(out, _COLUMNS))
    if whole < length:
        xp.matmul(a, b[..., whole:], out=out[..., whole:])
    return out.astype(dtype, copy=False)


def product_t(xp, a, b):
    """``a @ bᵀ`` for (g, M, L) by (g, N, L): a sum over the long axis L, block by block.

    One product per block of ``_SUM_COLUMNS`` columns (one batched call), then
    the sum of the partial products.
    """
    dtype, (a, b) = a.dtype, host_operands(a, b)
    length = b.shape[-1]
    whole = length // _SUM_COLUMNS * _SUM_COLUMNS
    if whole == 0:
        return xp.matmul(a, b.swapaxes(-1, -2)).astype(dtype, copy=False)
    out = xp.matmul(_in_blocks(a, _SUM_COLUMNS),
                    _in_blocks(b, _SUM_COLUMNS).swapaxes(-1, -2)).sum(-3)
    if whole < length:
        out += xp.matmul(a[..., whole:], b[..., whole:].swapaxes(-1, -2))
    return out.astype(dtype, copy=False)


def _padded_batch_last(xp, x, geo: ConvGeometry):
    """``x`` (N, C, H, W) as a zero-padded (C, Hp, Wp, N) array (no copy if it already is one)."""
    n, c = x.shape[:2]
    (pt, pb), (pl, pr) = geo.pads
    if pt == pb == pl == pr == 0:
        return xp.ascontiguousarray(x.transpose(1, 2, 3, 0))
    h, w = geo.in_size
    hp, wp = geo.padded
    buf = xp.zeros((c, hp, wp, n), dtype=x.dtype)
    buf[:, pt:pt + h, pl:pl + w] = x.transpose(1, 2, 3, 0)
    return buf


def _offset_slices(geo: ConvGeometry, i: int, j: int) -> tuple:
    """The (H, W) slices of the padded input that kernel offset (i, j) reads, one per pixel."""
    (sh, sw), (dh, dw), (oh, ow) = geo.stride, geo.dilation, geo.out_size
    return (slice(i * dh, i * dh + sh * (oh - 1) + 1, sh),
            slice(j * dw, j * dw + sw * (ow - 1) + 1, sw))


def unfold(xp, x, geo: ConvGeometry):
    """im2col: the windows of ``x`` (N, C, H, W) as columns (groups, C/groups·kh·kw, Oh·Ow·N).

    The windows are a strided *view* of the padded batch-last input (no
    copy: a window starts ``stride`` pixels after the previous one, its
    elements lie ``dilation`` apart); one reshape copies them into columns.
    """
    buf = _padded_batch_last(xp, x, geo)
    c, _, _, n = buf.shape
    kh, kw = geo.kernel
    (sh, sw), (dh, dw) = geo.stride, geo.dilation
    s_c, s_h, s_w, s_n = buf.strides
    windows = xp.lib.stride_tricks.as_strided(
        buf, (c, kh, kw) + tuple(geo.out_size) + (n,),
        (s_c, dh * s_h, dw * s_w, sh * s_h, sw * s_w, s_n))
    return windows.reshape(geo.groups, c // geo.groups * kh * kw, geo.pixels * n)


def fold(xp, cols, channels: int, geo: ConvGeometry):
    """col2im, unfold's adjoint: add each column back onto its window; (N, C, H, W).

    Separable, like the windows: first the kernel rows ``i`` are added onto
    the input rows (kh adds of whole (Oh, Ow·N) blocks, contiguous for
    stride 1), then the kernel columns ``j`` onto the input columns (kw
    adds of runs of Ow·N). Two short loops of long runs instead of kh·kw
    adds of short ones. Last, the padding is cropped (its gradient is
    dropped) and the batch moved first.
    """
    kh, kw = geo.kernel
    hp, wp = geo.padded
    oh, ow = geo.out_size
    n = cols.shape[-1] // geo.pixels
    cols = cols.reshape((channels, kh, kw, oh, ow, n))
    rows = _first_then_add(xp, (channels, kw, hp, ow, n), cols.dtype, 2,
                           [(_offset_slices(geo, i, 0)[0], cols[:, i]) for i in range(kh)])
    buf = _first_then_add(xp, (channels, hp, wp, n), cols.dtype, 2,   # Σ over j
                          [(_offset_slices(geo, 0, j)[1], rows[:, j]) for j in range(kw)])
    (pt, _), (pl, _) = geo.pads
    h, w = geo.in_size
    if (h, w) != (hp, wp):
        buf = buf[:, pt:pt + h, pl:pl + w]
    return batch_first(xp, buf.reshape(-1, n)).reshape(n, channels, h, w)


def _first_then_add(xp, shape, dtype, axis: int, parts):
    """Σ of ``parts`` (a slice along ``axis``, values), each added onto its slice of a new array.

    The first part starts at 0; with stride 1 it covers one block, which is
    copied in, and only the rest is zeroed: one pass over the array fewer
    than zeros followed by one add per part (fold measured 425 → 306 µs on
    LeNet's second convolution).
    """
    lead = (slice(None),) * axis
    first, values = parts[0]
    if first.step != 1:  # strided windows leave gaps: start from zeros
        out = xp.zeros(shape, dtype=dtype)
        parts = [(first, values)] + parts[1:]
    else:
        out = xp.empty(shape, dtype=dtype)
        out[lead + (first,)] = values
        out[lead + (slice(first.stop, None),)] = 0
        parts = parts[1:]
    for where, part in parts:
        out[lead + (where,)] += part
    return out


def grid(xp, y, geo: ConvGeometry):
    """An output-shaped array (N, C, Oh, Ow) as columns (groups, C/groups, Oh·Ow·N), batch last."""
    n, c = y.shape[:2]
    return xp.ascontiguousarray(y.reshape(n, -1).T).reshape(geo.groups, c // geo.groups, -1)


def from_grid(xp, out, channels: int, geo: ConvGeometry, bias=None):
    """The output (N, C, Oh, Ow) from the columns (..., Oh·Ow·N), with the bias added."""
    out = out.reshape(channels, -1)
    if bias is not None:
        out += bias.reshape(-1, 1)  # before the transpose: a broadcast along contiguous rows
    n = out.shape[1] // geo.pixels
    return batch_first(xp, out.reshape(-1, n)).reshape((n, channels) + tuple(geo.out_size))
