"""Matrix decompositions: Cholesky, symmetric eigen (eigh), SVD and QR, with gradients.

Each forward is one LAPACK call through ``xp.linalg`` (NumPy or CuPy), on a
batch of matrices in the last two dims. Each backward turns the gradients of
the factors into a gradient of A with tensor ops, so ``create_graph=True``
works. The formulas come from differentiating the defining identities
(A = L Lᵀ, A V = V Λ, A = U S Vᵀ, A = Q R) and asking the factors to stay
triangular / orthogonal; they are written out on each Function.

Complex matrices work too (Hermitian ones for cholesky and eigh): every ᵀ in
the formulas becomes ᴴ (``mH``, which is ``mT`` for real tensors), and
"orthogonal" becomes "unitary". Where a factor is fixed only up to a phase,
the formulas pick the phase the way PyTorch does, and carry one more term
for it (noted on the Function).

Two facts a student meets here:

* Eigenvectors and singular vectors are defined up to sign (for complex
  numbers, up to a phase e^(iφ)). A loss that depends on the sign
  (``U.sum()``) has a gradient only for the sign LAPACK happened to pick;
  losses like ``U.abs()``, ``U @ U.mH`` or a reconstruction don't care. A
  complex loss that depends on the phase is refused in backward
  (:func:`check_phase_free`), as PyTorch does.
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
from .complex_parts import conj
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


PHASE_TOLERANCE = 1e-6
"""How far from 0 a loss's rate of change with the vectors' phases may be (rounding)."""


def check_phase_free(op: str, drift: Tensor, vectors: str = "eigenvector",
                     fix: str = "V.abs(), of the eigenvalues, or of V diag(λ) V⁻¹") -> None:
    """Refuse a loss that changes with the phases of complex ``vectors``.

    ``drift`` is how fast the loss moves as each vector turns by e^(iφ) (the
    imaginary part of diag(Vᴴ g_V), per vector): for a loss that ignores the
    phases it is 0 up to rounding. PyTorch refuses such losses too.
    """
    if not drift.dtype.is_complex:
        return
    worst = float(drift.imag.abs().max()) if drift.numel() else 0.0
    if worst > PHASE_TOLERANCE:
        raise RuntimeError(
            f"{op} (backward): each {vectors} is fixed only up to a phase (v e^(iφ) is as "
            f"good as v), and this loss changes with it (by up to {worst:.3g}), so its "
            f"gradient is not defined. Fix: use a loss that ignores the phases, e.g. of {fix}")


def _wants_derivative(A: Tensor) -> bool:
    """Will A's gradient or tangent be asked for? (Then compute the full factorisation.)"""
    return (A.requires_grad and state.enabled) or (
        state.dual is not None and "_tangent" in getattr(A, "__dict__", {}))


# --- Cholesky --------------------------------------------------------------------------------

class Cholesky(Function):
    """A = L Lᴴ with L lower triangular, real positive diagonal (upper=True: A = Uᴴ U, U = Lᴴ).

    dA = dL Lᴴ + L dLᴴ, so L⁻¹ dA L⁻ᴴ = X + Xᴴ with X = L⁻¹ dL lower
    triangular: L̇ = L Φ(L⁻¹ Ȧ L⁻ᴴ) where Φ keeps the strict lower triangle and
    half the diagonal. Transposing that map (Murray 2016, as PyTorch):
    S = ½ (Φ(Lᴴ G) + Φ(Lᴴ G)ᴴ) (Hermitian), grad_A = L⁻ᴴ S L⁻¹.
    """

    raw = True
    supports_complex = True
    name = "linalg_cholesky"
    node_name = "LinalgCholeskyExBackward0"

    @staticmethod
    def forward(ctx, a, upper, op):
        xp = xp_for(a)
        lower = call_lapack(op, "not_pd", xp.linalg.cholesky, a)
        if not bool(xp.isfinite(lower).all()):  # CuPy reports failure as NaN, not an error
            raise lapack_failure(op, a.shape, "not_pd")
        out = xp.ascontiguousarray(xp.conj(lower).swapaxes(-1, -2)) if upper else lower
        ctx.save_for_backward(out)
        ctx.upper, ctx.label = upper, op
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        lower, grad = (out.mH, grad.mH) if ctx.upper else (out, grad)
        phi = _lower_and_half_diagonal(lower.mH @ grad)
        s = 0.5 * (phi + phi.mH)
        op = f"{ctx.label} (backward)"
        left = _solve(lower.mH, s, op)  # L⁻ᴴ S
        return _solve(lower.mH, left.mH, op), None, None  # L⁻ᴴ (L⁻ᴴ S)ᴴ = L⁻ᴴ S L⁻¹

    @staticmethod
    def jvp(ctx, tangent, _upper, _op):
        _a, upper, op = ctx.primals
        out = ctx.results[0]
        lower = out.mH if upper else out
        inner = _solve(lower, _solve(lower, tangent, op).mH, op).mH  # L⁻¹ Ȧ L⁻ᴴ
        dot = lower @ _lower_and_half_diagonal(inner)
        return dot.mH if upper else dot


