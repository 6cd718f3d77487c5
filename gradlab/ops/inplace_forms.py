"""More in-place forms (``y.cos_()``, ``y.eq_(0)``, ``x //= 2``) and plain aliases (``ger``).

Each in-place form here is its out-of-place op run through the one in-place
mechanism of ``inplace.py``: ``_unary_inplace``/``apply_inplace`` where the op is
one ``Function`` (``cos_`` records a ``cos_`` node), ``apply_inplace_fn`` where the
op's public function does the work (``reciprocal_`` is ``1 / x``; ``floor_divide_``
refuses integer division by 0). So every form bumps the version counter,
rebases the tensor's history onto the new node (through a view, its base's
too), carries tangents in forward mode, and refuses what PyTorch refuses: a
leaf that requires grad, and a result its dtype can't hold (``reciprocal_`` of
an integer tensor gives floats).

Comparisons and logic in place (``eq_``, ``lt_``, ``logical_and_``) write 1 and
0 in the tensor's own dtype: ``x.lt_(1.5)`` on a float tensor holds 1.0 and 0.0.
The new values are a step function of the old ones, so the gradient to the
old history is exactly 0 (a ``Replace`` node records that), as PyTorch's
``EqBackward0`` gives; they compare the operands as given, before any cast
(``b.eq_(1.5)`` on a bool tensor compares with 1.5, not with True).

Left out: the shape-changing in-place forms (``t_``, ``transpose_``,
``squeeze_``, ``unsqueeze_``, ``swapaxes_``, ``swapdims_``). A view records how
it was made from its base as steps replayed on the base
(``autograd/views.py``); a base whose shape changed in place would replay its
older views' steps on the new shape, and their gradients would go to the wrong
places. Use the out-of-place forms (``y = y.t()``).
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from . import (
    arithmetic,
    comparison,
    covariance,
    cumulative,
    dense,
    float_parts,
    gamma_functions,
    indexing,
    integer_math,
    linalg,
    scans,
    selection,
    special_math,
    triangular,
    unary,
)
from .inplace import _unary_inplace, apply_inplace_fn, div_, mul_, neg_, sub_

# Aliases PyTorch has at torch.<name> (and as methods).
_ALIASES = ["fix", "greater", "greater_equal", "less", "less_equal", "not_equal", "ger"]
# In-place forms PyTorch also has at torch.<name>_.
_FUNCTIONS = ["cos_", "sin_", "tan_", "floor_", "ceil_", "round_", "trunc_", "fix_", "exp2_",
              "expm1_", "log10_", "log1p_", "log2_", "rsqrt_", "reciprocal_", "square_",
              "negative_", "gcd_", "lcm_", "ldexp_", "clamp_min_", "clamp_max_", "addmv_"]
# Methods gradlab has, which PyTorch also offers as torch.<name>(x, ...).
_METHODS_AS_FUNCTIONS = ["detach_", "index_put_"]
__all__ = _ALIASES + _FUNCTIONS + _METHODS_AS_FUNCTIONS
# Methods only, as in PyTorch (there is no torch.eq_).
_METHODS_ONLY = [
    "sign_", "floor_divide_", "remainder_", "true_divide_", "divide_", "multiply_",
    "subtract_", "copysign_", "nextafter_", "float_power_", "heaviside_", "cumsum_",
    "cumprod_", "renorm_", "mvlgamma_", "tril_", "triu_", "addmm_", "addbmm_", "baddbmm_",
    "eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_", "less_",
    "less_equal_", "not_equal_", "logical_and_", "logical_or_", "logical_xor_",
    "logical_not_", "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_not_",
    "bitwise_left_shift_", "bitwise_right_shift_"]
# x //= y, x %= y, x &= m ... change x in place, as in PyTorch (not x = x // y).
_OPERATORS = [("__ifloordiv__", "floor_divide_"), ("__imod__", "remainder_"),
              ("__iand__", "bitwise_and_"), ("__ior__", "bitwise_or_"),
              ("__ixor__", "bitwise_xor_"), ("__ilshift__", "bitwise_left_shift_"),
              ("__irshift__", "bitwise_right_shift_")]
TENSOR_METHODS = (_ALIASES + _FUNCTIONS + _METHODS_ONLY + [("polygamma_", "_polygamma_method_")]
                  + _OPERATORS)

# --- aliases ------------------------------------------------------------------------------------

fix = unary.trunc  # rounds toward zero
greater, greater_equal = comparison.gt, comparison.ge
less, less_equal, not_equal = comparison.lt, comparison.le, comparison.ne
ger = linalg.outer  # the outer product's old name
detach_ = Tensor.detach_  # torch.detach_(x) is x.detach_()
index_put_ = indexing.index_put_


# --- one-input forms ------------------------------------------------------------------------------

cos_ = _unary_inplace(unary.Cos, floats_only=True)
sin_ = _unary_inplace(unary.Sin, floats_only=True)
tan_ = _unary_inplace(unary.Tan, floats_only=True)
exp2_ = _unary_inplace(unary.Exp2, floats_only=True)
expm1_ = _unary_inplace(unary.Expm1, floats_only=True)
log10_ = _unary_inplace(unary.Log10, floats_only=True)
log1p_ = _unary_inplace(unary.Log1p, floats_only=True)
log2_ = _unary_inplace(unary.Log2, floats_only=True)
rsqrt_ = _unary_inplace(unary.Rsqrt, floats_only=True)
negative_ = neg_


def _function_form(name: str, fn, convert: bool = True):
    """``x.<name>(*args)``: ``fn(x, *args)`` written into x (see ``apply_inplace_fn``)."""
    def method(input, *args, **kwargs) -> Tensor:
        return apply_inplace_fn(name, input, fn, *args, convert=convert, **kwargs)

    method.__name__ = name
    method.__doc__ = f"In-place {fn.__name__}: the tensor's values become its result."
    return method


# Rounding: an integer tensor stays as it is; d/dx = 0 (the Function's own backward).
floor_ = _function_form("floor_", unary.floor)
ceil_ = _function_form("ceil_", unary.ceil)
trunc_ = fix_ = _function_form("trunc_", unary.trunc)
sign_ = _function_form("sign_", unary.sign)
reciprocal_ = _function_form("reciprocal_", arithmetic.reciprocal)  # floats: refused for ints
square_ = _function_form("square_", arithmetic.square)


def round_(input, *, decimals: int = 0) -> Tensor:
    """In-place round, half to even; ``decimals`` digits after the point. d/dx = 0."""
    return apply_inplace_fn("round_", input, unary.round, convert=False, decimals=decimals)


# --- two-input forms: the operand is cast to the tensor's dtype first (refused if wider) ----------

floor_divide_ = _function_form("floor_divide_", arithmetic.floor_divide)
remainder_ = _function_form("remainder_", arithmetic.remainder)
multiply_ = mul_
gcd_ = _function_form("gcd_", integer_math.gcd)
lcm_ = _function_form("lcm_", integer_math.lcm)
bitwise_and_ = _function_form("bitwise_and_", comparison.bitwise_and)
bitwise_or_ = _function_form("bitwise_or_", comparison.bitwise_or)
bitwise_xor_ = _function_form("bitwise_xor_", comparison.bitwise_xor)
bitwise_not_ = _function_form("bitwise_not_", comparison.bitwise_not)
bitwise_left_shift_ = _function_form("bitwise_left_shift_", integer_math.bitwise_left_shift)
bitwise_right_shift_ = _function_form("bitwise_right_shift_", integer_math.bitwise_right_shift)
copysign_ = _function_form("copysign_", float_parts.copysign)
nextafter_ = _function_form("nextafter_", float_parts.nextafter)
ldexp_ = _function_form("ldexp_", float_parts.ldexp)
heaviside_ = _function_form("heaviside_", special_math.heaviside)
clamp_min_ = _function_form("clamp_min_", selection.clamp_min)
clamp_max_ = _function_form("clamp_max_", selection.clamp_max)


def subtract_(input, other, *, alpha=1) -> Tensor:
    """In-place subtract (``sub_``)."""
    return sub_(input, other, alpha=alpha)


def divide_(input, other, *, rounding_mode: str | None = None) -> Tensor:
    """In-place divide; ``rounding_mode`` 'trunc' or 'floor' keeps integers integer."""
    if rounding_mode is None:
        return div_(input, other)
    return apply_inplace_fn("divide_", input, arithmetic.div, other, rounding_mode=rounding_mode)


def true_divide_(input, other) -> Tensor:
    """In-place true division (``div_``): floats only."""
    return div_(input, other)


def float_power_(input, exponent) -> Tensor:
    """In place ``input ** exponent`` in float64: float_power always computes in double,
    so only a float64 tensor can hold the result."""
    if isinstance(input, Tensor) and input.dtype is not _dt.float64:
        raise RuntimeError(f"float_power_: the result is float64 (float_power computes in double "
                           f"precision), which can't be stored in place in this {input.dtype} "
                           "tensor. Fix: x = x.double() first, or x = x.float_power(e)")
    return apply_inplace_fn("float_power_", input, special_math.float_power, exponent)


# --- forms with settings (dims, orders): nothing to cast ----------------------------------------

def _same_dtype(name: str, input, dtype) -> None:
    if dtype is not None and isinstance(input, Tensor) and _dt.to_dtype(dtype) is not input.dtype:
        raise RuntimeError(f"{name}: dtype={_dt.to_dtype(dtype)} would give a result of another "
                           f"dtype than the tensor's ({input.dtype}), which an in-place op can't "
                           f"store. Fix: drop dtype, or x = x.{name[:-1]}(dim, dtype=...)")


def cumsum_(input, dim: int, dtype=None) -> Tensor:
    """In-place running sums along ``dim``."""
    _same_dtype("cumsum_", input, dtype)
    return apply_inplace_fn("cumsum_", input, cumulative.cumsum, dim, convert=False)


def cumprod_(input, dim: int, dtype=None) -> Tensor:
    """In-place running products along ``dim`` (exact gradient with zeros, as cumprod)."""
    _same_dtype("cumprod_", input, dtype)
    return apply_inplace_fn("cumprod_", input, scans.cumprod, dim, convert=False)


renorm_ = _function_form("renorm_", covariance.renorm, convert=False)
mvlgamma_ = _function_form("mvlgamma_", gamma_functions.mvlgamma, convert=False)
tril_ = _function_form("tril_", triangular.tril, convert=False)
triu_ = _function_form("triu_", triangular.triu, convert=False)


def _polygamma_method_(input, n: int) -> Tensor:
    """``x.polygamma_(n)``: the n-th derivative of digamma, in place (the method takes n
    second, as ``x.polygamma(n)`` does)."""
    return apply_inplace_fn("polygamma_", input, lambda x, k: gamma_functions.polygamma(k, x), n,
                            convert=False)


def _product_form(name: str, fn):
    """``β·x + α·(a @ b)`` into x: addmm_, addmv_, addbmm_, baddbmm_."""
    def method(input, a, b, *, beta=1, alpha=1) -> Tensor:
        return apply_inplace_fn(name, input, fn, a, b, beta=beta, alpha=alpha)

    method.__name__ = name
    method.__doc__ = f"In-place {fn.__name__}: x = beta·x + alpha·(product)."
    return method


addmm_ = _product_form("addmm_", dense.addmm)
addmv_ = _product_form("addmv_", dense.addmv)
addbmm_ = _product_form("addbmm_", dense.addbmm)
baddbmm_ = _product_form("baddbmm_", dense.baddbmm)


# --- comparisons and logic in place: 1/0 in the tensor's dtype, a zero gradient ------------------

class Replace(Function):
    """The values replaced by ``values`` (a comparison of the old ones), in the tensor's dtype.

    A comparison is a step function of its inputs: d(new)/d(old) = 0 exactly (zeros, not
    grad · 0, so a NaN gradient stops too), and the tangent is 0.
    """

    raw = True

    @staticmethod
    def forward(ctx, old, values):
        return values.astype(old.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        return grad.new_zeros(grad.shape), None

    @staticmethod
    def jvp(ctx, *tangents):
        """ẏ = 0: a comparison's result doesn't move when its inputs move a little."""
        return None


def _comparison_form(name: str, fn, unary_op: bool = False):
    """``x.<name>(other)``: x becomes ``fn(x, other)`` as 1/0 in x's dtype (no cast first)."""
    cls = type("".join(p.capitalize() for p in name.split("_")), (Replace,),
               {"name": name, "__doc__": f"{name} in place: " + Replace.__doc__})

    def compute(old, *other):
        return cls.apply(old, fn(old.detach(), *other))

    def method(input, *other) -> Tensor:
        if len(other) != (0 if unary_op else 1):
            raise TypeError(f"{name}_: expected {'no operand' if unary_op else 'one operand'}, "
                            f"got {len(other)}")
        return apply_inplace_fn(name + "_", input, compute, *other, convert=False)

    method.__name__ = name + "_"
    method.__doc__ = f"In-place {name}: 1 where true, else 0, in the tensor's own dtype."
    return method


eq_ = _comparison_form("eq", comparison.eq)
ne_ = not_equal_ = _comparison_form("ne", comparison.ne)
lt_ = less_ = _comparison_form("lt", comparison.lt)
le_ = less_equal_ = _comparison_form("le", comparison.le)
gt_ = greater_ = _comparison_form("gt", comparison.gt)
ge_ = greater_equal_ = _comparison_form("ge", comparison.ge)
logical_and_ = _comparison_form("logical_and", comparison.logical_and)
logical_or_ = _comparison_form("logical_or", comparison.logical_or)
logical_xor_ = _comparison_form("logical_xor", comparison.logical_xor)
logical_not_ = _comparison_form("logical_not", comparison.logical_not, unary_op=True)
