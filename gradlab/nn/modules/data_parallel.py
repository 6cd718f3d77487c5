"""``DataParallel``: PyTorch's single-process data parallelism, on the one device gradlab uses.

``model = nn.DataParallel(model)`` is a common line in training scripts. With
several GPUs PyTorch then copies the model to each, splits every batch along
``dim`` and gathers the outputs. gradlab runs on one device (multi-GPU and
distributed training are not there yet), which is exactly PyTorch's case on
a machine with one GPU or none: the wrapper calls the module on the whole
batch. Its state dict keys gain the ``module.`` prefix, as PyTorch's do, so
checkpoints move between the two.
"""

from __future__ import annotations

from ... import cuda
from ...backends import device as _device
from .module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Runs ``module`` on the whole batch, on one device (see the module docstring)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        available = cuda.device_count() if cuda.is_available() else 0
        if device_ids is None:
            device_ids = list(range(available))
        device_ids = [_device(d).index if not isinstance(d, int) else d for d in device_ids]
        if len(device_ids) > 1:
            raise NotImplementedError(
                f"DataParallel: gradlab runs on one device, but device_ids {device_ids} name "
                f"{len(device_ids)}. Fix: DataParallel(model, device_ids=[0]), or train on one "
                "device without the wrapper")
        self.device_ids = device_ids
        if device_ids:  # one GPU: inputs go to it, as PyTorch moves them
            self.dim = dim
            self.output_device = device_ids[0] if output_device is None else output_device
            self.src_device_obj = _device("cuda", device_ids[0])

    def forward(self, *inputs, **kwargs):
        if self.device_ids:
            inputs = tuple(x.to(self.src_device_obj) if hasattr(x, "to") else x for x in inputs)
        return self.module(*inputs, **kwargs)
