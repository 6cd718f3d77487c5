"""In-place ops (``x.add_(y)``, ``x += y``, ``x.zero_()``): change a tensor's values.

An in-place op is its out-of-place op plus three things:

1. **The result is written into the tensor's own memory**, so every view of
   it sees the change.
2. **The version counter goes up.** A backward node that saved this tensor
   recorded the version it saw; if the values changed since, backward
   raises instead of computing a wrong gradient.
3. **The tensor's history is rebased**: its ``grad_fn`` becomes the new
   node, whose input is the tensor's previous history. The op runs on a
   stand-in for the old value that carries that history; if its backward
   needs the old values (``mul_`` does, ``add_`` doesn't), the stand-in
   keeps a copy of them, so even second derivatives stay right. If the
   tensor is a view, its base's history is rebased too
   (``autograd/views.py``), so the base's gradient stays right as well.

``apply_inplace`` below does all three for every in-place op in gradlab,
``x[idx] = v``, ``masked_fill_`` and ``scatter_`` included; ``apply_inplace_fn``
is the same for an op given as a function (a composition such as
``reciprocal_``, or ``eq_``: see ``inplace_forms.py`` for the other forms).

A leaf that requires grad cannot be changed in place while grad mode is on
(the graph would lose the value the leaf had); update weights under
``no_grad()``.

In forward mode (``forward_ad.dual_level``) the op's tangent rule runs on the
old value's tangent, and the tensor then carries the result's tangent; for a
view, the base's tangent takes the new tangent in at the view's place
(``_carry_tangent``), as its values took the new values.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..autograd.grad_mode import state
from ..autograd.tracing import recorded
from ..autograd.views import rebase_view, replay_view, steps_from_base
from ..storage import Storage
from ..tensor import Tensor
from . import arithmetic, filling, fused, selection, unary
from ._util import as_operand, scale_first, tangent_sum, unbroadcast, xp_for

__all__ = ["add_", "sub_", "mul_", "div_", "pow_", "neg_", "exp_", "log_", "sqrt_", "abs_",
           "relu_", "sigmoid_", "tanh_", "erf_", "clamp_", "clip_", "zero_", "fill_", "copy_",
           "addcmul_", "addcdiv_", "lerp_"]
TENSOR_METHODS = list(__all__)  # the random fills (normal_ ...) are in random_fills.py

_forms: dict = {}


def _inplace_form(op: type[Function]) -> type[Function]:
    """``op`` under its in-place name (``Mul`` -> ``Mul_``, op name ``mul_``) for graphs."""
    cls = _forms.get(op)
    if cls is None:
        cls = _forms[op] = type(op.__name__ + "_", (op,), {
            "name": op.name + "_", "node_name": op.node_name,
            "supports_complex": op.supports_complex})  # the same math as op
    return cls


@recorded
def apply_inplace(op: type[Function], target: Tensor, *args, convert: bool = True) -> Tensor:
    """Run ``op`` on ``(target, *args)`` in place, as described in the module docstring.

    This is the one in-place mechanism: every ``x.op_()``, ``x[idx] = v``,
    ``masked_fill_``, ``scatter_`` ... goes through it. Operands are first
    converted to the target's dtype and device; ops whose arguments must pass
    as they are (an index key, a bool mask) use ``convert=False``.
    """
    _check_target(op.name + "_", target)
    if convert:
        args = tuple(_operand_for(op.name + "_", target, a) for a in args)
        if op in _UFUNCS and state.dual is None and not _records_history(target, args) and \
                _fits(target, args[0]):
            _direct_form(op).apply(target, *args)  # e.g. p -= lr * g under no_grad
            target._storage.version += 1
            return target
    return _in_place(op.name + "_", target, lambda old: _inplace_form(op).apply(old, *args),
                     args)


@recorded
def apply_inplace_fn(name: str, target: Tensor, fn, *args, convert: bool = True,
                     **kwargs) -> Tensor:
    """``target`` becomes ``fn(target, *args, **kwargs)``, in place: ``apply_inplace`` for an
    op that is a composition (``reciprocal_`` is ``1 / x``) or whose public function does
    the checking (``floor_divide_`` refuses integer division by 0). The same mechanism:
    versions, history rebase, views and forward mode; ``fn``'s nodes become the history.
    """
    _check_target(name, target)
    if convert:
        args = tuple(_operand_for(name, target, a) for a in args)
    return _in_place(name, target, lambda old: fn(old, *args, **kwargs), args)


# With nothing to record, these ops write straight into the tensor's memory, as
# NumPy's ``a -= b`` does, instead of computing a temporary and copying it in.
_UFUNCS = {arithmetic.Add: "add", arithmetic.Sub: "subtract", arithmetic.Mul: "multiply",
           arithmetic.Div: "true_divide", arithmetic.AddScaled: "add",
           arithmetic.SubScaled: "subtract"}
_direct_forms: dict = {}


def _fits(target: Tensor, other) -> bool:
    """Does ``other`` broadcast to the target's shape? (Else the general path explains.)"""
    if not isinstance(other, Tensor) or other._data.shape == target._data.shape:
        return True
    try:
        return np.broadcast_shapes(other._data.shape, target._data.shape) == target._data.shape
    except ValueError:
        return False


