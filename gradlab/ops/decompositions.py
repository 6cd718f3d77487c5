"""Matrix decompositions: Cholesky, symmetric eigen (eigh), SVD and QR, with gradients.

Each forward is one LAPACK call through ``xp.linalg`` (NumPy or CuPy), on a
batch of matrices in the last two dims. Each backward turns the gradients of
the factors into a gradient of A with tensor ops, so ``create_graph=True``
works. The formulas come from differentiating the defining identities
(A = L Lᵀ, A V = V Λ, A = U S Vᵀ, A = Q R) and asking the factors to stay
triangular / orthogonal; they are written out on each Function.

Two facts a student meets here:

* Eigenvectors and singular vectors are defined up to sign. A loss that
  depends on the sign (``U.sum()``) has a gradient only for the sign LAPACK
  happened to pick; losses like ``U.abs()``, ``U @ U.mT`` or a reconstruction
  don't care.
* The gradients divide by gaps between eigenvalues (λ_j - λ_i) or squared
  singular values: repeated ones make them inf/NaN (as in PyTorch), unless
  only the values are used (``eigvalsh``, ``svdvals``, ``matrix_norm(A, 2)``).

Public here: ``cholesky`` (PyTorch's old top-level name); ``gradlab.linalg``
gives ``cholesky``, ``eigh``, ``eigvalsh``, ``svd``, ``svdvals``, ``qr``.
"""

from __future__ import annotations

from ..autograd.function import Function
from ..autograd.grad_mode import state
from ..tensor import Tensor
from ._util import xp_for
from .joining import cat
from .solvers import Solve, call_lapack, check_matrices, eye_like, lapack_failure
from .triangular import tril

__all__ = ["cholesky"]
TENSOR_METHODS = ["cholesky"]



def _solve(a: Tensor, b: Tensor, op: str) -> Tensor:
    """a⁻¹ b, differentiable (the triangular solves of the formulas, done by LU)."""
    return Solve.apply(a, b, False, op)


def _diag_embed(values: Tensor, eye: Tensor) -> Tensor:
    """Matrices with ``values`` (..., n) on the diagonal: PyTorch's diag_embed."""
    return values.unsqueeze(-1) * eye


def _diagonal(x: Tensor, eye: Tensor) -> Tensor:
    """The diagonal (..., n) of matrices (..., n, n)."""
    return (x * eye).sum(-1)


def _wants_derivative(A: Tensor) -> bool:
    """Will A's gradient or tangent be asked for? (Then compute the full factorisation.)"""
    return (A.requires_grad and state.enabled) or (
        state.dual is not None and "_tangent" in getattr(A, "__dict__", {}))


# --- Cholesky --------------------------------------------------------------------------------

class Cholesky(Function):
    """A = L Lᵀ with L lower triangular (or A = Uᵀ U, U = Lᵀ, for upper=True).

    dA = dL Lᵀ + L dLᵀ, so L⁻¹ dA L⁻ᵀ = Φ⁻¹ + Φ⁻ᵀ with Φ⁻¹ = L⁻¹ dL lower
    triangular: L̇ = L Φ(L⁻¹ Ȧ L⁻ᵀ) where Φ keeps the strict lower triangle and
    half the diagonal. Transposing that map (Murray 2016, as PyTorch):
    P = tril(Lᵀ G), S = ½ (P + tril(P, -1)ᵀ) (symmetric), grad_A = L⁻ᵀ S L⁻¹.
    """

    raw = True
    name = "linalg_cholesky"
    node_name = "LinalgCholeskyExBackward0"

    @staticmethod
    def forward(ctx, a, upper, op):
        xp = xp_for(a)
        lower = call_lapack(op, "not_pd", xp.linalg.cholesky, a)
        if not bool(xp.isfinite(lower).all()):  # CuPy reports failure as NaN, not an error
            raise lapack_failure(op, a.shape, "not_pd")
        out = xp.ascontiguousarray(lower.swapaxes(-1, -2)) if upper else lower
        ctx.save_for_backward(out)
        ctx.upper, ctx.label = upper, op
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        lower, grad = (out.mT, grad.mT) if ctx.upper else (out, grad)
        p = tril(lower.mT @ grad)
        s = 0.5 * (p + tril(p, -1).mT)
        op = f"{ctx.label} (backward)"
        left = _solve(lower.mT, s, op)  # L⁻ᵀ S
        return _solve(lower.mT, left.mT, op).mT, None, None  # (L⁻ᵀ (L⁻ᵀ S)ᵀ)ᵀ = L⁻ᵀ S L⁻¹

    @staticmethod
    def jvp(ctx, tangent, _upper, _op):
        _a, upper, op = ctx.primals
        out = ctx.results[0]
        lower = out.mT if upper else out
        inner = _solve(lower, _solve(lower, tangent, op).mT, op).mT  # L⁻¹ Ȧ L⁻ᵀ
        eye = eye_like(inner, inner.shape[-1])
        dot = lower @ (tril(inner, -1) + 0.5 * inner * eye)
        return dot.mT if upper else dot


