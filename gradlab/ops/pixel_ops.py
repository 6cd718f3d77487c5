"""pixel_shuffle and pixel_unshuffle (sub-pixel convolution), and rms_norm.

``pixel_shuffle`` turns channels into resolution: an input of shape
(*, C·r², H, W) becomes (*, C, H·r, W·r), each group of r² channels filling
an r×r block of output pixels (the last step of an ESPCN super-resolution
net). ``pixel_unshuffle`` is its inverse. Both only move values, so they are
a reshape, a permute and a reshape; each of those has its own derivative
(the inverse move), so the gradient is right by construction::

    pixel_shuffle:   (*, C, r, r, H, W) --permute--> (*, C, H, r, W, r)

``rms_norm`` (as in LLaMA) scales each sample by the root mean square of its
last dims, with no mean subtracted and no bias::

    y = x / sqrt(mean(x²) + eps) · weight

It too is a composition (pow, mean, add, rsqrt, mul), as PyTorch's own is, so
its graph shows those nodes and their derivatives make its gradient.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._util import check_float
from .activation import _check_tensor
from .normalization import normalized_shape_of

__all__ = ["pixel_shuffle", "pixel_unshuffle", "rms_norm"]
# Re-exported by gradlab.nn.functional.
FUNCTIONAL = ["pixel_shuffle", "pixel_unshuffle", "rms_norm"]
TENSOR_METHODS: list = []


# --- pixel_shuffle / pixel_unshuffle ------------------------------------------------------------

def _check_image(op: str, input, factor, factor_name: str) -> None:
    _check_tensor(op, input)
    if isinstance(factor, bool) or not isinstance(factor, (int, np.integer)):
        raise TypeError(f"{op}: {factor_name} must be an int, got {type(factor).__name__} "
                        f"({factor!r})")
    if factor <= 0:
        raise RuntimeError(f"{op}: {factor_name} must be positive, got {factor}")
    if input.ndim < 3:
        raise RuntimeError(f"{op}: expected an input of shape (*, C, H, W), at least 3 dims, "
                           f"got shape {tuple(input.shape)}; for a single-channel image add "
                           f"the channel dim with x.unsqueeze(0)")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C·r², H, W) -> (*, C, H·r, W·r): every r² channels become one r×r block of pixels."""
    _check_image("pixel_shuffle", input, upscale_factor, "upscale_factor")
    r = int(upscale_factor)
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            f"pixel_shuffle: the channel dim (-3) of the input (shape {tuple(input.shape)}) has "
            f"size {c}, which is not divisible by upscale_factor² = {r * r}: each output "
            f"channel takes {r * r} input channels. Fix: give the layer before it a multiple "
            f"of {r * r} output channels")
    n = len(batch)
    blocks = input.reshape(*batch, c // (r * r), r, r, h, w)
    blocks = blocks.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)  # (*, C, H, r, W, r)
    return blocks.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H·r, W·r) -> (*, C·r², H, W): each r×r block of pixels becomes r² channels."""
    _check_image("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    r = int(downscale_factor)
    *batch, c, h, w = input.shape
    for name, size in (("height (dim -2)", h), ("width (dim -1)", w)):
        if size % r:
            raise RuntimeError(
                f"pixel_unshuffle: the {name} of the input (shape {tuple(input.shape)}) is "
                f"{size}, which is not divisible by downscale_factor={r}: the image is cut "
                f"into {r}x{r} blocks. Fix: crop or pad it to a multiple of {r}")
    n = len(batch)
    blocks = input.reshape(*batch, c, h // r, r, w // r, r)
    blocks = blocks.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)  # (*, C, r, r, H, W)
    return blocks.reshape(*batch, c * r * r, h // r, w // r)


# --- rms_norm -----------------------------------------------------------------------------------

def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x²) + eps) over the last ``len(normalized_shape)`` dims, times ``weight``.

    eps=None takes the machine epsilon of the computation dtype, as PyTorch
    does: float16 and bfloat16 are computed in float32 (so their eps is float32's).
    d/dx_i = (g_i·w_i - x_i · mean(g·w·x) / (mean(x²) + eps)) / sqrt(mean(x²) + eps),
    here from the composed ops' own derivatives.
    """
    _check_tensor("rms_norm", input)
    check_float("rms_norm", input)
    shape = normalized_shape_of("rms_norm", input, normalized_shape, weight=weight)
    x = input.float() if input.dtype.itemsize < 4 else input
    if eps is None:
        eps = float(np.finfo(x.dtype.np).eps)
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    out = x * ((x * x).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        out = out * weight
    # the input's dtype, whatever the weight's (PyTorch's type_as: float16 stays float16)
    return out if out.dtype is input.dtype else out.to(input.dtype)