def _direct_form(op: type[Function]) -> type[Function]:
    cls = _direct_forms.get(op)
    if cls is None:
        ufunc = _UFUNCS[op]

        def forward(ctx, a, b, alpha=None):  # alpha: AddScaled/SubScaled's a ± alpha·b
            xp = xp_for(a)
            return getattr(xp, ufunc)(a, b if alpha is None else xp.multiply(b, alpha), out=a)

        cls = _direct_forms[op] = type(op.__name__ + "_", (op,), {
            "name": op.name + "_", "node_name": op.node_name, "returns_input": True,
            "supports_complex": op.supports_complex, "forward": staticmethod(forward)})
    return cls


def _check_target(name: str, target) -> None:
    if not isinstance(target, Tensor):
        raise TypeError(f"{name}: expected a Tensor to change, got {type(target).__name__}")
    if target._requires_grad and target.grad_fn is None and state.enabled:
        raise RuntimeError(
            f"{name}: a leaf tensor that requires grad (shape {tuple(target.shape)}) can't "
            "be changed in place: the graph would lose its value. Fix: update weights inside "
            "`with gradlab.no_grad():`; otherwise change a copy (y = x.clone()) or use the "
            "out-of-place op (x = x + y)."
        )
    base = target._view_base
    if base is not None and base._requires_grad and base.grad_fn is None and state.enabled:
        raise RuntimeError(
            f"{name}: this tensor (shape {tuple(target.shape)}) is a view of a leaf that "
            f"requires grad (shape {tuple(base.shape)}); changing it in place would lose the "
            "leaf's value. Fix: change a clone (w.clone()), or do it under gradlab.no_grad()."
        )


def _in_place(name: str, target: Tensor, compute, args) -> Tensor:
    """Write ``compute(old)`` into ``target``'s memory and make it ``target``'s history."""
    target._catch_up()  # a view: another view of its base may have changed it since
    if _records_history(target, args):
        # the old value, with the old history, under its own version counter
        old = Tensor._make(target._data, Storage(target._data.nbytes, target._device),
                           target.grad_fn, target._out_index, target._requires_grad)
        old.name = target.name
        tangent = target.__dict__.get("_tangent") if state.dual is not None else None
        if tangent is not None:
            state.dual.set(old, tangent)  # forward mode: the old value keeps its tangent
    else:
        old = target
    result = compute(old)
    _refuse_wider(name, result.dtype, target)  # exp_ of an integer tensor gives floats
    if result._data.shape != target._data.shape:
        raise RuntimeError(
            f"{name}: the result has shape {tuple(result.shape)} but the tensor has shape "
            f"{tuple(target.shape)}; an in-place op can't change a tensor's shape. Fix: use "
            "the out-of-place op (x = x + y)."
        )
    if old is not target and old._storage.saved_count:
        old._data = target._data.copy()  # backward needs the old values: keep them
    target._data[...] = result._data
    target._storage.version += 1
    level, state.dual = state.dual, None  # the histories, with no tangents on the way
    try:
        if result.grad_fn is not None:
            if target._view_base is not None:
                rebase_view(target, result)  # a view: its base's history changes too
            else:
                target.grad_fn = result.grad_fn
                target._out_index = result._out_index
                target._requires_grad = True
    finally:
        state.dual = level
    if level is not None:
        _carry_tangent(level, target, result.__dict__.get("_tangent"))
    return target


def _carry_tangent(level, target: Tensor, tangent) -> None:
    """Forward mode: ``target`` now carries ``tangent`` (None: zero). If ``target`` is a view,
    its base's tangent gets ``tangent`` at the view's place, outside it stays as it was.

    Tangents are never changed in place (one may be another tensor's tangent too): the
    base gets a changed copy, written with tensor ops so the tangent keeps its history.
    Like a tangent rule, this runs with forward mode off and emits no events.
    """
    base = target._view_base
    base_tangent = None if base is None else base.__dict__.get("_tangent")
    if base is None or (base_tangent is None and tangent is None):
        if tangent is None:
            target.__dict__.pop("_tangent", None)
        else:
            level.set(target, tangent)
        return
    from .creation import zeros_like  # creation imports the ops: import when first used

    quiet = state.in_tangent_rule
    state.dual, state.in_tangent_rule = None, True
    try:
        whole = zeros_like(base) if base_tangent is None else base_tangent.clone()
        inside = replay_view(whole, steps_from_base(target))  # a view of whole's memory
        if tangent is None:
            inside.zero_()
        else:
            inside.copy_(tangent)
    finally:
        state.dual, state.in_tangent_rule = level, quiet
    level.set(base, whole)
    level.set(target, inside)