def cholesky_of(op: str, A: Tensor, upper: bool = False) -> Tensor:
    check_matrices(op, A)
    return Cholesky.apply(A, bool(upper), op)


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """L with A = L Lᵀ (upper=True: U with A = Uᵀ U); ``linalg.cholesky``'s older name."""
    return cholesky_of("cholesky", input, upper)


# --- eigh ----------------------------------------------------------------------------------

class Eigh(Function):
    """A V = V Λ for symmetric A: eigenvalues ascending, V orthogonal.

    With X = Vᵀ Ȧ V: λ̇ = diag(X) and V̇ = V (F ∘ X), F_ij = 1/(λ_j - λ_i) off the
    diagonal. Transposed: grad_A = V (diag(g_λ) + F ∘ skew(Vᵀ g_V)) Vᵀ, with
    skew(M) = ½ (M - Mᵀ) (only that part of Vᵀ g_V keeps V orthogonal).
    """

    raw = True
    name = "linalg_eigh"
    node_name = "LinalgEighBackward0"

    @staticmethod
    def forward(ctx, a, uplo, op):
        values, vectors = call_lapack(op, "no_convergence", xp_for(a).linalg.eigh, a, UPLO=uplo)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(values, vectors)
        return values, vectors

    @staticmethod
    def _gaps(values: Tensor, eye: Tensor) -> Tensor:
        """E_ij = λ_j - λ_i, with 1 on the diagonal (where nothing is divided)."""
        return values.unsqueeze(-2) - values.unsqueeze(-1) + eye

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        values, v = ctx.saved_tensors
        eye = eye_like(v, v.shape[-1])
        inner = None
        if grad_vectors is not None:
            m = v.mT @ grad_vectors
            inner = 0.5 * (m - m.mT) / Eigh._gaps(values, eye)  # its diagonal is 0
        if grad_values is not None:
            diag = _diag_embed(grad_values, eye)
            inner = diag if inner is None else inner + diag
        if inner is None:
            return None, None, None
        return v @ inner @ v.mT, None, None

    @staticmethod
    def jvp(ctx, tangent, _uplo, _op):
        values, v = ctx.results
        eye = eye_like(v, v.shape[-1])
        x = v.mT @ tangent @ v
        return _diagonal(x, eye), v @ (x * (1 - eye) / Eigh._gaps(values, eye))


def eigh_of(op: str, A: Tensor, UPLO: str = "L"):  # noqa: N803 - PyTorch's name
    check_matrices(op, A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"{op}: UPLO must be 'L' (read the lower triangle) or 'U' (the "
                           f"upper one), got {UPLO!r}")
    return Eigh.apply(A, UPLO, op)


# --- SVD -----------------------------------------------------------------------------------

