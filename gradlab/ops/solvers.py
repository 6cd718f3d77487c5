"""Solving with a square matrix: inverse, solve, det, slogdet, and their gradients.

All four rest on one identity. For Y = A⁻¹, differentiating A Y = I gives
dA Y + A dY = 0, so

    dY = -A⁻¹ dA A⁻¹                          (forward mode: Ẏ = -Y Ȧ Y)
    grad_A = -A⁻ᵀ G A⁻ᵀ                        (reverse mode, G = dL/dY)

``solve`` is A⁻¹ B without forming A⁻¹; ``det`` and ``slogdet`` use Jacobi's
formula d det(A) = det(A) tr(A⁻¹ dA), so grad_A = g det(A) A⁻ᵀ and, for the
log, grad_A = g A⁻ᵀ. The forwards call LAPACK through ``xp.linalg`` (NumPy
or CuPy: same names), on batches of matrices in the last two dims; the
backwards are tensor code, so second derivatives come for free.

Public here: PyTorch's top-level names (``inverse``, ``det``, ``logdet``,
``slogdet``). ``gradlab.linalg`` gives the ``torch.linalg`` ones (``inv``,
``solve``, ``det``, ``slogdet``) from the same Functions.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from .. import return_types
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import check_float, unbroadcast, xp_for
from .complex_parts import conj
from .selection import where

__all__ = ["inverse", "det", "logdet", "slogdet"]
TENSOR_METHODS = ["inverse", "det", "logdet", "slogdet"]



# --- checks and LAPACK failures, shared with decompositions.py ------------------------------

def check_matrices(op: str, A, square: bool = True) -> None:
    """A tensor of matrices (last two dims) in a dtype LAPACK takes: float32/float64 or
    complex64/complex128 (every op here is written for complex matrices too); square if
    ``square``."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(A).__name__}")
    shape = tuple(A.shape)
    if A.ndim < 2:
        raise RuntimeError(f"{op}: expected a matrix or a batch of matrices (at least 2 dims), "
                           f"got shape {shape}")
    if square and shape[-1] != shape[-2]:
        raise RuntimeError(f"{op}: expected square matrices, got shape {shape}; the last two "
                           f"dims must be equal (n×n, with any batch dims in front)")
    if A.dtype.is_complex:
        return
    check_float(op, A)
    if A.dtype is not _dt.float32 and A.dtype is not _dt.float64:
        raise RuntimeError(f"{op}: LAPACK works in float32, float64, complex64 or complex128, "
                           f"got {A.dtype}. Fix: convert first with .float() or .double()")


_FAILURES = {
    "singular": ("is singular (its determinant is 0), so this can't be computed",
                 "look for rows or columns that are zero or linear combinations of others, or "
                 "regularise with A + eps * eye(n)"),
    "not_pd": ("is not positive-definite, so it has no Cholesky factor",
               "the input must be symmetric with positive eigenvalues (a covariance M @ M.mT "
               "is only semi-definite: add eps * eye(n))"),
    "no_convergence": ("did not converge (often NaN or inf entries)",
                       "check the input for NaN/inf with gradlab.isfinite(A).all()"),
    "not_finite": ("holds NaN or inf entries, on which the algorithm can't converge",
                   "check the input with gradlab.isfinite(A).all(); if a gradient made them, "
                   "gradlab.autograd.detect_anomaly() names the op"),
}


class LinAlgError(RuntimeError):
    """A matrix the algorithm can't handle: singular, not positive-definite, no convergence.

    ``gradlab.linalg.LinAlgError``, as PyTorch's (a RuntimeError, so ``except
    RuntimeError`` still catches it).
    """


def lapack_failure(op: str, shape, failure: str) -> LinAlgError:
    """A teaching error for a LAPACK failure: the op, the shape, what went wrong, a fix."""
    what, hint = _FAILURES[failure]
    which = "the input matrix" if len(shape) == 2 else "a matrix in the batch"
    return LinAlgError(f"{op}: {which} (shape {tuple(shape)}) {what}. Hint: {hint}")


def call_lapack(op: str, failure: str, fn, a, *args, **kwargs):
    """``fn(a, ...)`` with NumPy's LinAlgError (a ValueError) said in the op's terms."""
    try:
        return fn(a, *args, **kwargs)
    except np.linalg.LinAlgError as error:
        raise lapack_failure(op, a.shape, failure) from error


def eye_like(t: Tensor, n: int) -> Tensor:
    """The n×n identity in ``t``'s dtype and device (a constant for masks and diagonals)."""
    from .creation import eye

    return eye(n, dtype=t.dtype, device=t.device)


def trace_product(a: Tensor, b: Tensor) -> Tensor:
    """tr(aᵀ b) over the last two dims, per matrix: Σ_ij a_ij b_ij."""
    return (a * b).sum((-2, -1))