def _records_history(target: Tensor, args) -> bool:
    """Will the change be recorded: grad mode on, and the tensor or an operand requires grad?"""
    if not state.enabled:
        return False
    if target._requires_grad:
        return True
    for a in args:
        if isinstance(a, Tensor) and a._requires_grad:
            return True
    return False


def _refuse_wider(name: str, result, target: Tensor) -> None:
    """An in-place result must fit the tensor's dtype: floats can't go into integers."""
    if result.category > target.dtype.category:
        raise RuntimeError(
            f"{name}: the result type {result} can't be cast to the tensor's dtype "
            f"{target.dtype} in place (shape {tuple(target.shape)}). Fix: use the out-of-place "
            f"op, or convert first: x = x.to({result})."
        )


def _operand_for(name: str, target: Tensor, value):
    """Convert an operand to the target's dtype, refusing casts PyTorch refuses."""
    if isinstance(value, Tensor) and value.dtype is target.dtype and \
            value._device is target._device:
        return value  # the common case (p -= lr * g): nothing to convert or refuse
    if type(value) is float and target.dtype.is_floating_point:
        return value  # a float factor (p.add_(g, alpha=-lr)) fits any float tensor as it is
    value = as_operand(value, target) if not isinstance(value, (Tensor, type(None))) else value
    if value is None or isinstance(value, tuple):
        return value
    _refuse_wider(name, _dt.result_type(target, value), target)
    if isinstance(value, Tensor):
        if value.device is not target.device:
            value = value.to(target.device)
        if value.dtype is not target.dtype:
            value = value.to(target.dtype)
    return value


def add_(input, other, *deprecated, alpha=1) -> Tensor:
    if deprecated:  # add_(1 - beta, grad): see scale_first
        (other,), alpha = scale_first("add_", (other, *deprecated), 1, "alpha", alpha)
    if alpha == 1:
        return apply_inplace(arithmetic.Add, input, other)
    return _scaled_(arithmetic.AddScaled, input, other, alpha)


def sub_(input, other, *deprecated, alpha=1) -> Tensor:
    if deprecated:
        (other,), alpha = scale_first("sub_", (other, *deprecated), 1, "alpha", alpha)
    if alpha == 1:
        return apply_inplace(arithmetic.Sub, input, other)
    return _scaled_(arithmetic.SubScaled, input, other, alpha)


def _scaled_(op, input, other, alpha) -> Tensor:
    """``input += alpha * other`` (or ``-=``) as one op, the optimizers' update
    (``p.add_(g, alpha=-lr)``); an operand of another dtype is scaled in the wider dtype
    first, as PyTorch computes in the promoted type before storing."""
    if isinstance(other, Tensor) and other.dtype is not getattr(input, "dtype", None):
        plain = arithmetic.Add if op is arithmetic.AddScaled else arithmetic.Sub
        return apply_inplace(plain, input, arithmetic.mul(other, alpha))
    return apply_inplace(op, input, other, alpha)


def mul_(input, other) -> Tensor:
    return apply_inplace(arithmetic.Mul, input, other)


def div_(input, other) -> Tensor:
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"div_: true division of a {input.dtype} tensor gives floats, which "
                           "can't be stored in it. Fix: x = x / y, or x = x.float() first")
    return apply_inplace(arithmetic.Div, input, other)


def addcmul_(input, tensor1, tensor2, *deprecated, value=1) -> Tensor:
    """In place ``input += value * tensor1 * tensor2``."""
    (tensor1, tensor2), value = scale_first("addcmul_", (tensor1, tensor2, *deprecated), 2,
                                            "value", value)
    _, t1, t2, value = fused._addc_operands("addcmul_", input, tensor1, tensor2, value)
    return apply_inplace(fused.Addcmul, input, t1, t2, value)


def addcdiv_(input, tensor1, tensor2, *deprecated, value=1) -> Tensor:
    """In place ``input += value * tensor1 / tensor2``."""
    (tensor1, tensor2), value = scale_first("addcdiv_", (tensor1, tensor2, *deprecated), 2,
                                            "value", value)
    _, t1, t2, value = fused._addc_operands("addcdiv_", input, tensor1, tensor2, value)
    return apply_inplace(fused.Addcdiv, input, t1, t2, value)