class Svd(Function):
    """A = U diag(S) Vh, S descending; U (m, k), Vh (k, n), k = min(m, n) (reduced).

    Backward (Townsend 2016; PyTorch's svd_backward): with E_ij = S_j² - S_i²,
    J = skew(Uᵀ g_U), K = skew(Vh g_Vhᵀ) (skew(M) = M - Mᵀ),
    inner = (J S + S K) / E + diag(g_S), grad_A = U inner Vh, plus the part
    of g_U outside U's columns when m > n, (I - U Uᵀ) g_U S⁻¹ Vh (and its
    mirror for g_Vh when m < n). With full_matrices=True only the first k
    columns of U (rows of Vh) reach the gradient, as in PyTorch: the others
    are an arbitrary basis of the rest of the space.

    jvp: with P = Uᵀ Ȧ V and F_ij = 1/(S_j² - S_i²) (0 on the diagonal),
    Ṡ = diag(P), U̇ = U (F ∘ (P S + S Pᵀ)) + (I - U Uᵀ) Ȧ V S⁻¹ and
    V̇ = V (F ∘ (S P + Pᵀ S)) + (I - V Vᵀ) Ȧᵀ U S⁻¹.
    """

    raw = True
    name = "linalg_svd"
    node_name = "LinalgSvdBackward0"

    @staticmethod
    def forward(ctx, a, full_matrices, op):
        xp = xp_for(a)
        if not bool(xp.isfinite(a).all()):  # LAPACK's SVD loops forever on inf
            raise lapack_failure(op, a.shape, "not_finite")
        u, s, vh = call_lapack(op, "no_convergence", xp.linalg.svd, a,
                               full_matrices=full_matrices)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(u, s, vh)
        ctx.full_matrices = full_matrices
        return u, s, vh

    @staticmethod
    def backward(ctx, grad_u, grad_s, grad_vh):
        u, s, vh = ctx.saved_tensors
        k = s.shape[-1]
        if ctx.full_matrices:
            u, vh = u.narrow(-1, 0, k), vh.narrow(-2, 0, k)
            grad_u = None if grad_u is None else grad_u.narrow(-1, 0, k)
            grad_vh = None if grad_vh is None else grad_vh.narrow(-2, 0, k)
        m, n = u.shape[-2], vh.shape[-1]
        if grad_u is None and grad_vh is None:  # only the values: grad_A = U diag(g_S) Vh
            if grad_s is None:
                return None, None, None
            return u @ (grad_s.unsqueeze(-1) * vh), None, None
        eye = eye_like(s, k)
        squares = s * s
        gaps = squares.unsqueeze(-2) - squares.unsqueeze(-1) + eye
        inner = 0
        if grad_u is not None:
            j = u.mT @ grad_u
            inner = (j - j.mT) * s.unsqueeze(-2)
        if grad_vh is not None:
            kk = vh @ grad_vh.mT
            inner = inner + s.unsqueeze(-1) * (kk - kk.mT)
        inner = inner / gaps
        if grad_s is not None:
            inner = inner + _diag_embed(grad_s, eye)
        if m > n and grad_u is not None:  # the part of g_U outside span(U)
            scaled = grad_u / s.unsqueeze(-2)
            return (u @ inner + scaled - u @ (u.mT @ scaled)) @ vh, None, None
        if m < n and grad_vh is not None:  # the part of g_Vh outside span(Vhᵀ)
            scaled = grad_vh / s.unsqueeze(-1)
            return u @ (inner @ vh + scaled - (scaled @ vh.mT) @ vh), None, None
        return u @ inner @ vh, None, None

    @staticmethod
    def jvp(ctx, tangent, _full_matrices, _op):
        _a, full_matrices, op = ctx.primals
        if full_matrices:
            raise NotImplementedError(
                f"{op}: forward mode needs full_matrices=False (the extra columns of U or rows "
                f"of Vh are an arbitrary basis, with no tangent)")
        u, s, vh = ctx.results
        v = vh.mT
        eye = eye_like(s, s.shape[-1])
        squares = s * s
        f = (1 - eye) / (squares.unsqueeze(-2) - squares.unsqueeze(-1) + eye)
        p = u.mT @ tangent @ v
        ps, sp = p * s.unsqueeze(-2), s.unsqueeze(-1) * p  # P S, S P
        du = u @ (f * (ps + ps.mT))
        dv = v @ (f * (sp + sp.mT))
        if u.shape[-2] > s.shape[-1]:  # U doesn't span everything: the part outside it
            outside = (tangent @ v) / s.unsqueeze(-2)
            du = du + outside - u @ (u.mT @ outside)
        if v.shape[-2] > s.shape[-1]:
            outside = (tangent.mT @ u) / s.unsqueeze(-2)
            dv = dv + outside - v @ (v.mT @ outside)
        return du, _diagonal(p, eye), dv.mT


def svd_of(op: str, A: Tensor, full_matrices: bool = True):
    check_matrices(op, A, square=False)
    return Svd.apply(A, bool(full_matrices), op)


# --- QR ------------------------------------------------------------------------------------

