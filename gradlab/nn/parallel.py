"""``gradlab.nn.parallel``: where PyTorch keeps ``DataParallel`` (also ``gradlab.nn.DataParallel``).

``DistributedDataParallel`` needs a process group, which gradlab does not have yet.
"""

from .modules.data_parallel import DataParallel

__all__ = ["DataParallel"]
