"""Derivatives of a function at a point (PyTorch's ``torch.autograd.functional``).

The older sibling of :mod:`gradlab.func`: instead of turning ``f`` into a new
function, each call takes ``f`` and the point and returns numbers::

    jacobian(f, x)          J[i..., j...] = ∂f(x)[i...] / ∂x[j...]
    vjp(f, x, v)            (f(x), vᵀ·J)   one backward pass
    jvp(f, x, v)            (f(x), J·v)    one forward-mode pass
    hessian(f, x)           H = the Jacobian of ∇f    (f returns one number)
    vhp(f, x, v)            (f(x), vᵀ·H)   a backward pass through a backward pass
    hvp(f, x, v)            (f(x), H·v)    forward mode through a backward pass

PyTorch's conventions, shared by all six:

* ``inputs`` is a Tensor or a tuple of Tensors and ``f`` is called as
  ``f(*inputs)``; ``f`` returns a Tensor or a tuple of Tensors. Each result
  nests the same way: a tuple where the input (or output) was a tuple, a bare
  tensor where it was a tensor. ``jacobian(f, (x, y))[i][j]`` is ∂out_i/∂in_j.
* Results are detached unless ``create_graph=True``; then they are
  differentiable with respect to the inputs, for a second derivative.
* An input that no output depends on gets zeros (its derivative is 0);
  ``strict=True`` raises instead, to catch a function that ignores its input.
* ``v`` may be left out only when it has one element (it is then 1).

Nothing here is a new derivative rule: the backward passes are the engine's
(through :func:`gradlab.func._inputs.gradients`, which fills in zeros), the
forward passes :mod:`~gradlab.autograd.forward_ad`'s, through ``gradlab.func.jvp``,
``jacfwd`` and ``jacrev``'s row loop. What this module adds is PyTorch's way of
calling them.
"""

from __future__ import annotations

from collections.abc import Callable

from ..func._inputs import _fresh, gradients
from ..func._pytree import tree_map
from ..func.forward import jacfwd
from ..func.forward import jvp as _forward_jvp
from ..func.transforms import _jacobian_rows
from ..ops.creation import ones_like
from ..tensor import Tensor
from .engine import _discover
from .grad_mode import enable_grad
from .node import gradient_edge

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

_OUTPUTS = "outputs of the user-provided function"
_STRATEGIES = ("forward-mode", "reverse-mode")
_UNUSED = ("The output of the user-provided function is independent of input {i}. This is not "
           "allowed in strict mode. (Fix: use the input in f, leave it out of inputs, or pass "
           "strict=False to get zeros for it.)")
_JACOBIAN_UNUSED = ("The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode.")
_FLAT_JACOBIAN = ("While computing the hessian, found that the jacobian of the user-provided "
                  "function with respect to input {i} is independent of the input. This is not "
                  "allowed in strict mode: f must be twice differentiable with a gradient that "
                  "changes with the input (a linear function has a constant one).")
_NO_GRAPH = ("The {what} of the user-provided function is independent of input {i}. This is "
             "not allowed in strict mode when create_graph=True: the result could not be "
             "differentiated again.")


# --- PyTorch's calling conventions --------------------------------------------------------------

