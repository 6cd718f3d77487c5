"""The differentiable primitives, one family per module.

Read any of them to see how an op works: its ``Function`` has a ``forward``
on raw arrays and, right below, a ``backward`` written with tensor ops.

===============  =====================================================
``elementwise``  add, mul, exp, relu, where, comparisons ...
``reduction``    sum, mean, max, var, softmax ...
``linalg``       matmul, bmm, dot, einsum ...
``shape``        reshape, transpose, expand, flip, repeat, tril, pad ...
``joining``      cat, stack, split, chunk, unbind
``indexing``     x[i], x[mask], gather, index_select, masked_fill ...
``activation``   leaky_relu, elu, gelu, silu, softplus, pad
``conversion``   to(dtype/device), clone, contiguous
``inplace``      add_, mul_, zero_, copy_ ... (and how versions work)
``creation``     tensor, zeros, randn, arange ... (no gradient)
===============  =====================================================
"""

from . import (
    activation,
    conversion,
    creation,
    elementwise,
    indexing,
    inplace,
    joining,
    linalg,
    reduction,
    shape,
)
from .activation import *  # noqa: F403
from .conversion import *  # noqa: F403
from .creation import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .indexing import *  # noqa: F403
from .inplace import *  # noqa: F403
from .joining import *  # noqa: F403
from .linalg import *  # noqa: F403
from .methods import install_methods
from .reduction import *  # noqa: F403
from .shape import *  # noqa: F403

install_methods()
