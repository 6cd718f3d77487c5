"""Lazy modules: layers that read their input size from the first batch.

``nn.LazyLinear(10)`` is ``nn.Linear(?, 10)``: its weight is an
:class:`~gradlab.nn.UninitializedParameter` until the first call, which
reads ``in_features`` from the input's last dim, gives the parameters their
shape and PyTorch's default init, and turns the layer into a plain
``Linear`` (its ``__class__`` changes, so its repr, type and code are
Linear's from then on). Lazy convolutions read ``in_channels`` and lazy
norms ``num_features`` from the channel dim.

The parameters are made in place (``materialize``), so an optimizer built
before that first "dry run" holds the very objects that now have values.
Before it, ``state_dict`` lists the uninitialized parameters, and
``load_state_dict`` of a checkpoint with real tensors gives them the
checkpoint's shapes (and values).
"""

from __future__ import annotations

import itertools

from ...autograd.grad_mode import no_grad
from ...dtypes import int64
from ...ops.creation import tensor
from ..parameter_lazy import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .instance_norm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .volumetric import Conv3d, ConvTranspose3d

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Mix into a layer (first base) whose parameters' shapes come from its first input.

    The layer defines ``initialize_parameters(*args)`` (materialize the
    parameters from the input, then ``reset_parameters``); a forward pre-hook
    calls it once, then becomes the class ``cls_to_become``.
    """

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Give the uninitialized parameters their shapes from the forward's arguments."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self) -> bool:
        """Does this module (not its children) still hold an uninitialized parameter or
        buffer?"""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(),
                                                       self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None) -> None:
        """The forward pre-hook: initialize from the input, then become the plain class."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _sizes_from_parameters(self) -> None:
        """After a checkpoint gave the parameters their shapes, set the sizes they imply
        (in_features, ...), which the first forward would otherwise have read."""

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        """As Module's, but an uninitialized parameter is saved as itself (it has no values
        to detach)."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars or is_lazy(param) else \
                    param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars or is_lazy(buf) else buf.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        """Checkpoint values give uninitialized entries their shapes first; an uninitialized
        entry in the checkpoint (a lazy module saved before its dry run) loads as nothing."""
        still_lazy, loaded = [], False
        for name, value in itertools.chain(self._parameters.items(), self._buffers.items()):
            if not is_lazy(value) or name in self._non_persistent_buffers_set:
                continue
            incoming = state_dict.get(prefix + name)
            if incoming is not None and not is_lazy(incoming):
                with no_grad():
                    value.materialize(tuple(incoming.shape))
                loaded = True
            else:
                still_lazy.append(name)
        if loaded:
            self._sizes_from_parameters()
        if not still_lazy:
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                          missing_keys, unexpected_keys, error_msgs)
            return
        # Module's loader compares shapes, which these don't have: hide them from it.
        registries = (self._parameters, self._buffers)
        saved = [dict(registry) for registry in registries]
        for registry in registries:
            for name in still_lazy:
                registry.pop(name, None)
        try:
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                          missing_keys, unexpected_keys, error_msgs)
        finally:
            for registry, items in zip(registries, saved):
                registry.clear()
                registry.update(items)
        for name in still_lazy:
            key = prefix + name
            if key in unexpected_keys:
                unexpected_keys.remove(key)
            elif key not in state_dict and strict:
                missing_keys.append(key)


# --- Linear --------------------------------------------------------------------------------
class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last dim of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def _sizes_from_parameters(self) -> None:
        if not is_lazy(self.weight):
            self.in_features = self.weight.shape[1]

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


# --- Convolutions --------------------------------------------------------------------------
class _LazyConvMixin(LazyModuleMixin):
    """``in_channels`` from dim 1 of a batched input (dim 0 of an unbatched one)."""

    def _make_lazy(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _sizes_from_parameters(self) -> None:
        if not is_lazy(self.weight):
            shape = self.weight.shape
            self.in_channels = shape[0] if self.transposed else shape[1] * self.groups

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if not self.has_uninitialized_params():
            return
        spatial = len(self.kernel_size)
        if input.ndim not in (spatial + 1, spatial + 2):
            raise RuntimeError(
                f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to "
                f"{type(self).__name__}, but got input of size: {tuple(input.shape)}")
        self.in_channels = input.shape[1] if input.ndim == spatial + 2 else input.shape[0]
        if self.in_channels % self.groups:
            raise ValueError(f"{type(self).__name__}: in_channels ({self.in_channels}, read "
                             f"from the input) must be divisible by groups ({self.groups})")
        per_group = self.out_channels // self.groups
        shape = ((self.in_channels, per_group) if self.transposed else
                 (self.out_channels, self.in_channels // self.groups)) + self.kernel_size
        with no_grad():
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class _LazyConv(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)
        self._make_lazy(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device, dtype)
        self._make_lazy(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """``Conv1d`` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """``Conv2d`` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """``Conv3d`` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """``ConvTranspose1d`` whose ``in_channels`` comes from its first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """``ConvTranspose2d`` whose ``in_channels`` comes from its first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """``ConvTranspose3d`` whose ``in_channels`` comes from its first input."""

    cls_to_become = ConvTranspose3d


# --- Normalization -------------------------------------------------------------------------
class _LazyNorm(LazyModuleMixin):
    """``num_features`` from the channel dim: weight, bias, running_mean and running_var
    wait for it (num_batches_tracked is a count, made at once).

    As in PyTorch, the lazy instance norms default to ``affine=True`` and
    ``track_running_stats=True`` too (InstanceNorm's own defaults are False).
    """

    _unbatched_dims = 0  # InstanceNorm takes input without a batch dim, of this many dims

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def _sizes_from_parameters(self) -> None:
        for name in ("weight", "bias", "running_mean", "running_var"):
            value = getattr(self, name)
            if value is not None and not is_lazy(value):
                self.num_features = value.shape[0]

    def initialize_parameters(self, input) -> None:
        if not self.has_uninitialized_params():
            return
        if input.ndim < 2:
            raise ValueError(f"{type(self).__name__}: expected input with a channel dim, got "
                             f"shape {tuple(input.shape)}")
        # Unbatched instance-norm input has its channels first (PyTorch reads dim 1 anyway).
        self.num_features = input.shape[0 if input.ndim == self._unbatched_dims else 1]
        with no_grad():
            for name in ("weight", "bias", "running_mean", "running_var"):
                value = getattr(self, name)
                if is_lazy(value):
                    value.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    """``BatchNorm1d`` whose ``num_features`` is dim 1 of its first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    """``BatchNorm2d`` whose ``num_features`` is dim 1 of its first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    """``BatchNorm3d`` whose ``num_features`` is dim 1 of its first input."""

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNorm, InstanceNorm1d):
    """``InstanceNorm1d`` whose ``num_features`` is the channel dim of its first input."""

    cls_to_become = InstanceNorm1d
    _unbatched_dims = 2


class LazyInstanceNorm2d(_LazyNorm, InstanceNorm2d):
    """``InstanceNorm2d`` whose ``num_features`` is the channel dim of its first input."""

    cls_to_become = InstanceNorm2d
    _unbatched_dims = 3


class LazyInstanceNorm3d(_LazyNorm, InstanceNorm3d):
    """``InstanceNorm3d`` whose ``num_features`` is the channel dim of its first input."""

    cls_to_become = InstanceNorm3d
    _unbatched_dims = 4
