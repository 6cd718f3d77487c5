"""``gradlab.gradient``: the derivative of sampled values, estimated by finite differences.

Not autograd: ``gradient(f)`` treats ``f`` as samples of a function on a grid
and estimates df/dx along each dim (NumPy's and PyTorch's ``gradient``):

* inside, the central difference, exact for quadratics. With even spacing h:
  ``(f[i+1] - f[i-1]) / 2h``; with coordinates, hl = x[i] − x[i−1] and
  hr = x[i+1] − x[i]:
  ``(hl²·f[i+1] − hr²·f[i−1] + (hr² − hl²)·f[i]) / (hl·hr·(hl + hr))``
* at the two edges a one-sided difference: ``edge_order=1`` the first-order
  ``(f[1] − f[0]) / h``; ``edge_order=2`` the second-order
  ``(−3f[0] + 4f[1] − f[2]) / 2h`` (and the matching formula for uneven spacing).

``spacing`` is one number for every dim, a list with one number (an even step)
or one 1-D tensor of coordinates per dim. The result is built from gradlab ops
(slices, products, ``cat``), so it is differentiable in the values and in the
coordinates.
"""

from __future__ import annotations

import numbers

from .. import dtypes as _dt
from ..tensor import Tensor
from . import joining
from ._util import wrap_dim

__all__ = ["gradient"]
TENSOR_METHODS: list = []  # torch.gradient only, no method


def _dims(input: Tensor, dim) -> tuple:
    if dim is None:
        return tuple(range(input.ndim))
    dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    wrapped = []
    for d in dims:
        if not -input.ndim <= d < input.ndim:
            raise IndexError(f"gradient: Dimension out of range (expected to be in range of "
                             f"[{-input.ndim}, {input.ndim - 1}], but got {d})")
        w = wrap_dim(d, input.ndim, "gradient")
        if w in wrapped:
            raise RuntimeError(f"gradient: dim {w} appears multiple times in the list of dims "
                               f"{list(dims)}")
        wrapped.append(w)
    return tuple(wrapped)


def _spacings(input: Tensor, spacing, dims: tuple, dim_given: bool) -> list:
    """One entry per dim: a Python number (an even step) or a 1-D coordinate tensor."""
    if isinstance(spacing, Tensor) and spacing.ndim == 0:
        spacing = spacing.item()
    if isinstance(spacing, numbers.Number):
        return [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        what = f"len(dim) = {len(dims)}" if dim_given else \
            f"'self.dim() = {input.ndim}', since dim argument was not given"
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a "
                           f"list of length equal to {what}, but got a list of length "
                           f"{len(spacing)}")
    out = []
    for s, d in zip(spacing, dims):
        if isinstance(s, Tensor):
            if s.ndim != 1:
                raise RuntimeError(f"torch.gradient expected each element of spacing to have one "
                                   f"dimension, but got an element with {s.ndim} dimensions! "
                                   f"(give one 1-D tensor of coordinates per dim)")
            if s.shape[0] != input.shape[d]:
                raise RuntimeError(f"gradient: the coordinates for dim {d} have {s.shape[0]} "
                                   f"values, but the input has {input.shape[d]} samples along "
                                   f"it (shape {tuple(input.shape)}); give one coordinate per "
                                   f"sample")
        out.append(s)
    return out


def _slice(f: Tensor, dim: int, start: int, stop: int) -> Tensor:
    """``f[start:stop]`` along ``dim``; a stop of 0 or less counts from the end (0: the end)."""
    n = f.shape[dim]
    start, stop = (n + start if start < 0 else start), (n + stop if stop <= 0 else stop)
    return f.narrow(dim, start, stop - start)


def _along(t: Tensor, dim: int, ndim: int) -> Tensor:
    """A 1-D tensor shaped to broadcast along ``dim`` of an ``ndim``-dim tensor."""
    shape = [1] * ndim
    shape[dim] = t.shape[0]
    return t.reshape(shape)


def _even(f: Tensor, dim: int, h, edge_order: int) -> Tensor:
    def at(i, j):
        return _slice(f, dim, i, j)

    inside = (at(2, 0) - at(0, -2)) / (2 * h)
    if edge_order == 1:
        first = (at(1, 2) - at(0, 1)) / h
        last = (at(-1, 0) - at(-2, -1)) / h
    else:
        first = (at(0, 1) * -1.5 + at(1, 2) * 2 - at(2, 3) * 0.5) / h
        last = (at(-3, -2) * 0.5 - at(-2, -1) * 2 + at(-1, 0) * 1.5) / h
    return joining.cat([first, inside, last], dim)


def _uneven(f: Tensor, dim: int, x: Tensor, edge_order: int) -> Tensor:
    def at(i, j):
        return _slice(f, dim, i, j)

    x = x.to(f.dtype)
    dx = x[1:] - x[:-1]
    hl, hr = _along(dx[:-1], dim, f.ndim), _along(dx[1:], dim, f.ndim)
    inside = (hl * hl * at(2, 0) - hr * hr * at(0, -2) + (hr * hr - hl * hl) * at(1, -1)) / \
        (hl * hr * (hl + hr))
    if edge_order == 1:
        first = (at(1, 2) - at(0, 1)) / dx[0]
        last = (at(-1, 0) - at(-2, -1)) / dx[-1]
    else:
        d1, d2 = dx[0], dx[1]
        first = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * at(0, 1) + (d1 + d2) / (d1 * d2) * at(1, 2)
                 - d1 / (d2 * (d1 + d2)) * at(2, 3))
        d1, d2 = dx[-2], dx[-1]
        last = (d2 / (d1 * (d1 + d2)) * at(-3, -2) - (d1 + d2) / (d1 * d2) * at(-2, -1)
                + (2 * d2 + d1) / (d2 * (d1 + d2)) * at(-1, 0))
    return joining.cat([first, inside, last], dim)


def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:
    """The estimated derivative of the samples ``input`` along each dim in ``dim`` (all by
    default): a tuple with one tensor per dim, each of ``input``'s shape. See the module
    docstring for the formulas."""
    if input.ndim == 0:
        raise IndexError("gradient: the input is 0-d (a single sample); there is nothing to "
                         "differentiate along. Fix: give it at least one dim of >= 2 samples")
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2, got "
                           f"edge_order={edge_order}")
    dims = _dims(input, dim)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(
                f"torch.gradient expected each dimension size to be at least edge_order+1: dim "
                f"{d} has {input.shape[d]} samples (shape {tuple(input.shape)}), edge_order="
                f"{edge_order} needs {edge_order + 1}")
    steps = _spacings(input, spacing, dims, dim is not None)
    f = input if input.dtype.is_floating_point else input.to(_dt.get_default_dtype())
    return tuple(_uneven(f, d, s, edge_order) if isinstance(s, Tensor) else
                 _even(f, d, s, edge_order) for d, s in zip(dims, steps))
