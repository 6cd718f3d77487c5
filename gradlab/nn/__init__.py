"""Neural-network building blocks (``gradlab.nn``), with PyTorch's names.

``Module`` and the layers live in :mod:`gradlab.nn.modules` (one kind per
file), their ops in :mod:`gradlab.nn.functional`, weight initialisers in
:mod:`gradlab.nn.init` and gradient utilities in :mod:`gradlab.nn.utils`.
"""

from . import functional, init, parallel, utils
from .modules import *
from .parameter import *
from .parameter_lazy import UninitializedBuffer, UninitializedParameter