class Qr(Function):
    """A = Q R, Q with orthonormal columns, R upper triangular.

    For m >= n (Liao et al. 2019): M = R g_Rᵀ - g_Qᵀ Q, then
    grad_A = (g_Q + Q copyltu(M)) R⁻ᵀ, where copyltu mirrors the lower
    triangle onto the upper one. For m < n, A = [X | Y] with X square:
    X = Q R₁ is the square case with g_Q + Y g_R₂ᵀ, and grad_Y = Q g_R₂.

    jvp (m >= n): C = Qᵀ Ȧ R⁻¹, Ω = tril(C, -1) - tril(C, -1)ᵀ (Qᵀ Q̇, skew);
    Ṙ = (C - Ω) R and Q̇ = Ȧ R⁻¹ - Q (C - Ω).
    """

    raw = True
    name = "linalg_qr"
    node_name = "LinalgQrBackward0"

    @staticmethod
    def forward(ctx, a, mode, op):
        xp = xp_for(a)
        if mode == "r":
            r = call_lapack(op, "no_convergence", xp.linalg.qr, a, mode="r")
            q = xp.empty((0,), dtype=a.dtype)
        else:
            q, r = call_lapack(op, "no_convergence", xp.linalg.qr, a, mode=mode)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(q, r)
        ctx.mode, ctx.label = mode, op
        return q, r

    @staticmethod
    def backward(ctx, grad_q, grad_r):
        q, r = ctx.saved_tensors
        m, n = ctx.input_shapes[0][-2:]
        if ctx.mode == "r":
            raise RuntimeError(f"{ctx.label}: its derivative needs Q, which mode='r' does not "
                               f"compute. Fix: use mode='reduced' if you differentiate "
                               f"through QR")
        if ctx.mode == "complete" and m > n:
            raise RuntimeError(f"{ctx.label}: the QR decomposition is not differentiable with "
                               f"mode='complete' and more rows than columns (shape "
                               f"{tuple(ctx.input_shapes[0])}): the extra columns of Q are "
                               f"not unique. Fix: use mode='reduced'")
        if grad_q is None and grad_r is None:
            return None, None, None
        op = f"{ctx.label} (backward)"
        if m >= n:
            return Qr._square_or_tall(q, r, grad_q, grad_r, op), None, None
        r1, r2 = r.narrow(-1, 0, m), r.narrow(-1, m, n - m)
        g1 = None if grad_r is None else grad_r.narrow(-1, 0, m)
        g2 = None if grad_r is None else grad_r.narrow(-1, m, n - m)
        if g2 is not None:
            y = q @ r2
            grad_q = y @ g2.mT if grad_q is None else grad_q + y @ g2.mT
        grad_x = Qr._square_or_tall(q, r1, grad_q, g1, op)
        grad_y = q @ g2 if g2 is not None else grad_x.new_zeros(tuple(r2.shape))
        return cat([grad_x, grad_y], -1), None, None

    @staticmethod
    def jvp(ctx, tangent, _mode, _op):
        a, mode, op = ctx.primals
        m, n = a.shape[-2:]
        if mode == "r" or m < n or (mode == "complete" and m > n):
            raise NotImplementedError(
                f"{op}: forward mode is implemented for mode='reduced' with rows >= columns, "
                f"got mode={mode!r} and shape {tuple(a.shape)}")
        q, r = ctx.results
        moved = _solve(r.mT, tangent.mT, op).mT  # Ȧ R⁻¹
        c = q.mT @ moved
        lower = tril(c, -1)
        upper_part = c - (lower - lower.mT)
        return moved - q @ upper_part, upper_part @ r

    @staticmethod
    def _square_or_tall(q, r, grad_q, grad_r, op):
        m = 0
        if grad_r is not None:
            m = r @ grad_r.mT
        if grad_q is not None:
            m = m - grad_q.mT @ q
        m = tril(m)
        left = q @ (m + tril(m, -1).mT)
        if grad_q is not None:
            left = left + grad_q
        return _solve(r, left.mT, op).mT  # left R⁻ᵀ = (R⁻¹ leftᵀ)ᵀ


def qr_of(op: str, A: Tensor, mode: str = "reduced"):
    check_matrices(op, A, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"{op}: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    return Qr.apply(A, mode, op)
