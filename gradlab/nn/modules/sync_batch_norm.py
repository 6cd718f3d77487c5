"""``SyncBatchNorm``: BatchNorm whose training statistics cover every rank's share of the batch.

Under ``DistributedDataParallel`` each process sees part of each batch; this
layer normalises with the mean and variance of the whole batch, gathered
from all ranks (the op is :mod:`gradlab.distributed.sync_batch_norm`). In
eval mode, or without a process group of more than one rank, it is exactly
BatchNorm. ``SyncBatchNorm.convert_sync_batchnorm(model)`` swaps every
BatchNorm of a model for one, keeping its parameters and statistics.
"""

from __future__ import annotations

from ... import distributed as dist
from ...distributed.sync_batch_norm import SyncBatchNorm as _SyncBatchNormOp
from .module import Module
from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """Batch normalization of (N, C, ...) input over the batch of all ranks."""

    _input_dims = (2, 3, 4, 5)
    _input_desc = "2D to 5D"

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group=None,
                 device=None, dtype=None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype)
        self.process_group = process_group

    def _normalize(self, input, running_mean, running_var, use_batch_stats, factor):
        if not (use_batch_stats and dist.is_initialized() and dist.get_world_size() > 1):
            return super()._normalize(input, running_mean, running_var, use_batch_stats,
                                      factor)
        return _SyncBatchNormOp.apply(input, self.weight, self.bias, running_mean, running_var,
                                      factor, self.eps)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """``module`` with each BatchNorm1d/2d/3d inside it replaced by a SyncBatchNorm that
        holds the same parameters and buffers (the same tensors, not copies)."""
        if isinstance(module, _BatchNorm) and not isinstance(module, cls):
            new = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            for name in ("weight", "bias"):
                if getattr(module, name, None) is not None:
                    setattr(new, name, getattr(module, name))
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                new._buffers[name] = module._buffers.get(name)
            new.train(module.training)
            return new
        for name, child in list(module._modules.items()):
            if child is not None:
                module._modules[name] = cls.convert_sync_batchnorm(child, process_group)
        return module
