"""InstanceNorm1d/2d/3d, LocalResponseNorm and CrossMapLRN2d.

InstanceNorm normalises each channel of each sample over its spatial dims
(:func:`gradlab.nn.functional.instance_norm`). It shares BatchNorm's state —
``weight``, ``bias``, ``running_mean``, ``running_var``, ``num_batches_tracked``
(PyTorch's state_dict keys) — but with PyTorch's other defaults: no affine
parameters and no running statistics unless asked for. Each layer also takes
unbatched input, (C, L) for InstanceNorm1d and so on.

CrossMapLRN2d is PyTorch's legacy form of LocalResponseNorm: 4-D input only, a
slightly different window, and the legacy code's values exactly (see
:func:`gradlab.ops.instance_normalization.cross_map_lrn2d` for how they differ).
"""

from __future__ import annotations

import warnings

from ...ops.instance_normalization import cross_map_lrn2d, instance_norm, local_response_norm
from ...tensor import Tensor
from .module import Module
from .normalization import _BatchNorm

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm",
           "CrossMapLRN2d"]


class _InstanceNorm(_BatchNorm):
    """What InstanceNorm1d/2d/3d share; they differ in the input dims they accept.

    Uses each instance's statistics while training, and also in evaluation
    unless ``track_running_stats=True``. The running statistics move toward
    the batch average of the instances' statistics; ``num_batches_tracked``
    is kept in the state_dict but, as in PyTorch, not counted.
    """

    _spatial_dims = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        name, d = type(self).__name__, self._spatial_dims
        if input.ndim not in (d + 1, d + 2):
            raise ValueError(
                f"{name}: expected {d + 1}D (unbatched) or {d + 2}D (batched) input, got "
                f"{input.ndim}D input of shape {tuple(input.shape)}. Fix: InstanceNorm1d takes "
                f"(N, C, L) or (C, L), InstanceNorm2d (N, C, H, W) or (C, H, W), "
                f"InstanceNorm3d (N, C, D, H, W) or (C, D, H, W)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        unbatched = input.ndim == self._spatial_dims + 1
        channel_dim = 0 if unbatched else 1
        if input.shape[channel_dim] != self.num_features:
            if self.affine or self.track_running_stats:
                raise ValueError(
                    f"{type(self).__name__}: expected {self.num_features} channels in dim "
                    f"{channel_dim} (num_features={self.num_features}), got input of shape "
                    f"{tuple(input.shape)}")
            warnings.warn(f"{type(self).__name__}: input's size at dim={channel_dim} does not "
                          f"match num_features={self.num_features}; num_features is unused "
                          f"because affine=False and track_running_stats=False", stacklevel=2)
        x = input.unsqueeze(0) if unbatched else input
        out = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        """Checkpoints without a version that hold running statistics for a layer that does
        not track them (from before PyTorch 0.4) are refused, as PyTorch does."""
        if local_metadata.get("version") is None and not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var")
                    if prefix + n in state_dict]
            if keys:
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {' and '.join(keys)} for "
                    f"{type(self).__name__} with track_running_stats=False. Fix: remove these "
                    f"keys from the state_dict, or set track_running_stats=True to use them")
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of (N, C, L) or (C, L) input."""

    _spatial_dims = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of (N, C, H, W) or (C, H, W) input."""

    _spatial_dims = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of (N, C, D, H, W) or (C, D, H, W) input."""

    _spatial_dims = 3


class _ChannelWindowNorm(Module):
    """The arguments and repr LocalResponseNorm and CrossMapLRN2d share (siblings, not one
    a subclass of the other, as in PyTorch)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LocalResponseNorm(_ChannelWindowNorm):
    """Divide each value by a power of the sum of squares over ``size`` neighbouring
    channels (AlexNet's normalization). No parameters."""

    def forward(self, input: Tensor) -> Tensor:
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)


class CrossMapLRN2d(_ChannelWindowNorm):
    """PyTorch's legacy cross-channel LRN over (N, C, H, W): LocalResponseNorm's arguments
    and repr, the legacy module's values (a symmetric window of (size - 1) // 2 channels
    each side, plus its channel-0 slip). No parameters."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)  # (k=1, not 1.0: PyTorch's repr shows k=1)

    def forward(self, input: Tensor) -> Tensor:
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)
