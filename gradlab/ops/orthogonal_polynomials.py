"""The classical orthogonal polynomials of ``torch.special``, each taken as ``(input, n)``.

Every family satisfies a three-term recurrence P_{m+1} = a_m(x)·P_m - b_m·P_{m-1},
which is how each is computed here (one step of the loop is one array operation
over all elements; the loop runs to the largest degree asked for, so a degree
of 10⁶ costs seconds, where PyTorch's C loop takes milliseconds):

    Chebyshev T, U, V, W   P_{m+1} = 2x·P_m - P_{m-1}       P_1 = x, 2x, 2x - 1, 2x + 1
    Hermite H (physics)    H_{m+1} = 2x·H_m - 2m·H_{m-1}    H_1 = 2x
    Hermite He (prob.)     He_{m+1} = x·He_m - m·He_{m-1}   He_1 = x
    Laguerre L             (m+1)·L_{m+1} = (2m + 1 - x)·L_m - m·L_{m-1}     L_1 = 1 - x
    Legendre P             (m+1)·P_{m+1} = (2m + 1)·x·P_m - m·P_{m-1}       P_1 = x

all starting from P_0 = 1. The *shifted* Chebyshev polynomials are the same
four at y = 2x - 1, which maps [0, 1] onto [-1, 1].

Inside (-1, 1) a Chebyshev polynomial is a trigonometric function of
θ = arccos(y), which costs the same for any degree:

    T_n = cos(nθ)                   U_n = sin((n+1)θ)/sin θ
    V_n = cos((n+½)θ)/cos(θ/2)      W_n = sin((n+½)θ)/sin(θ/2)

PyTorch uses these past a small degree (6 for T and the shifted T, U, V;
8 for U, V, W; 4 for the shifted W), and the recurrence otherwise; so does
gradlab, with the recurrence written in PyTorch's operation order, so the
two agree to the last bit or two. Its other conventions, kept here:

* ``n`` is truncated toward zero to an integer (2.7 -> 2, -0.5 -> 0); a
  negative, NaN or infinite ``n`` gives 0, as does |n| >= 2⁶³.
* At y = ±1 (x = 0 and 1 for the shifted ones) the exact values: T_n(1) = 1,
  U_n(1) = n + 1, V_n(-1) = (-1)ⁿ(2n + 1), W_n(1) = 2n + 1 ... ;
  L_n(0) = 1 and P_n(±1) = (±1)ⁿ.
* Hermite H and He of degree above 512 (128 in float32) are NaN: the values
  overflow long before.
* Where the values overflow, inf - inf gives NaN, as in PyTorch.

PyTorch returns uninitialised memory for a NaN ``input`` in Chebyshev,
Laguerre and Legendre of degree >= 2 (it breaks out of its loop before the
first write); gradlab gives NaN. Computed in the operands' dtype (float32
in float32, as PyTorch; float16 and bfloat16 in float32) and cast back.

None of them has a derivative in PyTorch, in x or in n: their outputs never
require grad, and so it is here.
"""

from __future__ import annotations

from numbers import Number

import numpy as np

from ..tensor import Tensor
from ._util import xp_for
from .creation import full
from .modified_bessel import _NoDerivative
from .trigonometry import float_operands

__all__: list[str] = []  # torch.special only: gradlab.special exports them
TENSOR_METHODS: list[str] = []

_INT64_LIMIT = 2.0 ** 63
_CHECK_EVERY = 32  # recurrence steps between checks for "every element is NaN already"


def _degrees(n, xp, dtype):
    """n truncated toward zero, as C++'s static_cast<int64_t>; -1 where that cast is
    undefined (NaN, ±inf, out of range), which PyTorch's x86 build also reads as negative."""
    n = xp.asarray(n, dtype=xp.float64)
    with np.errstate(invalid="ignore"):
        valid = xp.abs(n) < _INT64_LIMIT
    return xp.where(valid, xp.trunc(xp.where(valid, n, 0.0)), -1.0).astype(dtype)


def _recurrence(x, deg, first, step):
    """P_deg(x) from P_0 = 1, P_1 = ``first`` and ``step(m, x, P_{m-1}, P_m) = P_{m+1}``,
    for every element at once; the loop stops at the largest degree, or once every
    element still being stepped is NaN (overflow: inf - inf)."""
    xp = xp_for(x)
    p, q = xp.ones_like(x), first
    stepped = deg >= 2
    top = int(xp.max(deg[stepped])) if bool(xp.any(stepped)) else 1
    with np.errstate(over="ignore", invalid="ignore"):
        for m in range(1, top):
            r = step(m, x, p, q)
            live = m < deg
            p, q = xp.where(live, q, p), xp.where(live, r, q)
            if m % _CHECK_EVERY == 0 and not bool(xp.any(live & ~xp.isnan(q))):
                break
    return xp.where(deg == 0, 1.0, q).astype(x.dtype, copy=False)


