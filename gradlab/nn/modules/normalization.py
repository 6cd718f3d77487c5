"""Normalization layers: BatchNorm1d/2d/3d, LayerNorm, GroupNorm.

The math lives in :mod:`gradlab.ops.normalization`; a layer adds the learned
per-channel ``weight`` (init 1) and ``bias`` (init 0), and BatchNorm the
running statistics it keeps as buffers (``running_mean``, ``running_var``,
``num_batches_tracked``: PyTorch's state_dict keys) for evaluation mode.
"""

from __future__ import annotations

import numbers

from ...autograd.grad_mode import no_grad
from ...dtypes import int64
from ...ops.creation import ones, tensor, zeros
from ...ops.normalization import batch_norm, group_norm, layer_norm
from ...tensor import Tensor
from ._parameters import register_weight_and_bias, reset_affine
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm"]


class _BatchNorm(Module):
    """What BatchNorm1d/2d/3d share; they differ only in the input dims they accept.

    Training: normalise with the batch's statistics and move the running ones
    toward them, ``running = (1 - momentum) · running + momentum · batch``
    (``momentum=None``: the plain average of all batches so far, factor
    1/num_batches_tracked). Evaluation: normalise with the running ones.
    """

    _version = 2  # version 2 added num_batches_tracked; older checkpoints lack it
    _input_dims: tuple = ()
    _input_desc = ""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        register_weight_and_bias(self, (num_features,), (num_features,), weight=affine,
                                 bias=affine and bias, device=device, dtype=dtype)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        reset_affine(self.weight, self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in self._input_dims:
            raise ValueError(
                f"{type(self).__name__}: expected {self._input_desc} input (got {input.ndim}D "
                f"input of shape {tuple(input.shape)}). Fix: BatchNorm1d takes (N, C) or "
                f"(N, C, L), BatchNorm2d (N, C, H, W), BatchNorm3d (N, C, D, H, W)")
        if (self.affine or self.track_running_stats) and input.shape[1] != self.num_features:
            raise ValueError(
                f"{type(self).__name__}: expected {self.num_features} channels in dim 1 "
                f"(num_features={self.num_features}), got input of shape {tuple(input.shape)}")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # the cumulative average of every batch so far
                factor = 1.0 / int(self.num_batches_tracked.item())
        # Batch statistics while training, and in evaluation when there are no running ones.
        use_batch_stats = self.training or (self.running_mean is None and
                                            self.running_var is None)
        track = not self.training or self.track_running_stats
        return self._normalize(input, self.running_mean if track else None,
                               self.running_var if track else None, use_batch_stats, factor)

    def _normalize(self, input, running_mean, running_var, use_batch_stats, factor):
        """The op itself (SyncBatchNorm takes the batch statistics over every rank)."""
        return batch_norm(input, running_mean, running_var, self.weight, self.bias,
                          use_batch_stats, factor, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        """Checkpoints from before num_batches_tracked existed (version < 2) load all the
        same: the counter keeps its current value."""
        version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and \
                key not in state_dict:
            state_dict[key] = self.num_batches_tracked if self.num_batches_tracked is not None \
                else tensor(0, dtype=int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) input, per channel C."""

    _input_dims = (2, 3)
    _input_desc = "2D or 3D"


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) input, per channel C."""

    _input_dims = (4,)
    _input_desc = "4D"


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) input, per channel C."""

    _input_dims = (5,)
    _input_desc = "5D"


class LayerNorm(Module):
    """Normalise each sample over its last dims (``normalized_shape``), then scale and shift
    elementwise: the normalization of transformers."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        register_weight_and_bias(self, self.normalized_shape, self.normalized_shape,
                                 weight=elementwise_affine, bias=elementwise_affine and bias,
                                 device=device, dtype=dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalise each sample's channels in ``num_groups`` groups, then scale and shift per
    channel. Independent of the batch size (unlike BatchNorm)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups}): each group takes num_channels / "
                             f"num_groups channels")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        register_weight_and_bias(self, (num_channels,), (num_channels,), weight=affine,
                                 bias=affine and bias, device=device, dtype=dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")
