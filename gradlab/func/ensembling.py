"""stack_module_state: several copies of one model as one set of batched weights.

An ensemble of M models of the same architecture can run as one function::

    params, buffers = stack_module_state(models)      # each tensor: (M, *its shape)
    def one_model(p, b, x):
        return functional_call(models[0], (p, b), (x,))
    out = vmap(one_model, in_dims=(0, 0, None))(params, buffers, x)   # (M, batch, ...)

``vmap`` picks model m's slice of every stacked tensor, and ``functional_call``
runs the architecture with it. (In gradlab that is M calls, one per model;
see :mod:`.vmap`.) The stacked parameters are new leaves, so an optimizer can
train the whole ensemble from them.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..nn.modules.module import Module
from ..ops.joining import stack
from ..tensor import Tensor

__all__ = ["stack_module_state"]


def stack_module_state(models: Sequence[Module]) -> tuple[dict, dict]:
    """``(params, buffers)``: each model's parameters (and buffers) stacked along a new dim 0,
    by name (``"0.weight"``, as in ``state_dict``).

    The models must be of the same class and in the same mode (training or
    eval). A stacked parameter is a new leaf that requires grad (when the
    models' parameters do), unconnected to the models' own parameters.
    """
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode. (Call .train() or .eval() on all of them)")
    kinds = {type(m) for m in models}
    if len(kinds) > 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class. "
                           f"(got {sorted(k.__name__ for k in kinds)})")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {name: _stacked_leaf([p[name] for p in all_params], name) for name in all_params[0]}
    buffers = {name: _stacked_leaf([b[name] for b in all_buffers], name)
               for name in all_buffers[0]}
    return params, buffers


def _stacked_leaf(tensors: list[Tensor], name: str) -> Tensor:
    """``stack(tensors)`` as a new leaf: it requires grad iff all the tensors did."""
    flags = {t.requires_grad for t in tensors}
    if len(flags) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack([t.detach() for t in tensors])
    return result.requires_grad_() if flags == {True} else result
