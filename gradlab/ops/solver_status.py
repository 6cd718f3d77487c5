"""``torch.linalg``'s ``_ex`` solvers: inv_ex, solve_ex, cholesky_ex.

``linalg.inv(A)`` raises ``LinAlgError`` when A is singular. In a loop over
many matrices (or on a GPU, where checking means waiting for the device) one
bad matrix shouldn't stop the rest, so each ``_ex`` variant returns its
result together with ``info``, LAPACK's status per matrix (int32):

    inv_ex, solve_ex   0, or 1 + the first zero on the diagonal of U in A = P L U
    cholesky_ex        0, or k: the k×k leading block of A is not positive-definite

Where info > 0 the result has no meaning (here: NaN). ``check_errors=True``
raises instead. The results are the ordinary differentiable ops (``inv``,
``solve``, ``cholesky``) run on the good matrices, with the bad ones swapped
for the identity first so that nothing raises; those get NaN values and a
zero gradient.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from .. import return_types
from ..tensor import Tensor
from ._util import xp_for
from .creation import _new
from .decompositions import cholesky_of
from .legacy_linalg import lu as _packed_lu
from .selection import where
from .solvers import LinAlgError, check_matrices, eye_like, inv_of, solve_of

__all__: list[str] = []  # torch.linalg names only: gradlab.linalg exports them
TENSOR_METHODS: list[str] = []


def lu_info(A: Tensor) -> Tensor:  # noqa: N803 - PyTorch's name
    """LAPACK's getrf info per matrix (int32): 1 + the first zero pivot of A's LU, else 0."""
    return _packed_lu(A.detach(), True, get_infos=True)[2]


def _without_bad(A: Tensor, bad: Tensor) -> Tensor:  # noqa: N803
    """A with the matrices flagged in ``bad`` (batch shape) replaced by the identity."""
    return where(bad.unsqueeze(-1).unsqueeze(-1), eye_like(A, A.shape[-1]), A)


def inv_ex(A: Tensor, *, check_errors: bool = False):  # noqa: N803
    """``(inverse, info)``: A⁻¹ per matrix and LAPACK's info; singular matrices (info > 0)
    get NaN instead of an error. d/dA as ``linalg.inv``: -A⁻ᵀ G A⁻ᵀ."""
    op = "linalg.inv_ex"
    check_matrices(op, A)
    info = lu_info(A)
    bad = info > 0
    if check_errors or not bool(bad.any()):
        return return_types.linalg_inv_ex(inv_of(op, A), info)
    inverse = inv_of(op, _without_bad(A, bad))
    return return_types.linalg_inv_ex(where(bad.unsqueeze(-1).unsqueeze(-1), float("nan"),
                                            inverse), info)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False):  # noqa: N803
    """``(result, info)``: X with A X = B (left=False: X A = B) and LAPACK's info of A;
    where A is singular (info > 0) X is NaN instead of an error."""
    op = "linalg.solve_ex"
    check_matrices(op, A)
    info = lu_info(A)
    bad = info > 0
    if check_errors or not bool(bad.any()):
        return return_types.linalg_solve_ex(solve_of(op, A, B, left), info)
    result = solve_of(op, _without_bad(A, bad), B, left)
    # B is a (batch of) vector(s) by linalg.solve's rule: then X has one dim less
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    mask = bad.unsqueeze(-1) if vector else bad.unsqueeze(-1).unsqueeze(-1)
    return return_types.linalg_solve_ex(where(mask, float("nan"), result), info)


def _cholesky_info(a) -> np.ndarray:
    """For each matrix (raw arrays), the order k of the smallest leading block that is not
    positive-definite, or 0. Block k fails iff some block j <= k does, so k is found by
    bisection, with one Cholesky attempt per step."""
    xp = xp_for(a)
    n = a.shape[-1]
    flat = a.reshape((-1, n, n))

    def factors(block) -> bool:
        try:
            return bool(xp.isfinite(xp.linalg.cholesky(block)).all())  # CuPy: NaN, no error
        except np.linalg.LinAlgError:
            return False

    info = np.zeros(flat.shape[0], dtype=np.int32)
    for i in range(flat.shape[0]):
        if factors(flat[i]):
            continue
        low, high = 0, n  # block `low` factors (0: nothing), block `high` fails
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (mid, high) if factors(flat[i, :mid, :mid]) else (low, mid)
        info[i] = high
    return info.reshape(a.shape[:-2])


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False):  # noqa: N803
    """``(L, info)``: ``linalg.cholesky``'s factor and info = the order of the first leading
    block that is not positive-definite (0: all fine); such matrices get a NaN factor
    instead of an error. Reads A's lower triangle, as ``linalg.cholesky``."""
    op = "linalg.cholesky_ex"
    check_matrices(op, A)
    try:
        factor = cholesky_of(op, A, upper)
    except LinAlgError:
        if check_errors:
            raise
        info = _new(xp_for(A._data).asarray(_cholesky_info(A.detach()._data)), A.device)
        bad = info > 0
        factor = cholesky_of(op, _without_bad(A, bad), upper)
        factor = where(bad.unsqueeze(-1).unsqueeze(-1), float("nan"), factor)
        return return_types.linalg_cholesky_ex(factor, info)
    info = A.new_zeros(tuple(A.shape[:-2]), dtype=_dt.int32)
    return return_types.linalg_cholesky_ex(factor, info)