def lerp_(input, end, weight) -> Tensor:
    """In place ``input += weight * (end - input)``."""
    return apply_inplace(fused.Lerp, *fused._lerp_operands("lerp_", input, end, weight))


def pow_(input, exponent) -> Tensor:
    if isinstance(exponent, Tensor):
        return apply_inplace(arithmetic.Pow, input, exponent)
    return apply_inplace(arithmetic.PowScalar, input, exponent)


def _unary_inplace(op, floats_only: bool = False):
    """``x.op_()`` for a one-input op; ``floats_only``: its values are floats even for integer
    input (exp, sigmoid ...), which can't be stored in an integer tensor."""
    name = op.name + "_"

    def method(input) -> Tensor:
        if floats_only and isinstance(input, Tensor) and not input.dtype.is_floating_point:
            _refuse_wider(name, _dt.get_default_dtype(), input)
        return apply_inplace(op, input)

    method.__name__ = name
    method.__doc__ = f"In-place {op.name}."
    return method


neg_ = _unary_inplace(arithmetic.Neg)
exp_ = _unary_inplace(unary.Exp, floats_only=True)
log_ = _unary_inplace(unary.Log, floats_only=True)
sqrt_ = _unary_inplace(unary.Sqrt, floats_only=True)
_abs_in_place = _unary_inplace(unary.Abs)


def abs_(input) -> Tensor:
    """In-place abs (not for complex tensors: |z| is real, as PyTorch refuses too)."""
    if isinstance(input, Tensor) and input.dtype.is_complex:
        raise RuntimeError(f"abs_: in-place abs is not supported for complex tensors (shape "
                           f"{tuple(input.shape)}): |z| is a real number. Fix: y = x.abs()")
    return _abs_in_place(input)

relu_ = _unary_inplace(unary.Relu)
sigmoid_ = _unary_inplace(unary.Sigmoid, floats_only=True)
tanh_ = _unary_inplace(unary.Tanh, floats_only=True)


def erf_(input) -> Tensor:
    """In-place erf. Its derivative 2/√π · e^(-x²) needs the old values, so a copy is kept."""
    from .activation import Erf  # activation imports this module: import when first used

    return _unary_inplace(Erf, floats_only=True)(input)


def clamp_(input, min=None, max=None) -> Tensor:  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("clamp_: at least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return apply_inplace_fn("clamp_", input, selection.clamp, min, max, convert=False)
    return apply_inplace(selection.Clamp, input, min, max)


clip_ = clamp_


def fill_(input, value) -> Tensor:
    """Every element becomes ``value``; a 0-d tensor value gets the summed gradient, and the
    old values get zeros (they are gone), as in PyTorch."""
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise RuntimeError(f"fill_: the value must be a number or a one-element tensor, "
                               f"got shape {tuple(value.shape)}")
        if value._requires_grad and state.enabled:
            return apply_inplace_fn("fill_", input, filling.fill, value.reshape(()),
                                    convert=False)
        value = value.item()
    if not input.dtype.is_floating_point:  # fill_ truncates into integer tensors, as in PyTorch
        value = bool(value) if input.dtype is _dt.bool else int(value)
    return apply_inplace(filling.Fill, input, value)


def zero_(input) -> Tensor:
    return fill_(input, 0)


class Copy(Function):
    """Overwrite with ``src`` (broadcast).   The gradient goes to ``src``, summed to its shape."""

    raw = True
    supports_complex = True  # linear: its backward needs no conj

    @staticmethod
    def forward(ctx, a, src):
        return xp_for(a).broadcast_to(src, a.shape)

    @staticmethod
    def backward(ctx, grad):
        return None, unbroadcast(grad, ctx.input_shapes[1])

    @staticmethod
    def jvp(ctx, _, t_src):
        """ẏ = ṡrc, broadcast like src: the old values' tangent is gone with them."""
        return tangent_sum(ctx.results[0].shape, t_src)


def copy_(input, src) -> Tensor:
    """Copy ``src``'s values into ``input`` (broadcasting, casting, across devices)."""
    if not isinstance(src, Tensor):
        src = as_operand(src, input)
    if isinstance(src, Tensor):
        if src.device is not input.device:
            src = src.to(input.device)
        if src.dtype is not input.dtype:
            src = src.to(input.dtype)  # copy_ casts freely, as in PyTorch
        try:
            np.broadcast_shapes(src._data.shape, input._data.shape)
        except ValueError:
            raise RuntimeError(f"copy_: source of shape {tuple(src.shape)} can't be broadcast "
                               f"to the destination's shape {tuple(input.shape)}") from None
    return apply_inplace(Copy, input, src)
