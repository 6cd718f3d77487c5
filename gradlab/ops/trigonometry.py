"""Inverse trigonometry and hyperbolic functions: asin, atan2, sinh, atanh, deg2rad ...

sin, cos, tan and tanh live in ``unary``; this family adds their inverses
and relatives, and two geometric neighbours: ``hypot`` (the radius whose
angle atan2 gives) and ``sinc`` = sin(πx)/(πx). Each derivative sits under its forward. The inverse
functions all have derivatives of the form 1/√(...) or 1/(...):

    d/dx asin x = 1/√(1 - x²)       d/dx asinh x = 1/√(x² + 1)
    d/dx acos x = -1/√(1 - x²)      d/dx acosh x = 1/√(x² - 1)
    d/dx atan x = 1/(1 + x²)        d/dx atanh x = 1/(1 - x²)

so they blow up at the ends of their domains (asin at ±1, acosh at 1), as
in PyTorch: the gradient there is ±inf, and outside the domain NaN.

The one-input ops and ``sinc`` take complex numbers too, on NumPy's principal
branches (PyTorch's): each is holomorphic, so its backward is the same
formula, conjugated (``complex_parts.py``). One formula needs care: on the
principal branch, d/dz acosh z = 1/(√(z - 1) √(z + 1)), which is 1/√(z² - 1)
only where Re z > 0.

``atan2(y, x)`` is the angle of the point (x, y): two inputs, broadcast.
Integer input is computed in the default float dtype, as PyTorch does.
Forward mode: ``tangent_rule = "elementwise"`` for the one-input ops (the
tangent is f'(x)·ẋ), a written ``jvp`` for atan2.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import as_operand, check_float, promote, tangent_sum, unbroadcast, xp_for
from .comparison import isinf
from .complex_parts import conj
from .inplace import _unary_inplace, apply_inplace
from .selection import where
from .unary import cos, sqrt

__all__ = ["asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh",
           "deg2rad", "rad2deg", "arcsin", "arccos", "arctan", "arctan2", "arcsinh", "arccosh",
           "arctanh", "hypot", "sinc", "sinc_",
           "asin_", "acos_", "atan_", "sinh_", "cosh_", "asinh_", "acosh_", "atanh_",
           "deg2rad_", "rad2deg_", "arcsin_", "arccos_", "arctan_", "arcsinh_", "arccosh_",
           "arctanh_"]
TENSOR_METHODS = list(__all__) + ["atan2_", "arctan2_", "hypot_"]  # methods only, as in PyTorch


def float_input(input) -> Tensor:
    """``input`` as a floating point Tensor: integers and bools go to the default dtype."""
    if not isinstance(input, Tensor):
        input = as_operand(input)
        if not isinstance(input, Tensor):
            from .creation import tensor
            input = tensor(input)
    if input.dtype.category < 2:  # bool and integers (complex: the op decides)
        input = input.to(_dt.get_default_dtype())  # PyTorch: asin(int tensor) is float
    return input


def float_operands(input, other):
    """Two operands after PyTorch's promotion, then integers to the default float dtype."""
    a, b = promote(input, other)
    dtype = a.dtype if isinstance(a, Tensor) else b.dtype
    if not dtype.is_floating_point:
        fdt = _dt.get_default_dtype()
        a = a.to(fdt) if isinstance(a, Tensor) else float(a)
        b = b.to(fdt) if isinstance(b, Tensor) else float(b)
    return a, b


def float_pair(fn, op: str, input, other, floats_only: bool = False) -> Tensor:
    """Dispatch the two-input op ``fn`` on float operands; ``floats_only``: refuse two
    integer operands (PyTorch has no integer kernel for hypot, logaddexp ...; an integer
    tensor beside a float one is promoted first, as in PyTorch)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{op}: expected at least one tensor, got {type(input).__name__} and "
                        f"{type(other).__name__}. Fix: wrap one in gradlab.tensor(...)")
    if floats_only:
        a, b = promote(input, other)
        check_float(op, a if isinstance(a, Tensor) else b)
    return fn.apply(*float_operands(input, other))


def float_target(name: str, input: Tensor) -> None:
    """An in-place op with a float result needs a float (or complex) tensor to write it into."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"{name}: the result is float and can't be stored in the "
                           f"{input.dtype} tensor of shape {tuple(input.shape)}. Fix: use "
                           f"{name[:-1]}(), or convert first: x = x.float()")


