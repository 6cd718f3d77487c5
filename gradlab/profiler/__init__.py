"""Where the time goes: PyTorch's ``torch.profiler``, built on gradlab's event bus.

``profile`` records every op, backward node and ``record_function`` range
(see :mod:`gradlab.profiler.profiler`); ``key_averages().table()`` sums them
up, ``export_chrome_trace`` draws them on a timeline
(:mod:`gradlab.profiler.event_list`).
"""

from .event_list import EventList, FunctionEvent, FunctionEventAvg
from .profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = ["profile", "record_function", "schedule", "ProfilerAction", "ProfilerActivity",
           "tensorboard_trace_handler", "supported_activities", "EventList", "FunctionEvent",
           "FunctionEventAvg"]