def _as_tuple(value, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """``(was it a tuple, the tensors as a tuple)``; anything but tensors raises."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = (f"the value at index {i} has type {type(item)}" if is_tuple
                     else f"the given {arg_name} has type {type(item)}")
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but {where}. Fix: make numbers tensors (gradlab.tensor(...)) and "
                "pass several as a tuple (not a list)")
    return is_tuple, items


def _untuple(items: tuple, is_tuple: bool):
    return items if is_tuple else items[0]


def _nest(table: tuple, is_outputs_tuple: bool, is_inputs_tuple: bool):
    """``table[i][j]`` (output i, input j) nested as the caller gave outputs and inputs."""
    if not is_inputs_tuple:
        table = tuple(row[0] for row in table)
    return _untuple(table, is_outputs_tuple)


def _detached(tensors: tuple, create_graph: bool) -> tuple:
    return tensors if create_graph else tuple(t.detach() for t in tensors)


def _prepare(inputs, fn_name: str, create_graph: bool) -> tuple[bool, tuple]:
    """Fresh handles for the inputs, so that only paths through *them* are differentiated:
    views of inputs that require grad when ``create_graph`` (the result stays connected to
    them), detached copies otherwise (see :mod:`gradlab.func._inputs`)."""
    is_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    return is_tuple, tuple(_fresh(x if create_graph else x.detach(), [], []) for x in inputs)


def _call(func: Callable, inputs: tuple, fn_name: str, strict: bool) -> tuple[bool, tuple]:
    """``func(*inputs)`` with grad mode on, its outputs checked (and, in strict mode, that
    each one was computed from something that requires grad)."""
    with enable_grad():
        is_tuple, outputs = _as_tuple(func(*inputs), _OUTPUTS, fn_name)
    if strict:
        _require_differentiable(outputs)
    return is_tuple, outputs


def _require_differentiable(outputs: tuple) -> None:
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                f"running in strict mode (shape {tuple(out.shape)}: was it made under "
                "no_grad(), detached, or a constant?)")


def _checked(func: Callable, fn_name: str) -> Callable:
    """``func``, with PyTorch's check on what it returns (for the gradlab.func transforms)."""
    def run(*inputs):
        out = func(*inputs)
        _as_tuple(out, _OUTPUTS, fn_name)
        return out
    return run


def _single_number(is_tuple: bool, outputs: tuple, fn_name: str) -> Tensor:
    if is_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor, "
                           f"got a tuple of {len(outputs)}. Fix: return the one scalar you "
                           "want second derivatives of")
    if outputs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            f"element, got shape {tuple(outputs[0].shape)}. A Hessian is the second derivative "
            "of one number. Fix: reduce it, e.g. return y.sum()")
    return outputs[0]


def _vector(v, like: tuple, is_like_tuple: bool, fn_name: str, create_graph: bool,
            single: str) -> tuple:
    """``v`` checked against ``like`` (same count, same shapes), as a tuple. Left out, it is 1,
    which only makes sense for a single one-element tensor."""
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(
                f"The vector v can only be None if {single} a single Tensor with a single "
                f"element; here: {len(like)} tensor(s) of shape(s) "
                f"{', '.join(str(tuple(t.shape)) for t in like)}. Fix: pass v, shaped like "
                "them (a tuple if there are several)")
        return (ones_like(like[0]),)
    _, v = _as_tuple(v, "v", fn_name)
    if len(v) != len(like):
        if is_like_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (el, ref) in enumerate(zip(v, like)):
        if tuple(el.shape) != tuple(ref.shape):
            prefix = f"Entry {i} in " if is_like_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {ref.shape} but got "
                               f"{el.shape}.")
    # As PyTorch: the result depends on v differentiably only when create_graph=True.
    return v if create_graph else tuple(el.detach() for el in v)


# --- strict mode ----------------------------------------------------------------------------

def _reached(outputs, inputs) -> list[bool]:
    """For each input: does any output depend on it? The engine's discovery walk (no backward
    pass) finds every node behind the outputs; an input is used if its gradient edge is one."""
    roots = [gradient_edge(o)[0] for o in outputs if o.requires_grad]
    found, _ = _discover(list(dict.fromkeys(roots)), want_parents=False)
    return [gradient_edge(x)[0] in found for x in inputs]


def _require_reached(outputs, inputs, message: str) -> None:
    for i, used in enumerate(_reached(outputs, inputs)):
        if not used:
            raise RuntimeError(message.format(i=i))


def _require_graph(results, what: str) -> None:
    for i, r in enumerate(results):
        if not r.requires_grad:
            raise RuntimeError(_NO_GRAPH.format(what=what, i=i))


