"""Ready-made parametrizations (``torch.nn.utils.parametrizations``).

- ``orthogonal``: the weight is always an orthogonal matrix (QᵀQ = I),
  the image of an unconstrained matrix under matrix_exp, the Cayley map or
  a product of Householder reflections;
- ``weight_norm``: w = g · v / ‖v‖, learned as g (``original0``) and v
  (``original1``);
- ``spectral_norm``: w / σ(w), σ estimated by power iteration with
  buffers ``_u`` and ``_v``.

Each is a small Module registered with
:func:`gradlab.nn.utils.parametrize.register_parametrization`; its forward
is made of differentiable gradlab ops, so backward needs nothing new.
"""

from __future__ import annotations

from enum import Enum, auto

from ... import linalg
from ...autograd.grad_mode import no_grad
from ...ops.creation import eye, zeros_like
from ...ops.joining import cat
from ...ops.matrix_functions import matrix_exp
from ...ops.normalization import normalize
from ...ops.sampling import randn
from ...tensor import Tensor
from ...type_info import finfo
from ..modules.module import Module
from . import parametrize
from .spectral_norm import _is_conv_transpose, reshape_to_matrix
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# --- orthogonal ---------------------------------------------------------------------------
class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _mH(x: Tensor) -> Tensor:
    return x.mT.conj() if x.is_complex() else x.mT


def _geqrf(A: Tensor) -> tuple[Tensor, Tensor]:
    """LAPACK's geqrf without grad: A = QR, R on and above the diagonal, the Householder
    vectors below it, and their tau (beta = -sign(alpha)·‖x‖, as LAPACK picks it)."""
    with no_grad():
        A = A.clone()
        n, k = A.shape[-2], A.shape[-1]
        taus = []
        for j in range(min(n, k)):
            alpha = A[..., j, j]
            below = A[..., j + 1:, j]
            xnorm = linalg.vector_norm(below, dim=-1)
            norm = (alpha * alpha + xnorm * xnorm).sqrt()
            sign = (alpha >= 0).to(A.dtype) * 2 - 1
            beta = -sign * norm
            trivial = xnorm == 0  # nothing to zero below: H = I
            safe_beta = beta.masked_fill(trivial, 1.0)
            tau = ((beta - alpha) / safe_beta).masked_fill(trivial, 0.0)
            scale = (1.0 / (alpha - beta).masked_fill(trivial, 1.0)).unsqueeze(-1)
            v = cat([A.new_ones(*alpha.shape, 1), below * scale], dim=-1)
            rest = A[..., j:, j + 1:]
            update = tau.unsqueeze(-1).unsqueeze(-1) * (v.unsqueeze(-1) @
                                                         (v.unsqueeze(-2) @ rest))
            A[..., j:, j + 1:] = rest - update
            A[..., j + 1:, j] = v[..., 1:]
            A[..., j, j] = (beta * ~trivial + alpha * trivial)
            taus.append(tau)
        return A, (cat([t.unsqueeze(-1) for t in taus], dim=-1) if taus else
                   A.new_zeros(*A.shape[:-2], 0))


def _is_orthogonal(Q: Tensor) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    identity = eye(k, dtype=Q.dtype, device=Q.device)
    return bool(((_mH(Q) @ Q - identity).abs() <= 10.0 * n * finfo(Q.dtype).eps).all())


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of A = QR with diag(R) >= 0 (the one QR factorization that is unique)."""
    Q, R = linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    base: Tensor

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        """An orthogonal matrix from an unconstrained one (tall: n >= k after a transpose)."""
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()  # n·k - k(k-1)/2 free numbers
            if n != k:  # embed in a square matrix
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - _mH(X)  # skew-symmetric: exp(A) and the Cayley map of A are orthogonal
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:  # Cayley: (I - A/2)⁻¹ (I + A/2)
                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(Id.add(A, alpha=-0.5), Id.add(A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg.householder_product(A, tau)
            # the diagonal of X (±1) picks the signs; not learned, so not differentiated
            Q = Q * X.diagonal(dim1=-2, dim2=-1).detach().int().to(Q.dtype).unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        """An X with forward(X) == Q: with a trivialization, store Q as ``base`` and return the
        X that maps to the identity."""
        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False.")
                A, tau = _geqrf(Q)  # the Householder vectors of Q, signs in the diagonal
                # diag(R) > 0 makes QR unique; where LAPACK used no reflection (tau = 0) the
                # sign flips, since householder() reads the diagonal as the column's sign
                A.diagonal(dim1=-2, dim2=-1).sign_()
                A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
                return A.mT if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:  # complete Q to an n x n orthogonal matrix with random columns
                N = randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(cat([Q, N], dim=-1))
            self.base = Q
            neg_Id = zeros_like(Q_init)  # householder(0 with -1 diagonal) is the identity
            neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_Id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Keep ``module.<name>`` orthogonal (or with orthonormal rows/columns if not square).

    ``orthogonal_map``: ``"matrix_exp"`` (default for square), ``"cayley"``
    or ``"householder"`` (default otherwise). ``use_trivialization=True``
    keeps a ``base`` orthogonal matrix and learns a correction on top of it,
    so assigning ``module.weight = Q`` works for every map.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# --- weight norm --------------------------------------------------------------------------
class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """w = g · v / ‖v‖ with g (``parametrizations.weight.original0``) and v (``original1``)
    learned separately; ``dim`` keeps one g per slice (``None``: one for all)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def load_old_keys(state_dict, prefix, *_):
        """A checkpoint of the hook form (``weight_g``/``weight_v``) loads into this one."""
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(load_old_keys)
    return module


# --- spectral norm ------------------------------------------------------------------------
class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = reshape_to_matrix(weight, self.dim)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)  # start from a good estimate

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        """u ← Wv/‖Wv‖, v ← Wᵀu/‖Wᵀu‖, in place: u and v tend to the top singular vectors."""
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(normalize(weight_mat.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(_mH(weight_mat).mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        """W / σ with σ = uᴴWv (u, v constants): dσ/dW = u vᴴ."""
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = reshape_to_matrix(weight, self.dim)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()  # the buffers change in place next step; the graph keeps copies
        v = self._v.clone()
        sigma = u.vdot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm σ, estimated by power iteration (buffers
    ``parametrizations.weight.0._u`` and ``_v``, refined in training mode only)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
