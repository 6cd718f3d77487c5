"""``autocast``: run matrix products in half precision, and the touchy ops in float32.

Inside ``with gradlab.autocast("cuda"):`` (or ``"cpu"``) each op looks up
its rule in :mod:`gradlab.amp.op_lists` and the dispatcher casts its inputs
before it runs: a ``linear`` of float32 tensors becomes a ``linear`` of
float16 copies, a ``softmax`` of float16 becomes a float32 one. The casts
are ordinary ``to`` ops, recorded in the graph like any other (they show up
in the debugger and in ``gradlab render``), so backward sends each gradient
back through them and the float32 parameters get float32 gradients.

Backward itself never runs under autocast: each backward op works in the
dtypes its forward saved. A weight used by several ops in one autocast
region is cast once and the copy reused (the cast cache), until the
outermost ``autocast`` exits or the weight is changed in place.

The state is per thread, as in PyTorch: autocast in the training thread
does not change a data-loading thread.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import warnings

from .. import dtypes as _dt
from ..autograd import function as _function
from ..autograd.grad_mode import state
from ..ops.conversion import ToDtype
from ..tensor import Tensor
from .op_lists import rule

__all__ = [
    "autocast", "is_autocast_available", "is_autocast_enabled", "set_autocast_enabled",
    "get_autocast_dtype", "set_autocast_dtype", "is_autocast_cache_enabled",
    "set_autocast_cache_enabled", "clear_autocast_cache", "custom_fwd", "custom_bwd",
]

_DEVICE_TYPES = ("cpu", "cuda")
_SUPPORTED = {"cpu": (_dt.bfloat16, _dt.float16), "cuda": (_dt.float16, _dt.bfloat16)}
_HALF = (_dt.float16, _dt.bfloat16)


class _Settings(threading.local):
    """This thread's autocast switches; ``state.autocast`` summarises them for the dispatcher."""

    def __init__(self) -> None:
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {"cpu": _dt.bfloat16, "cuda": _dt.float16}
        self.cache_enabled = True
        self.nesting = 0  # how many autocast blocks are open (the cache lives until 0)
        self.cache: dict = {}  # id(weight) -> (weight, its version, its cast copy)


_settings = _Settings()


def _refresh() -> None:
    """Point the dispatcher's one check at the enabled devices' dtypes (None: all off)."""
    on = {d: _settings.dtype[d] for d in _DEVICE_TYPES if _settings.enabled[d]}
    state.autocast = on or None


def _check_device_type(device_type, what: str) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"{what}: expected device_type as a str ('cpu' or 'cuda'), got "
                         f"{type(device_type).__name__}. Fix: pass x.device.type")
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"{what}: autocast has no device type {device_type!r}; gradlab "
                           "runs on 'cpu' and 'cuda'")
    return device_type


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast(device_type)`` can be used here."""
    return device_type in _DEVICE_TYPES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` in this thread (PyTorch's default: "cuda")."""
    return _settings.enabled[_check_device_type(device_type or "cuda", "is_autocast_enabled")]


def set_autocast_enabled(device_type, enabled: bool | None = None) -> None:
    """Switch autocast on or off for a device type (``set_autocast_enabled(True)`` means CUDA)."""
    if enabled is None:  # the old one-argument form
        device_type, enabled = "cuda", device_type
    _settings.enabled[_check_device_type(device_type, "set_autocast_enabled")] = bool(enabled)
    _refresh()


def get_autocast_dtype(device_type: str) -> _dt.dtype:
    """The low-precision dtype autocast uses on ``device_type`` (cpu: bfloat16, cuda: float16)."""
    return _settings.dtype[_check_device_type(device_type, "get_autocast_dtype")]


def set_autocast_dtype(device_type: str, dtype: _dt.dtype) -> None:
    _settings.dtype[_check_device_type(device_type, "set_autocast_dtype")] = dtype
    _refresh()


def is_autocast_cache_enabled() -> bool:
    return _settings.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _settings.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    _settings.cache.clear()


