"""Forward-mode automatic differentiation: a tangent travels with each value.

Reverse mode (``backward()``) answers "how does the one loss depend on every
input?" in one backward pass. Forward mode answers the transposed question,
"how does every output move when the inputs move in one direction t?", in
one *forward* pass: each value x carries a tangent ẋ (a dual number
x + ẋε with ε² = 0), and each op maps tangents along with values:

    y = sin(x)      ẏ = cos(x) · ẋ
    y = a · b       ẏ = ȧ · b + a · ḃ

So one pass gives a Jacobian-vector product J·t. For f: Rⁿ → Rᵐ a full
Jacobian costs n forward passes (one per input direction) or m backward
passes (one per output): forward mode wins when n ≪ m, reverse when n ≫ m.

    import gradlab.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        x = fwAD.make_dual(primal, tangent)
        y = f(x)
        jvp = fwAD.unpack_dual(y).tangent

Each op's tangent rule is its Function's ``jvp(ctx, *tangents)``, next to its
forward and backward (see :class:`~gradlab.autograd.function.Function`). The
dispatcher calls it with ``ctx.primals`` (the op's arguments) and
``ctx.results`` (its outputs) set, with forward mode switched off, so a rule
is plain tensor code on values that carry no tangents themselves. Rules are
tensor code like backward formulas, so a jvp through a backward pass that
``create_graph=True`` recorded gives second derivatives (forward-over-reverse,
how :func:`gradlab.func.hessian` works).

As in PyTorch: one level at a time (nesting raises), tangents must match their
primal's shape, dtype and device, and leaving the level drops every tangent.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from .grad_mode import state

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the value and its tangent (None if it has none)."""

    primal: object
    tangent: object


class _Level:
    """One forward-mode level: the tensors that carry a tangent in it."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.duals: list[weakref.ref] = []

    def set(self, tensor, tangent) -> None:
        tensor.__dict__["_tangent"] = tangent
        self.duals.append(weakref.ref(tensor))

    def clear(self) -> None:
        for ref in self.duals:
            t = ref()
            if t is not None:
                t.__dict__.pop("_tangent", None)
        self.duals.clear()


_next_index = [0]


def enter_dual_level() -> int:
    """Start a forward-mode level (what ``with dual_level():`` does); its index."""
    if state.dual is not None:
        raise RuntimeError("enter_dual_level: nested forward-mode levels are not supported (as "
                           "in PyTorch): compute inside the level you already entered")
    level = _Level(_next_index[0])
    _next_index[0] += 1
    state.dual = level
    return level.index


def exit_dual_level(*, level: int | None = None) -> None:
    """End the current level: every tangent made in it is dropped."""
    current = state.dual
    if current is None:
        raise RuntimeError("exit_dual_level: no forward-mode level is active")
    if level is not None and level != current.index:
        raise RuntimeError(f"exit_dual_level: level {level} is not the current level "
                           f"({current.index})")
    current.clear()
    state.dual = None


@contextmanager
def dual_level() -> Iterator[int]:
    """``with dual_level():`` — dual tensors made inside carry tangents until it ends."""
    index = enter_dual_level()
    try:
        yield index
    finally:
        exit_dual_level(level=index)


def _current(who: str, level: int | None):
    current = state.dual
    if current is None:
        raise RuntimeError(f"{who}: no forward-mode level is active. Fix: call it inside "
                           "`with gradlab.autograd.forward_ad.dual_level():`")
    if level is not None and level != current.index:
        raise RuntimeError(f"{who}: level {level} is not the current level ({current.index})")
    return current


def make_dual(tensor, tangent, *, level: int | None = None):
    """A tensor with ``tensor``'s value (sharing its memory) that carries ``tangent``.

    Ops on it compute their outputs' tangents as they go; reverse-mode autograd
    sees it as a view of ``tensor``.
    """
    from ..tensor import Tensor

    _current("make_dual", level)  # a level must be active (and be the one named)
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError(f"make_dual: expects two tensors (primal, tangent), got "
                        f"{type(tensor).__name__} and {type(tangent).__name__}")
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(f"make_dual: the primal must be floating point (or complex) to carry "
                         f"a tangent, got {tensor.dtype}. Fix: .to(gradlab.float32) or float64 "
                         "first")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise ValueError(f"make_dual: the tangent must have the primal's shape, got primal "
                         f"{tuple(tensor.shape)} and tangent {tuple(tangent.shape)}")
    if tangent.dtype != tensor.dtype:
        raise ValueError(f"make_dual: the tangent must have the primal's dtype, got "
                         f"{tensor.dtype} and {tangent.dtype}. Fix: tangent.to({tensor.dtype})")
    if tangent.device != tensor.device:
        raise ValueError(f"make_dual: the tangent must be on the primal's device, got "
                         f"{tensor.device} and {tangent.device}")
    # The new tensor is the output of a `make_dual` op (a view, as in PyTorch), made while
    # the primal lends it the tangent: so the tangent is there when the op's event goes
    # out, and the debugger and graph images see where it entered.
    lent = tensor.__dict__.get("_tangent")
    tensor.__dict__["_tangent"] = tangent
    try:
        dual = _make_dual_op().apply(tensor)
    finally:
        if lent is None:
            tensor.__dict__.pop("_tangent", None)
        else:
            tensor.__dict__["_tangent"] = lent
    return dual


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor``: the value without its tangent, and the tangent
    (None when the tensor carries none)."""
    if state.dual is None or (level is not None and level != state.dual.index):
        return UnpackedDualTensor(tensor, None)
    tangent = tensor.__dict__.get("_tangent")
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias(tensor), tangent)


