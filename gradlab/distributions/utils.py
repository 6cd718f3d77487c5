"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits.

A discrete distribution can be given its probabilities or their logits; the
other form is computed on first use (``lazy_property``), so a policy built
from logits never pays for ``softmax`` unless it asks for ``probs``.

    binary:       logit = log p - log(1 - p)      p = sigmoid(logit)
    categorical:  logit = log p (up to a shift)   p = softmax(logit)

``clamp_probs`` keeps p in [eps, 1 - eps] before a log, so a probability of
exactly 0 or 1 gives a large finite logit instead of ±inf.

``tril_matrix_to_vec`` / ``vec_to_tril_matrix`` read the lower triangle of a
matrix into a vector row by row and back (the free coordinates of a Cholesky
factor, as CorrCholeskyTransform uses them); both are plain indexing, so
gradients pass through.
"""

from __future__ import annotations

from numbers import Number

from .. import dtypes as _dt
from ..autograd.grad_mode import enable_grad
from ..ops.creation import as_tensor, tensor
from ..ops.padding import pad
from ..ops.repetition import broadcast_tensors
from ..tensor import Tensor
from ..type_info import finfo

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix"]


def broadcast_all(*values) -> tuple[Tensor, ...]:
    """Numbers and tensors -> tensors of one broadcast shape. Numbers take the dtype
    and device of the first tensor (the default dtype if there is none)."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        kinds = ", ".join(type(v).__name__ for v in values)
        raise ValueError(f"Input arguments must all be instances of numbers.Number or "
                         f"gradlab.Tensor, got ({kinds})")
    ref = next((v for v in values if isinstance(v, Tensor)), None)
    if ref is None:
        dtype, device = _dt.get_default_dtype(), None
    else:
        dtype, device = ref.dtype, ref.device
        if not dtype.is_floating_point:  # int parameters with float numbers: compute in floats
            dtype = _dt.get_default_dtype()
    tensors = [v if isinstance(v, Tensor) else as_tensor(float(v), dtype=dtype, device=device)
               for v in values]
    return tuple(broadcast_tensors(*tensors))


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped to [eps, 1 - eps] so their logs stay finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log p (categorical) or log p - log(1 - p) (binary), from clamped probabilities."""
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid (binary) or softmax over the last dim (categorical)."""
    return logits.sigmoid() if is_binary else logits.softmax(dim=-1)


class lazy_property:  # noqa: N801 - PyTorch's name
    """A property computed on first use, then stored on the instance (one computation).

    It is computed with gradients on, so ``Categorical(logits=w).probs`` stays
    differentiable even when first read inside ``no_grad`` (e.g. in ``sample``).
    """

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


def _tril_positions(n: int, diag: int) -> list:
    """(row, col) of the entries on or below the ``diag``-th diagonal, in row order."""
    return [(r, c) for r in range(n) for c in range(n) if c <= r + diag]


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries of ``mat`` (..., n, n) on or below its ``diag``-th diagonal, read row by
    row into a vector (..., N): ``diag=-1`` gives the n(n-1)/2 strictly-lower entries."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    positions = _tril_positions(n, diag)
    rows = tensor([r for r, _ in positions], device=mat.device)
    cols = tensor([c for _, c in positions], device=mat.device)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of ``tril_matrix_to_vec``: a vector (..., N) laid row by row into the
    entries on or below the ``diag``-th diagonal of an n x n matrix, zeros elsewhere.
    n solves n² + (1 + 2 diag) n - |diag| (diag + 1) = 2N."""
    length = vec.shape[-1]
    b = 1 + 2 * diag
    n_real = (-b + (b * b + 8 * length + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    n = round(n_real)
    if abs(n - n_real) > 1e-9 or len(_tril_positions(n, diag)) != length:
        raise ValueError(f"The size of last dimension is {length} which cannot be expressed as "
                         f"the lower triangular part of a square D x D matrix.")
    where_from = [length] * (n * n)  # index ``length`` is the zero padded on below
    for k, (r, c) in enumerate(_tril_positions(n, diag)):
        where_from[r * n + c] = k
    gathered = pad(vec, [0, 1])[..., tensor(where_from, device=vec.device)]
    return gathered.reshape(tuple(vec.shape[:-1]) + (n, n))
