"""Whole-number ops: gcd, lcm and the bit shifts ``<<`` and ``>>``.

They are defined on integers only, and none has a gradient: an integer
result can't move a little when its input does. (To scale a float by 2^k,
the differentiable op is ``ldexp`` in ``float_parts.py``.)

Shifting by a negative amount, or by the width of the dtype or more, is
undefined in C (NumPy's and CuPy's kernels), so the amount is checked here
and the result is PyTorch's: ``x << n`` is 0, and ``x >> n`` is what an
endless shift gives, -1 for a negative signed ``x`` and 0 otherwise.
A Python int operand wraps into the tensor's dtype first, as in PyTorch
(``uint8 << 257`` shifts by 1).
"""

from __future__ import annotations

from numbers import Number

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import promote, xp_for

__all__ = ["gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift"]
TENSOR_METHODS = list(__all__) + [
    ("__lshift__", "bitwise_left_shift"), ("__rshift__", "bitwise_right_shift"),
    ("__rlshift__", "_reversed_left_shift"), ("__rrshift__", "_reversed_right_shift")]


class _IntegerOp(Function):
    """An op on integers: no node is recorded (no gradient)."""

    raw = True
    differentiable = False


class Gcd(_IntegerOp):
    """The greatest common divisor, >= 0; gcd(0, 0) = 0."""

    @staticmethod
    def forward(ctx, a, b):
        return xp_for(a).gcd(a, b)


class Lcm(_IntegerOp):
    """The least common multiple, >= 0; 0 when either is 0."""

    @staticmethod
    def forward(ctx, a, b):
        return xp_for(a).lcm(a, b)


def _shift(a, b, left: bool):
    """``a << b`` or ``a >> b`` with PyTorch's result where ``b`` is out of [0, bits)."""
    xp = xp_for(a if hasattr(a, "shape") else b)
    dtype = (a if hasattr(a, "dtype") else b).dtype
    a, b = xp.asarray(a, dtype=dtype), xp.asarray(b, dtype=dtype)
    bits = dtype.itemsize * 8
    outside = (b < 0) | (b >= bits)
    if left:
        out = xp.where(outside, 0, xp.left_shift(a, xp.where(outside, 0, b)))
    else:
        # Past the last bit only the sign is left: a >> (bits - 1) is -1 or 0 (0 if unsigned).
        endless = xp.right_shift(a, bits - 1) if dtype.kind == "i" else xp.zeros_like(a)
        out = xp.where(outside, endless, xp.right_shift(a, xp.where(outside, 0, b)))
    return out.astype(dtype, copy=False)


class BitwiseLeftShift(_IntegerOp):
    """a · 2^b in the integer's bits: the bits of ``a`` move ``b`` places up; those that
    fall off the top are lost (so it wraps around)."""

    name = "bitwise_left_shift"

    @staticmethod
    def forward(ctx, a, b):
        return _shift(a, b, left=True)


class BitwiseRightShift(_IntegerOp):
    """floor(a / 2^b): the bits of ``a`` move ``b`` places down, the sign bit filling in."""

    name = "bitwise_right_shift"

    @staticmethod
    def forward(ctx, a, b):
        return _shift(a, b, left=False)


def _integer_operands(op: str, input, other, numbers: bool, fix: str):
    """The two operands after PyTorch's promotion, refusing floats, bools and (unless
    ``numbers``) a Python number in place of a tensor."""
    for name, x in (("input", input), ("other", other)):
        if isinstance(x, Tensor):
            if x.dtype.np.kind not in "iu":  # floats, bools (and complex) are refused
                raise RuntimeError(f"{op}: needs integer tensors, got {name} of dtype {x.dtype} "
                                f"and shape {tuple(x.shape)}. {fix}")
        elif not numbers:
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__} (as in "
                            f"PyTorch). Fix: wrap it, e.g. gradlab.tensor({x!r})")
        elif not isinstance(x, Number) or isinstance(x, (bool, float, complex)):
            raise RuntimeError(f"{op}: {name} must be an integer Tensor or a Python int, got "
                            f"{type(x).__name__} {x!r}. {fix}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{op}: expected at least one tensor, got two numbers. Fix: use "
                        f"Python's own operator on numbers, or wrap one in gradlab.tensor(...)")
    return promote(input, other)


_WHOLE_FIX = ("Fix: if the values are whole numbers, convert first with .long() "
              "(e.g. gcd(x.long(), y.long())).")
_SHIFT_FIX = ("Shifting the bits of a float has no arithmetic meaning. Fix: to multiply by "
              "2**k use x * 2**k or ldexp(x, k); for integers convert with .long().")


def gcd(input, other) -> Tensor:
    """The greatest common divisor of integer tensors, elementwise and broadcasting; always
    >= 0 (gcd(-4, 6) = 2) and gcd(0, 0) = 0. No gradient."""
    return Gcd.apply(*_integer_operands("gcd", input, other, False, _WHOLE_FIX))


def lcm(input, other) -> Tensor:
    """The least common multiple of integer tensors, elementwise and broadcasting; always
    >= 0, and 0 when either value is 0. No gradient."""
    return Lcm.apply(*_integer_operands("lcm", input, other, False, _WHOLE_FIX))


def bitwise_left_shift(input, other) -> Tensor:
    """``input << other``: input · 2^other, wrapping in the integer dtype (either side may
    be a Python int). Shifting by < 0 or >= the dtype's bits gives 0. No gradient."""
    return BitwiseLeftShift.apply(*_integer_operands("bitwise_left_shift", input, other, True,
                                                     _SHIFT_FIX))


def bitwise_right_shift(input, other) -> Tensor:
    """``input >> other``: floor(input / 2^other) (either side may be a Python int).
    Shifting by < 0 or >= the dtype's bits gives -1 for negative input, else 0."""
    return BitwiseRightShift.apply(*_integer_operands("bitwise_right_shift", input, other, True,
                                                      _SHIFT_FIX))


def _reversed_left_shift(input, other) -> Tensor:
    """``number << tensor`` (Python calls ``tensor.__rlshift__(number)``)."""
    return bitwise_left_shift(other, input)


def _reversed_right_shift(input, other) -> Tensor:
    """``number >> tensor`` (Python calls ``tensor.__rrshift__(number)``)."""
    return bitwise_right_shift(other, input)
