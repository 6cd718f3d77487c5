"""``torch.linalg.lstsq``: the X that minimises ‖A X - B‖ (least squares).

For a tall A (more equations than unknowns) there is usually no exact
solution; the best one in the 2-norm solves the normal equations
Aᵀ A X = Aᵀ B. For a wide or rank-deficient A there are many, and the one
of smallest norm is wanted. The pseudo-inverse gives that one in every case:

    X = A⁺ B,   A⁺ = V diag(1/σ) Uᴴ over the singular values σ > rcond · σ₁

which is how it is computed here (``linalg.pinv``), so X is differentiable
in A and B, with PyTorch's gradient (PyTorch differentiates lstsq through
pinv too). LAPACK offers four drivers; PyTorch's CPU default is 'gelsy'.
They agree on the solution of a well-posed problem and differ in what else
they return, which this function mirrors:

    driver    rank   singular_values   residuals (m > n, full rank)
    'gels'    -      -                 yes
    'gelsy'   yes    -                 -
    'gelsd'   yes    yes               yes
    'gelss'   yes    yes               yes

(- is an empty tensor). residuals are the squared errors Σ_i |(A X - B)_ij|²
per column j. Complex A and B work too (ᵀ becomes ᴴ).
"""

from __future__ import annotations

from .. import dtypes as _dt
from .. import return_types
from ..tensor import Tensor
from ..type_info import finfo
from .linalg import matmul
from .rank_and_condition import matrix_rank, pinv
from .solvers import check_matrices, check_right_hand_side

__all__: list[str] = []  # torch.linalg names only: gradlab.linalg exports them
TENSOR_METHODS: list[str] = []

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None):  # noqa: N803, E501
    """``(solution, residuals, rank, singular_values)``: X minimising ‖A X - B‖ (the
    smallest such X where several do), with A (*, m, n) and B (*, m, k) or (m,).

    rcond: singular values at or below rcond · σ₁ count as zero (default eps · max(m, n)).
    """
    op = "linalg.lstsq"
    check_matrices(op, A, square=False)
    check_right_hand_side(op, B, A)
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError(f"{op}: driver must be one of {', '.join(map(repr, _DRIVERS))} (or "
                           f"None for 'gelsy'), got {driver!r}")
    m, n = A.shape[-2:]
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    rhs = B.unsqueeze(-1) if vector else B
    if rhs.ndim < 2 or rhs.shape[-2] != m:
        raise RuntimeError(f"{op}: A has {m} rows (shape {tuple(A.shape)}) so B needs {m} "
                           f"rows, one per equation, got shape {tuple(B.shape)}")
    rcond = finfo(A.dtype).eps * max(m, n) if rcond is None else float(rcond)
    solution = matmul(pinv(A, rtol=rcond), rhs)
    empty = A.new_zeros((0,))
    rank = matrix_rank(A, rtol=rcond) if driver != "gels" else \
        A.new_zeros((0,), dtype=_dt.int64)
    singular_values = empty
    if driver in ("gelsd", "gelss"):
        from ..linalg import svdvals

        singular_values = svdvals(A.detach())
    residuals = solution.reshape(-1).narrow(0, 0, 0)  # empty, yet in the graph (as PyTorch)
    full_rank = driver == "gels" or bool((rank == n).all())
    if m > n and driver != "gelsy" and full_rank:
        misfit = matmul(A, solution) - rhs
        squares = (misfit * misfit.conj()).real if misfit.dtype.is_complex else misfit ** 2
        residuals = squares.sum(-2)
    return return_types.linalg_lstsq(solution.squeeze(-1) if vector else solution, residuals,
                                     rank, singular_values)
