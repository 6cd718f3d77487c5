"""Small setting-only layers: the padding layers, Threshold, Softmax2d and the two distances.

Each is a thin Module around one op in ``gradlab.nn.functional``; like the
activation layers, it holds the op's settings so they print in the model's
repr (``ZeroPad2d((1, 1, 2, 0))``). None has parameters or buffers.

Padding amounts are ``(left, right)`` pairs starting from the LAST dim, as
``F.pad`` takes them: ``ZeroPad2d((1, 2, 3, 4))`` pads the width with 1 and 2
and the height with 3 and 4. An int pads every side by the same amount.
"""

from __future__ import annotations

import numbers

from ...ops.activation import threshold
from ...ops.padding import pad
from ...ops.products import cosine_similarity, pairwise_distance
from ...ops.softmax_family import softmax
from ...tensor import Tensor
from .module import Module

__all__ = ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d", "Threshold", "Softmax2d", "CosineSimilarity",
           "PairwiseDistance"]

_SIDES = ("left", "right", "top", "bottom", "front", "back")


def _padding_tuple(layer: str, padding, dims: int) -> tuple[int, ...]:
    """``padding`` as ``2·dims`` ints: an int repeats on every side, a sequence is kept."""
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        return (int(padding),) * (2 * dims)
    sides = ", ".join(_SIDES[:2 * dims])
    try:
        amounts = tuple(padding)
    except TypeError:
        raise TypeError(f"{layer}: padding must be an int or a tuple of {2 * dims} ints "
                        f"({sides}), got {padding!r}") from None
    if len(amounts) != 2 * dims or not all(
            isinstance(p, numbers.Integral) and not isinstance(p, bool) for p in amounts):
        raise ValueError(f"{layer}: padding must be an int or a tuple of {2 * dims} ints "
                         f"({sides}), got {padding!r}")
    return tuple(int(p) for p in amounts)


class _PadNd(Module):
    """Pads the last ``dims`` dims with ``F.pad(input, padding, mode)``."""

    dims: int
    mode: str

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _padding_tuple(type(self).__name__, padding, self.dims)

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CopyPadNd(_PadNd):
    """Reflect/replicate/circular padding: like PyTorch, these take only an unbatched
    (C, *spatial) or batched (N, C, *spatial) input, never a bare spatial one."""

    def forward(self, input: Tensor) -> Tensor:
        n = self.dims
        if input.ndim not in (n + 1, n + 2):
            layer, shape = type(self).__name__, tuple(input.shape)
            spatial = ("L",) if n == 1 else ("H", "W") if n == 2 else ("D", "H", "W")
            hint = ("add a channel dim with x.unsqueeze(0)" if input.ndim == n else
                    "fold the extra leading dims into the batch with x.flatten(0, "
                    f"{input.ndim - n - 2})" if input.ndim > n + 2 else
                    f"it pads {n} dims, so the input needs at least {n + 1}")
            message = (f"{layer}: expected a {n + 1}-D (C, {', '.join(spatial)}) or "
                       f"{n + 2}-D (N, C, {', '.join(spatial)}) input, got {input.ndim}-D input "
                       f"of shape {shape}; {hint}")
            # PyTorch's error types: too few dims is a RuntimeError for reflect and
            # replicate (from F.pad), any wrong rank a ValueError for circular
            if self.mode == "circular":
                raise ValueError(message)
            raise RuntimeError(message) if input.ndim < n else NotImplementedError(message)
        return super().forward(input)


class _ConstantPadNd(_PadNd):
    """Pads with copies of ``value``."""

    mode = "constant"

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``: padding (left, right)."""

    dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with ``value``: padding (left, right, top, bottom)."""

    dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with ``value``: padding (left, right, top, bottom, front, back)."""

    dims = 3


class _ZeroPadNd(_ConstantPadNd):
    """Pads with zeros (a ConstantPad with value 0, as in PyTorch)."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pads the last dim with zeros: padding (left, right)."""

    dims = 1


class ZeroPad2d(_ZeroPadNd):
    """Pads the last 2 dims with zeros: padding (left, right, top, bottom)."""

    dims = 2


class ZeroPad3d(_ZeroPadNd):
    """Pads the last 3 dims with zeros: padding (left, right, top, bottom, front, back)."""

    dims = 3


class ReflectionPad1d(_CopyPadNd):
    """Mirrors the input at its edges, without repeating the edge: [1 2 3] → [3 2 1 2 3 2 1]."""

    dims, mode = 1, "reflect"


class ReflectionPad2d(_CopyPadNd):
    """Mirrors the input at its edges in H and W, without repeating the edge."""

    dims, mode = 2, "reflect"


class ReflectionPad3d(_CopyPadNd):
    """Mirrors the input at its edges in D, H and W, without repeating the edge."""

    dims, mode = 3, "reflect"


class ReplicationPad1d(_CopyPadNd):
    """Repeats the edge values: [1 2 3] → [1 1 1 2 3 3 3]."""

    dims, mode = 1, "replicate"


class ReplicationPad2d(_CopyPadNd):
    """Repeats the edge values in H and W."""

    dims, mode = 2, "replicate"


class ReplicationPad3d(_CopyPadNd):
    """Repeats the edge values in D, H and W."""

    dims, mode = 3, "replicate"


class CircularPad1d(_CopyPadNd):
    """Wraps around, as if the input were periodic: [1 2 3] → [2 3 1 2 3 1 2]."""

    dims, mode = 1, "circular"


class CircularPad2d(_CopyPadNd):
    """Wraps around in H and W (a torus)."""

    dims, mode = 2, "circular"


class CircularPad3d(_CopyPadNd):
    """Wraps around in D, H and W."""

    dims, mode = 3, "circular"


class Threshold(Module):
    """x where x > threshold, else ``value``: ReLU is Threshold(0, 0)."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        suffix = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{suffix}"


class Softmax2d(Module):
    """Softmax over the channels at each spatial position: dim -3 of (C, H, W) or (N, C, H, W)."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, "
                             f"got {input.ndim}-D input of shape {tuple(input.shape)}; for "
                             f"other shapes use nn.Softmax(dim=...)")
        return softmax(input, -3)


class CosineSimilarity(Module):
    """cos θ = x1·x2 / (max(‖x1‖, eps)·max(‖x2‖, eps)) along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """‖x1 - x2 + eps‖_p over the last dim: the distance between matching rows.

    The order p is stored as ``norm``, as PyTorch names the attribute.
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
