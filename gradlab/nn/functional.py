"""``gradlab.nn.functional`` (imported as ``F``): every layer's op as a plain function.

Each name here is the very function that lives in :mod:`gradlab.ops` (one
family per module): ``F.conv2d`` is ``gradlab.ops.convolution.conv2d``. A
family lists the names it contributes in its ``FUNCTIONAL``; the few core ops
that PyTorch also offers here (softmax, pad, ...) are imported by name. ``F.relu`` is
``ops.activation.relu`` (it takes ``inplace=``), not ``gradlab.relu`` (which, like
``torch.relu``, doesn't).
"""

from .. import ops
from ..ops.activation import relu, relu_, threshold
from ..ops.padding import pad
from ..ops.softmax_family import log_softmax, softmax
from ..ops.unary import sigmoid, tanh

FAMILIES = tuple(family for family in ops.FAMILIES if getattr(family, "FUNCTIONAL", None))
"""The op families whose ``FUNCTIONAL`` names are re-exported here (every family that
lists some: a new module only has to say what it contributes)."""

__all__ = ["relu", "relu_", "threshold", "sigmoid", "tanh", "softmax", "log_softmax", "pad"]
for _family in FAMILIES:
    for _name in _family.FUNCTIONAL:
        globals()[_name] = getattr(_family, _name)
        if _name not in __all__:  # (losses re-lists its two submodules' losses)
            __all__.append(_name)
del _family, _name
