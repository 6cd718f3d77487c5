"""vmap: a function of one sample made into a function of a batch, honestly, as a loop.

PyTorch's ``vmap`` has a *batching rule* per op: inside ``vmap(f)(x)`` every
op sees the whole batch at once and runs once, so the batched function is
as fast as hand-written batched code. gradlab has no batching rules. Its
``vmap`` does what the definition says::

    vmap(f)(x)  ==  stack([f(x[0]), f(x[1]), ..., f(x[B-1])])

split each batched input along its ``in_dim``, call ``f`` once per sample,
and stack the outputs along ``out_dims``. The results are the same as
PyTorch's (per-sample gradients, batched Jacobians, model ensembles), and so
are the arguments and the errors; the speed is that of a Python loop.

Because each sample is a real call, a few things PyTorch's vmap rejects
work here (``.item()``, ``if x > 0:`` on a sample's values, outputs whose
shape depends on the values: the last is reported when stacking). One thing
PyTorch rejects is *not* detected: an in-place op that writes a batched
value into an unbatched tensor (``vmap(lambda a: buf.add_(a))(x)``) just
runs once per sample, accumulating into ``buf``.

The splitting (``select``) and stacking (``stack``) are ordinary
differentiable ops, so ``grad`` of a ``vmap``-ed function and ``vmap`` of a
``grad`` both work, as do nested ``vmap``s.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .. import random as _random
from ..ops.creation import zeros
from ..ops.joining import stack
from ..tensor import Tensor
from ._inputs import check_callable
from ._pytree import LEAF, TreeSpec, tree_flatten, tree_unflatten

__all__ = ["vmap"]

RANDOMNESS = ("error", "different", "same")


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``func`` mapped over a batch dimension of its inputs: one call per sample, outputs stacked.

    ``in_dims``: which dim of each positional argument is the batch dim, an
    int for all of them or a tuple with one entry per argument; an entry is
    an int, ``None`` (the argument is the same for every sample: weights, a
    flag) or, for a tuple/list/dict argument, a matching structure. Negative
    dims count from the end. Keyword arguments are never batched.
    ``out_dims``: where the batch dim goes in each output (int, ``None`` for
    an output that is the same for every sample, or a structure like the
    output's). ``randomness``: ``'error'`` (random ops inside ``func`` raise),
    ``'different'`` (each sample draws its own numbers) or ``'same'`` (every
    sample draws the same numbers). ``chunk_size`` is accepted for PyTorch's
    signature; a loop already runs one sample at a time, so it changes nothing.

    No batching rules: the result equals PyTorch's vmap, but costs B calls of
    ``func``, as slow as a Python loop. An in-place write of a sample into an
    unbatched tensor, an error in PyTorch, is not detected (see the module docstring).
    """
    check_callable(func, "vmap")
    if randomness not in RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (isinstance(chunk_size, bool) or
                                   not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def batched(*args, **kwargs):
        name = _name(func)
        _check_out_dims(out_dims, name)
        size, flat_dims, flat_args, spec = _batched_inputs(in_dims, args, name)
        if size == 0:
            return _empty_batch(func, flat_dims, flat_args, spec, kwargs, out_dims, name,
                                randomness)
        outputs = _per_sample(func, size, flat_dims, flat_args, spec, kwargs, name, randomness)
        return _stack_outputs(outputs, out_dims, name)

    return batched


def _name(func) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)  # a module instance has no __name__


# --- in_dims and out_dims: one dim (or None) per leaf ------------------------------------------

def _is_dim(value) -> bool:
    """A leaf of an in_dims/out_dims tree: an int or None (None is "not batched", never a
    container as it is in :mod:`._pytree`)."""
    return value is None or not isinstance(value, (tuple, list, dict))


def _broadcast(dims, spec: TreeSpec) -> list | None:
    """One dim per leaf of ``spec``: a dim where ``spec`` has a whole subtree applies to
    every leaf in it (``in_dims=(0, None)`` with a dict first argument). None if the
    structures don't match."""
    if _is_dim(dims):
        return [dims] * spec.num_leaves
    if spec.is_leaf() or not _same_kind(dims, spec.kind) or len(dims) != len(spec.children):
        return None
        return None
    if isinstance(dims, dict):
        if set(dims) != set(spec.context):
            return None
        items = [dims[key] for key in spec.context]
    else:
        items = list(dims)
    flat: list = []
    for item, child in zip(items, spec.children):
        sub = _broadcast(item, child)
        if sub is None:
            return None
        flat += sub
    return flat


