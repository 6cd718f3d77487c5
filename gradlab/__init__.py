"""gradlab: a deep-learning engine you can watch think.

PyTorch's names and semantics on NumPy (cpu) and CuPy (cuda), with every
op, backward step and allocation published on :mod:`gradlab.events`.
"""

from . import autograd, events, random
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .backends import device
from .dtypes import (
    bfloat16,
    bool,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int32,
    int64,
    promote_types,
    result_type,
    set_default_dtype,
)
from .memory import (
    max_memory_allocated,
    memory_allocated,
    memory_stats,
    memory_summary,
    reset_peak_memory_stats,
)
from .ops import *  # noqa: F403
from .random import Generator, initial_seed, manual_seed, seed
from .tensor import Size, Tensor

float = float32  # noqa: A001 - PyTorch's aliases
double = float64
half = float16
long = int64
int = int32  # noqa: A001

# The subpackages built on the tensor, importable as gradlab.nn etc. after `import gradlab`.
from . import cuda, datasets, nn, optim, utils  # noqa: E402
from .serialization import *  # noqa: E402, F403

__version__ = "0.1.0"


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()