class _InputDerivative(Function):
    """A one-input op whose derivative is a formula in its input ``x`` (saved); holomorphic,
    so the subclasses' backwards conjugate it for complex x."""

    raw = True
    tangent_rule = "elementwise"
    xp_name = ""

    @classmethod
    def forward(cls, ctx, a):
        ctx.save_for_backward(a)
        with np.errstate(invalid="ignore", divide="ignore"):  # out of domain: NaN, as PyTorch
            return getattr(xp_for(a), cls.xp_name)(a)


class Asin(_InputDerivative):
    """asin x.   d/dx = 1/√(1 - x²)."""

    supports_complex = True
    xp_name = "arcsin"

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / conj(sqrt(1 - x * x))


class Acos(_InputDerivative):
    """acos x.   d/dx = -1/√(1 - x²)."""

    supports_complex = True
    xp_name = "arccos"

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -grad / conj(sqrt(1 - x * x))


class Atan(_InputDerivative):
    """atan x.   d/dx = 1/(1 + x²)."""

    supports_complex = True
    xp_name = "arctan"

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / conj(x * x + 1)


class Sinh(_InputDerivative):
    """sinh x = (eˣ - e⁻ˣ)/2.   d/dx = cosh x."""

    supports_complex = True
    xp_name = "sinh"

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * conj(cosh(x))


class Cosh(_InputDerivative):
    """cosh x = (eˣ + e⁻ˣ)/2.   d/dx = sinh x."""

    supports_complex = True
    xp_name = "cosh"

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * conj(sinh(x))


class Asinh(_InputDerivative):
    """asinh x = ln(x + √(x² + 1)).   d/dx = 1/√(x² + 1)."""

    supports_complex = True
    xp_name = "arcsinh"

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / conj(sqrt(x * x + 1))


class Acosh(_InputDerivative):
    """acosh x = ln(x + √(x² - 1)), x >= 1.   d/dx = 1/√(x² - 1) (inf at 1); for complex z,
    1/(√(z - 1) √(z + 1)) (the module docstring says why)."""

    supports_complex = True
    xp_name = "arccosh"

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if x.dtype.is_complex:
            return grad / conj(sqrt(x - 1) * sqrt(x + 1))
        return grad / sqrt(x * x - 1)


class Atanh(_InputDerivative):
    """atanh x = ½ ln((1 + x)/(1 - x)), |x| < 1.   d/dx = 1/(1 - x²)."""

    supports_complex = True
    xp_name = "arctanh"

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / conj(1 - x * x)


class _Scale(Function):
    """x · c for a fixed c: linear, so the tangent is the op applied to the tangent."""

    raw = True
    tangent_rule = "linear"
    factor = 1.0

    @classmethod
    def forward(cls, ctx, a):
        return (a * cls.factor).astype(a.dtype, copy=False)

    @classmethod
    def backward(cls, ctx, grad):
        return grad * cls.factor


class Deg2rad(_Scale):
    """Degrees to radians, x · π/180.   d/dx = π/180."""

    factor = math.pi / 180
    node_name = "Deg2RadBackward0"


class Rad2deg(_Scale):
    """Radians to degrees, x · 180/π.   d/dx = 180/π."""

    factor = 180 / math.pi
    node_name = "Rad2DegBackward0"


class Atan2(Function):
    """atan2(y, x): the angle of the point (x, y), in (-π, π].

    d/dy = x/(x² + y²),  d/dx = -y/(x² + y²). At the origin the angle has no
    derivative; PyTorch gives 0 there (1/(x² + y²) = inf is replaced by 0),
    and so does gradlab.
    """

    raw = True

    @staticmethod
    def forward(ctx, y, x):
        ctx.save_for_backward(y, x)
        return xp_for(y if hasattr(y, "shape") else x).arctan2(y, x)

    @staticmethod
    def _inverse_radius2(y, x):
        """1/(x² + y²), with 0 where that is inf (the origin), as PyTorch."""
        recip = 1 / (x * x + y * y)
        return where(isinf(recip), 0.0, recip)

    @staticmethod
    def backward(ctx, grad):
        y, x = ctx.saved_tensors
        sy, sx = ctx.input_shapes
        recip = Atan2._inverse_radius2(y, x)
        return (None if sy is None else unbroadcast(grad * x * recip, sy),
                None if sx is None else unbroadcast(-grad * y * recip, sx))

    @staticmethod
    def jvp(ctx, ty, tx):
        """ẏ_out = (x · ẏ - y · ẋ)/(x² + y²)."""
        y, x = ctx.primals
        recip = Atan2._inverse_radius2(y, x)
        return tangent_sum(ctx.results[0].shape, None if ty is None else ty * x * recip,
                           None if tx is None else -(tx * y * recip))


