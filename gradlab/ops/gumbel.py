"""``gumbel_softmax``: a sample of a category that gradients can pass through.

Sampling class c with probability softmax(logits)_c has no derivative: the
result jumps from one class to another. The Gumbel-max trick writes the
sample as a deterministic function of the logits and independent noise::

    c = argmax_i (logits_i + g_i),   g_i = -log(e_i), e_i ~ Exponential(1)

(g is Gumbel(0, 1) noise; the argmax falls on class c with probability
exactly softmax(logits)_c). Replacing the argmax by a softmax with a
temperature τ gives a smooth, differentiable relaxation, one-hot in the limit
τ → 0::

    y = softmax((logits + g) / τ)

``hard=True`` returns the one-hot of the argmax in the forward pass but the
soft y's gradient in the backward pass, the *straight-through* estimator,
written as y_hard - y.detach() + y: the value is y_hard (the two y's cancel),
and only the last y carries a gradient.

The noise comes from gradlab's generator (``exponential_``, as in PyTorch),
so ``gradlab.manual_seed`` makes a run reproducible. A composition of ops:
its gradient, with the noise held fixed, is softmax's, divided by τ.
"""

from __future__ import annotations

import warnings

from ..tensor import Tensor
from ._util import check_float, wrap_dim
from .creation import empty_like, zeros_like
from .softmax_family import softmax

__all__: list = []  # torch.nn.functional only
FUNCTIONAL = ["gumbel_softmax"]
TENSOR_METHODS: list = []


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + g) / tau) along ``dim``, g Gumbel(0, 1) noise; one-hot with the
    soft gradient (straight-through) if ``hard``. ``eps`` is deprecated and unused."""
    op = "gumbel_softmax"
    if eps != 1e-10:
        warnings.warn(f"{op}: the eps parameter is deprecated and has no effect.",
                      UserWarning, stacklevel=2)
    if not isinstance(logits, Tensor):
        raise TypeError(f"{op}: logits must be a tensor, got {type(logits).__name__}")
    check_float(op, logits)
    dim = wrap_dim(dim, logits.ndim, op)
    gumbels = -empty_like(logits).exponential_().log()  # Gumbel(0, 1), no gradient
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft  # the value of y_hard, the gradient of y_soft