_MAKE_DUAL = []


def _make_dual_op():
    """The ``make_dual`` op: a view of its input whose tangent is the input's (built on
    first use: Function's module imports this one)."""
    if not _MAKE_DUAL:
        from .function import Function

        class MakeDual(Function):
            """A view of the primal; backward passes the gradient through, the tangent too."""

            name = "make_dual"
            raw = True
            supports_complex = True  # the identity: nothing to conjugate
            tangent_rule = "linear"

            @staticmethod
            def forward(ctx, a):
                return a.view()

            @staticmethod
            def backward(ctx, grad):
                return grad

        _MAKE_DUAL.append(MakeDual)
    return _MAKE_DUAL[0]


def _alias(tensor):
    """A new tensor viewing ``tensor`` (reverse mode sees a view), with no tangent."""
    level, state.dual = state.dual, None
    try:
        return tensor.view(tuple(tensor.shape))
    finally:
        state.dual = level


# --- used by the dispatcher (gradlab/autograd/function.py) -----------------------------------
def tangents_of(args) -> tuple | None:
    """Each argument's tangent (None for those without), or None if no argument has one."""
    found = None
    for i, a in enumerate(args):
        d = getattr(a, "__dict__", None)
        if d and "_tangent" in d and d["_tangent"] is not None:
            if found is None:
                found = [None] * len(args)
            found[i] = d["_tangent"]
    return None if found is None else tuple(found)


def propagate(fn, ctx, args, outputs, tangents) -> None:
    """Run ``fn``'s tangent rule and attach the tangents to ``outputs`` (a tuple)."""
    level, quiet = state.dual, state.in_tangent_rule
    # A rule works on plain values (no tangents of tangents), and its ops are part of this
    # op's forward-mode step: they emit no events, so the debugger and the graph images show
    # the op with its tangent rather than the arithmetic that made the tangent.
    state.dual, state.in_tangent_rule = None, True
    ctx.primals, ctx.results = args, outputs
    try:
        result = fn.jvp(ctx, *tangents)
    finally:
        state.dual, state.in_tangent_rule = level, quiet
        del ctx.primals, ctx.results
    produced = result if isinstance(result, tuple) else (result,)
    if len(produced) != len(outputs):
        raise RuntimeError(f"{fn.name}: its jvp returned {len(produced)} tangents for "
                           f"{len(outputs)} outputs; return one per output (None for none)")
    for k, (out, tangent) in enumerate(zip(outputs, produced)):
        if out is None or tangent is None or not (out.dtype.is_floating_point or
                                                   out.dtype.is_complex):
            continue
        if tuple(tangent.shape) != tuple(out.shape):
            raise RuntimeError(f"{fn.name}: its jvp returned a tangent of shape "
                               f"{tuple(tangent.shape)} for an output of shape "
                               f"{tuple(out.shape)}; a tangent has its output's shape")
        if tangent.dtype != out.dtype:
            tangent = tangent.to(out.dtype)
        level.set(out, tangent)
        for saved in getattr(ctx, "_saved", None) or ():  # a node that saved this output
            if getattr(saved, "output_nr", None) == k:
                saved.tangent = (level, tangent)
