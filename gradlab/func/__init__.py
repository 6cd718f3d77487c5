"""Function transforms (PyTorch's ``torch.func``): derivatives as functions.

``grad(f)`` is a new function that returns the gradient of ``f``;
transforms nest (``grad(grad(f))``, ``jacfwd(jacrev(f))``) and work on
pytrees (tuples, lists and dicts of tensors). ``functional_call`` runs an
``nn.Module`` with parameters you pass in, so a model can be transformed
like any function. ``vmap`` maps a function over a batch dim; gradlab has
no batching rules, so it is a loop, one call per sample (see ``vmap.py``),
and Jacobians are built one row (reverse mode) or one column (forward mode)
at a time. ``stack_module_state`` stacks an ensemble's weights for ``vmap``.

Read ``_inputs.py`` first (how a transform gets its own derivatives out of
gradlab's one define-by-run graph), then ``transforms.py`` and ``forward.py``.
"""

from .ensembling import stack_module_state
from .forward import hessian, jacfwd, jvp
from .functional_call import functional_call
from .transforms import grad, grad_and_value, jacrev, vjp
from .vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "jvp", "jacfwd", "hessian",
           "functional_call", "vmap", "stack_module_state"]
