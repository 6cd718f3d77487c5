"""PyTorch's older profiler API (``torch.autograd.profiler``), on :mod:`gradlab.profiler`.

``with gradlab.autograd.profiler.profile() as prof:`` records as
``gradlab.profiler.profile`` does; ``prof.key_averages().table()``,
``prof.table()``, ``prof.function_events`` and ``export_chrome_trace``
read the result. ``enabled=False`` records nothing.
"""

from __future__ import annotations

from ..profiler.profiler import profile as _profile
from ..profiler.profiler import record_function

__all__ = ["profile", "record_function"]


class profile(_profile):  # noqa: N801 - PyTorch's name
    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device=None,
                 record_shapes: bool = False, with_flops: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config=None, acc_events: bool = False) -> None:
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops,
                         with_modules=with_modules, acc_events=acc_events)
        self.enabled = enabled

    def start(self) -> None:
        if self.enabled:
            super().start()

    @property
    def function_events(self):
        return self.events()

    @property
    def self_cpu_time_total(self) -> float:
        return self.events().self_cpu_time_total

    def table(self, **kwargs) -> str:
        return self.events().table(**kwargs)

    def total_average(self):
        return self.events().total_average()
