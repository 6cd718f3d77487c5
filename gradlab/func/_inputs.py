"""What every transform does around the user's function: fresh inputs in, plain results out.

gradlab has one define-by-run graph, not PyTorch's levels of wrapped
tensors, so a transform gets its own derivatives like this:

1. **Fresh inputs.** Each tensor the transform differentiates with respect
   to is replaced by a new handle of its own. A tensor that needs no
   gradient becomes a detached copy that requires grad (so the user's
   tensor and its ``.grad`` are never touched); a tensor that already
   requires grad (a parameter, or the fresh input of an outer transform)
   becomes a view of it, so gradients still flow through to the outside.
   Then ``autograd.grad`` with respect to the new handles sees exactly the
   paths through this transform's inputs, nothing else: in
   ``grad(lambda y: x * y)(x)`` the derivative is ``x``, not ``2 x``.
2. **Graph only when someone outside will differentiate.** If the
   function's graph reaches no tensor that requires grad except the fresh
   inputs, nobody can differentiate the result, and the backward pass runs
   with ``create_graph=False`` (lean). Otherwise (``grad(grad(f))``, or a
   closure over a parameter) it records its own graph, so transforms compose.
3. **Plain results.** Outputs handed back (the value, ``aux``) are detached
   when only this transform could differentiate them, as in PyTorch.

Forward mode (:mod:`gradlab.autograd.forward_ad`) rides along: an input that
carries a tangent keeps it on its fresh handle, which is how
``jacfwd(jacrev(f))`` pushes a tangent through a backward pass.
"""

from __future__ import annotations

from ..autograd import forward_ad
from ..autograd.engine import grad as autograd_grad
from ..autograd.grad_mode import state
from ..autograd.node import AccumulateGrad
from ..ops.creation import zeros_like
from ..tensor import Tensor
from ._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["normalize_argnums", "split_aux", "check_callable", "Prepared", "prepare",
           "gradients", "unwrap", "unwrap_tree", "tensor_leaves", "forward_level_active"]


def check_callable(func, who: str) -> None:
    if not callable(func):
        raise TypeError(f"{who}: expected a function to transform, got "
                        f"{type(func).__name__}. Fix: pass the function itself, e.g. "
                        "grad(f), not grad(f(x))")


def normalize_argnums(argnums, num_args: int, who: str) -> tuple[int, ...]:
    """``argnums`` as a tuple of non-negative positions into the positional arguments."""
    single = isinstance(argnums, int) and not isinstance(argnums, bool)
    if not single and not (isinstance(argnums, tuple) and all(
            isinstance(a, int) and not isinstance(a, bool) for a in argnums)):
        raise TypeError(f"{who}: argnums must be an int or a tuple of ints, got {argnums!r}")
    picked = (argnums,) if single else argnums
    if not picked:
        raise ValueError(f"{who}: argnums must be non-empty: say which positional arguments "
                         "to differentiate, e.g. argnums=0 or argnums=(0, 1)")
    positions = []
    for a in picked:
        if not -num_args <= a < num_args:
            raise ValueError(
                f"{who}: argnums={argnums!r}, but f was called with {num_args} positional "
                f"argument(s), so argument {a} does not exist. argnums counts positional "
                "arguments from 0 (keyword arguments are never differentiated)")
        positions.append(a % num_args)
    if len(set(positions)) != len(positions):
        raise ValueError(f"{who}: argnums must be unique, got {argnums!r}")
    return tuple(positions)


def split_aux(result, has_aux: bool, who: str):
    """``(output, aux)`` of what the function returned (aux is None without has_aux)."""
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        got = f"a tuple of {len(result)}" if isinstance(result, tuple) else \
            type(result).__name__
        raise RuntimeError(f"{who}: with has_aux=True, f must return a pair (output, aux), "
                           f"got {got}. Fix: return (loss, aux), or set has_aux=False")
    return result


def forward_level_active() -> bool:
    """Is a ``forward_ad.dual_level`` open (so tangents are flowing)?"""
    return state.dual is not None


def _fresh(x: Tensor, outer_nodes: list, fresh_leaves: list) -> Tensor:
    """The handle the function sees in place of ``x`` (see the module docstring)."""
    primal, tangent = forward_ad.unpack_dual(x)
    if primal.requires_grad:
        handle = primal.view(tuple(primal.shape))  # a new node, connected to the outside
        outer_nodes.append(handle.grad_fn)
    else:
        handle = primal.detach().requires_grad_(True)
        fresh_leaves.append(handle)
    if tangent is not None:
        handle = forward_ad.make_dual(handle, tangent)
    return handle


