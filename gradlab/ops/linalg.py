"""Linear algebra: matrix products and their gradients.

For C = A @ B the chain rule gives dA = dC @ Bᵀ and dB = Aᵀ @ dC: each
gradient has the shape of its input, and the products line up because the
shared dimension k appears in both. Batched and 1-D cases reduce to this
one rule (see ``Matmul.backward``).
"""

from __future__ import annotations

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import promote, unbroadcast

__all__ = ["matmul", "mm", "bmm", "dot", "outer"]
TENSOR_METHODS = ["matmul", "mm", "bmm", "dot", "outer"]


class Matmul(Function):
    """a @ b with NumPy's (= PyTorch's) rules for 1-D and batched operands."""

    raw = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        # Lift 1-D operands to matrices so one rule covers every case:
        # a (k,) is a row (1, k); b (k,) is a column (k, 1); grad gains those dims too.
        a2 = a.unsqueeze(0) if a.ndim == 1 else a
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b
        g2 = grad
        if a.ndim == 1:
            g2 = g2.unsqueeze(-2 if b.ndim > 1 else 0)
        if b.ndim == 1:
            g2 = g2.unsqueeze(-1)
        grad_a = grad_b = None
        if sa is not None:  # dA = dC @ Bᵀ, summed over broadcast batch dims
            grad_a = unbroadcast(g2 @ b2.mT, a2.shape).reshape(sa)
        if sb is not None:  # dB = Aᵀ @ dC
            grad_b = unbroadcast(a2.mT @ g2, b2.shape).reshape(sb)
        return grad_a, grad_b


def _check_matmul(op: str, a: Tensor, b: Tensor) -> None:
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"{op}: both arguments need at least 1 dimension, got shapes "
                           f"{tuple(a.shape)} and {tuple(b.shape)}; use * for scalars")
    ka = a.shape[-1]
    kb = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if ka != kb:
        hint = ""
        if b.ndim > 1 and a.shape[-1] == b.shape[-1]:
            hint = "; did you mean b.T (or b.mT)?"
        elif a.ndim > 1 and a.shape[-2] == kb:
            hint = "; did you mean a.T (or a.mT)?"
        raise RuntimeError(
            f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} don't line up "
            f"({ka} != {kb}): the last dim of the first must equal the "
            f"{'first' if b.ndim == 1 else 'second-to-last'} dim of the second{hint}"
        )


def matmul(input, other) -> Tensor:
    """Matrix product with broadcasting over batch dims (``@``)."""
    a, b = promote(input, other)
    _check_matmul("matmul", a, b)
    return Matmul.apply(a, b)


def mm(input, mat2) -> Tensor:
    """Product of two matrices (2-D only)."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expects two 2-D tensors, got shapes {tuple(input.shape)} and "
                           f"{tuple(mat2.shape)}; use matmul for other ranks")
    return matmul(input, mat2)


def bmm(input, mat2) -> Tensor:
    """Batched product of (b, n, m) and (b, m, p) tensors."""
    if input.ndim != 3 or mat2.ndim != 3 or input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: expects (b, n, m) and (b, m, p) with the same b, got shapes "
                           f"{tuple(input.shape)} and {tuple(mat2.shape)}")
    return matmul(input, mat2)


def dot(input, other) -> Tensor:
    """Inner product of two 1-D tensors of the same length."""
    if input.ndim != 1 or other.ndim != 1 or input.shape != other.shape:
        raise RuntimeError(f"dot: expects two 1-D tensors of the same length, got shapes "
                           f"{tuple(input.shape)} and {tuple(other.shape)}")
    return matmul(input, other)


def outer(input, vec2) -> Tensor:
    """Outer product of two 1-D tensors: ``out[i, j] = a[i] * b[j]``."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: expects two 1-D tensors, got shapes {tuple(input.shape)} "
                           f"and {tuple(vec2.shape)}")
    return input.unsqueeze(1) * vec2.unsqueeze(0)