def _same_kind(dims, kind) -> bool:
    """A dims container matches an argument container: dict for dict, list for list, a
    tuple for any tuple (a named tuple too)."""
    if isinstance(dims, dict):
        return kind is dict
    if isinstance(dims, list):
        return kind is list
    return isinstance(kind, type) and issubclass(kind, tuple)


def _structure(tree) -> TreeSpec:
    """The spec of an in_dims/out_dims tree, for error messages (its Nones are leaves)."""
    if _is_dim(tree):
        return LEAF
    items = [tree[k] for k in tree] if isinstance(tree, dict) else list(tree)
    context = tuple(tree) if isinstance(tree, dict) else ()
    return TreeSpec(type(tree), context, tuple(_structure(item) for item in items))


def _dims_leaves(tree) -> list:
    if _is_dim(tree):
        return [tree]
    items = tree.values() if isinstance(tree, dict) else tree
    return [leaf for item in items for leaf in _dims_leaves(item)]


def _check_out_dims(out_dims, name: str) -> None:
    for dim in _dims_leaves(out_dims):
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int)):
            raise ValueError(
                f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                "python collection of ints representing where in the outputs the vmapped "
                "dimension should appear.")


def _batched_inputs(in_dims, args: tuple, name: str):
    """``(batch size, one dim or None per leaf, the leaves, the args' spec)``, all checked."""
    where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. "
                         "The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_dims = _broadcast(in_dims, spec)
    if flat_dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {_structure(in_dims)} but inputs has structure "
                         f"{spec}. Fix: one in_dim per positional argument (None for those "
                         "that are the same for every sample)")
    for i, (arg, dim) in enumerate(zip(flat_args, flat_dims)):
        if dim is None:
            continue
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise ValueError(f"{where}: Got in_dim={dim} for an input but in_dim must be either "
                             "an integer dimension or None.")
        if not isinstance(arg, Tensor):
            raise ValueError(f"{where}: Got in_dim={dim} for an input but the input is of type "
                             f"{type(arg)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        if not -arg.dim() <= dim < arg.dim():
            raise ValueError(f"{where}: Got in_dim={dim} for some input, but that input is a "
                             f"Tensor of dimensionality {arg.dim()} so expected in_dim to "
                             f"satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
        flat_dims[i] = dim % arg.dim()
    sizes = [arg.shape[dim] for arg, dim in zip(flat_args, flat_dims) if dim is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0], flat_dims, flat_args, spec


# --- the loop ----------------------------------------------------------------------------------

def _sample(flat_args: list, flat_dims: list, spec: TreeSpec, index: int) -> tuple:
    """The arguments of sample ``index``: each batched tensor's slice (a view, so an in-place
    op on it writes into the batch, as in PyTorch), the others as they are."""
    return tree_unflatten([arg if dim is None else arg.select(dim, index)
                           for arg, dim in zip(flat_args, flat_dims)], spec)


def _per_sample(func, size, flat_dims, flat_args, spec, kwargs, name, randomness) -> list:
    start = _rng_states()
    draws = _random.draw_count()
    outputs = []
    for index in range(size):
        if randomness == "same":
            _set_rng_states(start)  # every sample draws the numbers the first one drew
        outputs.append(func(*_sample(flat_args, flat_dims, spec, index), **kwargs))
        if randomness == "error" and _random.draw_count() != draws:
            _set_rng_states(start)
            raise RuntimeError(
                "vmap: called random operation while in randomness error mode. Please either "
                "use the 'same' or 'different' randomness flags on vmap or perform the "
                f"randomness operation out of vmap (found in {name}: a random op, or dropout "
                "in training mode, drew random numbers)")
    return outputs


def _empty_batch(func, flat_dims, flat_args, spec, kwargs, out_dims, name, randomness):
    """A batch of 0 samples has no sample to call ``func`` on, but the result still needs
    its shapes: call it once on zeros shaped like one sample, then keep only the shapes."""
    stand_ins = [arg if dim is None else
                 zeros(tuple(arg.shape[:dim]) + tuple(arg.shape[dim + 1:]), dtype=arg.dtype,
                       device=arg.device) for arg, dim in zip(flat_args, flat_dims)]
    start = _rng_states()
    try:
        (output,) = _per_sample(func, 1, [None] * len(flat_dims), stand_ins, spec, kwargs, name,
                                randomness)
    finally:
        _set_rng_states(start)  # the stand-in call is not a sample: it draws nothing
    leaves, out_spec = tree_flatten(output)
    dims = _output_dims(out_dims, output, out_spec, name)
    empty = []
    for leaf, dim in zip(leaves, dims):
        if dim is None:
            empty.append(leaf)
            continue
        _check_tensor(leaf, name)
        dim = _wrap_out_dim(dim, leaf.dim())
        shape = tuple(leaf.shape[:dim]) + (0,) + tuple(leaf.shape[dim:])
        empty.append(zeros(shape, dtype=leaf.dtype, device=leaf.device))
    return tree_unflatten(empty, out_spec)


# --- stacking the outputs ------------------------------------------------------------------------

def _output_dims(out_dims, output, out_spec: TreeSpec, name: str) -> list:
    if isinstance(output, Tensor) and isinstance(out_dims, tuple) and len(out_dims) == 1:
        dims = list(out_dims)  # out_dims=(0,) for a single tensor, as PyTorch allows
    else:
        dims = _broadcast(out_dims, out_spec)
    if dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                         "compatible with the structure of `outputs`. out_dims has structure "
                         f"{_structure(out_dims)} but outputs has structure {out_spec}.")
    return dims


def _check_tensor(leaf, name: str) -> None:
    if not isinstance(leaf, Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(leaf)}. Did you mean to set out_dims= to None for output?")


def _wrap_out_dim(dim: int, sample_ndim: int) -> int:
    """``dim`` in the stacked output, which has one more dim than a sample's output."""
    ndim = sample_ndim + 1
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim % ndim


def _stack_outputs(outputs: list, out_dims, name: str):
    first_leaves, out_spec = tree_flatten(outputs[0])
    per_sample = [first_leaves]
    for index, output in enumerate(outputs[1:], start=1):
        leaves, other = tree_flatten(output)
        if other != out_spec:
            raise ValueError(
                f"vmap({name}, ...): `{name}` returned {out_spec} for sample 0 but {other} for "
                f"sample {index} (* is a leaf). vmap stacks the samples' outputs, so every call "
                "must return the same structure")
        per_sample.append(leaves)
    dims = _output_dims(out_dims, outputs[0], out_spec, name)
    stacked = []
    for k, dim in enumerate(dims):
        column = [leaves[k] for leaves in per_sample]
        stacked.append(_unbatched(column, name) if dim is None else _stack(column, dim, name))
    return tree_unflatten(stacked, out_spec)


def _unbatched(column: list, name: str):
    """An output with out_dim None must be the same for every sample: return the first."""
    first = column[0]
    if isinstance(first, Tensor):
        for other in column[1:]:
            if other is not first and (tuple(other.shape) != tuple(first.shape) or
                                       not bool((other == first).all())):
                raise ValueError(
                    f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim "
                    "is None (this output differs between samples; give it an int out_dim)")
    return first


def _stack(column: list, dim: int, name: str) -> Tensor:
    for leaf in column:
        _check_tensor(leaf, name)
    first = column[0]
    for index, leaf in enumerate(column[1:], start=1):
        if tuple(leaf.shape) != tuple(first.shape) or leaf.dtype is not first.dtype:
            raise RuntimeError(
                f"vmap({name}, ...): an output of `{name}` is a {first.dtype} tensor of shape "
                f"{tuple(first.shape)} for sample 0 but a {leaf.dtype} tensor of shape "
                f"{tuple(leaf.shape)} for sample {index}; the samples' outputs are stacked, so "
                "they must agree (PyTorch's vmap can't return value-dependent shapes either)")
    return stack(column, dim=_wrap_out_dim(dim, first.dim()))


# --- randomness: the default generators' positions -----------------------------------------

def _rng_states() -> dict:
    """Every default generator's position (the CPU one and any device used so far).

    A random op draws from its device's default generator (gradlab.random),
    so a change of position between two snapshots means ``func`` drew random
    numbers. A generator that only exists on CUDA (CuPy) may have no readable
    position; its draws go unnoticed.
    """
    states = {}
    for device, generator in _random.default_generators().items():
        try:
            states[device] = generator.get_state()
        except AttributeError:  # a backend whose generator can't report its position
            states[device] = None
    return states


def _set_rng_states(states: dict) -> None:
    for device, generator in _random.default_generators().items():
        state = states.get(device)
        if state is None:
            if device not in states:  # first used during the call: back to its start
                generator.manual_seed(generator.initial_seed())
            continue
        generator.set_state(state)