class autocast:  # noqa: N801 - PyTorch's name
    """``with autocast(device_type, dtype=None, enabled=True, cache_enabled=None):``.

    Also a decorator. ``dtype`` defaults to bfloat16 on "cpu" and float16 on
    "cuda". An unsupported dtype, or "cuda" without a GPU, warns and leaves
    autocast off, as in PyTorch. On NumPy, half-precision products are computed
    in float32 and rounded, so CPU autocast shows the numerics, not a speed-up.
    """

    def __init__(self, device_type: str, dtype: _dt.dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        self.device = _check_device_type(device_type, "autocast")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = _settings.cache_enabled if cache_enabled is None else cache_enabled
        self._enabled = bool(enabled)
        if not isinstance(self.fast_dtype, _dt.dtype):
            raise TypeError(f"autocast: dtype must be a gradlab dtype such as gradlab.float16, "
                            f"got {self.fast_dtype!r}")
        if self._enabled and device_type == "cuda":
            from .. import cuda

            if not cuda.is_available():
                warnings.warn("autocast: CUDA is not available. Disabling autocast. "
                              "Fix: use autocast('cpu') on this machine", stacklevel=2)
                self._enabled = False
        if self._enabled and self.fast_dtype not in _SUPPORTED[device_type]:
            names = ", ".join(str(d) for d in _SUPPORTED[device_type])
            warnings.warn(f"In {device_type.upper()} autocast, but the target dtype is not "
                          f"supported. Disabling autocast.\n{device_type.upper()} Autocast only "
                          f"supports dtypes of {names} currently.", stacklevel=2)
            self._enabled = False
        self._saved: list = []  # the settings to restore, innermost last (an instance may nest)

    def __enter__(self):
        s, d = _settings, self.device
        self._saved.append((s.enabled[d], s.dtype[d], s.cache_enabled))
        s.enabled[d], s.dtype[d], s.cache_enabled = self._enabled, self.fast_dtype, \
            self._cache_enabled
        s.nesting += 1
        _refresh()
        return self

    def __exit__(self, *exc) -> None:
        s, d = _settings, self.device
        s.nesting -= 1
        if s.nesting == 0:
            s.cache.clear()
        s.enabled[d], s.dtype[d], s.cache_enabled = self._saved.pop()
        _refresh()

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


def autocast_state() -> dict:
    """Which device types autocast is on for in this thread, and in which dtype."""
    return dict(state.autocast or {})


@contextlib.contextmanager
def autocast_as(saved: dict):
    """Autocast as ``autocast_state()`` found it: for code that runs again later (a
    checkpoint's recomputation during backward, where autocast is otherwise off)."""
    with contextlib.ExitStack() as stack:
        for device_type, dtype in saved.items():
            stack.enter_context(autocast(device_type, dtype=dtype))
        yield


def cast_args(fn, args) -> tuple:
    """``args`` cast for op ``fn`` by its autocast rule (the dispatcher calls this).

    Only built-in ops have rules: a custom Function's inputs are left alone
    (the ops inside its forward are cast), as in PyTorch.
    """
    return cast_for(fn.name, args) if fn.raw else args


def cast_for(op: str, args) -> tuple:
    """``args`` cast by the autocast rule of the op named ``op``.

    Public functions that check or promote dtypes before they dispatch
    (``linear``, ``matmul``, the convolutions ...) call this first, through
    ``ops._util.autocast_inputs``, so that autocast's casts come before those
    checks, as in PyTorch.
    """
    for a in args:
        if isinstance(a, Tensor):
            device_type = a._device.type
            break
    else:
        return args
    low = state.autocast.get(device_type)
    how = None if low is None else rule(device_type, op)
    if how is None:
        return args
    if how == "banned":
        raise RuntimeError(
            f"{op} is unsafe to autocast: in float16 its log(1 - p) loses the small "
            "probabilities. Fix: use binary_cross_entropy_with_logits (nn.BCEWithLogitsLoss) on "
            "the logits, which is safe under autocast, or compute this loss outside autocast")
    floats = [a for a in args if isinstance(a, Tensor) and a._device.type == device_type
              and a.dtype.is_floating_point]
    if how == "lower":  # float64 stays: whoever asked for it wants the precision
        targets = [low if a.dtype is not _dt.float64 else None for a in floats]
    elif how == "float32":
        targets = [_dt.float32 if a.dtype in _HALF else None for a in floats]
    else:  # widest
        widest = floats[0].dtype if floats else None
        for a in floats[1:]:
            widest = _dt.promote_types(widest, a.dtype)
        targets = [widest] * len(floats)
    cast = {id(a): _cast(a, d) for a, d in zip(floats, targets) if d is not None}
    return tuple(cast.get(id(a), a) for a in args)


def _cast(t: Tensor, dtype: _dt.dtype) -> Tensor:
    """``t`` in ``dtype``, reusing this region's copy of a weight cast before."""
    if t.dtype is dtype:
        return t
    cacheable = (_settings.cache_enabled and state.enabled and t.dtype is _dt.float32
                 and t.requires_grad and t.grad_fn is None and t._view_base is None)
    if not cacheable:
        return ToDtype.apply(t, dtype.np)
    hit = _settings.cache.get(id(t))
    if hit is not None and hit[0] is t and hit[1] == t._version and hit[2].dtype is dtype:
        return hit[2]
    copy = ToDtype.apply(t, dtype.np)
    _settings.cache[id(t)] = (t, t._version, copy)
    return copy


def custom_fwd(fwd=None, *, device_type: str, cast_inputs: _dt.dtype | None = None):
    """Decorate a custom Function's ``forward`` for autocast.

    With ``cast_inputs``, forward runs with autocast off and its floating
    inputs cast to that dtype (for ops that need one precision). Without, it
    runs under the caller's autocast state, which ``custom_bwd`` reuses.
    """
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    _check_device_type(device_type, "custom_fwd")

    @functools.wraps(fwd)
    def decorate_fwd(ctx, *args, **kwargs):
        ctx._autocast_on = is_autocast_enabled(device_type)
        ctx._autocast_dtype = get_autocast_dtype(device_type)
        if cast_inputs is None or not ctx._autocast_on:
            return fwd(ctx, *args, **kwargs)
        ctx._autocast_on = False  # backward runs as this forward did: without autocast
        with autocast(device_type, enabled=False):
            return fwd(ctx, *[_cast_input(a, device_type, cast_inputs) for a in args],
                       **{k: _cast_input(v, device_type, cast_inputs) for k, v in kwargs.items()})
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorate a custom Function's ``backward``: run it in the autocast state of its forward."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    _check_device_type(device_type, "custom_bwd")

    @functools.wraps(bwd)
    def decorate_bwd(ctx, *grads):
        with autocast(device_type, enabled=ctx._autocast_on, dtype=ctx._autocast_dtype):
            return bwd(ctx, *grads)
    return decorate_bwd


def _cast_input(value, device_type: str, dtype: _dt.dtype):
    if isinstance(value, Tensor) and value._device.type == device_type and \
            value.dtype.is_floating_point and value.dtype is not _dt.float64:
        return value.to(dtype)
    return value


_function._autocast_args = cast_args
_function._autocast_by_name = cast_for
