"""im2col and col2im: a convolution as one matrix product, on raw arrays.

A convolution's output pixel is a dot product of the kernel with one window
of the input. ``unfold`` (im2col) copies every window into a column, so that
all output pixels come out of ONE matrix product::

    cols[n, (c, i, j), p] = x_padded[n, c, row(p) + i·dh, col(p) + j·dw]
    out[n, o, p]          = Σ_(c,i,j) W[o, (c, i, j)] · cols[n, (c, i, j), p]

The windows are first a strided *view* of the padded input (no copy: each
window starts ``stride`` elements after the previous one and its elements
are ``dilation`` apart), then one reshape copies them into the column matrix.

``fold`` (col2im) is unfold's adjoint: it adds each column back onto the
window it came from. Windows overlap, so values add up; it takes one
vectorised add per kernel offset (i, j).

The wide grid. With stride 1, output pixel ``p = (r, c)`` reads input
``(r + i·dh, c + j·dw)``; in the flat padded plane that is ``r·Wp + c`` plus
a fixed offset per (i, j). If the output grid is made as wide as the padded
input (``Wp`` columns instead of ``Ow``), the windows for one (i, j) are one
contiguous run of ``Oh·Wp`` values: the copy (and col2im's adds) move long
runs instead of short rows. The extra ``Wp - Ow`` columns per row are junk:
forward drops them, backward sets their gradient to zero first.

Everything here is 2-D (``H, W``); 1-D convolutions run with ``H = 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ConvGeometry", "unfold", "fold", "grid", "crop_grid"]


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
    def wide(self) -> bool:
        """Stride 1: windows of one kernel offset form one contiguous run (see module doc)."""
        return self.stride == (1, 1)

    @property
    def grid_width(self) -> int:
        return self.padded[1] if self.wide else self.out_size[1]

    @property
    def spare(self) -> int:
        """Elements read past the last plane by the wide grid's junk columns."""
        return (self.kernel[1] - 1) * self.dilation[1] if self.wide else 0


def _buffer(xp, shape, dtype, geo: ConvGeometry):
    """A zeroed flat buffer of N·C padded planes (plus the wide grid's spare tail)."""
    n, c = shape
    hp, wp = geo.padded
    flat = xp.zeros(n * c * hp * wp + geo.spare, dtype=dtype)
    return flat, flat[:n * c * hp * wp].reshape(n, c, hp, wp)


def _windows(xp, flat, n, c, geo: ConvGeometry, offset=0, kernel=True):
    """Strided view of the windows in a flat padded buffer.

    kernel=True: (N, C, kh, kw, Oh, Wg), every window of every offset;
    kernel=False: (N, C, Oh, Wg), the window elements at one offset.
    """
    hp, wp = geo.padded
    s = flat.itemsize
    plane = (c * hp * wp * s, hp * wp * s)
    step = (geo.stride[0] * wp * s, geo.stride[1] * s)
    oh, wg = geo.out_size[0], geo.grid_width
    as_strided = xp.lib.stride_tricks.as_strided
    if kernel:
        kh, kw = geo.kernel
        dh, dw = geo.dilation
        return as_strided(flat, (n, c, kh, kw, oh, wg), plane + (dh * wp * s, dw * s) + step)
    return as_strided(flat[offset:], (n, c, oh, wg), plane + step)


def unfold(xp, x, geo: ConvGeometry):
    """im2col: the windows of ``x`` (N, C, H, W) as columns (N, groups, C/groups·kh·kw, Oh·Wg).

    One copy of the input into a padded buffer, one copy of the windows
    (the reshape of a strided view).
    """
    n, c = x.shape[:2]
    (pt, _), (pl, _) = geo.pads
    h, w = geo.in_size
    flat, planes = _buffer(xp, (n, c), x.dtype, geo)
    planes[:, :, pt:pt + h, pl:pl + w] = x
    g = geo.groups
    cols = _windows(xp, flat, n, c, geo)
    return cols.reshape(n, g, c // g * geo.kernel[0] * geo.kernel[1], -1)


def fold(xp, cols, channels: int, geo: ConvGeometry):
    """col2im, unfold's adjoint: add each column back onto its window; (N, C, H, W).

    One vectorised add per kernel offset (i, j), into the padded buffer; the
    padding is cropped at the end (its gradient is dropped).
    """
    n = cols.shape[0]
    kh, kw = geo.kernel
    dh, dw = geo.dilation
    oh, wg = geo.out_size[0], geo.grid_width
    hp, wp = geo.padded
    cols = cols.reshape(n, channels, kh, kw, oh, wg)
    flat, planes = _buffer(xp, (n, channels), cols.dtype, geo)
    for i in range(kh):
        for j in range(kw):
            target = _windows(xp, flat, n, channels, geo, offset=i * dh * wp + j * dw,
                              kernel=False)
            target += cols[:, :, i, j]
    (pt, _), (pl, _) = geo.pads
    h, w = geo.in_size
    return xp.ascontiguousarray(planes[:, :, pt:pt + h, pl:pl + w])


def grid(xp, y, geo: ConvGeometry):
    """An output-shaped array (N, C, Oh, Ow) on the output grid: (N, groups, C/groups, Oh·Wg).

    On the wide grid the junk columns are zero, so they add nothing to a
    weight gradient and nothing in col2im.
    """
    n, c, oh, ow = y.shape
    wg = geo.grid_width
    if wg != ow:
        wide = xp.zeros((n, c, oh, wg), dtype=y.dtype)
        wide[..., :ow] = y
        y = wide
    return y.reshape(n, geo.groups, c // geo.groups, oh * wg)


def crop_grid(xp, out, channels: int, geo: ConvGeometry, bias=None):
    """The output (N, C, Oh, Ow) from the grid (N, ..., Oh·Wg), with the bias added."""
    n = out.shape[0]
    oh, ow = geo.out_size
    out = out.reshape(n, channels, oh, geo.grid_width)
    if geo.grid_width != ow:
        view = out[..., :ow]
        out = xp.empty(view.shape, dtype=out.dtype)
        if bias is None:
            out[...] = view
        else:
            xp.add(view, bias.reshape(-1, 1, 1), out=out)
        return out
    if bias is not None:
        out += bias.reshape(-1, 1, 1)
    return out