def _lower_and_half_diagonal(x: Tensor) -> Tensor:
    """Φ(X): the strict lower triangle of X and half its diagonal."""
    return tril(x, -1) + 0.5 * (x * eye_like(x, x.shape[-1]))


def cholesky_of(op: str, A: Tensor, upper: bool = False) -> Tensor:
    check_matrices(op, A)
    return Cholesky.apply(A, bool(upper), op)


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """L with A = L Lᴴ (upper=True: U with A = Uᴴ U); ``linalg.cholesky``'s older name."""
    return cholesky_of("cholesky", input, upper)


# --- eigh ----------------------------------------------------------------------------------

class Eigh(Function):
    """A V = V Λ for symmetric (Hermitian) A: real eigenvalues ascending, V orthogonal (unitary).

    With X = Vᴴ Ȧ V: λ̇ = diag(X) (real) and V̇ = V (F ∘ X), F_ij = 1/(λ_j - λ_i)
    off the diagonal and 0 on it. Transposed: grad_A = V (diag(g_λ) + F ∘ skew(Vᴴ g_V)) Vᴴ,
    with skew(M) = ½ (M - Mᴴ) (only that part of Vᴴ g_V keeps V unitary).

    The 0 on F's diagonal is the choice of phase: each column of V̇ has no
    part along its own v_i (Vᴴ V̇ has a zero diagonal).
    """

    raw = True
    supports_complex = True
    name = "linalg_eigh"
    node_name = "LinalgEighBackward0"

    @staticmethod
    def forward(ctx, a, uplo, op):
        values, vectors = call_lapack(op, "no_convergence", xp_for(a).linalg.eigh, a, UPLO=uplo)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(values, vectors)
        ctx.label = op
        return values, vectors

    @staticmethod
    def _gaps(values: Tensor, eye: Tensor) -> Tensor:
        """E_ij = λ_j - λ_i, with 1 on the diagonal (where nothing is divided)."""
        return values.unsqueeze(-2) - values.unsqueeze(-1) + eye

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        values, v = ctx.saved_tensors
        eye = eye_like(values, v.shape[-1])
        inner = None
        if grad_vectors is not None:
            m = v.mH @ grad_vectors
            if m.dtype.is_complex:
                check_phase_free(ctx.label, _diagonal(m, eye))
            inner = 0.5 * (m - m.mH) / Eigh._gaps(values, eye) * (1 - eye)
        if grad_values is not None:
            diag = _diag_embed(grad_values, eye)
            inner = diag if inner is None else inner + diag
        if inner is None:
            return None, None, None
        return v @ inner @ v.mH, None, None

    @staticmethod
    def jvp(ctx, tangent, _uplo, _op):
        values, v = ctx.results
        eye = eye_like(values, v.shape[-1])
        x = v.mH @ tangent @ v
        dvalues = _diagonal(x, eye)
        return (dvalues.real if dvalues.dtype.is_complex else dvalues,
                v @ (x * (1 - eye) / Eigh._gaps(values, eye)))


def eigh_of(op: str, A: Tensor, UPLO: str = "L"):  # noqa: N803 - PyTorch's name
    check_matrices(op, A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"{op}: UPLO must be 'L' (read the lower triangle) or 'U' (the "
                           f"upper one), got {UPLO!r}")
    return Eigh.apply(A, UPLO, op)


# --- SVD -----------------------------------------------------------------------------------

