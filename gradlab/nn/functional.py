"""``gradlab.nn.functional``: activations and other ops in functional form (as ``F``).

Each name here is the same function as its counterpart elsewhere in gradlab:
the ops themselves live in :mod:`gradlab.ops` (one family per module).
"""

from ..ops.activation import (
    celu,
    elu,
    gelu,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    logsigmoid,
    mish,
    relu6,
    selu,
    silu,
    softplus,
)
from ..ops.padding import pad
from ..ops.softmax_family import log_softmax, softmax
from ..ops.unary import relu, sigmoid, tanh

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "pad", "leaky_relu", "elu",
           "gelu", "silu", "softplus", "hardtanh", "relu6", "logsigmoid", "mish", "selu",
           "celu", "hardsigmoid", "hardswish"]