def _parity(deg, xp):
    """(-1)ⁿ."""
    return xp.where(xp.fmod(deg, 2) == 0, 1.0, -1.0)


def _cheb_step(m, y, p, q):
    return (y + y) * q - p


def _t_trig(n, theta, xp):
    return xp.cos(n * theta)


def _u_trig(n, theta, xp):
    return xp.sin((n + 1) * theta) / xp.sin(theta)  # sin θ > 0 for every |y| < 1 in float


def _v_trig(n, theta, xp):
    half = theta / 2
    return xp.where(xp.sin(half) != 1, xp.cos((n + 0.5) * theta) / xp.cos(half),
                    _parity(n, xp) * (n + n + 1))  # y a hair above -1: the limit V_n(-1)


def _w_trig(n, theta, xp, shifted):
    half = theta / 2
    # y a hair below 1: the limit W_n(1) = 2n + 1; PyTorch's shifted W returns (-1)ⁿ there
    edge = _parity(n, xp) if shifted else n + n + 1
    return xp.where(xp.cos(half) != 1, xp.sin((n + 0.5) * theta) / xp.sin(half), edge)


_CHEBYSHEV = {  # kind: (P_1(y), P_n(1), P_n(-1)/(-1)ⁿ, trigonometric form)
    "t": (lambda y: y, lambda n: 1.0, lambda n: 1.0, _t_trig),
    "u": (lambda y: y + y, lambda n: n + 1, lambda n: n + 1, _u_trig),
    "v": (lambda y: y + y - 1, lambda n: 1.0, lambda n: n + n + 1, _v_trig),
    "w": (lambda y: y + y + 1, lambda n: n + n + 1, lambda n: 1.0, _w_trig),
}


def _chebyshev(x, n, kind: str, shifted: bool, trig_above: int):
    xp = xp_for(x)
    deg = _degrees(n, xp, x.dtype)
    x, deg = xp.broadcast_arrays(x, deg)
    y = x + x - 1 if shifted else x
    first, at_one, at_minus_one, trig = _CHEBYSHEV[kind]
    inside = xp.abs(y) < 1
    use_trig = inside & (deg > trig_above)
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = xp.arccos(xp.where(use_trig, y, 0.0))
        args = (deg, theta, xp) + ((shifted,) if kind == "w" else ())
        trig_values = trig(*args)
    out = _recurrence(y, xp.where(use_trig | (xp.abs(y) == 1), 0.0, deg), first(y), _cheb_step)
    out = xp.where(use_trig, trig_values, out)
    out = xp.where(y == 1, at_one(deg), xp.where(y == -1, _parity(deg, xp) * at_minus_one(deg),
                                                 out))
    return xp.where(deg < 0, 0.0, out).astype(x.dtype, copy=False)


def _hermite(x, n, physicists: bool):
    xp = xp_for(x)
    deg = _degrees(n, xp, x.dtype)
    x, deg = xp.broadcast_arrays(x, deg)
    limit = 128 if x.dtype == xp.float32 else 512  # PyTorch's: overflow comes sooner anyway
    stepped = xp.where(deg > limit, 0.0, deg)
    if physicists:
        out = _recurrence(x, stepped, x + x, lambda m, x, p, q: (x + x) * q - (2 * m) * p)
    else:
        out = _recurrence(x, stepped, x, lambda m, x, p, q: x * q - m * p)
    out = xp.where(deg > limit, xp.nan, out)
    return xp.where(deg < 0, 0.0, out).astype(x.dtype, copy=False)


def _laguerre(x, n):
    xp = xp_for(x)
    deg = _degrees(n, xp, x.dtype)
    x, deg = xp.broadcast_arrays(x, deg)
    out = _recurrence(x, xp.where(x == 0, 0.0, deg), 1 - x,
                      lambda m, x, p, q: (((m + m) + (1 - x)) * q - m * p) / (m + 1))
    return xp.where(deg < 0, 0.0, out).astype(x.dtype, copy=False)


def _legendre(x, n):
    xp = xp_for(x)
    deg = _degrees(n, xp, x.dtype)
    x, deg = xp.broadcast_arrays(x, deg)
    out = _recurrence(x, xp.where(xp.abs(x) == 1, 0.0, deg), x,
                      lambda m, x, p, q: ((m + m + 1) * x * q - m * p) / (m + 1))
    out = xp.where(xp.abs(x) == 1, xp.where(x > 0, 1.0, _parity(deg, xp)), out)
    return xp.where(deg < 0, 0.0, out).astype(x.dtype, copy=False)


class _Polynomial(_NoDerivative):
    """P_n(x) for a raw x and n (an array or a number), with no derivative."""

    @classmethod
    def forward(cls, ctx, x, n):
        xp = xp_for(x)
        compute = x.dtype if x.dtype in (xp.float32, xp.float64) else xp.float32
        return cls.compute(x.astype(compute, copy=False), n).astype(x.dtype, copy=False)


