"""Cutting out a range of a dim (``narrow``) and padding (``pad``): each is the other's backward.

``narrow`` keeps ``length`` values of one dim (a view), so its backward pads
the gradient with zeros back to the input's size: the values it dropped had
no effect. ``pad`` adds values that don't depend on the input (or, with
negative amounts, crops), so its backward crops the padding's gradient away,
and zero-fills where the input was cropped. Both backwards are one op,
``ConstantPadNd``: the constant pad itself, run with the amounts negated.

The other padding modes (reflect, replicate, circular) copy the input's own
values; they are composed from narrow, flip, expand and cat, so their
gradient comes from those ops with no formula of their own, and so does
their tangent in forward mode.
"""

from __future__ import annotations

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import wrap_dim, xp_for
from .joining import cat
from .reordering import flip

__all__ = ["narrow", "pad"]
TENSOR_METHODS = ["narrow"]  # pad is nn.functional.pad in PyTorch, not a Tensor method


class Narrow(Function):
    """``length`` values of dim ``dim`` from ``start`` (a view).

    Backward: the gradient padded with zeros back to the input's size.
    """

    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a, dim, start, length):
        ctx.pads = tuple((start, a.shape[d] - start - length) if d == dim else (0, 0)
                         for d in range(a.ndim))
        return a[(slice(None),) * dim + (slice(start, start + length),)]

    @staticmethod
    def backward(ctx, grad):
        return ConstantPadNd.apply(grad, ctx.pads, 0), None, None, None


def narrow(input, dim: int, start, length: int) -> Tensor:
    """The slice ``start:start+length`` of dim ``dim``, as a view (``x.narrow(0, 1, 2)``)."""
    if input.ndim == 0:
        raise RuntimeError("narrow: a 0-d tensor has no dim to narrow")
    dim = wrap_dim(dim, input.ndim, "narrow")
    size = input.shape[dim]
    start, length = int(start), int(length)
    if not -size <= start <= size:
        raise IndexError(f"narrow: start {start} is out of range for dim {dim} of size {size} "
                         f"(expected [{-size}, {size}])")
    if start < 0:
        start += size
    if length < 0 or start + length > size:
        raise RuntimeError(
            f"narrow: start ({start}) + length ({length}) exceeds dim {dim} of size {size} "
            f"(shape {tuple(input.shape)}); length must be in [0, {size - start}]")
    return Narrow.apply(input, dim, start, length)


class ConstantPadNd(Function):
    """Pad each dim with ``(before, after)`` copies of ``value``; negative amounts crop.

    Backward: pad the gradient by the negated amounts. That crops the padding
    away (padding values don't depend on the input) and puts zeros where the
    input was cropped (those values never reached the output).
    """

    raw = True
    supports_complex = True
    name = "constant_pad_nd"

    @staticmethod
    def forward(ctx, a, pads, value):
        ctx.pads = pads
        out_shape = tuple(s + b + e for s, (b, e) in zip(a.shape, pads))
        out = xp_for(a).full(out_shape, value, dtype=a.dtype)
        src, dst = [], []
        for s, (b, e) in zip(a.shape, pads):
            lo, hi = max(-b, 0), s - max(-e, 0)  # what survives cropping
            src.append(slice(lo, max(hi, lo)))
            dst.append(slice(max(b, 0), max(b, 0) + max(hi - lo, 0)))
        out[tuple(dst)] = a[tuple(src)]
        return out

    @staticmethod
    def backward(ctx, grad):
        return ConstantPadNd.apply(grad, tuple((-b, -e) for b, e in ctx.pads), 0), None, None

    @staticmethod
    def jvp(ctx, tangent, *_):
        """jvp: ẏ = pad(ẋ, pads, 0): the padding value is a constant, so its tangent is 0
        (the op is affine, not linear, so the "linear" shortcut would pad with value)."""
        return ConstantPadNd.apply(tangent, ctx.primals[1], 0)


PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode: str = "constant", value=None) -> Tensor:
    """Pad (or, with negative amounts, crop) the last dims of ``input``.

    ``pad`` lists ``(left, right)`` pairs starting from the LAST dim, as in
    PyTorch: ``(1, 2)`` pads the last dim with 1 before and 2 after;
    ``(1, 2, 3, 4)`` also pads the dim before it with 3 and 4. ``mode``:
    ``'constant'`` (``value``, 0 when None), ``'reflect'`` (mirror without the
    edge), ``'replicate'`` (repeat the edge) or ``'circular'`` (wrap around).
    Unlike PyTorch, the non-constant modes pad any number of dims.
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError(f"pad: the padding length ({len(pad)}) must be even: (left, right) "
                           f"pairs, last dim first, got {pad}")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(
            f"pad: {len(pad) // 2} pairs of padding for a tensor with {input.ndim} dims "
            f"(shape {tuple(input.shape)}); give at most one (left, right) pair per dim")
    if mode not in PAD_MODES:
        raise NotImplementedError(f"pad: mode must be one of {PAD_MODES}, got {mode!r}")
    pairs = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        pairs[input.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    for d, (s, (b, e)) in enumerate(zip(input.shape, pairs)):
        if s + b + e < 0:
            raise RuntimeError(f"pad: padding {(b, e)} of dim {d} (size {s}) leaves a negative "
                               f"size {s + b + e}; it can crop at most {s} values")
    if mode == "constant":
        return ConstantPadNd.apply(input, tuple(pairs), 0 if value is None else value)
    if value is not None:
        raise RuntimeError(f"pad: mode {mode!r} copies the input's own values and takes no "
                           f"value (got value={value}); use mode='constant' to pad with it")
    return _pad_with_copies(input, pairs, mode)


def _pad_with_copies(input, pairs, mode):
    """Reflect/replicate/circular padding, composed from narrow, flip, expand and cat."""
    out = input
    for d, (b, e) in enumerate(pairs):
        if b < 0 or e < 0:  # crop first, then pad what is left
            out = narrow(out, d, max(-b, 0), out.shape[d] - max(-b, 0) - max(-e, 0))
            b, e = max(b, 0), max(e, 0)
        if b == 0 and e == 0:
            continue
        n = out.shape[d]
        limit = {"reflect": n - 1, "circular": n, "replicate": None if n else 0}[mode]
        if limit is not None and max(b, e) > limit:
            raise RuntimeError(f"pad: {mode} padding of {max(b, e)} is too large for dim {d} "
                               f"of size {n} (at most {limit})")
        parts = [_pad_part(out, d, k, mode, before) for k, before in ((b, True), (e, False))]
        out = cat([p for p in (parts[0], out, parts[1]) if p is not None], d)
    return out


def _pad_part(x, d, k, mode, before):
    """The ``k`` values placed before (or after) ``x`` along dim ``d``."""
    if k == 0:
        return None
    n = x.shape[d]
    if mode == "reflect":
        return flip(narrow(x, d, 1 if before else n - 1 - k, k), d)
    if mode == "circular":
        return narrow(x, d, n - k if before else 0, k)
    edge = narrow(x, d, 0 if before else n - 1, 1)  # replicate
    return edge.expand(tuple(k if i == d else s for i, s in enumerate(x.shape)))
