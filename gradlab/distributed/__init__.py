"""Data-parallel training across processes: ``torch.distributed``'s API on plain sockets.

- :mod:`.process_group`: ``init_process_group``, ranks, and the sockets (a star
  around rank 0; NumPy bytes and JSON headers, never pickle)
- :mod:`.collectives`: ``all_reduce``, ``broadcast``, ``all_gather``, ``barrier``
- :mod:`.run`: the launcher, ``python -m gradlab.distributed.run --nproc-per-node N``

``gradlab.nn.parallel.DistributedDataParallel`` averages gradients with these.
"""

from .collectives import ReduceOp, Work, all_gather, all_reduce, barrier, broadcast
from .process_group import (
    DistributedError,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
)

__all__ = ["init_process_group", "destroy_process_group", "is_initialized", "is_available",
           "get_rank", "get_world_size", "get_backend", "all_reduce", "broadcast",
           "all_gather", "barrier", "ReduceOp", "Work", "DistributedError"]