def _polynomial_class(name: str, compute):
    return type(name.title().replace("_", ""), (_Polynomial,), {"name": f"special_{name}",
                                       "compute": staticmethod(compute)})


def _chebyshev_class(kind: str, shifted: bool, trig_above: int):
    name = f"{'shifted_' if shifted else ''}chebyshev_polynomial_{kind}"
    return _polynomial_class(
        name, lambda x, n: _chebyshev(x, n, kind, shifted, trig_above))


_OPS = {cls.name[len("special_"):]: cls for cls in (
    _chebyshev_class("t", False, 6), _chebyshev_class("u", False, 8),
    _chebyshev_class("v", False, 8), _chebyshev_class("w", False, 8),
    _chebyshev_class("t", True, 6), _chebyshev_class("u", True, 6),
    _chebyshev_class("v", True, 6), _chebyshev_class("w", True, 4),
    _polynomial_class("hermite_polynomial_h", lambda x, n: _hermite(x, n, True)),
    _polynomial_class("hermite_polynomial_he", lambda x, n: _hermite(x, n, False)),
    _polynomial_class("laguerre_polynomial_l", _laguerre),
    _polynomial_class("legendre_polynomial_p", _legendre))}


def _apply(op: str, input, n) -> Tensor:
    """Check and promote (input, n) as PyTorch does, then run the op."""
    for arg, value in (("input", input), ("n", n)):
        if not isinstance(value, (Tensor, Number)) or isinstance(value, complex):
            raise TypeError(f"special.{op}(): argument '{arg}' must be a Tensor or a real "
                            f"number, not {type(value).__name__}")
    if not isinstance(input, Tensor) and not isinstance(n, Tensor):
        raise TypeError(f"special.{op}(): expected at least one Tensor, got two numbers "
                        f"({input!r}, {n!r}). Fix: special.{op}(gradlab.tensor({input!r}), "
                        f"{n!r})")
    x, n = float_operands(input, n)
    if not isinstance(x, Tensor):  # a number beside a tensor n: a 0-d tensor of the dtype
        x = full((), x, dtype=n.dtype, device=n.device)
    return _OPS[op].apply(x, n.to(x.dtype) if isinstance(n, Tensor) else n)


def chebyshev_polynomial_t(input, n) -> Tensor:
    """Chebyshev polynomial of the first kind T_n(x): T_n(cos θ) = cos(nθ)."""
    return _apply("chebyshev_polynomial_t", input, n)


def chebyshev_polynomial_u(input, n) -> Tensor:
    """Chebyshev polynomial of the second kind U_n(x): U_n(cos θ) = sin((n+1)θ)/sin θ."""
    return _apply("chebyshev_polynomial_u", input, n)


def chebyshev_polynomial_v(input, n) -> Tensor:
    """Chebyshev polynomial of the third kind V_n(x): V_n(cos θ) = cos((n+½)θ)/cos(θ/2)."""
    return _apply("chebyshev_polynomial_v", input, n)


def chebyshev_polynomial_w(input, n) -> Tensor:
    """Chebyshev polynomial of the fourth kind W_n(x): W_n(cos θ) = sin((n+½)θ)/sin(θ/2)."""
    return _apply("chebyshev_polynomial_w", input, n)


def shifted_chebyshev_polynomial_t(input, n) -> Tensor:
    """T*_n(x) = T_n(2x - 1): the first kind moved to [0, 1]."""
    return _apply("shifted_chebyshev_polynomial_t", input, n)


def shifted_chebyshev_polynomial_u(input, n) -> Tensor:
    """U*_n(x) = U_n(2x - 1)."""
    return _apply("shifted_chebyshev_polynomial_u", input, n)


def shifted_chebyshev_polynomial_v(input, n) -> Tensor:
    """V*_n(x) = V_n(2x - 1)."""
    return _apply("shifted_chebyshev_polynomial_v", input, n)


def shifted_chebyshev_polynomial_w(input, n) -> Tensor:
    """W*_n(x) = W_n(2x - 1)."""
    return _apply("shifted_chebyshev_polynomial_w", input, n)


def hermite_polynomial_h(input, n) -> Tensor:
    """The physicists' Hermite polynomial H_n(x), orthogonal for the weight e^(-x²)."""
    return _apply("hermite_polynomial_h", input, n)


def hermite_polynomial_he(input, n) -> Tensor:
    """The probabilists' Hermite polynomial He_n(x) = 2^(-n/2) H_n(x/√2), for the weight
    e^(-x²/2)."""
    return _apply("hermite_polynomial_he", input, n)


def laguerre_polynomial_l(input, n) -> Tensor:
    """The Laguerre polynomial L_n(x), orthogonal on [0, ∞) for the weight e^(-x)."""
    return _apply("laguerre_polynomial_l", input, n)


def legendre_polynomial_p(input, n) -> Tensor:
    """The Legendre polynomial P_n(x), orthogonal on [-1, 1] for the weight 1."""
    return _apply("legendre_polynomial_p", input, n)