# --- the Functions -----------------------------------------------------------------------------

class Inv(Function):
    """Y = A⁻¹.   grad_A = -Yᵀ G Yᵀ (Yᴴ G Yᴴ for complex);   jvp: Ẏ = -Y Ȧ Y."""

    raw = True
    supports_complex = True
    name = "linalg_inv"
    node_name = "LinalgInvExBackward0"

    @staticmethod
    def forward(ctx, a, op):
        out = call_lapack(op, "singular", xp_for(a).linalg.inv, a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return -(y.mH @ grad @ y.mH), None

    @staticmethod
    def jvp(ctx, tangent, _op):
        y = ctx.results[0]
        return -(y @ tangent @ y)


class Solve(Function):
    """X = A⁻¹ B for matrices B, or vectors B when ``vector`` (batch dims broadcast).

    From A X = B: grad_B = A⁻ᵀ G (another solve) and grad_A = -grad_B Xᵀ (for complex
    numbers the conjugate transposes: A⁻ᴴ G and -grad_B Xᴴ).
    jvp: Ẋ = A⁻¹ (Ḃ - Ȧ X).
    """

    raw = True
    supports_complex = True
    name = "linalg_solve"
    node_name = "LinalgSolveExBackward0"

    @staticmethod
    def forward(ctx, a, b, vector, op):
        xp = xp_for(a)
        if vector:
            b = b[..., None]
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])  # checked by the caller
        wide_a = xp.broadcast_to(a, batch + a.shape[-2:]) if a.shape[:-2] != batch else a
        wide_b = xp.broadcast_to(b, batch + b.shape[-2:]) if b.shape[:-2] != batch else b
        x = call_lapack(op, "singular", xp.linalg.solve, wide_a, wide_b)
        if vector:
            x = xp.ascontiguousarray(x[..., 0])
        ctx.save_for_backward(a, x)
        ctx.label, ctx.vector = op, vector
        return x

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        shape_a, shape_b = ctx.input_shapes[:2]
        vector = ctx.vector
        grad_b = Solve.apply(a.mH, grad, vector, f"{ctx.label} (backward)")
        grad_a = None
        if shape_a is not None:
            outer = (grad_b.unsqueeze(-1) * conj(x).unsqueeze(-2)) if vector else grad_b @ x.mH
            grad_a = unbroadcast(-outer, shape_a)
        return grad_a, unbroadcast(grad_b, shape_b), None, None

    @staticmethod
    def jvp(ctx, tangent_a, tangent_b, _vector, _op):
        a, _b, vector, op = ctx.primals
        x = ctx.results[0]
        rhs = tangent_b
        if tangent_a is not None:
            moved = (tangent_a @ x.unsqueeze(-1)).squeeze(-1) if vector else tangent_a @ x
            rhs = -moved if rhs is None else rhs - moved
        return Solve.apply(a, rhs, vector, op)


class Det(Function):
    """det(A).   grad_A = g det(A) A⁻ᵀ (Jacobi's formula; g conj(det A) A⁻ᴴ for complex);
    jvp: det(A) tr(A⁻¹ Ȧ).

    A⁻¹ is recomputed in backward, so a singular A has no gradient here
    (PyTorch takes a detour through the SVD for that case).
    """

    raw = True
    supports_complex = True
    name = "linalg_det"
    node_name = "LinalgDetBackward0"

    @staticmethod
    def forward(ctx, a, op):
        out = xp_for(a).asarray(xp_for(a).linalg.det(a))
        ctx.save_for_backward(a, out)
        ctx.label = op
        return out

    @staticmethod
    def backward(ctx, grad):
        a, d = ctx.saved_tensors
        scale = (grad * conj(d)).unsqueeze(-1).unsqueeze(-1)
        return scale * Inv.apply(a, f"{ctx.label} (backward)").mH, None

    @staticmethod
    def jvp(ctx, tangent, _op):
        a, op = ctx.primals
        return ctx.results[0] * trace_product(Inv.apply(a, op).mT, tangent)


