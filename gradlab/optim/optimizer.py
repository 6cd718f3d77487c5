"""``Optimizer``: what every optimizer shares (parameter groups, state, hooks, events).

An optimizer holds the parameters in **parameter groups**: a list of dicts,
each with its ``"params"`` and its own options (``lr``, ``momentum``, ...),
so one model can train its layers with different settings. ``state[p]`` is
a dict per parameter with whatever the algorithm remembers between steps
(SGD's momentum buffer, Adam's moving averages, a ``step`` count).

One step is a template, written once here::

    step(closure)                       hooks, the Phase("step") event, the closure
      for each group, each p with a .grad:
          _update(p, p.grad, state[p], group)    <- each algorithm writes only this
          emit OptimizerStep(state before, state after)  (only if someone listens)

so an algorithm file holds its update rule and nothing else (LBFGS, which
moves all parameters together, replaces the loop: ``_step``). Updates run
under ``no_grad`` with in-place ops (``p.add_(...)``): a parameter keeps
its identity, and the graph never records the update.

State tensors are counted as ``optimizer`` memory (``memory_stats()``).

A complex parameter is updated as the real pairs it holds (``view_as_real``:
its real and imaginary parts side by side), as PyTorch does: an update rule
written for reals (Adam's g², RMSprop's √v) would be wrong on complex
numbers, and on the pairs it treats each part as a coordinate of its own.
Its state tensors are real pairs too. An algorithm that can't work that way
(it sees a parameter as a matrix, or all of them as one vector) says
``complex_params = False`` and refuses complex parameters when given them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from numbers import Real
from typing import Any

import numpy as np

from .. import events
from ..autograd.grad_mode import enable_grad, no_grad
from ..ops._util import array_norm
from ..tensor import Tensor
from ..utils.hooks import RemovableHandle

__all__ = ["Optimizer"]

_listeners = events.listeners  # the bus's list: truthy exactly when someone listens
_light_listeners = events.light_listeners  # those that want only phases


class Optimizer:
    """Base class of all optimizers (PyTorch's ``torch.optim.Optimizer``).

    ``params``: an iterable of tensors, or of dicts (parameter groups) with a
    ``"params"`` entry and any options that override ``defaults`` for them.
    """

    complex_params = True  # complex parameters are updated as real pairs (module docstring)

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], defaults: dict) -> None:
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict] = defaultdict(dict)
        self.param_groups: list[dict] = []
        self._step_pre_hooks: dict = {}
        self._step_post_hooks: dict = {}
        self._steps = 0  # how many times step() ran: the iteration number of Phase events
        if isinstance(params, Tensor):
            raise TypeError(
                f"{self._name}: params must be an iterable of tensors or of dicts, got a single "
                f"Tensor of shape {tuple(params.shape)}. Fix: wrap it in a list: "
                f"{self._name}([w], ...), or pass model.parameters().")
        _refuse_unordered(self._name, params)
        groups = list(params)
        if not groups:
            raise ValueError(
                f"{self._name} got an empty parameter list: there is nothing to optimize. Check "
                "that the model defines its weights as nn.Parameter (or tensors with "
                "requires_grad=True) and that a generator like model.parameters() was not "
                "already used up.")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    @property
    def _name(self) -> str:
        return type(self).__name__

    # --- parameter groups ---------------------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own options (missing ones come from ``defaults``).

        Useful to start training a layer later, e.g. after unfreezing it.
        """
        name = self._name
        if not isinstance(param_group, dict):
            raise TypeError(f"{name}.add_param_group: expected a dict with a 'params' entry, got "
                            f"{type(param_group).__name__}. Fix: pass a list of all tensors, "
                            "or a list of dicts like {'params': [w], 'lr': 0.1}.")
        if "params" not in param_group:
            raise ValueError(f"{name}: a parameter group needs a 'params' entry, got the keys "
                             f"{sorted(param_group)}. Fix: {{'params': [w1, w2], ...}}.")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        _refuse_unordered(name, params)
        params = list(params)
        index = len(self.param_groups)
        seen: set[int] = set()
        for i, p in enumerate(params):
            _check_param(name, index, i, p)
            if p.dtype.is_complex and not self.complex_params:
                raise TypeError(
                    f"{name} does not support complex parameters (parameter {i} of group "
                    f"{index}, shape {tuple(p.shape)}, is {p.dtype}), as in PyTorch. Fix: use "
                    "an elementwise optimizer (SGD, Adam, RMSprop ...), or keep the real and "
                    "imaginary parts as two real parameters")
            if id(p) in seen:
                raise ValueError(
                    f"{name}: parameter group {index} lists parameter {i} (shape "
                    f"{tuple(p.shape)}) twice; it would be updated twice per step. Fix: list "
                    "each parameter once.")
            seen.add(id(p))
        for other, group in enumerate(self.param_groups):
            for p in group["params"]:
                if id(p) in seen:
                    raise ValueError(
                        f"{name}: a parameter of shape {tuple(p.shape)} is in parameter group "
                        f"{other} and again in group {index}; each parameter must belong to "
                        "exactly one group (its options would be ambiguous). Fix: split the "
                        "parameters so that every one appears once.")
        group = dict(param_group)
        group["params"] = params
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self._check_group(group)
        self.param_groups.append(group)

    def _check_group(self, group: dict) -> None:
        """Check a group's options (each algorithm says what is valid)."""

    # --- one optimization step ---------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients, before the next backward adds new ones.

        ``set_to_none=True`` (the default) drops ``.grad`` (its memory is freed);
        ``False`` keeps the tensors and fills them with zeros.
        """
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None):
        """Update every parameter that has a gradient; returns the closure's loss (or None).

        ``closure`` (optional, required by LBFGS) recomputes the loss: it should
        zero the gradients, run forward and backward, and return the loss.
        Order: pre-hooks, ``Phase("step", n)`` (n counts this optimizer's steps,
        from 1), the updates with their ``OptimizerStep`` events, post-hooks.
        """
        args: tuple = () if closure is None else (closure,)
        kwargs: dict = {}
        for hook in tuple(self._step_pre_hooks.values()):
            changed = hook(self, args, kwargs)
            if changed is not None:
                if not (isinstance(changed, tuple) and len(changed) == 2):
                    raise RuntimeError(
                        f"{self._name}: a step pre-hook must return None or a tuple (args, "
                        f"kwargs), got {type(changed).__name__}")
                args, kwargs = changed
        closure = args[0] if args else kwargs.get("closure")
        self._steps += 1
        if _listeners or _light_listeners:
            events.emit(events.Phase(events.next_seq(), "step", self._steps, source=id(self)))
        loss = self._step(closure)
        if _listeners or _light_listeners:
            events.emit(events.Phase(events.next_seq(), "step_end", self._steps,
                                     source=id(self)))
        for hook in tuple(self._step_post_hooks.values()):
            hook(self, args, kwargs)
        return loss

    def _step(self, closure):
        """Evaluate the closure, then ``_update`` each parameter that has a gradient."""
        loss = self._evaluate(closure)
        listening = _listeners
        state = self.state
        with no_grad():
            for index, group in enumerate(self.param_groups):
                for p in group["params"]:
                    grad = p.grad
                    if grad is None:
                        continue
                    if listening:
                        self._update_and_emit(index, group, p, grad)
                    else:
                        self._update_one(p, grad, state[p], group)
        return loss

    def _update_one(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        """``_update``, with a complex parameter seen as real pairs (module docstring)."""
        if param.dtype.is_complex:
            param, grad = updated_view(param), updated_view(grad)
        self._update(param, grad, state, group)

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        """Change ``param`` in place from ``grad``; keep what the next step needs in ``state``."""
        raise NotImplementedError(f"{self._name} must define _update(param, grad, state, group)")

    def _update_and_emit(self, index: int, group: dict, param: Tensor, grad: Tensor) -> None:
        state = self.state[param]
        before = snapshot(state)
        old = param._data.copy()
        self._update_one(param, grad, state, group)
        self._emit_update(index, group, param, before, snapshot(state), old, grad)

    def _emit_update(self, index: int, group: dict, param: Tensor, before: dict,
                     after: dict, old_data=None, grad: Tensor | None = None) -> None:
        """Emit ``OptimizerStep``; ``old_data``, the array before the update, gives its size."""
        options = {k: v for k, v in group.items() if k != "params"}
        update_norm = None if old_data is None else array_norm(param._data - old_data)
        grad_norm = None if grad is None else array_norm(grad._data)
        events.emit(events.OptimizerStep(events.next_seq(), self._name, index,
                                         events.tensor_ref(param), group["lr"], before, after,
                                         options, grad_norm, update_norm, id(self)))

    @staticmethod
    def _evaluate(closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # --- hooks --------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` before each step.

        It may return a new ``(args, kwargs)`` for the step. ``handle.remove()`` stops it.
        """
        return RemovableHandle(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` after each step."""
        return RemovableHandle(self._step_post_hooks, hook)

    # --- saving and loading ------------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{options, "params": [indices]}]}``.

        Parameters are numbered in the order of the groups, so the dict holds no
        tensor identities and loads into a new optimizer over a new model. The
        state tensors are the live ones (not copies), as in PyTorch.
        """
        index_of: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            saved = {k: v for k, v in group.items() if k != "params"}
            saved["params"] = []
            for p in group["params"]:
                index_of.setdefault(id(p), len(index_of))
                saved["params"].append(index_of[id(p)])
            groups.append(saved)
        state = {index_of[id(p)]: s for p, s in self.state.items() if s and id(p) in index_of}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Take over a saved state: the options of each group and each parameter's state.

        Groups must match in number and size. State tensors (gradlab tensors or
        NumPy arrays) are copied onto each parameter's device, floating ones in its dtype.
        """
        name = self._name
        if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
            found = sorted(state_dict) if isinstance(state_dict, dict) else type(state_dict)
            raise ValueError(f"{name}.load_state_dict: expected a dict with the keys 'state' "
                             f"and 'param_groups' (from optimizer.state_dict()), got {found}")
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"{name}.load_state_dict: the saved state has {len(saved_groups)} parameter "
                f"group(s) but this optimizer has {len(self.param_groups)}. Fix: build the "
                "optimizer with the same groups as the one that was saved.")
        params: dict[Any, Tensor] = {}
        for k, (mine, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError(
                    f"{name}.load_state_dict: parameter group {k} has {len(mine['params'])} "
                    f"parameter(s) here but {len(saved['params'])} in the saved state. Fix: "
                    "build the model and optimizer the way they were when saved.")
            params.update(zip(saved["params"], mine["params"]))
        self.state = defaultdict(dict)
        for key, values in state_dict["state"].items():
            if key not in params:
                raise ValueError(f"{name}.load_state_dict: the saved state refers to parameter "
                                 f"{key!r}, which no saved parameter group lists")
            p = params[key]
            self.state[p] = {k: _loaded_value(k, v, p) for k, v in values.items()}
        self.param_groups = [{**{k: v for k, v in saved.items() if k != "params"},
                              "params": mine["params"]}
                             for mine, saved in zip(self.param_groups, saved_groups)]

    def __repr__(self) -> str:
        text = self._name + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


# --- helpers for the algorithms -----------------------------------------------------------------

def step_gradient(param: Tensor, grad: Tensor, group: dict) -> Tensor:
    """The gradient an update follows: -grad with ``maximize``, plus weight_decay·θ (L2
    decay); with ``decoupled_weight_decay`` (AdamW) θ shrinks by lr·weight_decay in place
    instead and the gradient stays as it is."""
    if group["maximize"]:
        grad = -grad
    weight_decay = group["weight_decay"]
    if weight_decay:
        if group.get("decoupled_weight_decay"):
            param.mul_(1 - group["lr"] * weight_decay)
        else:
            grad = grad.add(param, alpha=weight_decay)
    return grad


def updated_view(t: Tensor) -> Tensor:
    """What an update rule sees of a parameter (or gradient): the tensor itself, or for a
    complex one its real (re, im) pairs, sharing memory: an update of the view is an update
    of the parameter."""
    if not t.dtype.is_complex:
        return t
    from ..ops.complex_parts import view_as_real

    return view_as_real(t)


def state_tensor(t: Tensor) -> Tensor:
    """Mark ``t`` as optimizer state: its bytes count in the ``optimizer`` memory category."""
    t._storage.set_category("optimizer")
    return t


def snapshot(state: dict) -> dict:
    """A copy of a parameter's state for an event: tensors as NumPy copies, numbers as they are."""
    out = {}
    for key, value in state.items():
        if isinstance(value, Tensor):
            out[key] = np.array(value._host())
        elif isinstance(value, (bool, int, float)):
            out[key] = value
    return out


def check_option(optimizer: str, option: str, value, low: float = 0.0,
                 high: float | None = None, *, high_included: bool = False,
                 hint: str = "") -> None:
    """Raise an error that teaches unless ``low <= value`` (and ``value < high`` or ``<=``)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{optimizer}: {option} must be a number, got "
                        f"{type(value).__name__} {value!r}")
    if high is None:
        if value >= low:
            return
        wanted = f">= {low:g}"
    else:
        if low <= value and (value <= high if high_included else value < high):
            return
        wanted = f"in [{low:g}, {high:g}{']' if high_included else ')'}"
    raise ValueError(f"{optimizer}: {option} must be {wanted}, got {value}" +
                     (f" ({hint})" if hint else ""))


def check_engine_flags(optimizer: str, *, fused=None, differentiable=False,
                       capturable=False) -> None:
    """PyTorch's implementation switches: gradlab has one implementation, so only the defaults."""
    for flag, value, default in (("fused", fused, None), ("differentiable", differentiable, False),
                                 ("capturable", capturable, False)):
        if value not in (default, False):
            raise NotImplementedError(
                f"{optimizer}: {flag}={value!r} is not supported; gradlab has one "
                f"implementation of each optimizer (a loop over the parameters). Fix: leave "
                f"{flag} at {default!r}.")


def _refuse_unordered(name: str, params) -> None:
    if isinstance(params, (set, frozenset)):
        raise TypeError(
            f"{name}: parameters must be given in an ordered collection, got a "
            f"{type(params).__name__}: a set's order changes between runs, so a saved "
            "state_dict would load into the wrong parameters. Fix: use a list.")


def _check_param(name: str, group: int, i: int, p) -> None:
    where = f"parameter {i} of group {group}"
    if not isinstance(p, Tensor):
        raise TypeError(f"{name}: {where} is a {type(p).__name__}, not a Tensor; an optimizer "
                        "updates tensors. Fix: pass model.parameters() or a list of tensors.")
    if p.grad_fn is not None:
        raise ValueError(
            f"{name}: {where} (shape {tuple(p.shape)}) is not a leaf: it was computed by "
            f"'{p.grad_fn.op}', and backward only stores .grad on leaves. Fix: optimize the "
            "tensor it was computed from, or make a leaf with w = x.detach().requires_grad_().")
    if not p.requires_grad and not _is_parameter(p):
        raise ValueError(
            f"{name}: {where} (shape {tuple(p.shape)}) doesn't require grad, so backward would "
            "never give it a gradient and it would never change. Fix: create it with "
            "requires_grad=True (or call w.requires_grad_()).")


def _is_parameter(p) -> bool:
    """An ``nn.Parameter`` frozen on purpose (``requires_grad_(False)``) may be passed."""
    from ..nn import parameter

    cls = getattr(parameter, "Parameter", None)
    return cls is not None and isinstance(p, cls)


def _loaded_value(key: str, value, param: Tensor):
    """A saved state value, ready for ``param``: tensors copied to its device (and dtype)."""
    from ..ops.creation import tensor as make_tensor

    if isinstance(value, (list, tuple)):
        return type(value)(_loaded_value(key, v, param) for v in value)
    if value is None or isinstance(value, (bool, str)):
        return value
    if key == "step":  # a count: PyTorch saves it as a float tensor, gradlab as an int
        step = np.asarray(value).item()
        return int(step) if float(step).is_integer() else step
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, np.generic):  # a NumPy scalar: a number, as the algorithm stored it
        return value.item()
    array = np.array(value)  # a gradlab tensor, a NumPy array, anything array-like
    # (a complex parameter's state is real pairs: the dtype of its parts)
    dtype = param.dtype.to_real() if array.dtype.kind == "f" else None
    return state_tensor(make_tensor(array, dtype=dtype, device=param.device))
