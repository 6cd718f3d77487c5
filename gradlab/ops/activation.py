"""Activation functions: the nonlinearities between layers (``gradlab.nn.functional``).

Each is elementwise, so its backward is ``grad * f'(x)``; the docstring of
each ``Function`` gives f'. The kinks (leaky_relu at 0, hardtanh at its
bounds) take PyTorch's one-sided choice, so gradients match it exactly.

Forward mode reuses the same derivative: each op's tangent is
ẏ = f'(x) · ẋ, so every class sets ``tangent_rule = "elementwise"`` (backward
applied to the tangent; the number arguments stay as they are).

``erf`` lives here because the exact GELU needs it: x·Φ(x) with
Φ(x) = ½(1 + erf(x/√2)) the normal CDF. NumPy has no erf, so
``_erf_array`` computes it from its Taylor series and continued fraction.
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import check_float, xp_for
from .inplace import apply_inplace, relu_
from .selection import clamp, where
from .unary import exp, sigmoid, tanh
from .unary import relu as _relu

# Exported as gradlab.<name>: only the activations PyTorch also has as torch.<name>.
__all__ = ["erf", "selu", "celu", "threshold"]
# Re-exported by gradlab.nn.functional, which also imports relu, relu_ and threshold from here
# by name (F.relu takes inplace=, torch.relu doesn't).
FUNCTIONAL = ["leaky_relu", "elu", "gelu", "silu", "softplus", "hardtanh", "relu6",
              "logsigmoid", "mish", "selu", "celu", "hardsigmoid", "hardswish"]
TENSOR_METHODS = ["erf"]

_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_GELU_K = math.sqrt(2 / math.pi)  # the tanh approximation: tanh(√(2/π)(x + 0.044715x³))
_GELU_C = 0.044715
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# --- erf ----------------------------------------------------------------------------------------

# erf(x) = 2/√π Σ (-1)^n x^(2n+1) / (n! (2n+1)): 30 terms reach ~1e-15 for |x| < 2.
_ERF_TAYLOR = [_TWO_OVER_SQRT_PI * (-1) ** n / (math.factorial(n) * (2 * n + 1))
               for n in range(30)]
_ERFC_DEPTH = 40  # continued-fraction depth: ~2e-16 for |x| >= 2


def _erf_array(x):
    """erf of a raw array, to ~1e-15 in float64 (NumPy has none; CuPy runs the same code).

    Near 0 the Taylor series (Horner's rule in x²). For |x| >= 2 it would
    cancel badly, so use the continued fraction
    erfc(x) = e^(-x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))), evaluated
    from the bottom up, and erf = 1 - erfc. erf is odd: work on |x|.
    """
    xp = xp_for(x)
    work = x.astype("float32") if x.dtype.itemsize < 4 else x  # float16/bfloat16
    flat = xp.abs(work).reshape(-1)
    out = xp.empty_like(flat)
    near = flat < 2
    a = flat[near]
    t = a * a
    series = xp.full_like(a, _ERF_TAYLOR[-1])
    for c in reversed(_ERF_TAYLOR[:-1]):
        series = series * t + c
    out[near] = a * series
    a = xp.minimum(flat[~near], 10.0)  # erfc(10) ~ 2e-45: erf is 1 beyond (NaN stays NaN)
    frac = a
    for k in range(_ERFC_DEPTH, 0, -1):
        frac = a + (k / 2) / frac
    out[~near] = 1 - xp.exp(-a * a) / (math.sqrt(math.pi) * frac)
    return xp.copysign(out.reshape(work.shape), work).astype(x.dtype, copy=False)


class Erf(Function):
    """erf(x) = 2/√π ∫₀ˣ e^(-t²) dt.   d/dx = 2/√π · e^(-x²)."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _erf_array(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (exp(-(x * x)) * _TWO_OVER_SQRT_PI)


def erf(input) -> Tensor:
    """The error function; integer tensors give floats, as in PyTorch."""
    _check_tensor("erf", input)
    if input.dtype.category < 2:  # bool and integers (complex: the op decides)
        input = input.to(_dt.get_default_dtype())
    return Erf.apply(input)


def _sigmoid_array(x):
    xp = xp_for(x)
    z = xp.exp(-xp.abs(x))  # never overflows
    return xp.where(x >= 0, 1 / (1 + z), z / (1 + z))


def _softplus_array(x):
    """log(1 + e^x), stable: max(x, 0) + log1p(e^-|x|)."""
    xp = xp_for(x)
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


# --- the ReLU family ----------------------------------------------------------------------------

class LeakyRelu(Function):
    """x if x > 0 else s·x.   d/dx = 1 if x > 0 else s (s at 0, as in PyTorch)."""

    raw = True
    tangent_rule = "elementwise"
    name = "leaky_relu"

    @staticmethod
    def forward(ctx, x, negative_slope):
        ctx.save_for_backward(x)
        ctx.negative_slope = negative_slope
        # (.astype: NumPy makes bfloat16 times a Python float a float32)
        return xp_for(x).where(x > 0, x, x * negative_slope).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return where(x > 0, grad, grad * ctx.negative_slope), None


