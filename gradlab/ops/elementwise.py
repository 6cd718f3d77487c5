"""Elementwise ops: each forward, and right under it, its derivative.

Every op here acts value by value, so its backward is the chain rule one
value at a time: ``grad_input = grad_output * (local derivative)``. When
inputs were broadcast, ``unbroadcast`` sums the gradient back to each
input's shape (a value used by many outputs collects all their gradients).

Forwards run on raw arrays (``raw = True``); backwards are tensor code, so
they are differentiable themselves (``create_graph=True``).
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.function import Function, _dispatch
from ..tensor import Tensor
from ._util import as_operand, promote, unbroadcast, xp_for

__all__ = [
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "neg",
    "negative", "pow", "exp", "log", "log1p", "sqrt", "rsqrt", "abs", "sign", "sin", "cos",
    "tanh", "sigmoid", "relu", "clamp", "clip", "maximum", "minimum", "where", "reciprocal",
    "square", "floor", "ceil", "round", "trunc", "log2", "log10", "exp2", "tan", "expm1",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
    "logical_not", "isnan", "isinf", "isfinite", "remainder", "floor_divide", "bitwise_not",
]


TENSOR_METHODS = [n for n in __all__ if n not in ("where",)]

# --- arithmetic -------------------------------------------------------------------------------

class Add(Function):
    """a + b.   d/da = 1, d/db = 1."""

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.input_shapes
        return unbroadcast(grad, sa), unbroadcast(grad, sb)


class Sub(Function):
    """a - b.   d/da = 1, d/db = -1."""

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        return a - b

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.input_shapes
        return unbroadcast(grad, sa), None if sb is None else unbroadcast(-grad, sb)


class Mul(Function):
    """a * b.   d/da = b, d/db = a."""

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        return (None if sa is None else unbroadcast(grad * b, sa),
                None if sb is None else unbroadcast(grad * a, sb))


class Div(Function):
    """a / b.   d/da = 1/b, d/db = -a/b² = -(a/b)/b."""

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        out = a / b
        ctx.save_for_backward(b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        b, out = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        grad_a = grad / b
        return (None if sa is None else unbroadcast(grad_a, sa),
                None if sb is None else unbroadcast(-grad_a * out, sb))


class Neg(Function):
    """-a.   d/da = -1."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, grad):
        return -grad


def _binary(fn, a, b):
    return _dispatch(fn, promote(a, b))


def add(input, other, *, alpha=1) -> Tensor:
    """``input + alpha * other``, broadcasting."""
    if alpha != 1:
        other = mul(other, alpha)
    return _binary(Add, input, other)


def sub(input, other, *, alpha=1) -> Tensor:
    """``input - alpha * other``, broadcasting."""
    if getattr(input, "dtype", None) is _dt.bool or getattr(other, "dtype", None) is _dt.bool:
        raise RuntimeError(
            "sub: subtracting bool tensors is not supported (shapes "
            f"{tuple(getattr(input, 'shape', ()))} and {tuple(getattr(other, 'shape', ()))}). "
            "Fix: to invert a mask use ~mask or logical_not(); for numbers convert with .int()"
        )
    if alpha != 1:
        other = mul(other, alpha)
    return _binary(Sub, input, other)


def mul(input, other) -> Tensor:
    return _binary(Mul, input, other)


def div(input, other, *, rounding_mode: str | None = None) -> Tensor:
    """True division; integers divide to float. ``rounding_mode`` 'trunc' or 'floor' rounds."""
    a, b = promote(input, other)
    if rounding_mode is not None:
        return _rounded_div(a, b, rounding_mode)
    dtype = a.dtype if isinstance(a, Tensor) else b.dtype
    if not dtype.is_floating_point:  # PyTorch: int / int is float
        fdt = _dt.get_default_dtype()
        a = a.to(fdt) if isinstance(a, Tensor) else float(a)
        b = b.to(fdt) if isinstance(b, Tensor) else float(b)
    return Div.apply(a, b)


def _rounded_div(a, b, mode):
    if mode == "trunc":
        return trunc(Div.apply(*_as_float(a, b))).to(_dtype_of(a, b))
    if mode == "floor":
        return floor_divide(a, b)
    raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {mode!r}")


def _as_float(a, b):
    if _dtype_of(a, b).is_floating_point:
        return a, b
    f = _dt.get_default_dtype()
    return (a.to(f) if isinstance(a, Tensor) else float(a),
            b.to(f) if isinstance(b, Tensor) else float(b))


def _dtype_of(a, b):
    return a.dtype if isinstance(a, Tensor) else b.dtype


