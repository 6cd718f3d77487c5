"""Hooks on what the graph saves for backward (PyTorch's ``torch.autograd.graph``).

Every recorded op keeps some tensors until its backward runs: ``a * b``
keeps ``a`` and ``b``, ``exp`` keeps its result, relu its output. Those
*saved tensors* are most of a training step's memory (the ``activation``
category of ``gradlab.memory_stats()``). ``saved_tensors_hooks(pack, unpack)``
lets you decide how they are kept::

    with gradlab.autograd.graph.saved_tensors_hooks(pack, unpack):
        loss = model(x).sum()      # each saved tensor t: the node keeps pack(t)
    loss.backward()                # each use: the node hands unpack(pack(t)) to backward

``pack`` may return anything (a copy on another device, a file name, a
compressed array); ``unpack`` must give back a tensor with the values,
shape, dtype and device ``t`` had. ``save_on_cpu()`` is the ready-made
pair that moves GPU activations to host memory.

What gradlab does around the two hooks:

* **Only the innermost pair applies**, and only to tensors saved while it
  is active (what was saved earlier keeps its own way). Hooks are
  per-thread, like grad mode.
* **pack runs under** ``no_grad``: it stores values, not history. An
  input is passed as the tensor itself; a saved *output* is passed as a
  detached tensor on the same memory (the output itself would point back
  at the node that keeps it: a reference cycle, never freed on time).
* **unpack's result is checked** against the saved tensor's shape, dtype
  and device (a wrong one raises, naming the op), and gets the saved
  tensor's place in the graph back, so ``create_graph=True`` still
  differentiates through it.
* **In-place changes are still caught.** The node remembers the version of
  the tensor it saved; if that tensor was changed in place before backward,
  backward raises as it does without hooks, whatever pack stored.

The node keeps only ``pack``'s result, so the bytes it held no longer count
as ``activation`` memory; where they went is up to ``pack``. (A pack that
returns the tensor itself, or a view of it, keeps those bytes in the graph,
and they count as before.)
"""

from __future__ import annotations

import functools
import weakref

import numpy as np

from .grad_mode import no_grad, state
from .node import AccumulateGrad, Node, SavedTensor, gradient_edge, version_error

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "Node",
           "increment_version"]

Tensor = None  # gradlab.tensor.Tensor, bound by that module (it imports this one)


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Within this block, every tensor an op saves for backward is kept as ``pack_hook(t)``
    and handed to backward as ``unpack_hook(packed)`` (see the module docstring)."""

    def __init__(self, pack_hook, unpack_hook) -> None:
        for what, hook in (("pack_hook", pack_hook), ("unpack_hook", unpack_hook)):
            if not callable(hook):
                raise TypeError(f"saved_tensors_hooks: {what} must be callable, got "
                                f"{type(hook).__name__}")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook
        self._outer: list = []

    def __enter__(self):
        if state.saved_hooks_disabled is not None:
            raise RuntimeError(state.saved_hooks_disabled)
        self._outer.append(state.saved_hooks)
        state.saved_hooks = (self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc) -> None:
        state.saved_hooks = self._outer.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Keep saved tensors in host memory and move them back to their device for backward:
    GPU memory for activations traded for two copies each. On the CPU this only copies.

    ``pin_memory`` is accepted for PyTorch's signature; NumPy memory has no pinning.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t):
            return t.device, t.cpu() if t.device.type != "cpu" else t.clone()

        def unpack(packed):
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)
        self.pin_memory = pin_memory
        self.device_type = device_type


class disable_saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Within this block, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``
    and hooks entered outside it are not applied: for code that cannot work with them."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message
        self._outer: list = []

    def __enter__(self):
        self._outer.append((state.saved_hooks, state.saved_hooks_disabled))
        state.saved_hooks, state.saved_hooks_disabled = None, self.error_message
        return self

    def __exit__(self, *exc) -> None:
        state.saved_hooks, state.saved_hooks_disabled = self._outer.pop()

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return func(*args, **kwargs)
        return wrapper


def increment_version(tensor) -> None:
    """Bump ``tensor``'s version counter, as an in-place change does (for code that changes
    the values behind autograd's back and wants the saved-tensor check to notice)."""
    tensor._storage.version += 1


class PackedSavedTensor(SavedTensor):
    """A saved tensor kept as its pack hook's result (made instead of a ``SavedTensor`` by the
    dispatcher while ``saved_tensors_hooks`` is active). Same arguments as ``SavedTensor``."""

    __slots__ = ("packed", "unpack_hook", "meta", "watched", "edge", "kind")

    def __init__(self, tensor, data, storage, output_nr):
        self.output_nr = output_nr
        self.tangent = None
        self.tensor = self.data = self.storage = None  # the node keeps only what pack returns
        self.edge = None
        if tensor is None and (data is None or not hasattr(data, "shape") or
                               isinstance(data, (int, float, complex, bool, np.generic))):
            self.kind, self.packed = "value", data  # a number: not a tensor, no hooks
            return
        pack, self.unpack_hook = state.saved_hooks
        if tensor is not None:
            self.kind = "input"
            if tensor._requires_grad:
                self.edge = gradient_edge(tensor)  # where its gradient goes, to restore it
            given = tensor
        else:
            self.kind = "output" if output_nr is not None else "private"
            given = Tensor._make(data, storage, None, 0, False)
        self.meta = (given._data.shape, given.dtype, given._device)
        self.watched = None if storage is None else weakref.ref(storage)
        self.version = None if storage is None else storage.version
        with no_grad():
            self.packed = pack(given)
        packed = self.packed
        if isinstance(packed, Tensor) and packed._storage is given._storage:
            # pack kept the tensor itself (or a view of it): the node still holds those
            # bytes, so they still count as activation memory, and are released with it
            self.tensor, self.storage = given, given._storage
            self.storage.retain_for_backward()

    def unpack(self, node):
        if self.kind == "value":
            return self.packed
        storage = None if self.watched is None else self.watched()
        if storage is not None and storage.version != self.version:
            raise version_error(node, self.output_nr, self.meta[0], self.version,
                                storage.version)
        got = self.unpack_hook(self.packed)
        shape, dtype, device = self.meta
        if not isinstance(got, Tensor) or got._data.shape != shape or got.dtype is not dtype \
                or got._device is not device:
            what = (f"a {type(got).__name__}" if not isinstance(got, Tensor) else
                    f"shape {tuple(got.shape)}, {got.dtype}, on {got.device}")
            raise RuntimeError(
                f"saved_tensors_hooks: unpack_hook returned {what} for a tensor that '{node.op}' "
                f"(node {node.id}) saved with shape {tuple(shape)}, {dtype}, on {device}. Fix: "
                "unpack must give back a tensor with the values, shape, dtype and device the "
                "pack hook received (e.g. return t.to(device) for a copy moved elsewhere).")
        if self.kind == "output":  # it is this node's output again: its history is the node
            out = Tensor._make(got._data, got._storage, node, self.output_nr, True)
            tangent = self.tangent
            if tangent is not None and state.dual is tangent[0]:
                state.dual.set(out, tangent[1])
            return out
        if self.edge is None:
            return got if not got._requires_grad else got.detach()
        grad_fn, out_index = self.edge
        if type(grad_fn) is AccumulateGrad:  # a leaf: gradients go to that leaf
            restored = Tensor._make(got._data, got._storage, None, 0, True)
            restored._accumulator = grad_fn
            return restored
        return Tensor._make(got._data, got._storage, grad_fn, out_index, True)
