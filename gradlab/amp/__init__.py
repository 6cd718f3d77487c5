"""Automatic mixed precision: ``autocast`` and ``GradScaler``, as ``torch.amp``.

``autocast`` runs each op in the precision its rule names (matrix products
in float16/bfloat16, exponentials, sums and losses in float32; see
:mod:`gradlab.amp.op_lists`). ``GradScaler`` multiplies the loss by a large
factor so that small float16 gradients do not round to zero, divides it back
out before the optimizer step, and skips steps whose gradients overflowed.
"""

from .autocast_mode import (
    autocast,
    custom_bwd,
    custom_fwd,
    is_autocast_available,
)
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"]
