"""Module: the base class of every layer, with PyTorch's API.

A Module is a tree. Assigning a :class:`~gradlab.nn.Parameter`, a Module
or a registered buffer as an attribute files it in one of three ordered
dicts (``_parameters``, ``_modules``, ``_buffers``); ``__getattr__`` finds
it there again. Everything else walks that tree: ``parameters()`` for the
optimizer, ``state_dict()`` for checkpoints (keys are the attribute paths,
``encoder.0.weight``), ``to()``/``train()`` for the whole model at once.

Calling a module (``model(x)``) runs its ``forward`` between its hooks, and
while it runs, ``gradlab.autograd.grad_mode.state.module`` holds its path in
the tree (``"encoder.0.fc1"``; ``""`` for the outermost module called), so
every op, graph node and event knows which layer made it.
"""

from __future__ import annotations

from collections.abc import Iterator

from ... import dtypes as _dt
from ...autograd.grad_mode import no_grad, state
from ...ops.conversion import parse_to_args
from ...tensor import Tensor
from ..parameter import Buffer, Parameter
from ._checkpoint import ModuleCheckpoint
from ._hooks import ModuleHooks

__all__ = ["Module"]


def _indent(text: str, spaces: int) -> str:
    """Indent every line but the first (a child's repr inside its parent's)."""
    return text.replace("\n", "\n" + " " * spaces)


def _forward_unimplemented(self, *args, **kwargs):
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function. '
        f"Fix: define `def forward(self, x): ...` in {type(self).__name__}.")