class Threshold(Function):
    """x if x > t else v.   d/dx = 1 if x > t else 0 (0 at x = t, as in PyTorch).

    Written "v where x <= t, else x", so that a NaN stays NaN (PyTorch's choice).
    """

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x, threshold, value):
        ctx.save_for_backward(x)
        ctx.threshold = threshold
        return xp_for(x).where(x <= threshold, xp_for(x).asarray(value, dtype=x.dtype), x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return where(x <= ctx.threshold, 0.0, grad), None, None  # a NaN x passes (PyTorch)


class Elu(Function):
    """λ·x if x > 0 else λ·α·(e^(s·x) - 1).   d/dx = λ if x > 0 else λ·α·s·e^(s·x).

    One node for elu (λ = s = 1) and selu (fixed α and λ), as in PyTorch.
    """

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):
        xp = xp_for(x)
        ctx.save_for_backward(x)
        ctx.params = (alpha, scale, input_scale)
        negative = alpha * xp.expm1(xp.minimum(x, 0) * input_scale)  # min: no overflow
        return (scale * xp.where(x > 0, x, negative)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        alpha, scale, input_scale = ctx.params
        # clamp keeps e^(s·x) finite on the side where() discards (inf * 0 would be NaN).
        slope = exp(clamp(x, max=0) * input_scale) * (scale * alpha * input_scale)
        return where(x > 0, grad * scale, grad * slope), None, None, None


class Celu(Elu):
    """max(0, x) + min(0, α(e^(x/α) - 1)).   d/dx = 1 if x > 0 else e^(x/α)."""


class Hardtanh(Function):
    """x clipped to [lo, hi].   d/dx = 1 strictly inside (lo, hi), else 0 (PyTorch's choice)."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x, min_val, max_val):
        ctx.save_for_backward(x)
        ctx.bounds = (min_val, max_val)
        return xp_for(x).clip(x, min_val, max_val).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        lo, hi = ctx.bounds
        return where((x > lo) & (x < hi), grad, 0.0), None, None


# --- smooth activations -------------------------------------------------------------------------

class Gelu(Function):
    """x·Φ(x), Φ(x) = ½(1 + erf(x/√2)).   d/dx = Φ(x) + x·φ(x), φ(x) = e^(-x²/2)/√(2π).

    approximate='tanh': ½x(1 + tanh u), u = √(2/π)(x + 0.044715x³);
    d/dx = ½(1 + tanh u) + ½x(1 - tanh² u) · √(2/π)(1 + 3·0.044715x²).
    """

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x, approximate):
        xp = xp_for(x)
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        if approximate == "tanh":
            out = 0.5 * x * (1 + xp.tanh(_GELU_K * (x + _GELU_C * x * x * x)))
        else:
            out = 0.5 * x * (1 + _erf_array(x * _SQRT1_2))
        return out.astype(x.dtype, copy=False)  # (bfloat16 · a Python float is float32)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if ctx.approximate == "tanh":
            t = tanh((x + x * x * x * _GELU_C) * _GELU_K)
            du = (x * x * (3 * _GELU_C) + 1) * _GELU_K
            return grad * ((t + 1) * 0.5 + x * (1 - t * t) * du * 0.5), None
        cdf = (erf(x * _SQRT1_2) + 1) * 0.5
        pdf = exp(x * x * -0.5) * _INV_SQRT_2PI
        return grad * (cdf + x * pdf), None


class Silu(Function):
    """x·σ(x) (also called swish).   d/dx = σ(x)·(1 + x·(1 - σ(x)))."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * _sigmoid_array(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = sigmoid(x)
        return grad * (s * (x * (1 - s) + 1))


class Softplus(Function):
    """(1/β)·log(1 + e^(βx)), and x where βx > threshold.   d/dx = σ(βx) (1 past threshold)."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x, beta, threshold):
        ctx.save_for_backward(x)
        ctx.params = (beta, threshold)
        bx = x * beta
        out = xp_for(x).where(bx > threshold, x, _softplus_array(bx) / beta)
        return out.astype(x.dtype, copy=False)  # (bfloat16 · a Python float is float32)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        beta, threshold = ctx.params
        bx = x * beta
        return where(bx > threshold, grad, grad * sigmoid(bx)), None, None


class LogSigmoid(Function):
    """log σ(x) = -softplus(-x), computed stably.   d/dx = 1 - σ(x) = σ(-x)."""

    raw = True
    tangent_rule = "elementwise"
    name = "logsigmoid"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return -_softplus_array(-x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * sigmoid(-x)


class Mish(Function):
    """x·tanh(softplus(x)).   d/dx = tanh(sp) + x·σ(x)·(1 - tanh²(sp)), sp = softplus(x)."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * xp_for(x).tanh(_softplus_array(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        t = tanh(softplus(x))
        return grad * (t + x * sigmoid(x) * (1 - t * t))


class Hardsigmoid(Function):
    """x/6 + ½ clipped to [0, 1].   d/dx = 1/6 for -3 < x < 3, else 0."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return xp_for(x).clip(x / 6 + 0.5, 0, 1).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return where((x > -3) & (x < 3), grad / 6, 0.0)


class Hardswish(Function):
    """x·hardsigmoid(x).   d/dx = 0 for x <= -3, x/3 + ½ for -3 < x < 3, 1 for x >= 3.

    At the kinks ±3 the two one-sided slopes differ; PyTorch takes the outer one
    (0 at -3, 1 at 3), and so does gradlab.
    """

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * xp_for(x).clip(x / 6 + 0.5, 0, 1).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return where(x <= -3, 0.0, where(x < 3, grad * (x / 3 + 0.5), grad))


# --- the public functions (PyTorch's signatures) -------------------------------------------------

def _check_tensor(op: str, input) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}; "
                        f"wrap it first with gradlab.tensor(...)")


def _activate(op: str, fn, input, *params, inplace: bool = False) -> Tensor:
    _check_tensor(op, input)
    check_float(op, input)
    if inplace:
        return apply_inplace(fn, input, *params)
    return fn.apply(input, *params)


def relu(input, inplace: bool = False) -> Tensor:
    """max(x, 0). ``inplace=True`` overwrites ``input`` (``relu_``) to save one activation's
    memory; autograd still works, since relu's backward needs only the output's sign."""
    return relu_(input) if inplace else _relu(input)


def threshold(input, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else ``value``: relu is threshold(x, 0, 0)."""
    _check_tensor("threshold", input)
    if inplace:
        return apply_inplace(Threshold, input, threshold, value)
    return Threshold.apply(input, threshold, value)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """ReLU that keeps a small slope for x < 0, so negative units still learn."""
    return _activate("leaky_relu", LeakyRelu, input, negative_slope, inplace=inplace)


def elu(input, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, α(e^x - 1) below: smooth, and its mean output stays near 0."""
    return _activate("elu", Elu, input, alpha, 1.0, 1.0, inplace=inplace)


def selu(input, inplace: bool = False) -> Tensor:
    """ELU scaled so activations keep mean 0 and variance 1 (self-normalising nets)."""
    return _activate("selu", Elu, input, _SELU_ALPHA, _SELU_SCALE, 1.0, inplace=inplace)


def celu(input, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """ELU with e^(x/α): its derivative is continuous at 0 for every α."""
    if alpha == 0:
        raise ZeroDivisionError("celu: alpha cannot be 0 (the formula divides by it); "
                                "use relu for the limit alpha -> 0")
    return _activate("celu", Celu, input, alpha, 1.0, 1.0 / alpha, inplace=inplace)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """x clipped to [min_val, max_val]: a cheap tanh."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val "
                         f"({max_val}); swap them")
    return _activate("hardtanh", Hardtanh, input, min_val, max_val, inplace=inplace)


def relu6(input, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6): hardtanh on [0, 6], and one hardtanh node, as in PyTorch."""
    return _activate("relu6", Hardtanh, input, 0.0, 6.0, inplace=inplace)


def gelu(input, approximate: str = "none") -> Tensor:
    """x·Φ(x): weighs x by how likely a standard normal is below it (transformers' default)."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return _activate("gelu", Gelu, input, approximate)


def silu(input, inplace: bool = False) -> Tensor:
    """x·σ(x): a smooth ReLU that dips slightly below 0."""
    return _activate("silu", Silu, input, inplace=inplace)


def softplus(input, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """A smooth ReLU, log(1 + e^(βx))/β; exactly x where βx > threshold (no overflow)."""
    return _activate("softplus", Softplus, input, beta, threshold)


def logsigmoid(input) -> Tensor:
    """log σ(x), without the -inf that log(sigmoid(x)) gives for very negative x."""
    return _activate("logsigmoid", LogSigmoid, input)


def mish(input, inplace: bool = False) -> Tensor:
    """x·tanh(softplus(x)): smooth and non-monotonic, like silu."""
    return _activate("mish", Mish, input, inplace=inplace)


def hardsigmoid(input, inplace: bool = False) -> Tensor:
    """A piecewise-linear sigmoid: 0 below -3, 1 above 3, x/6 + ½ between."""
    return _activate("hardsigmoid", Hardsigmoid, input, inplace=inplace)


def hardswish(input, inplace: bool = False) -> Tensor:
    """x·hardsigmoid(x): the cheap silu of MobileNetV3."""
    return _activate("hardswish", Hardswish, input, inplace=inplace)