def neg(input) -> Tensor:
    return Neg.apply(input)


subtract, multiply, divide, true_divide, negative = sub, mul, div, div, neg


class PowScalar(Function):
    """a ** e for a number e.   d/da = e · a^(e-1)."""

    raw = True
    name = "pow"

    @staticmethod
    def forward(ctx, a, exponent):
        ctx.save_for_backward(a)
        ctx.exponent = exponent
        return (a ** exponent).astype(a.dtype, copy=False)  # ml_dtypes: bf16 ** 2.0 is f32

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        e = ctx.exponent
        if e == 0:
            return grad * 0.0, None
        return grad * (a ** (e - 1) * e), None


class Pow(Function):
    """a ** b for tensors.   d/da = b · a^(b-1),  d/db = a^b · ln a (0 where a = 0, b >= 0)."""

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        out = a ** b
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        grad_a = grad_b = None
        if sa is not None:
            grad_a = unbroadcast(grad * b * a ** (b - 1), sa)
        if sb is not None:
            if isinstance(a, Tensor):
                safe_log = log(where(a == 0, 1.0, a))  # where a = 0, a^b (b > 0) is flat in b
            else:
                safe_log = math.log(a) if a > 0 else 0.0
            grad_b = unbroadcast(grad * out * safe_log, sb)
        return grad_a, grad_b


def pow(input, exponent) -> Tensor:
    """``input ** exponent``; either side may be a number (``2 ** x`` works)."""
    if isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        exponent = as_operand(exponent, input)
        if not isinstance(exponent, Tensor):
            if not input.dtype.is_floating_point:
                if isinstance(exponent, float):
                    input = input.to(_dt.get_default_dtype())
                elif exponent < 0:
                    raise RuntimeError(
                        f"pow: integers to negative integer powers are not allowed "
                        f"({input.dtype} tensor ** {exponent}). Fix: x.float() ** {exponent}")
            return PowScalar.apply(input, exponent)
    a, b = promote(input, exponent)
    return Pow.apply(a, b)


# --- unary math -------------------------------------------------------------------------------

def _unary(fn, x, op: str):
    if not isinstance(x, Tensor):
        x = as_operand(x)
        if not isinstance(x, Tensor):
            from .creation import tensor
            x = tensor(x)
    if not x.dtype.is_floating_point:
        x = x.to(_dt.get_default_dtype())  # PyTorch: exp(int tensor) is float
    return _dispatch(fn, (x,))


class Exp(Function):
    """e^a.   d/da = e^a (the output itself)."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        out = xp_for(a).exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out


class Log(Function):
    """ln a.   d/da = 1/a."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_for(a).log(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / a


class Log1p(Function):
    """ln(1 + a), accurate for small a.   d/da = 1/(1 + a)."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_for(a).log1p(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / (a + 1)


class Sqrt(Function):
    """√a.   d/da = 1 / (2√a)."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        out = xp_for(a).sqrt(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad / (out * 2)


class Rsqrt(Function):
    """1/√a.   d/da = -½ a^(-3/2) = -½ · out³."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        out = 1 / xp_for(a).sqrt(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (out * out * out) * -0.5


class Abs(Function):
    """|a|.   d/da = sign(a) (0 at 0, as in PyTorch)."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_for(a).abs(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * sign(a)


class Sin(Function):
    """sin a.   d/da = cos a."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_for(a).sin(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * cos(a)


class Cos(Function):
    """cos a.   d/da = -sin a."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_for(a).cos(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return -(grad * sin(a))


class Tan(Function):
    """tan a.   d/da = 1 + tan² a."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        out = xp_for(a).tan(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (out * out + 1)


class Tanh(Function):
    """tanh a.   d/da = 1 - tanh² a."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        out = xp_for(a).tanh(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (1 - out * out)


class Sigmoid(Function):
    """σ(a) = 1 / (1 + e^-a).   d/da = σ(a) (1 - σ(a))."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        xp = xp_for(a)
        # Stable both ways: e^-|a| never overflows.
        z = xp.exp(-xp.abs(a))
        out = xp.where(a >= 0, 1 / (1 + z), z / (1 + z)).astype(a.dtype, copy=False)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (out * (1 - out))


class Relu(Function):
    """max(a, 0).   d/da = 1 where a > 0, else 0."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        out = xp_for(a).maximum(a, 0)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (out > 0)


class Expm1(Function):
    """e^a - 1, accurate for small a.   d/da = e^a = out + 1."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        out = xp_for(a).expm1(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (out + 1)


class Log2(Function):
    """log₂ a.   d/da = 1 / (a ln 2)."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_for(a).log2(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / (a * math.log(2.0))