def _answer(outputs, is_outputs_tuple, result, is_result_tuple, create_graph, strict,
            what: str) -> tuple:
    """``(outputs, result)`` as the caller gets them: each nested as it came in, detached
    unless ``create_graph``; with ``strict`` and ``create_graph`` the result must have a graph."""
    if strict and create_graph:
        _require_graph(result, what)
    return (_untuple(_detached(outputs, create_graph), is_outputs_tuple),
            _untuple(_detached(result, create_graph), is_result_tuple))


# --- the six functions -----------------------------------------------------------------------

def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), vᵀ·J)``: one backward pass with ``v`` as the outputs' gradient.

    ``v`` has the outputs' structure and shapes; the result has the inputs'.
    """
    with enable_grad():
        is_inputs_tuple, inputs = _prepare(inputs, "vjp", create_graph)
        is_outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        v = _vector(v, outputs, is_outputs_tuple, "vjp", create_graph,
                    "the user-provided function returns")
    if strict:
        _require_reached(outputs, inputs, _UNUSED)
    result = tuple(gradients(outputs, v, inputs, create_graph=create_graph,
                             retain_graph=create_graph))
    return _answer(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph, strict,
                   "jacobian")


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), J·v)``: one forward-mode pass with the inputs moving along ``v``.

    ``v`` has the inputs' structure and shapes; the result has the outputs'.
    PyTorch computes this with two backward passes (the "double backward
    trick"); gradlab uses forward mode (``gradlab.func.jvp``), same numbers.
    """
    with enable_grad():
        is_inputs_tuple, inputs = _prepare(inputs, "jvp", create_graph)
        v = _vector(v, inputs, is_inputs_tuple, "jvp", create_graph,
                    "the input to the user-provided function is")
        output, tangent = _forward_jvp(_checked(func, "jvp"), inputs, v)
    is_outputs_tuple, outputs = _as_tuple(output, _OUTPUTS, "jvp")
    _, result = _as_tuple(tangent, _OUTPUTS, "jvp")
    if strict:
        _require_differentiable(outputs)
        _require_reached(outputs, inputs, _UNUSED)
    return _answer(outputs, is_outputs_tuple, result, is_outputs_tuple, create_graph, strict,
                   "jacobian")


def _check_strategy(strategy: str, name: str) -> None:
    if strategy not in _STRATEGIES:
        raise AssertionError(  # PyTorch's type, so code that catches it behaves the same
            f'Expected strategy to be either "forward-mode" or "reverse-mode", got '
            f'{strategy!r} ({name}). Hint: "forward-mode" (one pass per input element) is '
            'cheaper when f has more outputs than inputs, "reverse-mode" (one pass per '
            "output element) otherwise.")


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` has shape out_i.shape + in_j.shape.

    ``strategy="reverse-mode"``: one backward pass per output element (a row).
    ``"forward-mode"``: one forward-mode pass per input element (a column);
    PyTorch allows it only with ``vectorize=True``, and so does gradlab.
    ``vectorize`` asks PyTorch to batch the passes with vmap; gradlab has no
    batching rules, so it runs the same loop and gives the same result.
    Forward-mode results are detached here (PyTorch's may still require grad).
    """
    _check_strategy(strategy, "jacobian")
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `strict=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
                "implemented for `vectorize=True`. Fix: pass vectorize=True (the same columns, "
                'one forward pass each), or use strategy="reverse-mode"')
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        argnums = tuple(range(len(inputs))) if is_inputs_tuple else 0
        result = jacfwd(_checked(func, "jacobian"), argnums)(*(x.detach() for x in inputs))
        result = tree_map(Tensor.detach, result)  # (PyTorch leaves these attached; see above)
        if is_inputs_tuple:  # PyTorch's forward-mode branch gives lists here: kept, to match
            result = [list(row) if isinstance(row, tuple) else row for row in result]
        return result
    if vectorize and strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
            "supported together. Please either set `strict=False` or `vectorize=False`.")
    with enable_grad():
        is_inputs_tuple, inputs = _prepare(inputs, "jacobian", create_graph)
        is_outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
    if strict:
        for i, out in enumerate(outputs):
            for j, used in enumerate(_reached([out], inputs)):
                if not used:
                    raise RuntimeError(
                        f"Output {i} of the user-provided function is independent of input "
                        f"{j}. This is not allowed in strict mode. (Fix: use every input, or "
                        "pass strict=False to get zeros there.)")
    table = []
    for out in outputs:
        row = tuple(_jacobian_rows(out, list(inputs), keep=create_graph))
        if strict and create_graph:
            _require_graph(row, "jacobian")
        table.append(_detached(row, create_graph))
    return _nest(tuple(table), is_outputs_tuple, is_inputs_tuple)


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The matrix of second derivatives of a scalar ``func``: ``H[i][j]`` = ∂²f/∂in_i∂in_j,
    of shape in_i.shape + in_j.shape.

    The Jacobian of the gradient: the inner Jacobian (the gradient) is always
    reverse mode, recorded so the outer one can differentiate it, by reverse
    mode (backward of backward) or forward mode (forward-over-reverse).
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    _check_strategy(outer_jacobian_strategy, "hessian")

    def value(*xs):
        return _single_number(*_call(func, xs, "hessian", strict), "hessian").squeeze()

    def gradient(*xs):
        grads = jacobian(value, xs, create_graph=True)
        if strict:
            for i, g in enumerate(grads):
                if not g.requires_grad:
                    raise RuntimeError(_FLAT_JACOBIAN.format(i=i))
        return grads

    table = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                     vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _nest(table, is_inputs_tuple, is_inputs_tuple)