class Slogdet(Function):
    """(sign, log|det A|) with det A = sign · e^(log|det A|).

    With t = tr(A⁻¹ Ȧ) (Jacobi): (log|det A|)˙ = Re t, and for a complex A,
    sigṅ = sign · i Im t (a real sign is piecewise constant: no gradient).
    Transposed: grad_A = c A⁻ᴴ with c = g_logabsdet + i Im(g_sign · conj(sign)).
    """

    raw = True
    supports_complex = True
    name = "linalg_slogdet"
    node_name = "LinalgSlogdetBackward0"

    @staticmethod
    def forward(ctx, a, op):
        xp = xp_for(a)
        sign, logabsdet = xp.linalg.slogdet(a)  # a named tuple: unpack to plain arrays
        sign, logabsdet = xp.asarray(sign), xp.asarray(logabsdet)
        ctx.set_materialize_grads(False)  # (a real sign gets a gradient of 0, as in PyTorch)
        ctx.save_for_backward(a, sign)
        ctx.label = op
        return sign, logabsdet

    @staticmethod
    def backward(ctx, grad_sign, grad):
        a, sign = ctx.saved_tensors
        if not a.dtype.is_complex:
            grad_sign = None  # the sign of a real det has no derivative
        if grad is None and grad_sign is None:
            return None, None
        scale = 0 if grad is None else grad
        if grad_sign is not None:
            scale = scale + 1j * (grad_sign * conj(sign)).imag
        scale = scale.unsqueeze(-1).unsqueeze(-1)
        return scale * Inv.apply(a, f"{ctx.label} (backward)").mH, None

    @staticmethod
    def jvp(ctx, tangent, _op):
        a, op = ctx.primals
        t = trace_product(Inv.apply(a, op).mT, tangent)
        if not t.dtype.is_complex:
            return None, t
        return ctx.results[0] * (1j * t.imag), t.real


# --- public functions ----------------------------------------------------------------------

def inv_of(op: str, A: Tensor) -> Tensor:
    check_matrices(op, A)
    return Inv.apply(A, op)


def inverse(input: Tensor) -> Tensor:
    """A⁻¹ for each square matrix in the last two dims (``linalg.inv``'s older name)."""
    return inv_of("inverse", input)


def check_right_hand_side(op: str, B, A: Tensor) -> None:
    """B of A X = B: a float (or complex) tensor of A's dtype."""
    if not isinstance(B, Tensor):
        raise TypeError(f"{op}: B must be a Tensor, got {type(B).__name__}")
    if not B.dtype.is_complex:
        check_float(op, B)
    if B.dtype is not A.dtype:
        raise RuntimeError(f"{op}: A and B must have the same dtype, got {A.dtype} and "
                           f"{B.dtype}. Fix: B.to(A.dtype)")


def solve_of(op: str, A: Tensor, B: Tensor, left: bool = True) -> Tensor:
    """X with A X = B (left=True) or X A = B (left=False); B a vector or matrices."""
    check_matrices(op, A)
    check_right_hand_side(op, B, A)
    n = A.shape[-1]
    # PyTorch's rule: B is a (batch of) vector(s) if 1-D, or if its shape is A's minus one dim.
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    rhs = B.unsqueeze(-1) if vector else B
    if not left:  # X A = B  <=>  Aᵀ Xᵀ = Bᵀ
        A, rhs = A.mT, (rhs if vector else rhs.mT)  # noqa: N806
    if rhs.ndim < 2 or rhs.shape[-2] != n:
        want = f"length {n}" if B.ndim == 1 else (f"{n} rows" if left else f"{n} columns")
        raise RuntimeError(f"{op}: A has shape {tuple(A.shape)} but B has shape "
                           f"{tuple(B.shape)}; B must be a vector of length {n} or a matrix "
                           f"with {want} (A X = B lines up A's columns with B's rows)"
                           if left else
                           f"{op}: A has shape {tuple(A.shape)} but B has shape "
                           f"{tuple(B.shape)}; with left=False (X A = B) B needs {want}")
    try:
        np.broadcast_shapes(tuple(A.shape[:-2]), tuple(rhs.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"{op}: the batch dims of A {tuple(A.shape)} and B "
                           f"{tuple(B.shape)} don't broadcast ({tuple(A.shape[:-2])} vs "
                           f"{tuple(rhs.shape[:-2])}); each pair of sizes must be equal or "
                           f"1") from None
    if vector:
        return Solve.apply(A, B, True, op)
    x = Solve.apply(A, rhs, False, op)
    return x if left else x.mT.contiguous()  # C order, as PyTorch's result


def det_of(op: str, A: Tensor) -> Tensor:
    check_matrices(op, A)
    return Det.apply(A, op)


def det(input: Tensor) -> Tensor:
    """det(A) of each square matrix in the last two dims."""
    return det_of("det", input)


def slogdet_of(op: str, A: Tensor):
    check_matrices(op, A)
    return Slogdet.apply(A, op)


def slogdet(input: Tensor):
    """``(sign, logabsdet)`` with det(A) = sign · exp(logabsdet): no overflow for big n."""
    return return_types.slogdet(*slogdet_of("slogdet", input))


def logdet(input: Tensor) -> Tensor:
    """log det(A): NaN where det(A) < 0, -inf where it is 0 (as PyTorch). d/dA = A⁻ᵀ.
    For a complex A, the complex log: log|det A| + i·angle(det A)."""
    sign, logabsdet = slogdet_of("logdet", input)
    if sign.dtype.is_complex:
        return logabsdet + 1j * sign.angle()
    return where(sign < 0, float("nan"), logabsdet)
