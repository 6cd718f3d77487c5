"""Forward-mode transforms: push a direction through the function with its values.

Built on :mod:`gradlab.autograd.forward_ad`: each input becomes a dual
tensor x + ẋε, and every op carries the tangent along, so one forward pass
gives a Jacobian-vector product J·ẋ.

* ``jvp``: f and a tangent t give (f(x), J·t), one forward pass.
* ``jacfwd``: the whole Jacobian, column j = J·e_j, one pass per input
  element (cheap when the input is small; ``jacrev`` costs one pass per
  output element).
* ``hessian``: ``jacfwd(jacrev(f))``, forward-over-reverse: the tangent rides
  through the backward pass that computes the gradient, giving H·e_j.

gradlab has one forward-mode level at a time (as PyTorch's forward AD), so
forward transforms do not nest in each other: ``jacfwd(jacfwd(f))`` raises;
use ``jacfwd(jacrev(f))`` or ``jacrev(jacrev(f))``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..autograd import forward_ad
from ..ops.creation import eye, zeros, zeros_like
from ..ops.joining import stack
from ..tensor import Tensor
from ._inputs import (
    check_callable,
    forward_level_active,
    normalize_argnums,
    split_aux,
    tensor_leaves,
)
from ._pytree import flatten_as, tree_flatten, tree_map, tree_unflatten
from .transforms import jacrev

__all__ = ["jvp", "jacfwd", "hessian"]


def _no_nesting(who: str) -> None:
    if forward_level_active():
        raise RuntimeError(
            f"{who}: a forward-mode level is already active (inside jvp, jacfwd or a "
            "forward_ad.dual_level), and gradlab has one level at a time, as PyTorch's "
            "forward AD. Fix: nest reverse mode instead, e.g. jacfwd(jacrev(f)) or "
            "jacrev(jacfwd(f)) rather than jacfwd(jacfwd(f))")


def _check_primal(x, label: str, who: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{who}: {label} must be a Tensor (or a tuple/list/dict of Tensors), "
                        f"got {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise TypeError(f"{who}: {label} has dtype {x.dtype} (shape {tuple(x.shape)}); only "
                        "floating point tensors carry tangents. Fix: convert it, e.g. x.double()")


def _outputs_and_tangents(result, has_aux: bool, who: str):
    """Inside the level: the outputs' primals, their tangents (zeros where none), and aux."""
    output, aux = split_aux(result, has_aux, who)
    outputs, spec = tensor_leaves(output, who)
    primals, tangents = [], []
    for out in outputs:
        primal, tangent = forward_ad.unpack_dual(out)
        primals.append(primal)
        tangents.append(zeros_like(out) if tangent is None else tangent)
    if has_aux:
        aux = tree_map(lambda a: forward_ad.unpack_dual(a).primal
                       if isinstance(a, Tensor) else a, aux)
    return primals, tangents, spec, aux


