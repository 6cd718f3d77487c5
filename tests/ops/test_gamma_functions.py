"""The gamma family: lgamma, digamma, polygamma, mvlgamma. Accuracy against math.lgamma
(and mpmath near lgamma's zeros, where math.lgamma itself is off), PyTorch's values and
gradients, derivatives of every order, poles and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
from gradlab import special
from gradlab.autograd import forward_ad as fwAD
from gradlab.autograd import gradcheck, gradgradcheck
from gradlab.ops.gamma_functions import _lgamma_array, _polygamma_array
from tests.oracle import SCALAR, OpCase, needs_torch, standard_op_tests, torch

M = ((3, 4),)
UN = (SCALAR, ((0, 3),))
POSITIVE = (0.1, 8.0)
NEGATIVE = (-3.9, -3.1)  # between two poles: non-integer negatives


def _np_lgamma(np, x):
    return np.vectorize(math.lgamma, otypes=[float])(x)


CASES = [
    OpCase("lgamma", lambda lib, x: lib.lgamma(x), M, domain=POSITIVE, numpy=_np_lgamma,
           variants=UN),
    OpCase("lgamma", lambda lib, x: lib.lgamma(x), M, domain=NEGATIVE, numpy=_np_lgamma,
           id="lgamma_negative"),
    OpCase("digamma", lambda lib, x: lib.digamma(x), M, domain=POSITIVE, variants=UN),
    OpCase("digamma", lambda lib, x: lib.digamma(x), M, domain=NEGATIVE, id="digamma_negative"),
    OpCase("polygamma1", lambda lib, x: lib.polygamma(1, x), M, domain=POSITIVE, variants=UN),
    OpCase("polygamma2", lambda lib, x: lib.polygamma(2, x), M, domain=(0.5, 6.0)),
    OpCase("polygamma3", lambda lib, x: x.polygamma(3), M, domain=(0.5, 6.0), rtol=1e-3),
    OpCase("polygamma1", lambda lib, x: lib.polygamma(1, x), M, domain=(-2.9, -2.1),
           id="polygamma1_negative"),
    OpCase("mvlgamma", lambda lib, x: lib.mvlgamma(x, 3), M, domain=(1.2, 6.0)),
    OpCase("mvlgamma_method", lambda lib, x: x.mvlgamma(p=2), M, domain=(0.7, 6.0)),
    OpCase("special_gammaln", lambda lib, x: lib.special.gammaln(x), M, domain=POSITIVE),
    OpCase("special_psi", lambda lib, x: lib.special.psi(x), M, domain=POSITIVE),
]

globals().update(standard_op_tests(CASES))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_forward_mode(case):
    from tests.oracle import check_jvp

    check_jvp(case, "cpu")


def test_lgamma_matches_math_lgamma_to_1e_13():
    x = np.geomspace(1e-3, 1e3, 20001)
    # math.lgamma itself loses relative digits near the zeros at 1 and 2 (7.7e-10 at
    # 2.000001): those are checked against mpmath below
    x = x[(np.abs(x - 1) > 0.05) & (np.abs(x - 2) > 0.05)]
    want = np.array([math.lgamma(v) for v in x])
    np.testing.assert_allclose(_lgamma_array(x), want, rtol=1e-13, atol=0)
    neg = -np.geomspace(1e-3, 30, 5001)
    neg = neg[np.abs(neg - np.round(neg)) > 1e-3]
    want = np.array([math.lgamma(v) for v in neg])
    np.testing.assert_allclose(_lgamma_array(neg), want, rtol=1e-11, atol=1e-13)


def test_lgamma_keeps_its_relative_digits_near_its_zeros():
    mpmath = pytest.importorskip("mpmath")
    x = np.concatenate([1 + np.geomspace(1e-9, 0.3, 200), 1 - np.geomspace(1e-9, 0.3, 200),
                        2 + np.geomspace(1e-9, 0.6, 200), 2 - np.geomspace(1e-9, 0.6, 200)])
    with mpmath.workdps(30):
        want = np.array([float(mpmath.loggamma(v)) for v in x])
    np.testing.assert_allclose(_lgamma_array(x), want, rtol=1e-13, atol=0)


def test_polygamma_matches_mpmath():
    mpmath = pytest.importorskip("mpmath")
    x = np.concatenate([np.linspace(0.01, 40, 301), np.linspace(-7.9, 0.45, 301)])
    x = x[np.abs(x - np.round(x)) > 1e-2]
    for n in range(5):
        with mpmath.workdps(30):
            want = np.array([float(mpmath.polygamma(n, v)) for v in x])
        # digamma's own zeros cost relative digits: an absolute floor for them
        np.testing.assert_allclose(_polygamma_array(n, x), want, rtol=1e-12,
                                   atol=1e-13 if n == 0 else 0, err_msg=f"n = {n}")


def test_float32_is_computed_in_float64_and_cast_back():
    x = gradlab.tensor([0.3, 1.5, 7.0], dtype=gradlab.float32)
    for f in (gradlab.lgamma, gradlab.digamma, lambda t: gradlab.polygamma(2, t)):
        out = f(x)
        assert out.dtype == gradlab.float32
        np.testing.assert_allclose(out.numpy(), f(x.double()).numpy().astype(np.float32))


def test_integer_input_gives_the_default_float_dtype():
    x = gradlab.tensor([1, 2, 3])
    assert gradlab.lgamma(x).dtype == gradlab.float32
    assert gradlab.polygamma(1, x).dtype == gradlab.float32
    np.testing.assert_allclose(gradlab.lgamma(x).numpy(), [0.0, 0.0, math.log(2)], atol=1e-7)


POLES = [0.0, -0.0, -1.0, -2.0, -7.0, 1.0, 2.0, -0.5, math.inf, -math.inf, math.nan]


@needs_torch
@pytest.mark.parametrize("name", ["lgamma", "digamma", "polygamma1", "polygamma2"])
def test_poles_and_non_finite_values_match_torch(name):
    def run(lib, x):
        if name.startswith("polygamma"):
            return lib.polygamma(int(name[-1]), x)
        return getattr(lib, name)(x)

    values = POLES
    if name.startswith("polygamma"):  # at the negative integers and ±inf torch's own
        values = [0.0, -0.0, 1.0, 2.0, -0.5, math.nan]  # values are not a formula's
    got = run(gradlab, gradlab.tensor(values, dtype=gradlab.float64)).numpy()
    want = run(torch, torch.tensor(values, dtype=torch.float64)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    # torch's trigamma is good to ~5e-10 only (ours is checked against mpmath above)
    np.testing.assert_allclose(got, want, rtol=1e-9 if name == "polygamma1" else 1e-14)


def test_pole_signs():
    x = gradlab.tensor([0.0, -0.0, -3.0], dtype=gradlab.float64)
    assert gradlab.lgamma(x).tolist() == [math.inf] * 3
    d = gradlab.digamma(x).tolist()
    assert d[:2] == [-math.inf, math.inf] and math.isnan(d[2])
    assert gradlab.polygamma(1, x).tolist() == [math.inf] * 3
    assert gradlab.polygamma(2, x).tolist() == [-math.inf] * 3


def test_derivatives_of_any_order_chain_through_the_family():
    x = gradlab.tensor([0.7, 2.5, -1.3], dtype=gradlab.float64, requires_grad=True)
    y = gradlab.lgamma(x).sum()
    (g1,) = gradlab.autograd.grad(y, x, create_graph=True)
    (g2,) = gradlab.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = gradlab.autograd.grad(g2.sum(), x)
    xs = x.detach().numpy()
    np.testing.assert_allclose(g1.detach().numpy(), _polygamma_array(0, xs), rtol=1e-14)
    np.testing.assert_allclose(g2.detach().numpy(), _polygamma_array(1, xs), rtol=1e-14)
    np.testing.assert_allclose(g3.numpy(), _polygamma_array(2, xs), rtol=1e-14)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_polygamma_gradcheck_and_gradgradcheck(n):
    x = gradlab.tensor([0.4, 1.7, 5.3, -0.6], dtype=gradlab.float64, requires_grad=True)
    assert gradcheck(lambda t: gradlab.polygamma(n, t), (x,))
    assert gradgradcheck(lambda t: gradlab.polygamma(n, t), (x,))


def test_forward_mode_tangent_is_the_next_polygamma():
    x, t = [0.3, 2.0, -2.5], [1.0, -2.0, 0.5]
    with fwAD.dual_level():
        dual = fwAD.make_dual(gradlab.tensor(x, dtype=gradlab.float64),
                              gradlab.tensor(t, dtype=gradlab.float64))
        tangent = fwAD.unpack_dual(gradlab.polygamma(2, dual)).tangent
    np.testing.assert_allclose(tangent.numpy(), _polygamma_array(3, np.array(x)) * t,
                               rtol=1e-14)


def test_mvlgamma_is_the_sum_of_lgammas():
    x = gradlab.tensor([2.0, 3.5], dtype=gradlab.float64)
    want = 3 * 2 / 4 * math.log(math.pi) + sum(
        np.array([math.lgamma(v - j / 2) for v in (2.0, 3.5)]) for j in range(3))
    np.testing.assert_allclose(gradlab.mvlgamma(x, p=3).numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(gradlab.mvlgamma(x, 1).numpy(), gradlab.lgamma(x).numpy())


def test_in_place_forms():
    x = gradlab.tensor([0.5, 3.0], dtype=gradlab.float64)
    y = x.clone()
    assert y.lgamma_() is y
    np.testing.assert_allclose(y.numpy(), gradlab.lgamma(x).numpy())
    z = x.clone()
    z.digamma_()
    np.testing.assert_allclose(z.numpy(), gradlab.digamma(x).numpy())


def test_names_and_aliases():
    assert special.gammaln is gradlab.lgamma and special.psi is gradlab.digamma
    assert special.digamma is gradlab.digamma and special.polygamma is gradlab.polygamma
    assert special.multigammaln is gradlab.mvlgamma
    x = gradlab.tensor([1.5], dtype=gradlab.float64)
    assert x.polygamma(1).tolist() == gradlab.polygamma(1, x).tolist()
    assert x.lgamma().tolist() == gradlab.lgamma(x).tolist()


def test_polygamma_rejects_a_negative_or_non_integer_order():
    x = gradlab.tensor([1.0])
    with pytest.raises(RuntimeError, match=r"polygamma: n must be >= 0, got n = -1.*lgamma"):
        gradlab.polygamma(-1, x)
    with pytest.raises(TypeError, match=r"polygamma: n must be an int >= 0, got 1.5"):
        gradlab.polygamma(1.5, x)


def test_mvlgamma_rejects_bad_p_and_input_outside_its_domain():
    with pytest.raises(RuntimeError, match=r"mvlgamma: p must be an int >= 1, got p = 0"):
        gradlab.mvlgamma(gradlab.tensor([2.0]), 0)
    with pytest.raises(RuntimeError, match=r"greater than \(p - 1\)/2 = 1.0 for p = 3 "
                                           r"\(the smallest is 1.0\)"):
        gradlab.mvlgamma(gradlab.tensor([1.0, 4.0]), 3)


def test_lgamma_in_place_refuses_an_integer_tensor():
    with pytest.raises(RuntimeError, match="lgamma_"):
        gradlab.tensor([1, 2]).lgamma_()
