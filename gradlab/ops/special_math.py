"""More elementwise math: logit, xlogy, logaddexp, fmod, nan_to_num, heaviside ...

Each op's derivative sits under its forward. Where a formula has a 0/0 or a
∞·0, PyTorch picks a value, and gradlab picks the same one:

* ``xlogy(x, y) = x·ln y`` is 0 where x = 0 (even for y = 0); its
  x-derivative ln y is taken as 0 where x = 0 and y <= 0;
* ``fmod(a, b)`` jumps where a/b is a whole number; elsewhere
  d/db = -trunc(a/b);
* ``logit(x, eps)`` clamps x to [eps, 1 - eps], so the derivative is 0 outside.

(erfc and erfinv are in ``error_function.py``; lgamma, digamma and polygamma
in ``gamma_functions.py``.)
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import check_float, promote, tangent_sum, unbroadcast, xp_for
from .arithmetic import Remainder, check_integer_divisor, pow
from .comparison import isfinite
from .inplace import _unary_inplace, apply_inplace
from .inplace import abs_ as absolute_  # noqa: F401 - x.absolute_() is abs_
from .selection import where
from .trigonometry import float_input, float_pair, float_target
from .unary import _StepFunction, sigmoid, sign_of, trunc
from .unary import abs as absolute  # PyTorch's alias

__all__ = ["logit", "xlogy", "logaddexp", "logaddexp2", "fmod", "frac", "nan_to_num",
           "float_power", "sgn", "signbit", "positive", "heaviside", "absolute", "logit_",
           "xlogy_", "frac_", "nan_to_num_"]
TENSOR_METHODS = list(__all__) + ["fmod_", "sgn_", "absolute_"]


# --- logit, xlogy: logarithms with PyTorch's conventions at the edges --------------------------

class Logit(Function):
    """ln(x/(1 - x)), x clamped to [eps, 1 - eps] when eps is given.

    d/dx = 1/(x(1 - x)) inside; 0 where eps clamped x; NaN outside [0, 1] without eps.
    """

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x, eps):
        ctx.save_for_backward(x)
        ctx.eps = eps
        xp = xp_for(x)
        z = x if eps is None else xp.clip(x, eps, 1 - eps)
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.log(z / (1 - z)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        slope = grad / (x * (1 - x))
        if ctx.eps is None:
            return where((x < 0) | (x > 1), math.nan, slope), None
        return where((x < ctx.eps) | (x > 1 - ctx.eps), 0.0, slope), None


def logit(input, eps=None) -> Tensor:
    """The inverse of sigmoid: ln(p/(1 - p)). ``eps`` keeps it finite at 0 and 1."""
    return Logit.apply(float_input(input), eps)


class Xlogy(Function):
    """x·ln y, and 0 where x = 0 (unless y is NaN).

    d/dx = ln y (0 where x = 0 and y <= 0, as PyTorch), d/dy = x/y.
    """

    raw = True
    node_name = "XlogyBackward0"  # PyTorch's: 1 for a number x, 2 for a number y

    @staticmethod
    def forward(ctx, x, y):
        if not hasattr(x, "shape") or not hasattr(y, "shape"):
            ctx.node_name = "XlogyBackward2" if hasattr(x, "shape") else "XlogyBackward1"
        ctx.save_for_backward(x, y)
        xp = xp_for(x if hasattr(x, "shape") else y)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = xp.where(xp.asarray(x == 0), 0, x * xp.log(y))  # x may be a number
            out = xp.where(xp.isnan(y), y, out)
        return out.astype(x.dtype if hasattr(x, "dtype") else y.dtype, copy=False)

    @staticmethod
    def _terms(x, y, tx, ty):
        term_x = None
        if tx is not None:  # ẋ · ln y as xlogy(ẋ, y): 0 where ẋ is 0, even at y = 0
            term_x = xlogy(tx, y)
            flat = (x == 0) & (y <= 0) if isinstance(y, Tensor) else (x == 0) if y <= 0 else None
            if flat is not None:  # where x = 0 and y <= 0, PyTorch takes d/dx as 0
                term_x = where(flat, 0.0, term_x)
        return term_x, None if ty is None else ty * x / y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        sx, sy = ctx.input_shapes
        gx, gy = Xlogy._terms(x, y, None if sx is None else grad, None if sy is None else grad)
        return (None if sx is None else unbroadcast(gx, sx),
                None if sy is None else unbroadcast(gy, sy))

    @staticmethod
    def jvp(ctx, tx, ty):
        """ẏ_out = ln y · ẋ + x/y · ẏ."""
        x, y = ctx.primals
        return tangent_sum(ctx.results[0].shape, *Xlogy._terms(x, y, tx, ty))


def xlogy(input, other) -> Tensor:
    """input · ln(other), with 0 where input is 0 (so 0·ln 0 = 0, as in entropy sums)."""
    return float_pair(Xlogy, "xlogy", input, other)


# --- logaddexp, hypot, fmod: two-input ops with a closed-form gradient ------------------------

class Logaddexp(Function):
    """ln(eᵃ + eᵇ), without overflow.   d/da = eᵃ/(eᵃ + eᵇ) = σ(a - b), d/db = σ(b - a)."""

    raw = True
    xp_name, scale = "logaddexp", 1.0

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.save_for_backward(a, b)
        return getattr(xp_for(a if hasattr(a, "shape") else b), cls.xp_name)(a, b)

    @classmethod
    def _terms(cls, a, b, ta, tb):
        diff = (a - b) * cls.scale  # σ(-d) = 1 - σ(d), but NaN at a = b = ±inf, as PyTorch
        return (None if ta is None else ta * sigmoid(diff),
                None if tb is None else tb * sigmoid(-diff))

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        ga, gb = cls._terms(a, b, grad, grad)
        return unbroadcast(ga, sa), unbroadcast(gb, sb)

    @classmethod
    def jvp(cls, ctx, ta, tb):
        """ẏ = σ(a - b)·ȧ + σ(b - a)·ḃ (in base 2, σ((a - b) ln 2))."""
        return tangent_sum(ctx.results[0].shape, *cls._terms(*ctx.primals, ta, tb))


class Logaddexp2(Logaddexp):
    """log₂(2ᵃ + 2ᵇ).   d/da = 2ᵃ/(2ᵃ + 2ᵇ) = σ((a - b) ln 2)."""

    xp_name, scale = "logaddexp2", math.log(2.0)


class Fmod(Remainder):
    """a - b·trunc(a/b): the remainder with the sign of a (C's fmod).

    d/da = 1, d/db = -trunc(a/b) (the count of b's taken away).
    """

    name, node_name = "fmod", "FmodBackward1"  # PyTorch's for a tensor b; FmodBackward0: number
    quotient = staticmethod(trunc)

    @staticmethod
    def forward(ctx, a, b):
        if not hasattr(b, "shape"):
            ctx.node_name = "FmodBackward0"
        ctx.save_for_backward(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp_for(a).fmod(a, b)



def logaddexp(input, other) -> Tensor:
    """ln(e^input + e^other), computed without overflow (for log-probabilities)."""
    return float_pair(Logaddexp, "logaddexp", input, other, floats_only=True)


def logaddexp2(input, other) -> Tensor:
    """log₂(2^input + 2^other), computed without overflow."""
    return float_pair(Logaddexp2, "logaddexp2", input, other, floats_only=True)


def fmod(input, other) -> Tensor:
    """The remainder of input/other with the sign of input (``remainder`` takes other's)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fmod: input must be a Tensor, got {type(input).__name__}. "
                        "Fix: for numbers use math.fmod")
    a, b = promote(input, other)
    check_integer_divisor("fmod", a, b)
    return Fmod.apply(a, b)


# --- one-input ops -----------------------------------------------------------------------------

class Frac(Function):
    """x - trunc(x), the fractional part (sign of x).   d/dx = 1 (trunc is flat)."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x):
        return x - xp_for(x).trunc(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


def frac(input) -> Tensor:
    """The fractional part, input - trunc(input) (negative for negative input)."""
    check_float("frac", input)
    return Frac.apply(input)


# --- replacing values: nan_to_num ---------------------------------------------------------------

class NanToNum(Function):
    """NaN → nan, +inf → posinf, -inf → neginf.   d/dx = 1 where x is finite, else 0."""

    raw = True
    tangent_rule = "elementwise"
    name = "nan_to_num"

    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        ctx.save_for_backward(x)
        xp = xp_for(x)
        info = ml_dtypes.finfo(x.dtype)  # bfloat16 too
        posinf = info.max if posinf is None else posinf
        neginf = info.min if neginf is None else neginf
        out = xp.where(xp.isnan(x), nan, x)
        out = xp.where(x == math.inf, posinf, out)
        return xp.where(x == -math.inf, neginf, out).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return where(isfinite(x), grad, 0.0), None, None, None


def nan_to_num(input, nan=0.0, posinf=None, neginf=None) -> Tensor:
    """Replace NaN by ``nan`` and ±inf by ``posinf``/``neginf`` (default: the dtype's
    largest and lowest finite values). Integer tensors have neither, so come back copied."""
    if not input.dtype.is_floating_point:
        return input.clone()
    return NanToNum.apply(input, nan, posinf, neginf)


# --- float_power, sgn, signbit, positive, heaviside, absolute ---------------------------------

def float_power(input, exponent) -> Tensor:
    """input ** exponent computed in float64, whatever the inputs' dtypes (as PyTorch).

    The casts are ordinary ``to`` ops, so gradients flow back in the inputs' dtypes.
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError(f"float_power: expected at least one tensor, got "
                        f"{type(input).__name__} and {type(exponent).__name__}. "
                        "Fix: wrap one in gradlab.tensor(...)")
    as64 = [x.to(_dt.float64) if isinstance(x, Tensor) else float(x) for x in (input, exponent)]
    return pow(*as64)


class Sgn(_StepFunction):
    """sgn(x): for real x, sign(x) ∈ {-1, 0, 1}; piecewise constant, so d/dx = 0."""

    name = "sgn"

    @staticmethod
    def forward(ctx, x):
        return sign_of(x)


def sgn(input) -> Tensor:
    """sign(x) for real tensors; for complex ones z/|z|, the point on the unit circle in
    z's direction (0 at 0), as PyTorch. Its gradient comes from those two ops."""
    if input.dtype is _dt.bool:
        return input.clone()  # sgn of a bool is the bool itself
    if input.dtype.is_complex:
        from .selection import where
        from .unary import abs

        magnitude = abs(input)
        return where(magnitude == 0, 0.0, input / where(magnitude == 0, 1.0, magnitude))
    return Sgn.apply(input)


class Signbit(Function):
    """Is the sign bit set? (True for -0.0 too.) A bool result: no gradient."""

    raw = True
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        return xp_for(x).signbit(x)


def signbit(input) -> Tensor:
    """True where the sign bit is set: x < 0, and -0.0."""
    return Signbit.apply(input)


def positive(input) -> Tensor:
    """``+input``: the input itself (not a copy), as in PyTorch."""
    if input.dtype is _dt.bool:
        raise RuntimeError(f"positive: the `+` operator is not supported on a bool tensor "
                           f"(shape {tuple(input.shape)}). Fix: convert first with .int()")
    return input


class Heaviside(Function):
    """The step: 0 for x < 0, ``values`` at 0, 1 for x > 0 (NaN gives 0).

    It has no derivative in PyTorch (the gradient would be 0 almost everywhere
    and undefined at 0), so backward raises, as PyTorch's does.
    """

    raw = True

    @staticmethod
    def forward(ctx, x, values):
        xp = xp_for(x)
        return xp.where(x == 0, values, x > 0).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(
            "heaviside: has no derivative (as in PyTorch: it is flat almost everywhere and "
            "jumps at 0). Fix: for a step that learns, use a smooth one, sigmoid(k * x)")

    jvp = backward  # forward mode has no derivative to carry either


def heaviside(input, values) -> Tensor:
    """The Heaviside step, with ``values`` where input == 0."""
    if not isinstance(input, Tensor):
        raise TypeError(f"heaviside: input must be a Tensor, got {type(input).__name__}")
    if not isinstance(values, Tensor):
        raise TypeError(f"heaviside: values must be a Tensor, got {type(values).__name__}. "
                        f"Fix: gradlab.tensor({values!r}, dtype=input.dtype)")
    if values.dtype is not input.dtype:
        raise RuntimeError(f"heaviside: input and values must have the same dtype, got "
                           f"{input.dtype} and {values.dtype}. Fix: values.to(input.dtype)")
    return Heaviside.apply(input, values)


# --- in place: the result must fit the tensor, so the float ops take float tensors only -------

def logit_(input, eps=None) -> Tensor:
    float_target("logit_", input)
    return apply_inplace(Logit, input, eps)


def xlogy_(input, other) -> Tensor:
    float_target("xlogy_", input)
    return apply_inplace(Xlogy, input, other)


def fmod_(input, other) -> Tensor:
    check_integer_divisor("fmod_", input, other)
    return apply_inplace(Fmod, input, other)


def nan_to_num_(input, nan=0.0, posinf=None, neginf=None) -> Tensor:
    if not input.dtype.is_floating_point:
        return input  # integers hold no NaN or inf: nothing to replace
    return apply_inplace(NanToNum, input, nan, posinf, neginf)


frac_ = _unary_inplace(Frac, floats_only=True)
sgn_ = _unary_inplace(Sgn)
