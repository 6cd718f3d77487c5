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

With ``find_unused_parameters=True`` a forward may leave some parameters out
(a branch taken on one rank and not on another). Averaging as each gradient
arrives would then have the ranks wait for different parameters, so instead
the hooks only note which parameters got a gradient, and at the end of the
backward pass (``queue_callback``) the ranks first agree on which parameters
any of them used, then average those in ``parameters()`` order, a rank that
did not use one adding zeros. A parameter no rank used keeps ``grad=None``,
as in PyTorch.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ... import distributed as dist
from ...autograd.engine import queue_callback
from ...autograd.grad_mode import no_grad
from ...autograd.grad_mode import state as grad_state
from ...distributed.collectives import all_reduce_array, reduce_in_place
from ...ops.creation import zeros_like
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
        self.module = module
        self.__dict__["broadcast_buffers"] = broadcast_buffers
        self.__dict__["find_unused_parameters"] = find_unused_parameters
        self.__dict__["_sync"] = True
        self.__dict__["_world"] = dist.get_world_size()
        self.__dict__["_handles"] = []
        self.__dict__["_ready"] = None  # find_unused_parameters: (pass, ids of its gradients)
        self.__dict__["_names"] = {id(p): name for name, p in module.named_parameters()}
        with no_grad():
            for t in list(module.parameters()) + list(module.buffers()):
                dist.broadcast(t, src=0)
        hook = self._note_ready if find_unused_parameters else self._average
        for p in module.parameters():
            if p.requires_grad:
                self._handles.append(p.register_post_accumulate_grad_hook(hook))

    def _average(self, param) -> None:
        """Average ``param.grad`` over the ranks (in place), unless inside ``no_sync()``.

        Each rank averages its gradients in the order its backward finishes them; the
        ranks check they average the same parameter, so a forward that used different
        parameters on different ranks raises, naming them, instead of mixing them up."""
        if self._sync and param.grad is not None:
            self._average_grad(param)

    def _average_grad(self, param) -> None:
        try:
            reduce_in_place(param.grad, dist.ReduceOp.AVG,
                            f"the gradient of {self._names[id(param)]}")
        except dist.DistributedError as error:
            raise dist.DistributedError(
                f"{error}. DistributedDataParallel: the ranks' backward passes reached "
                "different parameters. Fix: if the forward may leave parameters out on some "
                "ranks, wrap the model with DistributedDataParallel(model, "
                "find_unused_parameters=True)") from None

    def _note_ready(self, param) -> None:
        """find_unused_parameters: remember the gradient; the first one of a backward pass
        queues the averaging of all of them for the end of the pass."""
        if not self._sync:
            return
        if self._ready is None or self._ready[0] is not grad_state.backward_callbacks:
            # the first gradient of this pass (a pass that raised midway left a stale set)
            self.__dict__["_ready"] = (grad_state.backward_callbacks, set())
            queue_callback(self._average_used)
        self._ready[1].add(id(param))

    def _average_used(self) -> None:
        """Agree with the other ranks on the parameters any of them used, then average
        those (zeros from a rank that did not use one); the others stay without a grad."""
        ready, self.__dict__["_ready"] = self._ready[1], None
        params = [p for p in self.module.parameters() if p.requires_grad]
        used = np.array([id(p) in ready for p in params], dtype=np.int64)
        used_anywhere = all_reduce_array(used)
        with no_grad():
            for p, count in zip(params, used_anywhere):
                if not count:
                    continue
                if p.grad is None:  # this rank's forward left it out: it adds nothing
                    p.grad = zeros_like(p)
                self._average_grad(p)

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
