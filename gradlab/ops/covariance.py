"""cov and corrcoef, trapezoid and cumulative_trapezoid (trapz), renorm: statistics and
integrals composed of differentiable ops.

None of these needs a Function of its own: each is a short formula of ops
that already carry their derivatives (sum, mul, mm, sqrt, cumsum, slicing,
where), as PyTorch writes them too, so their gradients, double backward and
forward mode come from those ops and the graph shows the formula's nodes.

``cov``: rows are variables, columns observations; with weights w
(``fweights`` times ``aweights``)::

    avg = Σ_j w_j x_ij / Σ w        C = (x - avg) · diag(w) · (x - avg)ᵀ / (Σ w - correction·…)

``corrcoef``: C_ij / √(C_ii C_jj), clipped into [-1, 1].

``trapezoid``: the trapezoidal rule along ``dim``, Σ_i (x_{i+1} - x_i)(y_i + y_{i+1}) / 2;
``cumulative_trapezoid`` keeps the running sums.

``renorm``: each slice ``input.select(dim, i)`` whose p-norm is above ``maxnorm``
is scaled by maxnorm / (norm + 1e-7). The gradient flows through the scale too
(a longer vector gets a smaller factor), exactly as PyTorch's RenormBackward.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor
from ._util import wrap_dim
from .activation import _check_tensor
from .arithmetic import broadcast_shapes
from .complex_parts import complex as complex_from_parts
from .complex_parts import conj
from .creation import zeros
from .linalg import mm
from .selection import where
from .statistics import norm

__all__ = ["cov", "corrcoef", "trapezoid", "trapz", "cumulative_trapezoid", "renorm"]
TENSOR_METHODS = ["cov", "corrcoef", "renorm"]  # PyTorch has no Tensor.trapezoid


# --- cov / corrcoef -----------------------------------------------------------------------------

def _check_matrix(op: str, input) -> None:
    _check_tensor(op, input)
    if input.ndim > 2:
        raise RuntimeError(
            f"{op}(): expected input to have two or fewer dimensions but got an input with "
            f"{input.ndim} dimensions (shape {tuple(input.shape)}); rows are variables and "
            f"columns observations. Fix: x.reshape(-1, x.shape[-1]) for one row per variable")
    if input.dtype is _dt.bool:
        raise RuntimeError(f"{op}(): bool dtype is not supported for input. Fix: x.float()")


def _check_weights(name: str, weights, observations: int, integral: bool) -> Tensor:
    if not isinstance(weights, Tensor):
        raise TypeError(f"cov(): argument '{name}' must be Tensor, not "
                        f"{type(weights).__name__}; wrap it with gradlab.tensor(...)")
    if weights.ndim > 1:
        raise RuntimeError(
            f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
            f"{weights.ndim} dimensions (shape {tuple(weights.shape)}): one weight per "
            f"observation (column). Fix: {name}.flatten()")
    if integral and (weights.dtype.is_floating_point or weights.dtype is _dt.bool):
        raise RuntimeError(
            f"cov(): expected fweights to have integral dtype but got fweights with "
            f"{weights.dtype} dtype: fweights count how often each observation occurs. "
            f"Real-valued importance weights go in aweights")
    if not integral and not weights.dtype.is_floating_point:
        raise RuntimeError(
            f"cov(): expected aweights to have floating point dtype but got aweights with "
            f"{weights.dtype} dtype. Fix: aweights.float() (integer repeat counts go in "
            f"fweights)")
    if weights.numel() != observations:
        raise RuntimeError(
            f"cov(): expected {name} to have the same numel as there are observations in the "
            f"input but got {weights.numel()} != {observations}")
    if observations and bool((weights < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return weights


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables (rows) over the observations (columns).

    A 1-D input is one variable. correction=1 divides by N - 1 (Bessel), 0 by
    N; with weights w = fweights·aweights the divisor is Σw - correction·Σ(w·aweights)/Σw
    (Σw - correction without aweights). A divisor <= 0 warns and becomes 0.
    d/dx_i (of Σ_ij G_ij C_ij) = ((G + Gᵀ) · (x - avg) · diag(w)) / divisor, here from
    the composed ops.
    """
    _check_matrix("cov", input)
    if isinstance(correction, bool) or not isinstance(correction, (int, np.integer)):
        raise TypeError(f"cov(): argument 'correction' must be int, not "
                        f"{type(correction).__name__} (1: unbiased, 0: population covariance)")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    observations = x.shape[1]
    weights = None
    if fweights is not None:
        weights = _check_weights("fweights", fweights, observations, integral=True)
    if aweights is not None:
        _check_weights("aweights", aweights, observations, integral=False)
        weights = aweights if weights is None else weights * aweights
    if weights is None:
        total = observations
        average = x.sum(1) / total
    else:
        total = weights.sum()
        if not bool(total != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized; give at "
                               "least one observation a positive weight")
        average = (x * weights).sum(1) / total
    divisor = total - correction
    if weights is not None and correction != 0 and aweights is not None:
        divisor = total - correction * (weights * aweights).sum() / total
    if bool(divisor <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        divisor = 0 if not isinstance(divisor, Tensor) else zeros((), dtype=divisor.dtype,
                                                                  device=divisor.device)
    centered = x - average.unsqueeze(1)
    weighted = centered if weights is None else centered * weights
    with np.errstate(divide="ignore", invalid="ignore"):  # 0/0 is nan here, silently (PyTorch)
        # (conj: a complex variable's covariance with itself is E|x - avg|², real)
        return (mm(centered, conj(weighted.t())) / divisor).squeeze()


def corrcoef(input: Tensor) -> Tensor:
    """Pearson's correlation coefficients: cov(x)_ij / √(cov_ii · cov_jj), clipped to [-1, 1]
    (rounding can push them just outside). One variable gives c / c: 1, or nan when its
    variance is 0 or not finite."""
    _check_matrix("corrcoef", input)
    c = cov(input)
    with np.errstate(divide="ignore", invalid="ignore"):  # a constant variable gives nan
        if c.ndim == 0:
            return c / c
        stddev = c.diagonal().real.sqrt()
        c = c / stddev.reshape(-1, 1)
        c = c / stddev.reshape(1, -1)
    if c.dtype.is_complex:  # each part clipped, as PyTorch
        return complex_from_parts(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# --- trapezoid / cumulative_trapezoid -----------------------------------------------------------

def _ends(t: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """``t[..., :-1]`` and ``t[..., 1:]`` along ``dim`` (views; empty where t has < 2 samples)."""
    before = (slice(None),) * dim
    return t[(*before, slice(0, -1))], t[(*before, slice(1, None))]


def _spacing(op: str, dx, as_float: bool) -> float:
    """dx as a float. trapezoid takes a real number (no bool); trapz's dx is a float
    argument, so a bool passes as 0/1 and a complex is the wrong type."""
    if dx is None:
        return 1.0
    if isinstance(dx, Tensor):
        if dx.ndim != 0:
            raise TypeError(f"{op}: dx must be a number (the spacing of the samples), got a "
                            f"tensor of shape {tuple(dx.shape)}; for uneven spacings pass the "
                            f"sample points as x")
        dx = dx.item()
    if isinstance(dx, complex) or (isinstance(dx, bool) and not as_float):
        error = TypeError if as_float else RuntimeError
        raise error(f"{op}: Currently, we only support dx as a real number, got {dx!r}")
    if not isinstance(dx, (int, float, np.number)):
        raise TypeError(f"{op}: dx must be a real number, got {type(dx).__name__}")
    return float(dx)


def _integrate(op: str, y, x, dx, dim, cumulative: bool, dx_as_float: bool = False):
    _check_tensor(op, y)
    if x is not None and dx is not None:
        raise TypeError(f"{op}: give either x (the sample points) or dx (an even spacing), "
                        f"not both")
    if x is not None and not isinstance(x, Tensor):
        raise TypeError(f"{op}: x must be a Tensor of sample points, got "
                        f"{type(x).__name__}; for evenly spaced samples pass dx={x!r}")
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    if y.ndim == 0:
        raise IndexError(f"{op}: y is a 0-d tensor, with no dim of samples to integrate "
                         f"along. Fix: y.reshape(1)")
    dim = wrap_dim(int(dim), y.ndim, op)
    if not cumulative and y.shape[dim] == 0:  # no samples: integral 0, as NumPy says
        return zeros(tuple(s for d, s in enumerate(y.shape) if d != dim), dtype=y.dtype,
                     device=y.device)
    if y.dtype is _dt.bool or (x is not None and x.dtype is _dt.bool):
        raise RuntimeError(f"{op}: received a bool input for `x` or `y`, but bool is not "
                           f"supported. Fix: .float()")
    if x is None:
        step = _spacing(op, dx, dx_as_float)
        if cumulative:
            left, right = _ends(y, dim)
            return (step / 2.0 * (left + right)).cumsum(dim)
        # Σ_i (y_i + y_{i+1})/2 = Σ y - (y_first + y_last)/2, times the spacing
        return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * step
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(
                f"{op}: There must be one `x` value for each sample point: x has "
                f"{x.shape[0]} values but y (shape {tuple(y.shape)}) has {y.shape[dim]} "
                f"samples along dim {dim}")
        x = x.reshape(tuple(x.shape[0] if d == dim else 1 for d in range(y.ndim)))
    elif x.ndim < y.ndim:
        x = x.reshape((1,) * (y.ndim - x.ndim) + tuple(x.shape))
    x_left, x_right = _ends(x, dim)
    steps = x_right - x_left
    left, right = _ends(y, dim)
    try:
        broadcast_shapes(tuple(steps.shape), tuple(left.shape))
    except RuntimeError:
        raise RuntimeError(
            f"{op}: the spacings of x (shape {tuple(x.shape)}) along dim {dim} have shape "
            f"{tuple(steps.shape)}, which does not broadcast with y's pairs of neighbours "
            f"{tuple(left.shape)}. Fix: give x as 1-D with {y.shape[dim]} points or with "
            f"y's shape {tuple(y.shape)}") from None
    if cumulative:
        return (steps * (left + right) / 2.0).cumsum(dim)
    return (steps * (left + right)).sum(dim) / 2.0


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """∫ y along ``dim`` by the trapezoidal rule, at sample points ``x`` or spacing ``dx``
    (default 1). d/dy_i = (x_{i+1} - x_{i-1}) / 2 (half a step at each end)."""
    return _integrate("trapezoid", y, x, dx, dim, cumulative=False)


def trapz(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """The older name of ``trapezoid`` (its dx must be a float)."""
    return _integrate("trapezoid", y, x, dx, dim, cumulative=False, dx_as_float=True)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None,
                         dim: int = -1) -> Tensor:
    """The running trapezoidal integral along ``dim``: one value fewer than y there
    (out_k = Σ_{i<=k} (x_{i+1} - x_i)(y_i + y_{i+1}) / 2)."""
    return _integrate("cumulative_trapezoid", y, x, dx, dim, cumulative=True)


# --- renorm -------------------------------------------------------------------------------------

def _check_real(name: str, value) -> float:
    if isinstance(value, complex):
        raise RuntimeError(f"renorm: {name} must be real-valued, got {value!r}")
    if isinstance(value, Tensor):
        value = value.item()
    if not isinstance(value, (int, float, np.number)):
        raise TypeError(f"renorm: {name} must be a number, got {type(value).__name__}")
    return float(value)


def renorm(input: Tensor, p, dim: int, maxnorm) -> Tensor:
    """Each slice along ``dim`` whose p-norm is above ``maxnorm`` scaled to norm maxnorm
    (``input.select(dim, i)`` is one slice; the rest are unchanged).

    y = x · s with s = maxnorm / (‖x‖_p + 1e-7) where ‖x‖_p > maxnorm, else 1. The
    gradient includes ds/dx: grad_x = s·g - s/(‖x‖+1e-7) · Σ(x·g) · d‖x‖/dx on scaled
    slices, as PyTorch's. Half floats take the norm in float32.
    """
    _check_tensor("renorm", input)
    p, maxnorm = _check_real("p", p), _check_real("maxnorm", maxnorm)
    if not p > 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (p={p}); p must be > 0 "
                           f"(2 for the Euclidean norm, math.inf for the largest |x|)")
    if not maxnorm >= 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim < 2:
        raise RuntimeError(
            f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions (shape "
            f"{tuple(input.shape)}): it scales the slices along dim. For one vector use "
            f"x * (maxnorm / x.norm(p)).clamp(max=1)")
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"renorm: dim must be an int, got {type(dim).__name__}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"renorm: expected a floating point tensor, got {input.dtype}. "
                           f"Fix: x.float()")
    dim = wrap_dim(int(dim), input.ndim, "renorm")
    others = tuple(d for d in range(input.ndim) if d != dim)
    half = input.dtype.itemsize < 4
    size = norm(input, math.inf if math.isinf(p) else p, others, True,
                dtype=_dt.float32 if half else None)
    scale = where(size > maxnorm, maxnorm / (size + 1e-7), 1.0)
    return input * (scale.to(input.dtype) if half else scale)