class Log10(Function):
    """log₁₀ a.   d/da = 1 / (a ln 10)."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return xp_for(a).log10(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / (a * math.log(10.0))


class Exp2(Function):
    """2^a.   d/da = 2^a ln 2."""

    raw = True

    @staticmethod
    def forward(ctx, a):
        out = xp_for(a).exp2(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out * math.log(2.0)


class _StepFunction(Function):
    """Piecewise-constant ops (sign, floor, ...): the derivative is 0 almost everywhere."""

    raw = True

    @staticmethod
    def backward(ctx, grad):
        return grad * 0.0


def _step(name: str, xp_name: str):
    def forward(ctx, a):
        return getattr(xp_for(a), xp_name)(a)

    cls = type(name.capitalize(), (_StepFunction,), {
        "name": name, "forward": staticmethod(forward),
        "__doc__": f"{name}(a): piecewise constant, so d/da = 0."})

    def op(input) -> Tensor:
        if not input.dtype.is_floating_point and name != "sign":
            return input.clone()  # rounding an integer changes nothing
        return cls.apply(input)

    op.__name__ = name
    op.__doc__ = cls.__doc__
    return cls, op


Sign, sign = _step("sign", "sign")
Floor, floor = _step("floor", "floor")
Ceil, ceil = _step("ceil", "ceil")
Round, round = _step("round", "round")  # noqa: A001 - PyTorch's name
Trunc, trunc = _step("trunc", "trunc")


def exp(input) -> Tensor:
    return _unary(Exp, input, "exp")


def log(input) -> Tensor:
    return _unary(Log, input, "log")


def log1p(input) -> Tensor:
    return _unary(Log1p, input, "log1p")


def sqrt(input) -> Tensor:
    return _unary(Sqrt, input, "sqrt")


def rsqrt(input) -> Tensor:
    return _unary(Rsqrt, input, "rsqrt")


def sin(input) -> Tensor:
    return _unary(Sin, input, "sin")


def cos(input) -> Tensor:
    return _unary(Cos, input, "cos")


def tan(input) -> Tensor:
    return _unary(Tan, input, "tan")


def tanh(input) -> Tensor:
    return _unary(Tanh, input, "tanh")


def sigmoid(input) -> Tensor:
    return _unary(Sigmoid, input, "sigmoid")


def expm1(input) -> Tensor:
    return _unary(Expm1, input, "expm1")


def log2(input) -> Tensor:
    return _unary(Log2, input, "log2")


def log10(input) -> Tensor:
    return _unary(Log10, input, "log10")


def exp2(input) -> Tensor:
    return _unary(Exp2, input, "exp2")


def abs(input) -> Tensor:  # noqa: A001 - PyTorch's name
    return Abs.apply(input)


def relu(input) -> Tensor:
    return Relu.apply(input)


def reciprocal(input) -> Tensor:
    """1 / input (float result)."""
    return div(1.0, input)


def square(input) -> Tensor:
    return mul(input, input)


# --- clamp, maximum, minimum, where ---------------------------------------------------------------

class Clamp(Function):
    """clamp(a, lo, hi).   d/da = 1 where lo <= a <= hi, else 0."""

    raw = True

    @staticmethod
    def forward(ctx, a, lo, hi):
        ctx.save_for_backward(a)
        ctx.bounds = (lo, hi)
        return xp_for(a).clip(a, lo, hi).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        lo, hi = ctx.bounds
        inside = grad
        if lo is not None:
            inside = inside * (a >= lo)
        if hi is not None:
            inside = inside * (a <= hi)
        return inside, None, None


def clamp(input, min=None, max=None) -> Tensor:  # noqa: A002 - PyTorch's names
    """Limit values to ``[min, max]`` (either bound may be None, a number or a tensor)."""
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        out = input
        if min is not None:
            out = maximum(out, min)
        if max is not None:
            out = minimum(out, max)
        return out
    if not input.dtype.is_floating_point and (isinstance(min, float) or isinstance(max, float)):
        input = input.to(_dt.get_default_dtype())
    return Clamp.apply(input, min, max)


clip = clamp


class Maximum(Function):
    """max(a, b) elementwise.  The larger input gets the gradient; ties split it in half."""

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return xp_for(a).maximum(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _split_grad(ctx, grad, a > b, a == b)


class Minimum(Function):
    """min(a, b) elementwise.  The smaller input gets the gradient; ties split it in half."""

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return xp_for(a).minimum(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _split_grad(ctx, grad, a < b, a == b)


def _split_grad(ctx, grad, a_wins, tie):
    sa, sb = ctx.input_shapes
    share_a = where(a_wins, 1.0, where(tie, 0.5, 0.0))
    return (None if sa is None else unbroadcast(grad * share_a, sa),
            None if sb is None else unbroadcast(grad * (1 - share_a), sb))


def maximum(input, other) -> Tensor:
    return _binary(Maximum, input, other)


def minimum(input, other) -> Tensor:
    return _binary(Minimum, input, other)


class Where(Function):
    """cond ? a : b.   The gradient goes to a where cond holds, to b elsewhere."""

    raw = True

    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        return xp_for(cond).where(cond, a, b)

    @staticmethod
    def backward(ctx, grad):
        (cond,) = ctx.saved_tensors
        _, sa, sb = ctx.input_shapes
        return (None,
                None if sa is None else unbroadcast(Where.apply(cond, grad, 0.0), sa),
                None if sb is None else unbroadcast(Where.apply(cond, 0.0, grad), sb))


def where(condition, input=None, other=None) -> Tensor:
    """Pick ``input`` where ``condition`` holds, else ``other`` (tensors or numbers).

    With only ``condition``, returns the indices of its nonzero entries (``nonzero``).
    """
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor):
        condition = as_operand(condition)
    if condition.dtype is not _dt.bool:
        condition = condition.to(_dt.bool)
    a, b = promote(input, other)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        # Two numbers: PyTorch gives the default float (or int64) dtype.
        from .creation import tensor
        a = tensor(a, device=condition.device)
        a, b = promote(a, b)
    return Where.apply(condition, a, b)


# --- comparisons and logic: no gradient ---------------------------------------------------------

class _Compare(Function):
    raw = True
    differentiable = False


def _comparison(name: str, py_op):
    cls = type(name.capitalize(), (_Compare,), {
        "name": name, "forward": staticmethod(lambda ctx, a, b: py_op(a, b)),
        "__doc__": f"Elementwise {name}; returns a bool tensor (no gradient)."})

    def op(input, other) -> Tensor:
        return _binary(cls, input, other)

    op.__name__ = name
    op.__doc__ = cls.__doc__
    return op


eq = _comparison("eq", lambda a, b: a == b)
ne = _comparison("ne", lambda a, b: a != b)
lt = _comparison("lt", lambda a, b: a < b)
le = _comparison("le", lambda a, b: a <= b)
gt = _comparison("gt", lambda a, b: a > b)
ge = _comparison("ge", lambda a, b: a >= b)


def _logical(name: str, xp_name: str, unary: bool = False):
    def forward(ctx, *arrays):
        return getattr(xp_for(arrays[0]), xp_name)(*arrays)

    cls = type("".join(p.capitalize() for p in name.split("_")), (_Compare,),
               {"name": name, "forward": staticmethod(forward)})
    if unary:
        def op(input) -> Tensor:
            return cls.apply(input)
    else:
        def op(input, other) -> Tensor:
            return _binary(cls, input, other)
    op.__name__ = name
    op.__doc__ = f"Elementwise {name}; returns a bool tensor (no gradient)."
    return op


logical_and = _logical("logical_and", "logical_and")
logical_or = _logical("logical_or", "logical_or")
logical_xor = _logical("logical_xor", "logical_xor")
logical_not = _logical("logical_not", "logical_not", unary=True)
isnan = _logical("isnan", "isnan", unary=True)
isinf = _logical("isinf", "isinf", unary=True)
isfinite = _logical("isfinite", "isfinite", unary=True)
bitwise_not = _logical("bitwise_not", "invert", unary=True)


def _integer_op(name: str, xp_name: str):
    def forward(ctx, a, b):
        return getattr(xp_for(a), xp_name)(a, b)

    cls = type(name.capitalize(), (_StepFunction,), {"name": name,
                                                     "forward": staticmethod(forward)})

    def op(input, other) -> Tensor:
        return _binary(cls, input, other)

    op.__name__ = name
    return cls, op


FloorDivide, floor_divide = _integer_op("floor_divide", "floor_divide")


class Remainder(Function):
    """a mod b (sign of b, Python's rule).   d/da = 1, d/db = -floor(a / b)."""

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return xp_for(a).remainder(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        return (None if sa is None else unbroadcast(grad, sa),
                None if sb is None else unbroadcast(-grad * floor(a / b), sb))


def remainder(input, other) -> Tensor:
    return _binary(Remainder, input, other)