class Prepared:
    """The function's new arguments, and the fresh tensors they hold, position by position."""

    def __init__(self, args: list, leaves: list, specs: list, single: bool) -> None:
        self.args = args
        self.leaves = leaves  # every fresh tensor, in argnums order then leaf order
        self.specs = specs  # one TreeSpec per position in argnums
        self.single = single
        self.outer_nodes: list = []  # the views made of inputs that already required grad
        self.fresh_leaves: list = []  # the detached copies made of inputs that did not

    def unflatten(self, per_leaf: list):
        """Values one per fresh tensor -> one pytree per argnums position (a tuple if
        argnums was a tuple, as PyTorch returns)."""
        trees, start = [], 0
        for spec in self.specs:
            trees.append(tree_unflatten(per_leaf[start:start + spec.num_leaves], spec))
            start += spec.num_leaves
        return trees[0] if self.single else tuple(trees)

    def reaches_outside(self, outputs) -> bool:
        """Does the graph behind ``outputs`` reach a tensor that requires grad other than
        this transform's fresh leaves? (Then an outer transform, or the user's own
        backward, may differentiate the result, and the backward must record a graph.)

        An iterative walk over ``node.edges``, as the engine's; it stops at the first
        outside tensor found.
        """
        fresh = {id(t) for t in self.fresh_leaves}
        outer = {id(n) for n in self.outer_nodes}
        stack, seen = [], set()
        for out in outputs:
            if not isinstance(out, Tensor) or not out.requires_grad:
                continue
            if out.grad_fn is None:
                if id(out) not in fresh:
                    return True
                continue
            stack.append(out.grad_fn)
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if id(node) in outer:
                return True
            if type(node) is AccumulateGrad:
                if id(node.variable) not in fresh:
                    return True
                continue
            for edge in node.edges:
                if edge is not None:
                    stack.append(edge[0])
        return False


def prepare(args: tuple, positions: tuple, single: bool, who: str) -> Prepared:
    """Replace each tensor in ``args[p]`` (p in ``positions``) with a fresh handle."""
    new_args = list(args)
    prepared = Prepared(new_args, [], [], single)
    for p in positions:
        leaves, spec = tree_flatten(args[p])
        fresh = []
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise TypeError(
                    f"{who}: argument {p} (picked by argnums) must be a Tensor, or a tuple/list/"
                    f"dict of Tensors, to differentiate with respect to it; it holds a "
                    f"{type(leaf).__name__}. Fix: pass gradlab.tensor(...), or point argnums "
                    "at the tensor arguments")
            if not leaf.dtype.is_floating_point:
                raise TypeError(
                    f"{who}: argument {p} has dtype {leaf.dtype} (shape {tuple(leaf.shape)}); "
                    "only floating point tensors have derivatives. Fix: convert it, e.g. "
                    "x.double(), or leave it out of argnums")
            fresh.append(_fresh(leaf, prepared.outer_nodes, prepared.fresh_leaves))
        new_args[p] = tree_unflatten(fresh, spec)
        prepared.leaves.extend(fresh)
        prepared.specs.append(spec)
    return prepared


def tensor_leaves(tree, who: str, what: str = "f's output") -> tuple[list, object]:
    """The leaves of an output pytree, checked to be tensors."""
    leaves, spec = tree_flatten(tree)
    if not leaves:
        raise RuntimeError(f"{who}: {what} holds no tensors, so there is nothing to "
                           "differentiate. Fix: return the tensor(s) you want derivatives of")
    for i, leaf in enumerate(leaves):
        if not isinstance(leaf, Tensor):
            raise TypeError(
                f"{who}: {what} must be a Tensor or a tuple/list/dict of Tensors, but leaf {i} "
                f"is a {type(leaf).__name__}. Fix: return tensors (gradlab.tensor(v)), and "
                "anything else as aux with has_aux=True")
    return leaves, spec


def gradients(outputs, cotangents, inputs, create_graph: bool, retain_graph: bool) -> list:
    """sum_i cotangents[i] · d outputs[i] / d inputs, one tensor per input (zeros where an
    input was not used, or when no output depends on anything that requires grad)."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return [zeros_like(x) for x in inputs]
    return list(autograd_grad([o for o, _ in pairs], inputs, [c for _, c in pairs],
                              retain_graph=retain_graph, create_graph=create_graph,
                              allow_unused=True, materialize_grads=True))


def unwrap(t):
    """``t`` cut from this transform's graph (keeping a forward-mode tangent if it has one)."""
    if not isinstance(t, Tensor) or not t.requires_grad:
        return t
    primal, tangent = forward_ad.unpack_dual(t)
    plain = primal.detach()
    return plain if tangent is None else forward_ad.make_dual(plain, tangent)


def unwrap_tree(tree, keep_graph: bool):
    return tree if keep_graph else tree_map(unwrap, tree)
