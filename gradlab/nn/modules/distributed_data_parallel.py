"""``DistributedDataParallel``: one model per process, gradients averaged over the processes.

Each process (rank) holds a full copy of the model and trains on its own
share of every batch (``DistributedSampler`` picks it). For the copies to
stay identical, every rank must apply the same update, so DDP:

1. makes every rank start from rank 0's parameters and buffers (a broadcast);
2. during ``backward``, as soon as a parameter's ``.grad`` is complete on this
   rank, averages it over the ranks with ``all_reduce`` (a post-accumulate
   gradient hook per parameter), so after ``backward`` every rank holds the
   gradient of the loss averaged over the whole batch, the one a single
   process would get;
3. before each training forward, copies rank 0's buffers (BatchNorm's running
   statistics) to all ranks, as PyTorch does by default.

``no_sync()`` skips step 2 for the backward passes inside it (gradient
accumulation: average once, on the last micro-batch). Unlike PyTorch,
gradients are averaged one parameter at a time rather than in buckets: the
same numbers, with more, smaller messages.
"""

from __future__ import annotations

from contextlib import contextmanager

from ... import distributed as dist
from ...autograd.grad_mode import no_grad
from .module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Wrap ``module`` so that training it in every process of the group trains one model."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False) -> None:
        super().__init__()
        if not dist.is_initialized():
            raise RuntimeError(
                "DistributedDataParallel: the default process group has not been initialized. "
                "Fix: call gradlab.distributed.init_process_group('gloo') in every process "
                "first (python -m gradlab.distributed.run --nproc-per-node N script.py starts "
                "them)")
        if find_unused_parameters:
            raise NotImplementedError(
                "DistributedDataParallel: find_unused_parameters=True is not supported: every "
                "rank's backward must reach the same parameters (an unused one raises an error "
                "naming it rather than hanging)")
        self.module = module
        self.__dict__["broadcast_buffers"] = broadcast_buffers
        self.__dict__["_sync"] = True
        self.__dict__["_world"] = dist.get_world_size()
        self.__dict__["_handles"] = []
        with no_grad():
            for t in list(module.parameters()) + list(module.buffers()):
                dist.broadcast(t, src=0)
        for p in module.parameters():
            if p.requires_grad:
                self._handles.append(p.register_post_accumulate_grad_hook(self._average))

    def _average(self, param) -> None:
        """Average ``param.grad`` over the ranks (in place), unless inside ``no_sync()``."""
        if self._sync and param.grad is not None:
            with no_grad():
                dist.all_reduce(param.grad, op=dist.ReduceOp.AVG)

    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers and self.training:
            with no_grad():
                for b in self.module.buffers():
                    dist.broadcast(b, src=0)
        return self.module(*inputs, **kwargs)

    @contextmanager
    def no_sync(self):
        """Backward passes in here keep their gradients local (accumulate, then sync once)."""
        previous = self._sync
        self.__dict__["_sync"] = False
        try:
            yield
        finally:
            self.__dict__["_sync"] = previous
