"""The eigendecomposition of a general square matrix: ``linalg.eig`` and ``linalg.eigvals``.

A real matrix that is not symmetric can have complex eigenvalues (a rotation
by θ has e^(±iθ)), so ``eig`` always returns complex tensors: eigenvalues
λ (..., n) and eigenvectors V (..., n, n) with A V = V diag(λ), each column
of V of unit length, as LAPACK's geev gives them (NumPy and PyTorch use the
same routine). For a symmetric matrix ``linalg.eigh`` is the better tool:
real results, orthogonal vectors, a cheaper gradient.

The gradient (PyTorch's formula). Differentiating A V = V Λ gives, with
X = V⁻¹ Ȧ V, λ̇ = diag(X) and V̇ = V (F ∘ X) minus the part that would change
a column's length, where F_ij = 1/(λ_j - λ_i) off the diagonal. Transposed
for backward:

    grad_A = V⁻ᴴ (diag(g_λ) + F̄ ∘ (Vᴴ g_V - Vᴴ V diag(Re diag(Vᴴ g_V)))) Vᴴ

with F̄ the conjugate of F; for a real A, its real part. Like eigh's, it
divides by the gaps between eigenvalues: repeated eigenvalues make it inf or
NaN. Forward mode uses the same identities the other way round (``Eig.jvp``).

An eigenvector is fixed only up to a phase: V e^(iφ) is as good as V. A loss
that depends on that phase (``V.real.sum()``) has no meaningful gradient,
and backward says so (as PyTorch does); ``V.abs()``, the eigenvalues, or
V diag(λ) V⁻¹ don't care.
"""

from __future__ import annotations

from .. import dtypes as _dt
from .. import return_types
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_for
from .complex_parts import conj
from .decompositions import check_phase_free
from .solvers import Solve, call_lapack, check_matrices, eye_like

__all__: list = []  # public through gradlab.linalg (eig, eigvals)
TENSOR_METHODS: list = []

class Eig(Function):
    """A V = V diag(λ) for a general square A: complex λ and V (see the module docstring)."""

    raw = True
    supports_complex = True
    name = "linalg_eig"
    node_name = "LinalgEigBackward0"

    @staticmethod
    def forward(ctx, a, op):
        values, vectors = call_lapack(op, "no_convergence", xp_for(a).linalg.eig, a)
        kind = _dt.from_numpy_dtype(a.dtype).to_complex().np  # complex even where λ is real
        values, vectors = values.astype(kind, copy=False), vectors.astype(kind, copy=False)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(values, vectors)
        ctx.label = op
        return values, vectors

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        if grad_values is None and grad_vectors is None:
            return None, None
        values, v = ctx.saved_tensors
        eye = eye_like(v, v.shape[-1])
        vh = v.mH
        inner = None
        if grad_vectors is not None:
            m = vh @ grad_vectors
            diagonal = (m * eye).sum(-1)
            check_phase_free(ctx.label, diagonal)
            m = m - vh @ (v * diagonal.real.unsqueeze(-2))
            lam = conj(values)
            gaps = lam.unsqueeze(-2) - lam.unsqueeze(-1) + eye  # conj(λ_j) - conj(λ_i), 1 on diag
            inner = m / gaps * (1 - eye)
        if grad_values is not None:
            diag = grad_values.unsqueeze(-1) * eye
            inner = diag if inner is None else inner + diag
        return Solve.apply(vh, inner @ vh, False, f"{ctx.label} (backward)"), None

    @staticmethod
    def jvp(ctx, tangent, _op):
        """With P = V⁻¹ Ȧ V: λ̇ = diag(P) and V̇ = V (F ∘ P) (F as in backward, 0 on the
        diagonal), less the part that would change each column's length."""
        values, v = ctx.results
        eye = eye_like(v, v.shape[-1])
        p = Solve.apply(v, tangent.to(v.dtype) @ v, False, f"{ctx.label} (jvp)")
        dvalues = (p * eye).sum(-1)
        gaps = values.unsqueeze(-2) - values.unsqueeze(-1) + eye  # λ_j - λ_i, 1 on diag
        dv = v @ (p / gaps * (1 - eye))
        return dvalues, dv - v * (conj(v) * dv).sum(-2).real.unsqueeze(-2)


def eig(A: Tensor):  # noqa: N803
    """``(eigenvalues, eigenvectors)`` of each square matrix in the last two dims: complex,
    even for a real A (see the module docstring; ``eigh`` for symmetric matrices)."""
    check_matrices("linalg.eig", A)
    return return_types.linalg_eig(*Eig.apply(A, "linalg.eig"))


def eigvals(A: Tensor) -> Tensor:  # noqa: N803
    """The eigenvalues of each square matrix (complex), as ``eig`` computes them."""
    check_matrices("linalg.eigvals", A)
    return Eig.apply(A, "linalg.eigvals")[0]
