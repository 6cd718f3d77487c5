"""Module hooks: functions that run around a module's forward and inside its backward.

Forward hooks are plain calls before and after ``forward``. Backward hooks
need more, because a module is not one node of the graph but many, so
"the gradient w.r.t. the module's inputs" exists nowhere by itself. As in
PyTorch, a hooked module passes its tensor inputs, and later its outputs,
through an identity op (``BackwardHookFunction``). In backward the output
identity is reached first: its incoming gradients are ``grad_output``
(backward pre-hooks run there). The input identity is reached last: its
incoming gradients are ``grad_input``, and the full backward hooks run
there, with both.
"""

from __future__ import annotations

from ...autograd.function import Function
from ...autograd.grad_mode import state
from ...tensor import Tensor
from ...utils.hooks import RemovableHandle

__all__ = ["ModuleHooks", "BackwardHookFunction"]


def _register(hooks: dict, hook, prepend: bool) -> RemovableHandle:
    handle = RemovableHandle(hooks, hook)
    if prepend:
        items = list(hooks.items())
        hooks.clear()
        hooks.update([items[-1], *items[:-1]])
    return handle


class ModuleHooks:
    """The hook half of :class:`~gradlab.nn.Module` (registration, and a hooked call)."""

    def _call_with_hooks(self, args, kwargs):
        """``__call__`` for a module with hooks: pre-hooks, forward, hooks, in PyTorch's order."""
        st = state
        parent = st.running_module
        outer = st.module
        st.running_module = self
        st.module = "" if parent is None else self._path_under(parent, outer)
        called = False
        try:
            for hid, hook in tuple(self._forward_pre_hooks.items()):
                if hid in self._forward_pre_hooks_with_kwargs:
                    out = hook(self, args, kwargs)
                    if out is not None:
                        if not (isinstance(out, tuple) and len(out) == 2):
                            raise RuntimeError(
                                "forward pre-hook registered with with_kwargs=True must return "
                                f"None or a tuple (args, kwargs), got {out!r}")
                        args, kwargs = out
                else:
                    out = hook(self, args)
                    if out is not None:
                        args = out if isinstance(out, tuple) else (out,)
            record = None
            if self._backward_hooks or self._backward_pre_hooks:
                record = BackwardHookRecord(self, len(args))
                args = wrap_inputs(record, args)
            result = self.forward(*args, **kwargs)
            called = True
            result = self._run_forward_hooks(args, kwargs, result, None)
            if record is not None:
                result = wrap_outputs(record, result)
            return result
        except Exception:
            if not called and self._forward_hooks_always_called:
                self._run_forward_hooks(args, kwargs, None, self._forward_hooks_always_called)
            raise
        finally:
            st.running_module = parent
            st.module = outer

    def _run_forward_hooks(self, args, kwargs, result, only):
        for hid, hook in tuple(self._forward_hooks.items()):
            if only is not None and hid not in only:
                continue
            if hid in self._forward_hooks_with_kwargs:
                out = hook(self, args, kwargs, result)
            else:
                out = hook(self, args, result)
            if out is not None:
                result = out
        return result

    # --- hooks ---------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` before forward; may return new args (a tuple or one value).

        ``with_kwargs=True``: ``hook(module, args, kwargs)`` returning None or (args, kwargs).
        """
        handle = _register(self._forward_pre_hooks, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` after forward; may return a replacement output."""
        handle = _register(self._forward_hooks, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` once the gradients w.r.t. the module's
        tensor inputs are known; may return a replacement ``grad_input``."""
        return _register(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` when the gradients w.r.t. the outputs arrive; may
        return a replacement ``grad_output``."""
        return _register(self._backward_pre_hooks, hook, prepend)


class BackwardHookFunction(Function):
    """Identity on several tensors; its backward hands the gradients to a hook record."""

    name = "backward_hook"

    @staticmethod
    def forward(ctx, record, on_inputs, *tensors):
        ctx.record = record
        ctx.on_inputs = on_inputs
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        record = ctx.record
        grads = record.inputs_done(grads) if ctx.on_inputs else record.outputs_done(grads)
        return (None, None, *grads)

    @staticmethod
    def jvp(ctx, _record, _on_inputs, *tangents):
        """Forward mode: an identity, so each tensor keeps its tangent."""
        return tuple(tangents)


class BackwardHookRecord:
    """One call of a hooked module: where its inputs were, and the grad_output seen."""

    def __init__(self, module, n_args: int) -> None:
        self.module = module
        self.n_args = n_args
        self.input_positions: list[int] = []
        self.grad_outputs = None

    def outputs_done(self, grads):
        module = self.module
        grads = tuple(grads)
        for hook in tuple(module._backward_pre_hooks.values()):
            out = hook(module, grads)
            if out is not None:
                out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
                if len(out) != len(grads):
                    raise RuntimeError(
                        f"backward pre-hook returned {len(out)} grad_output values, but the "
                        f"module has {len(grads)} tensor outputs; return one per output")
                grads = out
        self.grad_outputs = grads
        if not self.input_positions and module._backward_hooks:
            # No input needs a gradient: the hooks run now, with grad_input all None.
            grad_input = (None,) * self.n_args
            for hook in tuple(module._backward_hooks.values()):
                out = hook(module, grad_input, grads)
                if out is not None and any(g is not None for g in out):
                    raise RuntimeError(
                        "backward hook of a module whose inputs don't require grad must return "
                        "None (or all None): there is no grad_input to replace")
        return grads

    def inputs_done(self, grads):
        module = self.module
        grad_input = [None] * self.n_args
        for pos, g in zip(self.input_positions, grads):
            grad_input[pos] = g
        grad_input = tuple(grad_input)
        for hook in tuple(module._backward_hooks.values()):
            out = hook(module, grad_input, self.grad_outputs)
            if out is not None:
                out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
                if len(out) != len(grad_input):
                    raise RuntimeError(
                        f"backward hook returned an invalid number of grad_input, got "
                        f"{len(out)}, but expected {len(grad_input)} (one per positional "
                        "argument of forward, None for non-tensors)")
                grad_input = out
        return tuple(grad_input[pos] for pos in self.input_positions)


def _through_identity(record, on_inputs, tensors):
    out = BackwardHookFunction.apply(record, on_inputs, *tensors)
    return out if isinstance(out, tuple) else (out,)


def wrap_inputs(record: BackwardHookRecord, args: tuple) -> tuple:
    """``args`` with the tensors that require grad passed through the input identity."""
    if not state.enabled:
        return args
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    record.input_positions = positions
    if not positions:
        return args
    wrapped = _through_identity(record, True, [args[i] for i in positions])
    args = list(args)
    for i, t in zip(positions, wrapped):
        args[i] = t
    return tuple(args)


def wrap_outputs(record: BackwardHookRecord, result):
    """``result`` (a tensor, or a tuple/list of them) through the output identity."""
    if not state.enabled:
        return result
    single = isinstance(result, Tensor)
    items = (result,) if single else result
    if not isinstance(items, (tuple, list)):
        return result
    positions = [i for i, t in enumerate(items) if isinstance(t, Tensor) and t.requires_grad]
    if not positions:
        return result
    wrapped = _through_identity(record, False, [items[i] for i in positions])
    out = list(items)
    for i, t in zip(positions, wrapped):
        out[i] = t
    return out[0] if single else type(items)(out)
