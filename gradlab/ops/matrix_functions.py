"""Functions of matrices and small products: matrix_exp, matrix_power, pinverse,
chain_matmul, addr, vdot.

Most are compositions of differentiable ops (matmul, inverse, the SVD), so
their gradients, double backward and forward mode come with them:

    matrix_power(A, n)  = A·A·…·A by repeated squaring (n < 0: of A⁻¹; n = 0: I)
    pinverse(A)         = V diag(1/σ) Uᵀ over the singular values σ > rcond·σ_max
    chain_matmul(A, B, …) = A @ B @ …
    addr(M, u, v)       = β M + α u vᵀ
    vdot(u, v)          = Σ conj(u_i) v_i

``matrix_exp`` is one node. Its forward is scaling and squaring: halve A
until its 1-norm is at most 1/2, sum the Taylor series to degree 18 (the
first term left out is below 0.5¹⁹/19! ≈ 1e-23 of the result), then square
back. Its derivative uses a fact worth knowing: for any analytic f,

    f([[A, E], [0, A]]) = [[f(A), L_f(A, E)], [0, f(A)]]

where L_f(A, E) is the derivative of f at A in the direction E. So the
tangent is the top-right block of exp of a matrix twice the size, and the
gradient is the same with Aᵀ: grad_A = top-right block of exp([[Aᵀ, G], [0, Aᵀ]]).
Both call matrix_exp again, so higher derivatives come for free.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import autocast_inputs, promote, xp_for
from .complex_parts import conj
from .joining import cat
from .linalg import matmul, outer
from .selection import where
from .solvers import check_matrices, eye_like, inv_of

__all__ = ["matrix_exp", "matrix_power", "pinverse", "chain_matmul", "addr", "vdot"]
TENSOR_METHODS = ["matrix_exp", "matrix_power", "pinverse", "addr", "vdot"]

_TAYLOR_DEGREE = 18


def _expm(a):
    """e^A for a batch of square matrices (raw arrays): scaling, Taylor, squaring."""
    xp = xp_for(a)
    n = a.shape[-1]
    norm = xp.abs(a).sum(-2).max(-1) if n else xp.zeros(a.shape[:-2], dtype=a.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        halvings = xp.ceil(xp.log2(norm.astype(xp.float64)) + 1)  # ‖A / 2^s‖ <= 1/2
    halvings = xp.where(xp.isfinite(halvings) & (halvings > 0), halvings, 0).astype(xp.int64)
    x = a / (2.0 ** halvings)[..., None, None].astype(a.dtype)
    eye = xp.eye(n, dtype=a.dtype)
    out = eye + x / _TAYLOR_DEGREE  # Horner: I + X/1 (I + X/2 (I + … (I + X/18)))
    for k in range(_TAYLOR_DEGREE - 1, 0, -1):
        out = eye + (x @ out) / k
    for step in range(int(halvings.max()) if halvings.size else 0):
        square = out @ out
        out = xp.where((step < halvings)[..., None, None], square, out)
    return out.astype(a.dtype, copy=False)


def _upper_right_of_exp(top_left: Tensor, top_right: Tensor) -> Tensor:
    """The top-right n×n block of exp([[top_left, top_right], [0, top_left]])."""
    n = top_left.shape[-1]
    zeros = top_left.new_zeros(tuple(top_left.shape))
    block = cat([cat([top_left, top_right], -1), cat([zeros, top_left], -1)], -2)
    return MatrixExp.apply(block).narrow(-2, 0, n).narrow(-1, n, n)


class MatrixExp(Function):
    """e^A = Σ A^k / k!.   grad_A = [exp([[Aᴴ, G], [0, Aᴴ]])] top-right block."""

    raw = True
    supports_complex = True
    name = "linalg_matrix_exp"
    node_name = "LinalgMatrixExpBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _expm(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return _upper_right_of_exp(a.mH, grad)

    @staticmethod
    def jvp(ctx, tangent):
        """ẏ = [exp([[A, Ȧ], [0, A]])] top-right block."""
        return _upper_right_of_exp(ctx.primals[0], tangent)


def matrix_exp(input: Tensor) -> Tensor:
    """e^A = I + A + A²/2! + … of each square matrix in the last two dims.

    Not the elementwise exp: for a diagonal A it exponentiates the diagonal,
    and e^(A+B) = e^A e^B only when A and B commute.
    """
    check_matrices("matrix_exp", input)
    return MatrixExp.apply(input)


def matrix_power(input: Tensor, n: int) -> Tensor:
    """A^n for an integer n by repeated squaring (about 2·log2|n| products); n = 0 gives the
    identity, n < 0 the power of A⁻¹ (A must be invertible)."""
    if not isinstance(n, Integral) or isinstance(n, bool):
        raise TypeError(f"matrix_power: n must be an int, got {n!r}. Fix: for real powers, "
                        f"use an eigendecomposition (linalg.eigh) or matrix_exp(t * log A)")
    _square("matrix_power", input)
    n = int(n)
    if n < 0:
        input, n = inv_of("matrix_power", input), -n
    if n == 0:  # I, joined to the graph with a gradient of exactly 0 (as PyTorch)
        eye = eye_like(input, input.shape[-1]).expand(*input.shape)
        return where(eye == eye, eye, input)
    result, power = None, input
    while True:  # the binary digits of n: multiply in A^(2^k) where digit k is 1
        if n & 1:
            result = power if result is None else matmul(result, power)
        n >>= 1
        if not n:
            return result if result is not input else input.clone()
        power = matmul(power, power)


def _square(op: str, A) -> None:
    if not isinstance(A, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(A).__name__}")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: expected square matrices (n×n in the last two dims), got "
                           f"shape {tuple(A.shape)}")


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The Moore-Penrose pseudo-inverse A⁺ (n×m for an m×n A): ``linalg.pinv`` keeping the
    singular values above ``rcond`` times the largest. x = A⁺ b minimises ‖A x - b‖."""
    from .rank_and_condition import pinv

    check_matrices("pinverse", input, square=False)  # the errors name the op called
    return pinv(input, rtol=rcond)


