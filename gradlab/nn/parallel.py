"""``gradlab.nn.parallel``: where PyTorch keeps ``DataParallel`` and ``DistributedDataParallel``
(also ``gradlab.nn.DataParallel`` and ``gradlab.nn.parallel.DistributedDataParallel``)."""

from .modules.data_parallel import DataParallel
from .modules.distributed_data_parallel import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