class Module(ModuleHooks, ModuleCheckpoint):
    """Base class of all layers: subclass it, call ``super().__init__()``, define ``forward``.

    Hooks live in :mod:`._hooks` and ``state_dict``/``load_state_dict`` in
    :mod:`._checkpoint`; this file is the tree itself and how a call runs.
    """

    training: bool
    _version: int = 1  # saved with each state_dict entry; layers bump it when keys change
    _path_cache = None  # (id(parent), parent path, name in parent, path) of the last call

    forward = _forward_unimplemented

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(f"Module.__init__() takes no arguments, got {args} {kwargs}; "
                            "pass your layer's arguments to your own __init__")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        for name in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
                     "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                     "_backward_hooks", "_backward_pre_hooks", "_state_dict_pre_hooks",
                     "_state_dict_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks"):
            d[name] = {}

    # --- calling -------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        """Run ``forward`` with this module's path in ``state.module`` (and the hooks)."""
        if self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or \
                self._backward_pre_hooks:
            return self._call_with_hooks(args, kwargs)
        st = state
        parent = st.running_module
        outer = st.module
        if parent is None:  # the outermost module called: paths start here
            path = ""
        else:
            cache = self._path_cache  # the usual case, inlined: same caller as last time
            if cache is not None and cache[0] == id(parent) and cache[1] == outer and \
                    parent._modules.get(cache[2]) is self:
                path = cache[3]
            else:
                path = self._path_under(parent, outer)
        st.running_module = self
        st.module = path
        try:
            return self.forward(*args, **kwargs)
        finally:
            st.running_module = parent
            st.module = outer

    def _path_under(self, parent: Module, parent_path: str) -> str:
        """This module's path when ``parent`` (at ``parent_path``) calls it: cached per caller."""
        cache = self._path_cache
        if cache is not None and cache[0] == id(parent) and cache[1] == parent_path and \
                parent._modules.get(cache[2]) is self:
            return cache[3]
        for name, child in parent._modules.items():
            if child is self:
                path = f"{parent_path}.{name}" if parent_path else name
                self.__dict__["_path_cache"] = (id(parent), parent_path, name, path)
                return path
        for name, module in parent.named_modules():  # a grandchild called directly
            if module is self:
                return f"{parent_path}.{name}" if parent_path else name
        return parent_path  # not in the caller's tree: its ops count as the caller's

    # --- registering parameters, buffers and children ------------------------------------
    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call; "
                                     "call super().__init__() first in your __init__")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(gradlab.nn.Parameter or None expected). Fix: wrap it, "
                    f"self.{name} = nn.Parameter(t), or change values with self.{name}.data = t")
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call; "
                                         "call super().__init__() first in your __init__")
                self._forget(name, keep="_modules")
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                    f"'{name}' (gradlab.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{type(value).__name__}' as buffer "
                                        f"'{name}' (gradlab.nn.Buffer, Tensor or None expected)")
                    persistent = getattr(value, "persistent", None)
                    if persistent is None:
                        persistent = name not in self._non_persistent_buffers_set
                    self._forget(name, keep="_buffers")
                    self.register_buffer(name, value, persistent)
                else:
                    object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str) -> None:
        """Drop ``name`` from every registry but ``keep`` (an attribute changes kind)."""
        d = self.__dict__
        d.pop(name, None)
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry != keep:
                d[registry].pop(name, None)
        if keep != "_buffers":
            d["_non_persistent_buffers_set"].discard(name)

    def __getattr__(self, name: str):
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            found = d.get(registry)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in d.get(registry, ()):
                del d[registry][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = set(dir(type(self))) | set(self.__dict__)
        keys |= set(self._parameters) | set(self._modules) | set(self._buffers)
        return sorted(k for k in keys if not k[0].isdigit())

    def _check_name(self, kind: str, name, registry: str) -> None:
        if registry not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call; call "
                                 "super().__init__() first in your __init__")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string, got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got: {name} (dots separate the '
                           "levels of a path like encoder.0.weight)")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in self.__dict__[registry]:
            raise KeyError(f"attribute '{name}' already exists; choose another {kind} name")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add ``param`` under ``name`` (``self.name = param`` does the same)."""
        self._check_name("parameter", name, "_parameters")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(gradlab.nn.Parameter or None required). Fix: nn.Parameter(tensor)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor the module keeps but does not learn; ``persistent=False``: not saved."""
        self._check_name("buffer", name, "_buffers")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name`` (``self.name = module`` does the same)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name("module", name, "_modules")
        self._modules[name] = module

    register_module = add_module

    # --- walking the tree ----------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and all below it, depth first, with their dotted paths."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, f"{prefix}.{name}" if prefix else name,
                                                remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def _named_members(self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in module.__dict__[registry].items():
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(path, parameter)`` pairs, e.g. ``("encoder.0.weight", p)``; shared ones once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        """The module at a dotted path (``"encoder.0"``); ``""`` is this module."""
        module = self
        if target == "":
            return module
        for item in target.split("."):
            if item not in module._modules:
                known = ", ".join(module._modules) or "none"
                raise AttributeError(f"{module._get_name()} has no attribute `{item}` (path "
                                     f"'{target}'); its submodules are: {known}")
            module = module._modules[item]
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at a dotted path (``"encoder.0"``), replacing what is there; with
        ``strict=True`` the path must name an existing submodule."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        if name in parent._modules or not strict and not hasattr(parent, name):
            setattr(parent, name, module)
            return
        if strict:
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}` (path "
                                 f"'{target}'). Fix: strict=False adds it")
        raise AttributeError(f"`{name}` is not an nn.Module (path '{target}')")

    def _get_member(self, target: str, registry: str, kind: str):
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        members = module.__dict__[registry]
        if name not in members:
            if hasattr(module, name):
                raise AttributeError(f"`{name}` is not an nn.{kind}")
            known = ", ".join(members) or "none"
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`; its "
                                 f"{kind.lower()}s are: {known}")
        return members[name]

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path, e.g. ``"encoder.0.weight"``."""
        return self._get_member(target, "_parameters", "Parameter")

    def get_buffer(self, target: str) -> Tensor:
        return self._get_member(target, "_buffers", "Buffer")

    # --- modes and gradients -------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode here and below (dropout drops, batch norm uses batch statistics)."""
        if not isinstance(mode, bool):
            raise ValueError(f"training mode is expected to be boolean, got {mode!r}")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``: evaluation behaviour. (It does not stop recording: use no_grad.)"""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's ``.grad`` (to None by default, which frees its memory)."""
        for p in self.parameters():
            g = p.grad
            if g is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def apply(self, fn) -> Module:
        """Call ``fn(module)`` on every submodule, then on this one (e.g. custom init)."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # --- moving and casting --------------------------------------------------------------
    def _apply(self, fn, recurse: bool = True) -> Module:
        """Replace every parameter's and buffer's values with ``fn(tensor)``, keeping the
        Parameter objects (so an optimizer made before ``.to()`` still holds them)."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        with no_grad():
            for param in self._parameters.values():
                if param is None:
                    continue
                new = fn(param)
                if new is param:
                    continue
                grad = param._grad
                param.grad = None
                param.data = new
                if grad is not None:
                    param.grad = fn(grad)
            for key, buf in self._buffers.items():
                if buf is not None:
                    self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs) -> Module:
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)`` or ``to(tensor)``; returns self.

        Only floating point and complex parameters and buffers change dtype (a step counter
        stays int); ``to(gradlab.complex64)`` makes a complex-valued model, as in PyTorch (and
        a complex parameter refuses a real dtype: its imaginary parts would be lost).
        ``memory_format=gradlab.channels_last`` lays out the 4-D and 5-D ones that way, as
        PyTorch does (see gradlab/memory_layouts.py).
        """
        layout = kwargs.get("memory_format")
        device, dtype = parse_to_args(args, kwargs, "Module.to()")
        if dtype is not None:
            dtype = _dt.to_dtype(dtype)
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError(
                    f"nn.Module.to only accepts floating point or complex dtypes, but got "
                    f"desired dtype={dtype}; integer weights could not learn. Fix: cast single "
                    "tensors with tensor.to(dtype) instead.")

        def convert(t):
            target = dtype if t.is_floating_point() or t.is_complex() else None
            if layout is not None and t.dim() in (4, 5):
                return t.to(device, target, memory_format=layout)
            return t.to(device, target)

        return self._apply(convert)

    def cpu(self) -> Module:
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None) -> Module:
        return self._apply(lambda t: t.cuda(device))

    def _cast_floats(self, dtype) -> Module:
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> Module:
        return self._cast_floats(_dt.float32)

    def double(self) -> Module:
        return self._cast_floats(_dt.float64)

    def half(self) -> Module:
        return self._cast_floats(_dt.float16)

    def bfloat16(self) -> Module:
        return self._cast_floats(_dt.bfloat16)

    # --- printing ------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The layer's settings for its repr (``in_features=3, out_features=4, bias=True``)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): {_indent(repr(module), 2)}"
                       for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"