def _gradient_with_graph(func: Callable, inputs: tuple, fn_name: str, strict: bool):
    """``func``'s outputs, and its gradient recorded so it can be differentiated again."""
    is_outputs_tuple, outputs = _call(func, inputs, fn_name, strict)
    _single_number(is_outputs_tuple, outputs, fn_name)
    if strict:
        _require_reached(outputs, inputs, _UNUSED)
    grads = tuple(gradients(outputs, [None], inputs, create_graph=True, retain_graph=True))
    if strict:
        for i, g in enumerate(grads):
            if not g.requires_grad:
                raise RuntimeError(_FLAT_JACOBIAN.format(i=i))
    return is_outputs_tuple, outputs, grads


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), vᵀ·H)`` for a scalar ``func``: ``v`` as the gradient of the gradient,
    one backward pass through the recorded backward pass."""
    with enable_grad():
        is_inputs_tuple, inputs = _prepare(inputs, "vhp", create_graph)
        v = _vector(v, inputs, is_inputs_tuple, "vhp", create_graph,
                    "the input to the user-provided function is")
        is_outputs_tuple, outputs, grads = _gradient_with_graph(func, inputs, "vhp", strict)
    if strict:
        _require_reached(grads, inputs, _JACOBIAN_UNUSED)
    result = tuple(gradients(grads, v, inputs, create_graph=create_graph,
                             retain_graph=create_graph))
    return _answer(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph, strict,
                   "hessian")


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), H·v)`` for a scalar ``func``: the jvp of the gradient x ↦ ∇f(x)
    along ``v`` (forward mode through a recorded backward pass, as ``gradlab.func.hessian``).

    For a twice continuously differentiable f, H is symmetric and hvp equals vhp.
    """
    with enable_grad():
        is_inputs_tuple, inputs = _prepare(inputs, "hvp", create_graph)
        v = _vector(v, inputs, is_inputs_tuple, "hvp", create_graph,
                    "the input to the user-provided function is")
        found = []  # what func returned, seen from inside the forward-mode pass

        def gradient(*xs):
            is_outputs_tuple, outputs, grads = _gradient_with_graph(func, xs, "hvp", strict)
            found.append((is_outputs_tuple, outputs))
            return grads

        _, result = _forward_jvp(gradient, inputs, v)
    is_outputs_tuple, outputs = found[0]
    return _answer(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph, strict,
                   "hessian")