class Svd(Function):
    """A = U diag(S) Vh, S real and descending; U (m, k), Vh (k, n), k = min(m, n) (reduced).

    Backward (Townsend 2016; PyTorch's svd_backward): with E_ij = S_j² - S_i²,
    J = skew(Uᴴ g_U), K = skew(Vh g_Vhᴴ) (skew(M) = M - Mᴴ),
    inner = (J S + S K) / E + diag(g_S), grad_A = U inner Vh, plus the part
    of g_U outside U's columns when m > n, (I - U Uᴴ) g_U S⁻¹ Vh (and its
    mirror for g_Vh when m < n). With full_matrices=True only the first k
    columns of U (rows of Vh) reach the gradient, as in PyTorch: the others
    are an arbitrary basis of the rest of the space.

    jvp: with P = Uᴴ Ȧ V, F_ij = 1/(S_j² - S_i²) (0 on the diagonal) and
    D = i Im diag(P) / 2S, Ṡ = Re diag(P),
    U̇ = U (F ∘ (P S + S Pᴴ) + D) + (I - U Uᴴ) Ȧ V S⁻¹ and
    V̇ = V (F ∘ (S P + Pᴴ S) - D) + (I - V Vᴴ) Ȧᴴ U S⁻¹.

    Complex: a pair (u_i, v_i) may turn by one phase e^(iφ) together, so only
    the difference of their turns is fixed (by Ṡ's being real): ±D above,
    split evenly as PyTorch does. Backward carries the same term as
    diag(J)/(2S) in inner. A loss that depends on the phase is refused.
    """

    raw = True
    supports_complex = True
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
        ctx.full_matrices, ctx.label = full_matrices, op
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
        j = kk = None
        if grad_u is not None:
            j = u.mH @ grad_u
            j = j - j.mH
            inner = j * s.unsqueeze(-2)
        if grad_vh is not None:
            kk = vh @ grad_vh.mH
            kk = kk - kk.mH
            inner = inner + s.unsqueeze(-1) * kk
        if u.dtype.is_complex:  # the pair's turn must not move the loss: Im(J_ii + K_ii) = 0
            drift = sum(_diagonal(x, eye) for x in (j, kk) if x is not None)
            check_phase_free(ctx.label, drift, "pair of singular vectors",
                             "U.abs(), of S, or of U diag(S) Vh")
        inner = inner / gaps
        if grad_s is not None:
            inner = inner + _diag_embed(grad_s, eye)
        if j is not None and j.dtype.is_complex:  # u_i's own phase term (class docstring)
            inner = inner + _diag_embed(_diagonal(j, eye) / (2 * s), eye)
        if m > n and grad_u is not None:  # the part of g_U outside span(U)
            scaled = grad_u / s.unsqueeze(-2)
            return (u @ inner + scaled - u @ (u.mH @ scaled)) @ vh, None, None
        if m < n and grad_vh is not None:  # the part of g_Vh outside span(Vhᴴ)
            scaled = grad_vh / s.unsqueeze(-1)
            return u @ (inner @ vh + scaled - (scaled @ vh.mH) @ vh), None, None
        return u @ inner @ vh, None, None

    @staticmethod
    def jvp(ctx, tangent, _full_matrices, _op):
        a, full_matrices, op = ctx.primals
        if full_matrices and a.shape[-1] != a.shape[-2]:
            raise NotImplementedError(
                f"{op}: forward mode needs full_matrices=False for a matrix that is not square "
                f"(shape {tuple(a.shape)}): the extra columns of U or rows of Vh are an "
                f"arbitrary basis, with no tangent")
        u, s, vh = ctx.results
        v = vh.mH
        eye = eye_like(s, s.shape[-1])
        squares = s * s
        f = (1 - eye) / (squares.unsqueeze(-2) - squares.unsqueeze(-1) + eye)
        p = u.mH @ tangent @ v
        ps, sp = p * s.unsqueeze(-2), s.unsqueeze(-1) * p  # P S, S P
        inner_u, inner_v = f * (ps + ps.mH), f * (sp + sp.mH)
        diagonal = _diagonal(p, eye)
        if diagonal.dtype.is_complex:  # ±D, the pair's turn (class docstring)
            turn = _diag_embed(0.25 * (diagonal - conj(diagonal)) / s, eye)
            inner_u, inner_v = inner_u + turn, inner_v - turn
            diagonal = diagonal.real
        du = u @ inner_u
        dv = v @ inner_v
        if u.shape[-2] > s.shape[-1]:  # U doesn't span everything: the part outside it
            outside = (tangent @ v) / s.unsqueeze(-2)
            du = du + outside - u @ (u.mH @ outside)
        if v.shape[-2] > s.shape[-1]:
            outside = (tangent.mH @ u) / s.unsqueeze(-2)
            dv = dv + outside - v @ (v.mH @ outside)
        return du, diagonal, dv.mH


