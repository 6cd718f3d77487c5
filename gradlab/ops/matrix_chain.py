"""Products of many matrices: ``linalg.multi_dot`` and ``linalg.householder_product``.

**multi_dot(A, B, C, …)** is A @ B @ C @ … computed in the cheapest order.
Matrix products are associative, but their cost is not: multiplying a p×q
by a q×r matrix takes p·q·r multiply-adds, so for A (10×100), B (100×5),
C (5×50), (A B) C costs 5,000 + 2,500 and A (B C) 25,000 + 50,000. The best
parenthesisation of a chain of k matrices with sizes p₀×p₁, p₁×p₂, … is
found by dynamic programming over sub-chains (the textbook *matrix chain
order* problem, O(k³)):

    cost[i][j] = min over s of cost[i][s] + cost[s+1][j] + p_i · p_(s+1) · p_(j+1)

The product is then a tree of ``matmul`` nodes, so gradients come from matmul.

**householder_product(A, τ)** multiplies the Householder reflections
H_i = I - τ_i v_i v_iᵀ that a QR factorisation (LAPACK's geqrf) stores in
compact form: v_i has zeros above position i, a 1 at i, and A's column i
below the diagonal. The result is the first n columns of H_1 H_2 … H_k,
built right to left as H_i X = X - τ_i v_i (v_iᵀ X) from matmul, tril and
mul, so it is differentiable in A (below the diagonal: nothing else is
read) and in τ.
"""

from __future__ import annotations

from ..tensor import Tensor
from .linalg import matmul
from .solvers import check_matrices, eye_like
from .triangular import tril

__all__: list[str] = []  # torch.linalg names only: gradlab.linalg exports them
TENSOR_METHODS: list[str] = []


def _check_chain(op: str, tensors) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}: expected a list or tuple of tensors, got "
                        f"{type(tensors).__name__}: multi_dot([A, B, C]), not multi_dot(A, B, C)")
    if len(tensors) < 2:
        raise RuntimeError(f"{op}: expected at least 2 tensors, got {len(tensors)}; for one "
                           f"matrix there is nothing to multiply")
    last = len(tensors) - 1
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: tensor {i} must be a Tensor, got {type(t).__name__}")
        allowed = (1, 2) if i in (0, last) else (2,)
        if t.ndim not in allowed:
            where = "the first and last may be 1-D (vectors)" if i in (0, last) else \
                "the ones in the middle must be 2-D"
            raise RuntimeError(f"{op}: tensor {i} has shape {tuple(t.shape)}; every tensor "
                               f"must be a matrix ({where})")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError(f"{op}: all tensors must have the same dtype, got "
                               f"{tensors[0].dtype} (tensor 0) and {t.dtype} (tensor {i})")
    matrices = list(tensors)
    if matrices[0].ndim == 1:
        matrices[0] = matrices[0].unsqueeze(0)  # a row vector
    if matrices[last].ndim == 1:
        matrices[last] = matrices[last].unsqueeze(-1)  # a column vector
    for i, (a, b) in enumerate(zip(matrices, matrices[1:])):
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"{op}: tensors {i} and {i + 1} can't be multiplied: shapes "
                               f"{tuple(tensors[i].shape)} and {tuple(tensors[i + 1].shape)} "
                               f"({a.shape[1]} != {b.shape[0]})")
    return matrices


def chain_order(sizes: list[int]) -> list[list[int]]:
    """split[i][j]: where the cheapest product of matrices i..j splits, for matrices of
    shapes sizes[i] × sizes[i + 1] (the dynamic programme of the module docstring)."""
    k = len(sizes) - 1
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(2, k + 1):  # sub-chains, shortest first
        for i in range(k - length + 1):
            j = i + length - 1
            cost[i][j] = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + sizes[i] * sizes[s + 1] * sizes[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


def multi_dot(tensors, *, out=None) -> Tensor:
    """A @ B @ C … in the order with the fewest multiplications. The first tensor may be
    1-D (a row vector) and the last too (a column); the result drops those dims."""
    op = "linalg.multi_dot"
    if out is not None:
        raise TypeError(f"{op}: out= is not supported; use the returned tensor")
    matrices = _check_chain(op, tensors)
    split = chain_order([m.shape[0] for m in matrices] + [matrices[-1].shape[1]])

    def product(i: int, j: int) -> Tensor:
        if i == j:
            return matrices[i]
        s = split[i][j]
        return matmul(product(i, s), product(s + 1, j))

    result = product(0, len(matrices) - 1)
    if tensors[0].ndim == 1:
        result = result.squeeze(0)
    if tensors[-1].ndim == 1:
        result = result.squeeze(-1)
    return result


def householder_product(A: Tensor, tau: Tensor, *, out=None) -> Tensor:  # noqa: N803
    """The first n columns of H_1 … H_k, H_i = I - τ_i v_i v_iᴴ (see the module docstring):
    the Q of a QR factorisation stored as LAPACK's geqrf stores it. A (*, m, n) with
    m >= n, τ (*, k) with k <= n."""
    op = "linalg.householder_product"
    if out is not None:
        raise TypeError(f"{op}: out= is not supported; use the returned tensor")
    check_matrices(op, A, square=False)
    if not isinstance(tau, Tensor):
        raise TypeError(f"{op}: tau must be a Tensor, got {type(tau).__name__}")
    m, n = A.shape[-2:]
    k = tau.shape[-1] if tau.ndim else -1
    if m < n or tau.ndim != A.ndim - 1 or tuple(tau.shape[:-1]) != tuple(A.shape[:-2]) or \
            k > n:
        raise RuntimeError(f"{op}: A (*, m, n) needs m >= n and tau (*, k) the same batch "
                           f"dims with k <= n, got A {tuple(A.shape)} and tau "
                           f"{tuple(tau.shape)}")
    if tau.dtype is not A.dtype:
        raise RuntimeError(f"{op}: A and tau must have the same dtype, got {A.dtype} and "
                           f"{tau.dtype}. Fix: tau.to(A.dtype)")
    reflectors = tril(A, -1).narrow(-1, 0, k) + eye_like(A, m).narrow(-1, 0, k)  # v_i
    result = eye_like(A, m).narrow(-1, 0, n).expand(*A.shape)
    for i in range(k - 1, -1, -1):  # H_i (H_(i+1) (… H_k E)), E = I's first n columns
        v = reflectors.narrow(-1, i, 1)
        scale = tau.narrow(-1, i, 1).unsqueeze(-1)
        result = result - (scale * v) @ (v.mH @ result)
    return result.contiguous()
