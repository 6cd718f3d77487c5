"""Reverse-mode transforms: functions in, functions of their derivatives out.

``torch.func``'s way of asking for derivatives: instead of calling
``loss.backward()`` and reading ``.grad``, transform the function itself::

    df = grad(f)            # df(x) = ∇f(x), a function you can call again
    d2f = grad(grad(f))     # and transform again: the second derivative

Each transform runs ``f`` on fresh copies of its inputs (see
:mod:`._inputs`), then one reverse pass per row it needs:

* ``grad``: f: Rⁿ → R, one backward pass gives ∇f = (∂f/∂x₁, …, ∂f/∂xₙ).
* ``vjp``: f: Rⁿ → Rᵐ and a cotangent v ∈ Rᵐ give vᵀ·J, one backward pass.
* ``jacrev``: the whole m × n Jacobian J, row i = e_iᵀ·J, one vjp per output
  element (cheap when m is small; ``jacfwd`` costs one pass per input element).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..ops.creation import eye, zeros
from ..ops.joining import stack
from ..tensor import Tensor
from ._inputs import (
    check_callable,
    gradients,
    normalize_argnums,
    prepare,
    split_aux,
    tensor_leaves,
    unwrap,
    unwrap_tree,
)
from ._pytree import flatten_as, tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jacrev"]


def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """Like :func:`grad`, but the new function returns ``(gradient, value)``, so a training
    step gets the loss without a second forward pass. With ``has_aux=True``:
    ``(gradient, (value, aux))``."""
    return _grad_transform(func, argnums, has_aux, "grad_and_value", with_value=True)


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """The gradient of ``func`` (which returns a scalar) with respect to argument(s) ``argnums``.

    ``grad(f)(x)`` = ∂f/∂x, shaped like ``x`` (a dict of tensors gives a dict of
    gradients). With a tuple of ``argnums``, a tuple of gradients. With
    ``has_aux=True``, ``func`` returns ``(output, aux)`` and the result is
    ``(gradient, aux)``. Transforms compose: ``grad(grad(f))`` is f''.
    """
    return _grad_transform(func, argnums, has_aux, "grad", with_value=False)


def _grad_transform(func, argnums, has_aux, name, with_value):
    check_callable(func, name)

    @functools.wraps(func)
    def transformed(*args, **kwargs):
        who = f"{name}(f)(*args)"
        positions = normalize_argnums(argnums, len(args), who)
        outer_grad = is_grad_enabled()
        with enable_grad():  # the transform differentiates even inside no_grad()
            prepared = prepare(args, positions, isinstance(argnums, int), who)
            output, aux = split_aux(func(*prepared.args, **kwargs), has_aux, who)
        _check_scalar(output, who)
        keep = outer_grad and prepared.reaches_outside([output])
        grads = gradients([output], [None], prepared.leaves, create_graph=keep,
                          retain_graph=keep)
        result = prepared.unflatten(grads)
        if with_value:
            value = output if keep else unwrap(output)
            if has_aux:
                return result, (value, unwrap_tree(aux, keep))
            return result, value
        return (result, unwrap_tree(aux, keep)) if has_aux else result

    return transformed


def _check_scalar(output, who: str) -> None:
    if not isinstance(output, Tensor):
        raise TypeError(f"{who}: expected f(*args) to return a scalar Tensor, got a "
                        f"{type(output).__name__}. Fix: return the loss tensor; to return more, "
                        "use has_aux=True and return (loss, aux)")
    if output.dim() != 0:
        raise RuntimeError(
            f"{who}: expected f(*args) to return a scalar Tensor, got one of shape "
            f"{tuple(output.shape)}. A gradient is the derivative of one number. Fix: reduce "
            "it (return y.sum() or y.mean()), or use vjp or jacrev for the derivatives of "
            "every element")
    if not output.dtype.is_floating_point:
        raise RuntimeError(f"{who}: f(*args) returned a {output.dtype} scalar, which has no "
                           "derivative. Fix: compute the loss in floating point")


def vjp(func: Callable, *primals, has_aux: bool = False):
    """Run ``func(*primals)`` and return ``(output, vjp_fn)``: ``vjp_fn(v)`` = vᵀ·J.

    ``v`` (the cotangents) has the output's structure and shapes; ``vjp_fn``
    returns one gradient per primal, always as a tuple, and may be called
    many times (the graph is kept). With ``has_aux=True``: ``(output, vjp_fn, aux)``.
    """
    who = "vjp(f, *primals)"
    check_callable(func, "vjp")
    if not primals:
        raise ValueError(f"{who}: give at least one primal, the input(s) to differentiate "
                         "with respect to: vjp(f, x)")
    outer_grad = is_grad_enabled()
    with enable_grad():
        prepared = prepare(primals, tuple(range(len(primals))), False, who)
        output, aux = split_aux(func(*prepared.args), has_aux, who)
    outputs, spec = tensor_leaves(output, who)
    keep = outer_grad and prepared.reaches_outside(outputs)

    def vjp_fn(cotangents):
        cts = flatten_as(cotangents, spec, "cotangents", "f's output")
        checked = []
        for i, (ct, out) in enumerate(zip(cts, outputs)):
            if not isinstance(ct, Tensor):
                raise TypeError(f"vjp_fn: cotangent {i} must be a Tensor shaped like output {i} "
                                f"{tuple(out.shape)}, got a {type(ct).__name__}")
            if tuple(ct.shape) != tuple(out.shape):
                raise RuntimeError(
                    f"vjp_fn: cotangent {i} has shape {tuple(ct.shape)}, but output {i} has "
                    f"shape {tuple(out.shape)}. A cotangent is d(something)/d(output), so it "
                    "has its output's shape")
            checked.append(ct if ct.dtype is out.dtype else ct.to(out.dtype))
        graph = keep or (is_grad_enabled() and any(c.requires_grad for c in checked))
        return tuple(prepared.unflatten(gradients(outputs, checked, prepared.leaves,
                                                  create_graph=graph, retain_graph=True)))

    result = unwrap_tree(output, keep)
    if has_aux:
        return result, vjp_fn, unwrap_tree(aux, keep)
    return result, vjp_fn


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size=None,
           _preallocate_and_copy: bool = False) -> Callable:
    """The Jacobian of ``func`` by reverse mode: one vjp per output element (a row of J).

    For an output of shape S and an input of shape T the Jacobian has shape
    S + T: ``J[i..., j...] = ∂out[i...] / ∂x[j...]``. Outputs and inputs may be
    pytrees: the result nests the output's structure outside, the inputs'
    (per ``argnums``) inside. ``chunk_size`` is accepted for PyTorch's
    signature; gradlab always computes one row at a time.
    """
    check_callable(func, "jacrev")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"jacrev: chunk_size must be None or a positive int, got {chunk_size!r}")

    @functools.wraps(func)
    def transformed(*args, **kwargs):
        who = "jacrev(f)(*args)"
        positions = normalize_argnums(argnums, len(args), who)
        outer_grad = is_grad_enabled()
        with enable_grad():
            prepared = prepare(args, positions, isinstance(argnums, int), who)
            output, aux = split_aux(func(*prepared.args, **kwargs), has_aux, who)
        outputs, spec = tensor_leaves(output, who)
        keep = outer_grad and prepared.reaches_outside(outputs)
        jacobians = [prepared.unflatten(_jacobian_rows(out, prepared.leaves, keep))
                     for out in outputs]
        jac = tree_unflatten(jacobians, spec)
        return (jac, unwrap_tree(aux, keep)) if has_aux else jac

    return transformed


def _jacobian_rows(out: Tensor, inputs: list, keep: bool) -> list:
    """d out / d x for each x in ``inputs``, each of shape out.shape + x.shape, built row by
    row: row k is the vjp of the one-hot cotangent e_k."""
    n = out.numel()
    if not out.dtype.is_floating_point:
        raise RuntimeError(f"jacrev(f)(*args): an output has dtype {out.dtype} (shape "
                           f"{tuple(out.shape)}), which has no derivative. Fix: return floating "
                           "point outputs, and others as aux with has_aux=True")
    rows = []
    if n and out.requires_grad:
        basis = eye(n, dtype=out.dtype, device=out.device)
        for k in range(n):
            rows.append(gradients([out], [basis[k].reshape(tuple(out.shape))], inputs,
                                  create_graph=keep, retain_graph=True))
    jac = []
    for j, x in enumerate(inputs):
        shape = tuple(out.shape) + tuple(x.shape)
        if not rows:  # no output elements, or nothing depends on the inputs
            jac.append(zeros(shape, dtype=x.dtype, device=x.device))
        else:
            jac.append(stack([row[j].reshape(-1) for row in rows]).reshape(shape))
    return jac
