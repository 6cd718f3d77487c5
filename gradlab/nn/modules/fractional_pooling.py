"""FractionalMaxPool2d and FractionalMaxPool3d: max pools that shrink by any ratio.

Each calls :func:`gradlab.nn.functional.fractional_max_pool2d` (``3d``), whose
docstring (:mod:`gradlab.ops.fractional_pooling`) explains the pseudo-random
window steps. The layer fixes the kernel and either ``output_size`` or
``output_ratio`` (in (0, 1): ``0.7`` makes each side 70% as long). New random
steps are drawn on every call unless ``_random_samples`` (N, C, 2 or 3) is given;
then it is a buffer, saved in the ``state_dict`` under that name as PyTorch saves
it. The arguments are stored under PyTorch's names, as tuples (``kernel_size=3``
becomes ``(3, 3)``); like PyTorch's, the repr shows none of them.
"""

from __future__ import annotations

from ...ops import fractional_pooling as FP
from ...tensor import Tensor
from .module import Module

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]


def _ntuple(value, n: int):
    """PyTorch's _pair/_triple: a number repeated n times, a sequence as a tuple."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _FractionalMaxPoolNd(Module):
    spatial = 0
    op = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples=None) -> None:
        super().__init__()
        name, n = type(self).__name__, self.spatial
        kernel = _ntuple(kernel_size, n)
        if any(k <= 0 for k in kernel):
            raise ValueError(f"{name}: kernel_size must be greater than 0, but got "
                             f"{kernel_size}")
        self.kernel_size = kernel
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             f"ratio (e.g. output_ratio=0.5 halves every side)")
        if output_size is not None and output_ratio is not None:
            raise ValueError(f"{name}: only one of output_size and output_ratio may be "
                             f"specified, got both ({output_size} and {output_ratio})")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"{name}: output_ratio must be between 0 and 1 (got "
                             f"{output_ratio}); use output_size for an exact size")

    def forward(self, input: Tensor):
        return type(self).op(input, self.kernel_size, self.output_size, self.output_ratio,
                             self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max over kH x kW windows with pseudo-random steps, to ``output_size`` or
    ``output_ratio`` x (H, W). Input (N, C, H, W) or (C, H, W)."""

    spatial, op = 2, staticmethod(FP.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Max over kT x kH x kW windows with pseudo-random steps, to ``output_size`` or
    ``output_ratio`` x (T, H, W). Input (N, C, T, H, W) or (C, T, H, W)."""

    spatial, op = 3, staticmethod(FP.fractional_max_pool3d)
