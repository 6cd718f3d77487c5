"""functional_call: run a module with parameters and buffers you pass in.

A module keeps its weights inside itself; a function transform wants them as
arguments. ``functional_call(model, params, (x,))`` bridges the two: for the
duration of one call it swaps the tensors in ``params`` (keyed by their
``state_dict`` names, ``"0.weight"``) into the module, runs it, and swaps
the originals back, even if the call raises. So::

    params = dict(model.named_parameters())
    grads = grad(lambda p, x, y: loss_fn(functional_call(model, p, (x,)), y))(params, x, y)

gives the gradient as a dict, and the module's own parameters (and their
``.grad``) are untouched.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..nn.modules.module import Module
from ..tensor import Tensor

__all__ = ["functional_call"]

_MISSING = object()  # an attribute the module did not have before the call


def functional_call(module: Module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """``module(*args, **kwargs)`` with its parameters and buffers replaced by the given ones.

    ``parameter_and_buffer_dicts``: a dict from names to tensors, or a sequence
    of such dicts (their keys must not overlap). Names not given keep the
    module's own tensors. ``tie_weights``: a value given for one of several
    names that share a tensor in the module (tied weights) is used for all
    of them. ``strict``: the names must be exactly the module's parameters and
    buffers. ``args`` that is not a tuple is the single positional argument.
    """
    if not isinstance(module, Module):
        raise TypeError(f"functional_call: expected a gradlab.nn.Module, got "
                        f"{type(module).__name__}")
    values = _merge_dicts(parameter_and_buffer_dicts)
    if kwargs is None:
        kwargs = {}
    if not isinstance(args, tuple):
        args = (args,)
    if tie_weights:
        values = _untie(module, values)
    if strict:
        _check_strict(module, values)

    originals: list = []  # (path, submodule, registry or None, name, original), in order
    try:
        for path, value in values.items():
            originals.append((path, *_swap(module, path, value)))
        return module(*args, **kwargs)
    finally:
        for path, owner, registry, name, original in reversed(originals):
            current = _put_back(owner, registry, name, original)
            if current is not values[path]:
                # The module replaced a tensor during the call (a buffer of running
                # statistics): hand the new one back through the caller's dict, as PyTorch does.
                _write_back(parameter_and_buffer_dicts, path, current)


def _merge_dicts(given) -> dict:
    if isinstance(given, dict):
        return dict(given)
    if isinstance(given, Sequence) and not isinstance(given, str):
        if not all(isinstance(d, dict) for d in given):
            raise ValueError("functional_call: expected all elements of "
                             "parameter_and_buffer_dicts to be dictionaries, got "
                             f"{[type(d).__name__ for d in given]}")
        seen: dict = {}
        for d in given:
            for key in d:
                seen[key] = seen.get(key, 0) + 1
        repeated = [key for key, count in seen.items() if count > 1]
        if repeated:
            raise ValueError(f"functional_call: {repeated} appeared in multiple dictionaries; "
                             "behavior of functional call is ambiguous. Fix: give each name "
                             "in one dict only")
        return {k: v for d in given for k, v in d.items()}
    raise ValueError("functional_call: expected parameter_and_buffer_dicts to be a dict, or a "
                     f"list/tuple of dicts, but got {type(given).__name__}")


def _write_back(given, path: str, value) -> None:
    for d in ([given] if isinstance(given, dict) else given):
        if path in d:
            d[path] = value


def _named_tensors(module: Module) -> dict:
    """Every parameter and buffer by name, tied ones under each of their names."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _untie(module: Module, values: dict) -> dict:
    """Give a value for one tied name to all the names that share that tensor."""
    by_tensor: dict = {}
    for name, tensor in _named_tensors(module).items():
        by_tensor.setdefault(id(tensor), []).append(name)
    tied = {name: names for names in by_tensor.values() if len(names) > 1 for name in names}
    untied = dict(values)
    for name in values:
        if name not in tied:
            continue
        group = tied[name]
        given = [n for n in group if n in values]
        if len({id(values[n]) for n in given}) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(given)}, which are "
                "tied (one tensor in the module). Consider using tie_weights=False, or pass "
                "one value for them")
        for other in group:
            untied[other] = values[name]
    return untied


def _check_strict(module: Module, values: dict) -> None:
    valid = set(_named_tensors(module))
    missing = sorted(valid - set(values))
    unexpected = sorted(set(values) - valid)
    messages = []
    if unexpected:
        messages.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        messages.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if messages:
        raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                           + "\n\t".join(messages)
                           + "\n\t(strict=True wants exactly the module's parameter and buffer "
                           "names, as in model.state_dict(); pass strict=False to replace some)")


def _swap(module: Module, path: str, value):
    """Put ``value`` where ``path`` (``"encoder.0.weight"``) is; return how to undo it."""
    if value is not None and not isinstance(value, Tensor):
        raise TypeError(f"functional_call: the value for '{path}' must be a Tensor (or None), "
                        f"got {type(value).__name__}")
    owner_path, _, name = path.rpartition(".")
    if not name:
        raise KeyError(f"functional_call: '{path}' is not a parameter or buffer name; names "
                       "look like 'weight' or 'encoder.0.weight'")
    owner = module.get_submodule(owner_path)
    for registry in ("_parameters", "_buffers"):
        members = owner.__dict__[registry]
        if name in members:
            # Straight into the registry: a plain tensor may stand in for a Parameter
            # (the setattr path would insist on nn.Parameter).
            original = members[name]
            members[name] = value
            return owner, registry, name, original
    original = owner.__dict__.get(name, _MISSING)
    if original is not _MISSING and original is not None and not isinstance(original, Tensor):
        raise TypeError(f"functional_call: attribute '{path}' of the module is a "
                        f"{type(original).__name__}, not a tensor, so it can't be replaced")
    object.__setattr__(owner, name, value)
    return owner, None, name, original


def _put_back(owner: Module, registry, name: str, original):
    """Restore one swapped name; return what was there at the end of the call."""
    if registry is not None:
        members = owner.__dict__[registry]
        current = members.get(name)
        members[name] = original
        return current
    current = owner.__dict__.get(name)
    if original is _MISSING:
        owner.__dict__.pop(name, None)
    else:
        object.__setattr__(owner, name, original)
    return current