class Hypot(Function):
    """√(a² + b²), without overflow.   d/da = a/√(a² + b²), d/db = b/√(a² + b²)."""

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        out = xp_for(a if hasattr(a, "shape") else b).hypot(a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        return (None if sa is None else unbroadcast(grad * a / out, sa),
                None if sb is None else unbroadcast(grad * b / out, sb))

    @staticmethod
    def jvp(ctx, ta, tb):
        """ẏ = (a·ȧ + b·ḃ)/y."""
        a, b = ctx.primals
        (out,) = ctx.results
        return tangent_sum(out.shape, None if ta is None else ta * a / out,
                           None if tb is None else tb * b / out)


class Sinc(Function):
    """sin(πx)/(πx), and 1 at 0.   d/dx = (cos(πx) - sinc x)/x, and 0 at 0."""

    raw = True
    supports_complex = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x):
        xp = xp_for(x)
        px = x * math.pi
        with np.errstate(divide="ignore", invalid="ignore"):
            out = xp.where(x == 0, 1, xp.sin(px) / px).astype(x.dtype, copy=False)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        at_zero = x == 0
        safe_x = where(at_zero, 1.0, x)  # where(.., 0, ..) alone would still divide by 0
        return grad * conj(where(at_zero, 0.0, (cos(x * math.pi) - out) / safe_x))


def asin(input) -> Tensor:
    return Asin.apply(float_input(input))


def acos(input) -> Tensor:
    return Acos.apply(float_input(input))


def atan(input) -> Tensor:
    return Atan.apply(float_input(input))


def sinh(input) -> Tensor:
    return Sinh.apply(float_input(input))


def cosh(input) -> Tensor:
    return Cosh.apply(float_input(input))


def asinh(input) -> Tensor:
    return Asinh.apply(float_input(input))


def acosh(input) -> Tensor:
    return Acosh.apply(float_input(input))


def atanh(input) -> Tensor:
    return Atanh.apply(float_input(input))


def deg2rad(input) -> Tensor:
    return Deg2rad.apply(float_input(input))


def rad2deg(input) -> Tensor:
    return Rad2deg.apply(float_input(input))


def atan2(input, other) -> Tensor:
    """The angle of the point (other, input), i.e. atan(input/other) in the right quadrant."""
    return float_pair(Atan2, "atan2", input, other)


def sinc(input) -> Tensor:
    """The normalized sinc, sin(πx)/(πx) (1 at 0)."""
    return Sinc.apply(float_input(input))


def hypot(input, other) -> Tensor:
    """√(input² + other²), the length of the vector (input, other)."""
    return float_pair(Hypot, "hypot", input, other, floats_only=True)


arcsin, arccos, arctan, arctan2 = asin, acos, atan, atan2
arcsinh, arccosh, arctanh = asinh, acosh, atanh

# --- in place (x.asin_() ...): the float result must fit the tensor, so floats only ----------

sinc_ = _unary_inplace(Sinc, floats_only=True)
asin_ = arcsin_ = _unary_inplace(Asin, floats_only=True)
acos_ = arccos_ = _unary_inplace(Acos, floats_only=True)
atan_ = arctan_ = _unary_inplace(Atan, floats_only=True)
sinh_ = _unary_inplace(Sinh, floats_only=True)
cosh_ = _unary_inplace(Cosh, floats_only=True)
asinh_ = arcsinh_ = _unary_inplace(Asinh, floats_only=True)
acosh_ = arccosh_ = _unary_inplace(Acosh, floats_only=True)
atanh_ = arctanh_ = _unary_inplace(Atanh, floats_only=True)
deg2rad_ = _unary_inplace(Deg2rad, floats_only=True)
rad2deg_ = _unary_inplace(Rad2deg, floats_only=True)


def atan2_(input, other) -> Tensor:
    """In-place atan2 (a Tensor method only, as in PyTorch)."""
    float_target("atan2_", input)
    return apply_inplace(Atan2, input, other)


def hypot_(input, other) -> Tensor:
    float_target("hypot_", input)
    return apply_inplace(Hypot, input, other)


arctan2_ = atan2_
