"""``gradlab.special``: PyTorch's ``torch.special`` namespace.

Most names are gradlab's own ops under the names ``torch.special`` gives them
(``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is ``digamma``,
``multigammaln`` is ``mvlgamma``); ``entr``, ``erfcx``, ``log_ndtr``, the scaled
and K Bessel functions, ``gammainc``/``gammaincc`` and ``zeta`` are ops of
``ops/special_functions.py``, ``modified_bessel.py``, ``incomplete_gamma.py`` and
``hurwitz_zeta.py``; the J/Y Bessel functions, ``spherical_bessel_j0`` and
``airy_ai`` of ``bessel_jy.py``; the Chebyshev, Hermite, Laguerre and Legendre
polynomials ``(input, n)`` of ``orthogonal_polynomials.py``.
The rest are short compositions of differentiable ops, so their gradients,
double backward and forward mode come with them:

    ndtr(x)       = Φ(x) = ½ erfc(-x/√2)          the standard normal CDF
    ndtri(p)      = Φ⁻¹(p) = √2 · erfinv(2p - 1)  its inverse (the probit)
    xlog1py(x, y) = x · ln(1 + y)                  0 where x = 0 and y <= -1
"""

from __future__ import annotations

import math

from .ops import (
    digamma,
    erf,
    erfc,
    erfinv,
    exp2,
    expm1,
    lgamma,
    log1p,
    log_softmax,
    logit,
    logsumexp,
    mvlgamma,
    polygamma,
    round,
    sigmoid,
    sinc,
    softmax,
    where,
    xlogy,
)
from .ops.bessel import i0, i1
from .ops.bessel_jy import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    spherical_bessel_j0,
)
from .ops.hurwitz_zeta import zeta
from .ops.incomplete_gamma import gammainc, gammaincc
from .ops.modified_bessel import (
    i0e,
    i1e,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
)
from .ops.orthogonal_polynomials import (
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    hermite_polynomial_h,
    hermite_polynomial_he,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)
from .ops.special_functions import entr, erfcx, log_ndtr
from .tensor import Tensor

__all__ = ["digamma", "erf", "erfc", "erfinv", "exp2", "expm1", "expit", "gammaln", "i0", "i1",
           "log1p", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "sinc", "softmax", "xlogy", "xlog1py",
           "entr", "erfcx", "log_ndtr", "i0e", "i1e", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "gammainc", "gammaincc", "zeta",
           "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "spherical_bessel_j0", "airy_ai",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p"]

expit = sigmoid  # the logistic function's name in statistics: 1 / (1 + e^-x)
gammaln = lgamma  # SciPy's names for the gamma family
psi = digamma
multigammaln = mvlgamma

_SQRT_HALF = math.sqrt(0.5)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF Φ(x) = ½ erfc(-x/√2) (erfc keeps the far left tail exact)."""
    return erfc(input * -_SQRT_HALF) * 0.5


def ndtri(input: Tensor) -> Tensor:
    """The inverse of ``ndtr`` on (0, 1): the x with Φ(x) = p; ±inf at 0 and 1."""
    return erfinv(input * 2 - 1) * math.sqrt(2.0)


def xlog1py(input: Tensor, other) -> Tensor:
    """``input · ln(1 + other)``, with ln(1 + y) from log1p so that a tiny ``other`` keeps
    its digits. Where ``input`` is 0 and ln(1 + other) is not finite (other <= -1), the
    result and both gradients are 0, as PyTorch defines them (0 · ln 0 = 0).

    d/dx = ln(1 + y), d/dy = x / (1 + y). The log is taken of 0 at those points, so the
    branch ``where`` drops stays finite: its zero gradient times an infinite slope
    would make a nan. (PyTorch's d/dy at x = 0, y = -1 is 0/0 = nan; here it is 0.)
    """
    undefined = (input == 0) & (other <= -1)
    safe = where(undefined, 0.0, other)
    return where(undefined, 0.0, input * log1p(safe))