def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J·tangents)`` in one forward pass.

    ``primals`` is a tuple of the arguments (each a tensor or a pytree of
    tensors) and ``tangents`` the same structure, one direction per primal,
    each with its primal's shape. With ``has_aux=True``: ``(output, jvp_out, aux)``.
    """
    who = "jvp(f, primals, tangents)"
    check_callable(func, "jvp")
    if not isinstance(primals, (tuple, list)):
        raise TypeError(f"{who}: expected primals to be a tuple, so that f(*primals) is the "
                        f"call, got {type(primals).__name__}. Fix: jvp(f, (x,), (t,))")
    if not primals:
        raise ValueError(f"{who}: expected primals to be a non-empty tuple: jvp(f, (x,), (t,))")
    primal_leaves, spec = tree_flatten(tuple(primals))
    tangent_leaves = flatten_as(tuple(tangents) if isinstance(tangents, (tuple, list))
                                else tangents, spec, "tangents", "the primals")
    for i, (p, t) in enumerate(zip(primal_leaves, tangent_leaves)):
        _check_primal(p, f"primal {i}", who)
        if not isinstance(t, Tensor):
            raise TypeError(f"{who}: tangent {i} must be a Tensor, got {type(t).__name__}")
        if tuple(t.shape) != tuple(p.shape):
            raise ValueError(f"{who}: tangent {i} has shape {tuple(t.shape)}, but its primal has "
                             f"shape {tuple(p.shape)}; a tangent is a direction in the primal's "
                             "space, so the shapes must match")
    _no_nesting(who)
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t if t.dtype is p.dtype else t.to(p.dtype))
                 for p, t in zip(primal_leaves, tangent_leaves)]
        result = func(*tree_unflatten(duals, spec))
        outs, jvps, out_spec, aux = _outputs_and_tangents(result, has_aux, who)
    output = tree_unflatten(outs, out_spec)
    jvp_out = tree_unflatten(jvps, out_spec)
    return (output, jvp_out, aux) if has_aux else (output, jvp_out)


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian of ``func`` by forward mode: one jvp per input element (a column of J).

    Same result and layout as :func:`~gradlab.func.jacrev` (shape
    out.shape + in.shape per output and input); the cheaper of the two is
    the one whose loop is shorter. ``randomness`` is accepted for PyTorch's
    signature (it matters with vmap, which gradlab does not have).
    """
    check_callable(func, "jacfwd")
    if randomness not in ("error", "different", "same"):
        raise ValueError(f"jacfwd: randomness must be 'error', 'different' or 'same', got "
                         f"{randomness!r}")

    @functools.wraps(func)
    def transformed(*args, **kwargs):
        who = "jacfwd(f)(*args)"
        positions = normalize_argnums(argnums, len(args), who)
        _no_nesting(who)
        picked = []  # (position, leaves, spec) per argnums entry
        for p in positions:
            leaves, spec = tree_flatten(args[p])
            for leaf in leaves:
                _check_primal(leaf, f"argument {p} (picked by argnums)", who)
            picked.append((p, leaves, spec))
        inputs = [leaf for _, leaves, _ in picked for leaf in leaves]

        def run(direction):
            """f with input leaf ``direction[0]`` carrying tangent ``direction[1]``."""
            new_args, start = list(args), 0
            for p, leaves, spec in picked:
                new = list(leaves)
                for i in range(len(leaves)):
                    if direction is not None and start + i == direction[0]:
                        new[i] = forward_ad.make_dual(leaves[i], direction[1])
                new_args[p] = tree_unflatten(new, spec)
                start += len(leaves)
            return func(*new_args, **kwargs)

        columns = []  # columns[j][k][i]: output i's tangent for element k of input j
        outs = out_spec = aux = None
        for j, x in enumerate(inputs):
            n = x.numel()
            basis = eye(n, dtype=x.dtype, device=x.device) if n else None
            per_input = []
            for k in range(n):
                with forward_ad.dual_level():
                    found = _outputs_and_tangents(
                        run((j, basis[k].reshape(tuple(x.shape)))), has_aux, who)
                if outs is None:
                    outs, _, out_spec, aux = found
                per_input.append(found[1])
            columns.append(per_input)
        if outs is None:  # every input is empty: one plain call for the outputs' shapes
            output, aux = split_aux(run(None), has_aux, who)
            outs, out_spec = tensor_leaves(output, who)
        jacobians = []
        for i, out in enumerate(outs):
            per_leaf = []
            for j, x in enumerate(inputs):
                shape = tuple(out.shape) + tuple(x.shape)
                if not columns[j]:
                    per_leaf.append(zeros(shape, dtype=out.dtype, device=out.device))
                else:
                    cols = [col[i].reshape(-1) for col in columns[j]]
                    per_leaf.append(stack(cols, dim=-1).reshape(shape))
            jacobians.append(_per_position(per_leaf, picked, isinstance(argnums, int)))
        jac = tree_unflatten(jacobians, out_spec)
        return (jac, aux) if has_aux else jac

    return transformed


def _per_position(per_leaf: list, picked: list, single: bool):
    trees, start = [], 0
    for _, leaves, spec in picked:
        trees.append(tree_unflatten(per_leaf[start:start + len(leaves)], spec))
        start += len(leaves)
    return trees[0] if single else tuple(trees)


def hessian(func: Callable, argnums=0) -> Callable:
    """The matrix of second derivatives, H[i, j] = ∂²f / ∂x_i ∂x_j, of a scalar ``func``.

    ``jacfwd(jacrev(func))``: reverse mode gives the gradient, forward mode
    differentiates that gradient once per input element. For an input of
    shape T the Hessian has shape T + T.
    """
    check_callable(func, "hessian")
    return jacfwd(jacrev(func, argnums), argnums)
