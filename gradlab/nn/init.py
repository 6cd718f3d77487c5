"""Weight initialisation (``gradlab.nn.init``), with PyTorch's names and formulas.

Why initialisation matters: each layer multiplies its input by a weight
matrix, so the scale of the weights decides whether activations (and, in
backward, gradients) grow or shrink from layer to layer. The schemes here
choose a variance that keeps that scale steady:

* **Xavier/Glorot**: Var(W) = gain² · 2 / (fan_in + fan_out) (tanh, sigmoid nets).
* **Kaiming/He**:    Var(W) = gain² / fan (ReLU nets; the ReLU's gain √2 makes
  up for the half of the signal it zeroes).

``fan_in`` is the number of inputs each output sums over (in_features, or
in_channels · kernel size), ``fan_out`` the number of outputs each input feeds.
A uniform U(-b, b) has variance b²/3, so the uniform forms use b = √3 · std.

Every function changes the tensor in place under ``no_grad`` and returns it.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..autograd.grad_mode import no_grad
from ..ops.creation import tensor
from ..ops.sampling import rand, randn
from ..ops.selection import where
from ..tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_"]

_LINEAR_LIKE = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The factor by which ``nonlinearity`` shrinks a unit-variance signal's std, inverted.

    linear/conv/sigmoid 1, tanh 5/3, relu √2, leaky_relu √(2 / (1 + slope²)), selu 3/4.
    """
    if nonlinearity in _LINEAR_LIKE:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}; use one of "
                     f"{', '.join(_LINEAR_LIKE)}, tanh, relu, leaky_relu, selu")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel): in·k and out·k."""
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions "
            f"(got shape {tuple(tensor.shape)}). A bias or other 1-D tensor has no fan: "
            "initialise it with uniform_, normal_ or zeros_ instead")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill_with(target: Tensor, values: Tensor) -> Tensor:
    with no_grad():
        target.copy_(values)
    return target


def _check(op: str, t) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: expected a Tensor to initialise, got {type(t).__name__}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Values drawn from U(a, b)."""
    _check("uniform_", tensor)
    r = rand(*tensor.shape, generator=generator, dtype=tensor.dtype, device=tensor.device)
    with no_grad():
        return _fill_with(tensor, r * (b - a) + a)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Values drawn from N(mean, std²)."""
    _check("normal_", tensor)
    z = randn(*tensor.shape, generator=generator, dtype=tensor.dtype, device=tensor.device)
    with no_grad():
        return _fill_with(tensor, z * std + mean)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """N(mean, std²) restricted to [a, b] (a and b are values, not multiples of std).

    Drawn by rejection: values outside [a, b] are drawn again until none are left.
    """
    _check("trunc_normal_", tensor)
    if not a < b:
        raise ValueError(f"trunc_normal_: the interval [a, b] = [{a}, {b}] is empty; need a < b")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    shape, dev = tuple(tensor.shape), tensor.device
    with no_grad():
        values = randn(*shape, generator=generator, dtype=tensor.dtype, device=dev) * std + mean
        for _ in range(100):
            outside = (values < a) | (values > b)
            if not outside.any():
                break
            fresh = randn(*shape, generator=generator, dtype=tensor.dtype, device=dev)
            values = where(outside, fresh * std + mean, values)
        return _fill_with(tensor, values.clamp(a, b))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Every value set to ``val``."""
    _check("constant_", tensor)
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix (a layer that passes its first inputs through)."""
    _check("eye_", tensor)
    if tensor.ndim != 2:
        raise ValueError(f"Only tensors with 2 dimensions are supported by eye_, got shape "
                         f"{tuple(tensor.shape)}")
    return _fill_with(tensor, tensor_of(np.eye(*tensor.shape), tensor))


def tensor_of(array: np.ndarray, like: Tensor) -> Tensor:
    return tensor(array.astype(like.dtype.np if like.dtype.name != "bfloat16" else np.float32),
                  device=like.device)


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """A convolution kernel that copies input channel i to output channel i (per group)."""
    _check("dirac_", tensor)
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"Only tensors with 3, 4, or 5 dimensions are supported by dirac_, "
                         f"got shape {tuple(tensor.shape)}")
    shape = tuple(tensor.shape)
    if shape[0] % groups != 0:
        raise ValueError(f"dim 0 ({shape[0]}) must be divisible by groups ({groups})")
    per_group = shape[0] // groups
    values = np.zeros(shape)
    centre = tuple(s // 2 for s in shape[2:])
    for g in range(groups):
        for d in range(min(per_group, shape[1])):
            values[(g * per_group + d, d, *centre)] = 1
    return _fill_with(tensor, tensor_of(values, tensor))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-b, b) with b = gain · √(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator=generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std²) with std = gain · √(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator=generator)


def _kaiming_std(tensor, a, mode, nonlinearity) -> float | None:
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """U(-b, b) with b = √3 · gain / √fan (``a``: the leaky_relu slope for the gain)."""
    _check("kaiming_uniform_", tensor)
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator=generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """N(0, std²) with std = gain / √fan."""
    _check("kaiming_normal_", tensor)
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator=generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix times ``gain``: rows (or columns) orthonormal.

    From the QR factorisation of a Gaussian matrix, with R's diagonal signs moved
    into Q so that the result is uniformly distributed over orthogonal matrices.
    """
    _check("orthogonal_", tensor)
    if tensor.ndim < 2:
        raise ValueError(f"Only tensors with 2 or more dimensions are supported by orthogonal_, "
                         f"got shape {tuple(tensor.shape)}")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    dtype = tensor.dtype if tensor.dtype.name in ("float32", "float64") else None
    flat = randn(rows, cols, generator=generator, dtype=dtype, device=tensor.device)
    a = flat._data.T if rows < cols else flat._data
    xp = tensor._device.backend.xp
    q, r = xp.linalg.qr(a)
    q = q * xp.sign(xp.diag(r))
    if rows < cols:
        q = q.T
    values = Tensor._make(xp.ascontiguousarray(q).reshape(tuple(tensor.shape)) * gain, None,
                          None, 0, False)
    return _fill_with(tensor, values)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """A 2-D weight with a fraction ``sparsity`` of each column zero and the rest from
    N(0, std²) (Martens' initialisation for deep nets trained with Hessian-free methods):
    ``ceil(sparsity · rows)`` zeros per column, at random rows."""
    _check("sparse_", tensor)
    if tensor.ndim != 2:
        raise ValueError(f"Only tensors with 2 dimensions are supported by sparse_, got shape "
                         f"{tuple(tensor.shape)}")
    from ..ops.sampling import randperm

    rows, cols = tensor.shape
    zeros_per_column = math.ceil(sparsity * rows)
    normal_(tensor, 0.0, std, generator=generator)
    with no_grad():
        for col in range(cols):
            rows_to_zero = randperm(rows, generator=generator, device=tensor.device)
            tensor[rows_to_zero[:zeros_per_column], col] = 0
    return tensor


# --- the old names without the trailing underscore: deprecated, as in PyTorch ----------------

def _deprecated(new):
    """``nn.init.<old>``: warns (FutureWarning, PyTorch's text) and calls ``<old>_``."""
    old = new.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old
    deprecated_init.__doc__ = f"Deprecated: use ``nn.init.{new.__name__}`` (it changes the " \
                              f"tensor in place, as the trailing underscore says)."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
__all__ += ["sparse_", "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform",
            "xavier_normal", "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]
