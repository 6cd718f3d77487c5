"""Checkpoints: ``state_dict`` and ``load_state_dict`` of a Module.

A state dict maps each parameter's and persistent buffer's dotted path
(``encoder.0.weight``) to its values, in registration order, exactly the
keys PyTorch gives the same model. Loading copies values in place (so the
Parameter objects, and an optimizer holding them, stay valid). Each module
loads its own entries in ``_load_from_state_dict``, which a layer may
override to read old checkpoints (the ``version`` saved in ``_metadata``
says which layout a checkpoint has). Hooks, as PyTorch's, run around both: before and
after a module's entries are saved, before a module loads its entries and after it
and its children have; a module that defines ``get_extra_state`` also saves what it
returns under ``_extra_state`` and gets it back in ``set_extra_state``.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from functools import partial

import numpy as np

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ...utils.hooks import RemovableHandle
from ..parameter import Parameter

__all__ = ["ModuleCheckpoint"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it could not match (both empty if all did)."""

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class ModuleCheckpoint:
    """The checkpoint half of :class:`~gradlab.nn.Module`."""

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ordered dict of every parameter and persistent buffer by dotted path.

        Values are detached tensors sharing memory with the model (``keep_vars=True``:
        the parameters themselves). ``gradlab.save(model.state_dict(), path)`` saves it.
        """
        if args:  # PyTorch's old positional form: state_dict(destination, prefix, keep_vars)
            names = ("destination", "prefix", "keep_vars")
            given = dict(zip(names, args))
            destination = given.get("destination", destination)
            prefix = given.get("prefix", prefix)
            keep_vars = given.get("keep_vars", keep_vars)
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in tuple(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=f"{prefix}{name}.",
                                  keep_vars=keep_vars)
        for hook, public in tuple(self._state_dict_hooks.values()):
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                if public:
                    raise RuntimeError("state_dict post-hook must return None (change the "
                                       "state_dict in place)")
                destination = result
        return destination

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        """This module's own entries (not its children's); layers may override."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if _has_extra_state(self):
            destination[prefix + _EXTRA_STATE] = self.get_extra_state()

    # --- what a layer adds of its own, and hooks ----------------------------------------------
    def get_extra_state(self):
        """Override to save more than tensors (any object ``gradlab.save`` can store) under
        ``<prefix>_extra_state``; ``set_extra_state`` gets it back on loading."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called: define get_extra_state() in your module to save extra "
                           "state")

    def set_extra_state(self, state) -> None:
        """Override with ``get_extra_state``: take back what it saved."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called: define set_extra_state() in your module to load extra "
                           "state")

    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """Call ``hook(module, prefix, keep_vars)`` before this module's entries are saved."""
        return RemovableHandle(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` once this module and its
        children are saved; it may change ``state_dict`` in place (and returns None)."""
        return RemovableHandle(self._state_dict_hooks, (hook, True))

    def _register_state_dict_hook(self, hook) -> RemovableHandle:
        """PyTorch's older form of the post-hook: a non-None return replaces the dict."""
        return RemovableHandle(self._state_dict_hooks, (hook, False))

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its entries: it may rename
        keys of an old checkpoint in ``state_dict``."""
        return RemovableHandle(self._load_state_dict_pre_hooks, partial(hook, self))

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
        """The same, with ``hook(state_dict, prefix, ...)`` unless ``with_module``."""
        return RemovableHandle(self._load_state_dict_pre_hooks,
                               partial(hook, self) if with_module else hook)

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """Call ``hook(module, incompatible_keys)`` once this module and its children have
        loaded; it may clear keys from ``incompatible_keys.missing_keys`` / ``.unexpected_keys``
        before ``strict`` is enforced (and returns None)."""
        return RemovableHandle(self._load_state_dict_post_hooks, hook)

    def load_state_dict(self, state_dict: Mapping, strict: bool = True, assign: bool = False):
        """Copy values from ``state_dict`` into this model's parameters and buffers.

        Values may be gradlab tensors or anything NumPy can read (arrays, CPU torch
        tensors). Returns ``(missing_keys, unexpected_keys)``; with ``strict=True`` (the
        default) any such key, or any shape mismatch, raises an error listing them all.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        def load(module, local, prefix):
            meta = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                meta["assign_to_params_buffers"] = True
            for hook in tuple(module._load_state_dict_pre_hooks.values()):
                hook(local, prefix, meta, strict, missing, unexpected, errors)
            module._load_from_state_dict(local, prefix, meta, True, missing, unexpected,
                                         errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = f"{prefix}{name}."
                    load(child, {k: v for k, v in local.items() if k.startswith(child_prefix)},
                         child_prefix)
            for hook in tuple(module._load_state_dict_post_hooks.values()):
                if hook(module, _IncompatibleKeys(missing, unexpected)) is not None:
                    raise RuntimeError("load_state_dict post-hook must return None (change "
                                       "incompatible_keys in place)")

        load(self, state_dict, "")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        """Load this module's own entries; layers override it to adapt old checkpoints."""
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                 if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = _as_tensor(state_dict[key], param)
            if value is None:
                error_msgs.append(f'While copying the parameter named "{key}", expected a '
                                  f"Tensor or array from the checkpoint but received "
                                  f"{type(state_dict[key])}")
                continue
            if value.shape != param.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {param.shape}.")
                continue
            with no_grad():
                if not assign:
                    param.copy_(value)
                elif name in self._parameters:
                    setattr(self, name, Parameter(value, param.requires_grad))
                else:
                    self._buffers[name] = value
        extra = _has_extra_state(self)
        if extra:
            if prefix + _EXTRA_STATE in state_dict:
                self.set_extra_state(state_dict[prefix + _EXTRA_STATE])
            elif strict:
                missing_keys.append(prefix + _EXTRA_STATE)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix):
                    continue
                first, *rest = key[len(prefix):].split(".", 1)
                if (rest and first not in self._modules) or (not rest and first not in local
                                                              and not (extra and
                                                                       first == _EXTRA_STATE)):
                    unexpected_keys.append(key)


_EXTRA_STATE = "_extra_state"


def _has_extra_state(module) -> bool:
    """Does the module's class define ``get_extra_state`` (the base one only raises)?"""
    return type(module).get_extra_state is not ModuleCheckpoint.get_extra_state


def _as_tensor(value, like: Tensor):
    """A checkpoint value as a gradlab tensor (NumPy arrays and CPU torch tensors convert)."""
    if isinstance(value, Tensor):
        return value
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        value = value.detach().cpu().numpy()
    if isinstance(value, (np.ndarray, np.generic, int, float, bool, list)):
        from ...ops.creation import tensor

        return tensor(np.asarray(value), device=like.device)
    return None
