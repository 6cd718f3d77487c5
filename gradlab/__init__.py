"""gradlab: a deep-learning engine you can watch think.

PyTorch's names and semantics on NumPy (cpu) and CuPy (cuda), with every
op, backward step and allocation published on :mod:`gradlab.events`.
"""

import warnings as _warnings

from numpy import exceptions as _np_exceptions

from . import autograd, events, random
from .autograd import (
    enable_grad,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    no_grad,
    set_anomaly_enabled,
    set_grad_enabled,
)
from .backends import device
from .dtypes import (
    bfloat16,
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    dtype,
    float16,
    float32,
    float64,
    get_default_complex_dtype,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
)
from .memory import (
    max_memory_allocated,
    memory_allocated,
    memory_stats,
    memory_summary,
    reset_peak_memory_stats,
)
from .ops import *  # noqa: F403
from .random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .tensor import Size, Tensor


def _install_warning_filters() -> None:
    """NumPy warns "invalid value encountered in log" where PyTorch quietly makes nan or
    inf, and the warning points into gradlab's ops, not at the user's line. PyTorch's way
    is kept: silence for NumPy's float warnings raised inside gradlab (the user's own
    NumPy code still warns). NaNs are found with autograd.detect_anomaly() or the
    debugger's N. Array methods (a.sum(), a.mean() ...) warn from NumPy's own _methods
    module, so that one is quiet too: an inf - inf inside a sum in backward must not
    print a warning.

    But NumPy's ComplexWarning (a RuntimeWarning: "casting complex values to real
    discards the imaginary part") is an error inside gradlab: a raw op that dropped
    imaginary parts would give a wrong answer quietly. (Filters added later are checked
    first.) Run once, at import."""
    _warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"gradlab(\.|$)")
    _warnings.filterwarnings("ignore", category=RuntimeWarning,
                             module=r"numpy\._core\._methods$")
    _warnings.filterwarnings("error", category=_np_exceptions.ComplexWarning,
                             module=r"gradlab(\.|$)")


_install_warning_filters()

float = float32  # noqa: A001 - PyTorch's aliases
double = float64
half = float16
long = int64
short = int16
int = int32  # noqa: A001

# The subpackages built on the tensor, importable as gradlab.nn etc. after `import gradlab`.
# (linalg is the torch.linalg-style namespace; gradlab.ops exports functions, not its families.)
from . import (  # noqa: E402
    accelerator,
    amp,
    compiler,
    cpu,
    cuda,
    datasets,
    distributed,
    distributions,
    fft,
    func,
    jit,
    linalg,
    multiprocessing,
    nn,
    onnx,
    optim,
    profiler,
    return_types,
    special,
    testing,
    utils,
    viz,
)
from ._formatting import set_printoptions  # noqa: E402
from .amp import GradScaler, autocast  # noqa: E402 - torch.autocast, torch.GradScaler
from .amp.autocast_mode import (  # noqa: E402
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .backends import cudnn as _cudnn  # noqa: E402, F401 - gradlab.backends.cudnn, as in PyTorch
from .backends import mps as _mps  # noqa: E402, F401 - gradlab.backends.mps
from .compiler import compile  # noqa: E402, A004 - PyTorch's name
from .constants import *  # noqa: E402, F403 - pi, e, inf, nan, newaxis, default_generator ...
from .func import vmap  # noqa: E402 - torch.vmap is torch.func.vmap
from .layouts import *  # noqa: E402, F403 - strided, sparse_coo ... (layouts)
from .legacy_types import *  # noqa: E402, F403 - FloatTensor, LongTensor ...
from .memory_layouts import *  # noqa: E402, F403 - channels_last, contiguous_format ...
from .serialization import *  # noqa: E402, F403
from .settings import *  # noqa: E402, F403 - default device, determinism, matmul precision
from .threads import get_num_threads, set_num_threads  # noqa: E402
from .type_info import can_cast, finfo, iinfo  # noqa: E402

__version__ = "0.1.0"


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


from .viz.jupyter import register_in_running_shell as _register_notebook_display  # noqa: E402

_register_notebook_display()  # in a notebook, a tensor with a graph shows the graph too
