"""Function transforms (PyTorch's ``torch.func``): derivatives as functions.

``grad(f)`` is a new function that returns the gradient of ``f``;
transforms nest (``grad(grad(f))``, ``jacfwd(jacrev(f))``) and work on
pytrees (tuples, lists and dicts of tensors). ``functional_call`` runs an
``nn.Module`` with parameters you pass in, so a model can be transformed
like any function. gradlab has no ``vmap``: Jacobians are built one row
(reverse mode) or one column (forward mode) at a time.

Read ``_inputs.py`` first (how a transform gets its own derivatives out of
gradlab's one define-by-run graph), then ``transforms.py`` and ``forward.py``.
"""

from .forward import hessian, jacfwd, jvp
from .functional_call import functional_call
from .transforms import grad, grad_and_value, jacrev, vjp

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "jvp", "jacfwd", "hessian",
           "functional_call"]
