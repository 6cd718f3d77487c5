"""``linalg.tensorinv`` and ``linalg.tensorsolve``: linear algebra on tensors read as matrices.

A tensor A of shape (i₁, …, i_p, j₁, …, j_q) is a linear map from tensors of
shape (j₁, …, j_q) to tensors of shape (i₁, …, i_p), under tensordot. Flatten
both groups of dims and it is an ordinary matrix of shape
(i₁·…·i_p) × (j₁·…·j_q); invert or solve with that, then give the result its
tensor shape back. Both are reshapes around ``linalg.inv`` / ``linalg.solve``,
so they differentiate as those do.
"""

from __future__ import annotations

import math

from ..tensor import Tensor
from ._util import wrap_dim
from .solvers import check_matrices, inv_of, solve_of

__all__: list[str] = []  # torch.linalg names only: gradlab.linalg exports them
TENSOR_METHODS: list[str] = []


def tensorinv(A: Tensor, ind: int = 2, *, out=None) -> Tensor:  # noqa: N803 - PyTorch's names
    """The inverse of A as a map: tensordot(tensorinv(A, ind), A, ind) is the identity.
    A's first ``ind`` dims are the outputs, the rest the inputs (equal products of sizes);
    the result has shape A.shape[ind:] + A.shape[:ind]."""
    op = "linalg.tensorinv"
    if out is not None:
        raise TypeError(f"{op}: out= is not supported; use the returned tensor")
    if not isinstance(A, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(A).__name__}")
    if not isinstance(ind, int) or ind <= 0:
        raise RuntimeError(f"{op}: ind (how many leading dims are outputs) must be a positive "
                           f"int, got {ind!r}")
    front, back = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = math.prod(front), math.prod(back)
    if rows != cols:
        raise RuntimeError(f"{op}: A read as a matrix must be square: the product of its first "
                           f"{ind} dims {front} is {rows} but of the rest {back} is {cols}. "
                           f"Fix: choose ind so that both products match")
    matrix = A.reshape(rows, cols)
    check_matrices(op, matrix)
    return inv_of(op, matrix).reshape(*back, *front)


def tensorsolve(A: Tensor, B: Tensor, dims=None, *, out=None) -> Tensor:  # noqa: N803
    """X with tensordot(A, X, X.ndim) = B. ``dims`` first moves those dims of A to the end
    (they are X's dims). X has shape A.shape[B.ndim:]; A read as a matrix must be square."""
    op = "linalg.tensorsolve"
    if out is not None:
        raise TypeError(f"{op}: out= is not supported; use the returned tensor")
    for name, t in (("A", A), ("B", B)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    if dims is not None:
        dims = [wrap_dim(d, A.ndim, op) for d in ((dims,) if isinstance(dims, int) else dims)]
        A = A.permute(*[d for d in range(A.ndim) if d not in dims], *dims)  # noqa: N806
    solution_shape = tuple(A.shape[B.ndim:])
    rows, cols = math.prod(A.shape[:B.ndim]), math.prod(solution_shape)
    if A.ndim < B.ndim or rows != cols or rows != B.numel():
        raise RuntimeError(f"{op}: A {tuple(A.shape)} must split into B's shape "
                           f"{tuple(B.shape)} (the equations) and X's shape (the unknowns) "
                           f"with as many unknowns as equations, but A.shape[B.ndim:] = "
                           f"{solution_shape} holds {cols} and B {B.numel()}")
    matrix = A.reshape(rows, cols)
    return solve_of(op, matrix, B.reshape(rows), True).reshape(*solution_shape)