def chain_matmul(*matrices) -> Tensor:
    """A @ B @ C … of 2-D matrices (PyTorch's deprecated name for ``linalg.multi_dot``)."""
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul: expected one or more matrices, got none")
    for i, m in enumerate(matrices):
        if not isinstance(m, Tensor):
            raise TypeError(f"chain_matmul: argument {i} must be a Tensor, got "
                            f"{type(m).__name__}")
        if m.ndim != 2:
            raise RuntimeError(f"chain_matmul: every argument must be a 2-D matrix, but "
                               f"argument {i} has shape {tuple(m.shape)}")
    for i, (a, b) in enumerate(zip(matrices, matrices[1:])):
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"chain_matmul: matrices {i} and {i + 1} with shapes "
                               f"{tuple(a.shape)} and {tuple(b.shape)} can't be multiplied "
                               f"({a.shape[1]} != {b.shape[0]})")
    if len(matrices) == 1:
        return matrices[0].clone()
    out = matrices[0]
    for m in matrices[1:]:
        out = matmul(out, m)
    return out


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """β·input + α·(vec1 ⊗ vec2): a rank-1 update of a matrix (input broadcasts to
    (len(vec1), len(vec2))). With β = 0, input is ignored, NaN and inf included."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if not isinstance(v, Tensor):
            raise TypeError(f"addr: {name} must be a Tensor, got {type(v).__name__}")
        if v.ndim != 1:
            raise RuntimeError(f"addr: {name} must be 1-D (a vector), got shape "
                               f"{tuple(v.shape)}. Fix: {name}.flatten()")
    if not isinstance(input, Tensor):
        raise TypeError(f"addr: input must be a Tensor, got {type(input).__name__}")
    shape = (vec1.shape[0], vec2.shape[0])
    try:
        np.broadcast_shapes(tuple(input.shape), shape)
        if len(input.shape) > 2 or np.broadcast_shapes(tuple(input.shape), shape) != shape:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"addr: input of shape {tuple(input.shape)} doesn't broadcast to "
                           f"the outer product's shape {shape} (len(vec1), len(vec2))") from None
    input, vec1, vec2 = autocast_inputs("addr", input, vec1, vec2)
    vec1, vec2 = promote(vec1, vec2)
    dtype = _dt.promote_types(input.dtype, vec1.dtype)
    if not dtype.is_floating_point and (isinstance(alpha, float) or isinstance(beta, float)):
        raise RuntimeError(f"addr: for integer tensors ({dtype}) alpha and beta must be "
                           f"integers, got alpha={alpha!r}, beta={beta!r}. Fix: .float() first")
    product = outer(vec1.to(dtype), vec2.to(dtype))
    if alpha != 1:
        product = product * alpha
    if beta == 0:  # input unread, yet in the graph with gradient exactly 0 (as PyTorch)
        from .creation import ones

        picked = ones(shape, dtype=_dt.bool, device=product.device)
        return where(picked, product, input.to(dtype))
    return (input if beta == 1 else input * beta) + product


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """Σ conj(u_i) v_i of two 1-D tensors (``dot`` for real ones). d/du = g v, d/dv = g u
    (conjugated for complex ones, by the ops it is made of)."""
    for name, v in (("input", input), ("other", other)):
        if not isinstance(v, Tensor):
            raise TypeError(f"vdot: {name} must be a Tensor, got {type(v).__name__}")
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"vdot: expects two 1-D tensors, got shapes {tuple(input.shape)} "
                           f"and {tuple(other.shape)}. Fix: flatten them first (vdot of "
                           f"matrices is the sum of products of all entries)")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"vdot: the vectors have different lengths, {input.shape[0]} and "
                           f"{other.shape[0]}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"vdot: expected both vectors to have the same dtype, got "
                           f"{input.dtype} and {other.dtype}. Fix: other.to(input.dtype)")
    return matmul(conj(input), other)