def svd_of(op: str, A: Tensor, full_matrices: bool = True):
    check_matrices(op, A, square=False)
    return Svd.apply(A, bool(full_matrices), op)


# --- QR ------------------------------------------------------------------------------------

class Qr(Function):
    """A = Q R, Q with orthonormal columns, R upper triangular with a real diagonal.

    For m >= n (Liao et al. 2019): M = R g_Rᴴ - g_Qᴴ Q, then
    grad_A = (g_Q + Q copyltu(M)) R⁻ᴴ, where copyltu(M) mirrors the strict
    lower triangle onto the upper one (conjugated) and keeps Re diag(M). For
    m < n, A = [X | Y] with X square: X = Q R₁ is the square case with
    g_Q + Y g_R₂ᴴ, and grad_Y = Q g_R₂.

    jvp (m >= n; for m < n, X as above and Ṙ₂ = Q̇ᴴ Y + Qᴴ Ẏ): C = Qᴴ Ȧ R⁻¹ and
    Ω = Qᴴ Q̇, skew-Hermitian: its strict lower triangle is C's (the rest of C,
    R's change, is upper triangular), and its diagonal is i Im diag(C) (R's
    diagonal stays real). Then Ṙ = (C - Ω) R and Q̇ = Ȧ R⁻¹ - Q (C - Ω). For
    real matrices Ω's diagonal is 0.
    """

    raw = True
    supports_complex = True
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
            grad_q = y @ g2.mH if grad_q is None else grad_q + y @ g2.mH
        grad_x = Qr._square_or_tall(q, r1, grad_q, g1, op)
        grad_y = q @ g2 if g2 is not None else grad_x.new_zeros(tuple(r2.shape))
        return cat([grad_x, grad_y], -1), None, None

    @staticmethod
    def jvp(ctx, tangent, _mode, _op):
        a, mode, op = ctx.primals
        m, n = a.shape[-2:]
        if mode == "r" or (mode == "complete" and m > n):
            raise NotImplementedError(
                f"{op}: forward mode needs Q, and a unique one: mode='reduced' (or "
                f"'complete' with rows <= columns), got mode={mode!r} and shape "
                f"{tuple(a.shape)}")
        q, r = ctx.results
        if m >= n:
            return Qr._square_or_tall_tangents(q, r, tangent, op)
        # A = [X | Y] with X square: X = Q R₁ as above, and R₂ = Qᴴ Y
        dq, dr1 = Qr._square_or_tall_tangents(q, r.narrow(-1, 0, m),
                                              tangent.narrow(-1, 0, m), op)
        dr2 = dq.mH @ a.narrow(-1, m, n - m) + q.mH @ tangent.narrow(-1, m, n - m)
        return dq, cat([dr1, dr2], -1)

    @staticmethod
    def _square_or_tall_tangents(q, r, tangent, op):
        """(Q̇, Ṙ) for m >= n (class docstring)."""
        moved = _solve(r.mT, tangent.mT, op).mT  # Ȧ R⁻¹
        c = q.mH @ moved
        lower = tril(c, -1)
        eye = eye_like(r, r.shape[-1])
        upper_part = c - (lower - lower.mH) - 0.5 * (c - c.mH) * eye  # C - Ω
        return moved - q @ upper_part, upper_part @ r

    @staticmethod
    def _square_or_tall(q, r, grad_q, grad_r, op):
        m = 0
        if grad_r is not None:
            m = r @ grad_r.mH
        if grad_q is not None:
            m = m - grad_q.mH @ q
        lower = tril(m, -1)
        eye = eye_like(r, r.shape[-1])
        left = q @ (lower + lower.mH + 0.5 * (m + m.mH) * eye)  # Q copyltu(M)
        if grad_q is not None:
            left = left + grad_q
        return _solve(r, left.mH, op).mH  # left R⁻ᴴ = (R⁻¹ leftᴴ)ᴴ


def qr_of(op: str, A: Tensor, mode: str = "reduced"):
    check_matrices(op, A, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"{op}: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    return Qr.apply(A, mode, op)
