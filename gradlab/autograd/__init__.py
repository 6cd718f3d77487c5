"""Automatic differentiation: the graph, the backward engine, grad modes.

Start reading at ``function.py`` (how an op records a node) and then
``engine.py`` (how backward walks the nodes); ``anomaly_mode.py`` is the
debugging aid that points a NaN gradient back at the forward line.
"""

from .anomaly_mode import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
    set_detect_anomaly,
)
from .engine import backward, grad
from .function import Function, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .node import Node
from .variable import Variable

__all__ = ["backward", "grad", "Function", "Node", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "gradcheck", "gradgradcheck", "GradcheckError", "Variable",
           "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]

# Last: functional builds on gradlab.func, which needs everything above already imported.
from . import functional  # noqa: E402
