"""torch.special's entr, erfcx, log_ndtr, i0e, i1e, the K Bessel functions, gammainc,
gammaincc and zeta: values over wide ranges and at the edges, derivatives where PyTorch
has them, and none where it has none."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
import gradlab.autograd.forward_ad as fwAD
from gradlab import special
from tests.oracle import SCALAR, OpCase, needs_torch, standard_op_tests, torch

INF, NAN = math.inf, math.nan
EDGES = [-INF, -800.0, -30.0, -5.0, -1e-300, -0.0, 0.0, 1e-300, 0.5, 1.0, 5.0, 30.0, 800.0,
         INF, NAN]


def _positive_a(rng, dtype, shapes):
    """a in (0.5, 5), x in (0.1, 8): both sides of x = a + 1, where the method changes."""
    return [rng.uniform(0.5, 5.0, shapes[0]).astype(dtype),
            rng.uniform(0.1, 8.0, shapes[1]).astype(dtype)]


CASES = [
    OpCase("entr", lambda lib, x: lib.special.entr(x), ((3, 4),), domain=(0.1, 3.0),
           variants=(SCALAR,),
           numpy=lambda np, x: -x * np.log(x)),
    OpCase("erfcx", lambda lib, x: lib.special.erfcx(x), ((3, 4),), domain=(-3.0, 6.0)),
    OpCase("log_ndtr", lambda lib, x: lib.special.log_ndtr(x), ((3, 4),), domain=(-12.0, 6.0)),
    OpCase("i0e", lambda lib, x: lib.special.i0e(x), ((3, 4),), domain=(-25.0, 25.0),
           variants=(SCALAR,)),
    OpCase("i1e", lambda lib, x: lib.special.i1e(x), ((3, 4),), domain=(-25.0, 25.0)),
    # PyTorch has no forward mode for these two (jvp=False); their own jvp test is below
    OpCase("gammainc", lambda lib, a, x: lib.special.gammainc(a, x), ((3, 4), (4,)),
           inputs=_positive_a, grad_inputs=(1,), jvp=False),
    OpCase("gammaincc", lambda lib, a, x: lib.special.gammaincc(a, x), ((3, 4), (3, 4)),
           inputs=_positive_a, grad_inputs=(1,), jvp=False),
    OpCase("zeta", lambda lib, x, q: lib.special.zeta(x, q), ((3, 4), (3, 1)),
           domain=[(1.5, 6.0), (0.3, 4.0)], grad_inputs=(1,), jvp=False),
] + [OpCase(name, lambda lib, x, name=name: getattr(lib.special, name)(x), ((3, 4),),
            domain=(0.05, 40.0), grad=False)
     for name in ("modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
                  "modified_bessel_k1", "scaled_modified_bessel_k0",
                  "scaled_modified_bessel_k1")]

globals().update(standard_op_tests(CASES))

ONE_INPUT = ["entr", "erfcx", "log_ndtr", "i0e", "i1e", "modified_bessel_i0",
             "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
             "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"]


def _assert_same(ours, theirs, rtol, atol=0.0):
    """Equal NaN/inf pattern (and signs of zeros and infs), finite values to ``rtol``."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    exact = ~np.isfinite(theirs) | (theirs == 0)
    np.testing.assert_array_equal(ours[exact & ~np.isnan(theirs)],
                                  theirs[exact & ~np.isnan(theirs)])
    np.testing.assert_array_equal(np.signbit(ours[exact & ~np.isnan(theirs)]),
                                  np.signbit(theirs[exact & ~np.isnan(theirs)]))
    np.testing.assert_allclose(ours[~exact], theirs[~exact], rtol=rtol, atol=atol)


def _wide(seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform(-40, 40, 400), rng.uniform(-3, 3, 200),
                           10.0 ** rng.uniform(-300, 300, 100) * rng.choice([-1, 1], 100),
                           rng.uniform(-750, 750, 100), EDGES])


@needs_torch
@pytest.mark.parametrize("name", ONE_INPUT)
def test_one_input_functions_match_torch_over_wide_ranges_and_edges(name):
    x = _wide()
    ours = getattr(special, name)(gradlab.tensor(x)).numpy()
    theirs = getattr(torch.special, name)(torch.from_numpy(x)).numpy()
    _assert_same(ours, theirs, rtol=2e-13)


def _gamma_grid(seed=0):
    """(a, x) pairs: a from 1e-3 to 1e4, x near a (hardest) and anywhere, plus the edges."""
    rng = np.random.default_rng(seed)
    a = 10.0 ** rng.uniform(-3, 4, 600)
    x = np.where(np.arange(600) % 2, a * np.exp(rng.normal(0, 0.3, 600)),
                 10.0 ** rng.uniform(-5, 3, 600))
    edges = [-1.0, -0.0, 0.0, 0.5, 1.0, INF, NAN]
    ea, ex = np.meshgrid(edges, edges)
    return np.concatenate([a, ea.ravel()]), np.concatenate([x, ex.ravel()])


@needs_torch
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_matches_torch(name):
    a, x = _gamma_grid()
    ours = getattr(special, name)(gradlab.tensor(a), gradlab.tensor(x)).numpy()
    theirs = getattr(torch.special, name)(torch.from_numpy(a), torch.from_numpy(x)).numpy()
    # PyTorch's own asymptotic series is only good to ~2e-9 for large a (mpmath agrees
    # with gradlab there: see the next test); for a < 20 the two agree to ~1e-13.
    small = a < 20
    _assert_same(ours[small], theirs[small], rtol=1e-12)
    _assert_same(ours[~small], theirs[~small], rtol=5e-9)


def test_incomplete_gamma_against_mpmath_and_the_identities():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    pairs = [(1e-3, 1e-4), (0.3, 0.2), (2.5, 1.0), (7.5, 8.7), (42.0, 1e-5), (120.3, 0.32),
             (205.6, 141.7), (1e3, 1.05e3), (1.0458e4, 1.0897e4), (5.0, 60.0)]
    a, x = (gradlab.tensor([p[i] for p in pairs], dtype=gradlab.float64) for i in (0, 1))
    p, q = special.gammainc(a, x).numpy(), special.gammaincc(a, x).numpy()
    for k, (ak, xk) in enumerate(pairs):
        want_p = mpmath.gammainc(ak, 0, xk, regularized=True)
        want_q = mpmath.gammainc(ak, xk, mpmath.inf, regularized=True)
        assert float(abs(p[k] - want_p) / want_p) < 3e-13, (ak, xk, p[k], want_p)
        assert float(abs(q[k] - want_q) / want_q) < 3e-13, (ak, xk, q[k], want_q)
    # closed forms: P(1, x) = 1 - e^-x, P(1/2, x) = erf(√x)
    xs = gradlab.tensor([1e-8, 0.3, 2.0, 30.0], dtype=gradlab.float64)
    np.testing.assert_allclose(special.gammainc(gradlab.ones(4, dtype=gradlab.float64), xs)
                               .numpy(), -np.expm1(-xs.numpy()), rtol=1e-14)
    np.testing.assert_allclose(special.gammaincc(gradlab.full((4,), 0.5, dtype=gradlab.float64),
                                                 xs).numpy(),
                               special.erfc(xs.sqrt()).numpy(), rtol=1e-13)


@needs_torch
def test_zeta_matches_torch_and_its_edges():
    rng = np.random.default_rng(3)
    x = np.concatenate([1 + 10.0 ** rng.uniform(-6, 1.3, 500), rng.integers(2, 8, 100)])
    q = np.concatenate([10.0 ** rng.uniform(-3, 2, 500), rng.uniform(-30, 0, 100)])
    edge_x, edge_q = np.meshgrid([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, INF, NAN, 2.5],
                                 [-2.0, -1.5, -0.0, 0.0, 0.5, 1.0, 1e9, INF, NAN, -INF])
    x, q = np.concatenate([x, edge_x.ravel()]), np.concatenate([q, edge_q.ravel()])
    ours = special.zeta(gradlab.tensor(x), gradlab.tensor(q)).numpy()
    theirs = torch.special.zeta(torch.from_numpy(x), torch.from_numpy(q)).numpy()
    _assert_same(ours, theirs, rtol=1e-12)


def test_zeta_against_mpmath_and_riemann():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    x = gradlab.tensor([2.0, 3.0, 1.0001, 23.03, 60.0, 1.5], dtype=gradlab.float64)
    q = gradlab.tensor([1.0, 0.25, 3.0, 269.7, 1.2, 1e5], dtype=gradlab.float64)
    got = special.zeta(x, q).numpy()
    for k in range(6):  # a direct sum plus the integral of the rest: no mpmath.zeta (it
        xk, qk = mpmath.mpf(x[k].item()), mpmath.mpf(q[k].item())  # errs at 23.03, 269.7)
        w = qk + 3000
        want = (mpmath.fsum((j + qk) ** -xk for j in range(3000)) + w ** (1 - xk) / (xk - 1)
                + w ** -xk / 2 + xk * w ** (-xk - 1) / 12)
        assert float(abs(got[k] - want) / want) < 1e-13, (x[k].item(), q[k].item())
    assert got[0] == pytest.approx(math.pi ** 2 / 6, rel=1e-15)  # Riemann's ζ(2)
    assert special.zeta(2.0, gradlab.tensor([1.0])).tolist() == pytest.approx([math.pi ** 2 / 6])


# --- derivatives ----------------------------------------------------------------------------

@needs_torch
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # entr' = -(ln x + 1) at 0 and below
@pytest.mark.parametrize("name", ["entr", "erfcx", "log_ndtr", "i0e", "i1e"])
def test_gradients_match_torch_at_the_edges(name):
    x = np.array([0.0, -0.0, 1e-300, 1e-8, -2.0, 0.5, 30.0, -30.0, 300.0, -300.0])
    ours = gradlab.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    getattr(special, name)(ours).sum().backward()
    getattr(torch.special, name)(theirs).sum().backward()
    # (erfcx' = 2x·erfcx(x) - 2/√π cancels for large x, in PyTorch too: atol)
    _assert_same(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-11, atol=1e-15)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_has_no_derivative_in_a(name):
    a = gradlab.tensor([1.5, 2.0], requires_grad=True)
    out = getattr(special, name)(a, gradlab.tensor([0.5, 3.0]))
    assert out.requires_grad  # the node exists (for x), but d/da is refused, as PyTorch
    op = "igamma" if name == "gammainc" else "igammac"
    with pytest.raises(RuntimeError, match=rf"derivative for '{op}: input' is not "
                                           r"implemented.*a.detach\(\)"):
        out.sum().backward()


def test_zeta_has_no_derivative_in_x():
    x = gradlab.tensor([2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"derivative for 'zeta' is not implemented.*"
                                           r"only in q"):
        special.zeta(x, gradlab.tensor([1.0, 2.0])).sum().backward()


@pytest.mark.parametrize("op", ["gammainc", "gammaincc", "zeta"])
def test_forward_mode_tangent_in_the_second_argument_and_refused_in_the_first(op):
    fn = getattr(special, op)
    first = gradlab.tensor([1.5, 2.5, 3.0], dtype=gradlab.float64)
    second = gradlab.tensor([0.7, 2.0, 4.5], dtype=gradlab.float64)
    tangent = gradlab.tensor([1.0, -2.0, 0.5], dtype=gradlab.float64)
    eps = 1e-6
    want = (fn(first, second + tangent * eps) - fn(first, second - tangent * eps)) / (2 * eps)
    with fwAD.dual_level():
        got = fwAD.unpack_dual(fn(first, fwAD.make_dual(second, tangent))).tangent
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-7)
        with pytest.raises(RuntimeError, match="is not implemented"):
            fn(fwAD.make_dual(first, tangent), second)


@pytest.mark.parametrize("name", ["modified_bessel_i0", "modified_bessel_i1",
                                  "modified_bessel_k0", "modified_bessel_k1",
                                  "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"])
def test_ops_without_a_derivative_give_outputs_that_do_not_require_grad(name):
    x = gradlab.tensor([0.5, 2.0], requires_grad=True)
    out = getattr(special, name)(x)
    assert not out.requires_grad and out.grad_fn is None  # as PyTorch
    with pytest.raises(RuntimeError, match="does not require grad"):
        out.sum().backward()


# --- arguments ------------------------------------------------------------------------------

def test_incomplete_gamma_wants_tensors_of_floats():
    a = gradlab.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match=r"special.gammainc\(\): argument 'other' must be a "
                                        r"Tensor, not float"):
        special.gammainc(a, 2.0)
    with pytest.raises(TypeError, match=r"igammac\(\): argument 'input' must be a Tensor"):
        gradlab.igammac(2.0, a)
    with pytest.raises(RuntimeError, match=r"igamma: expected a floating point tensor, got "
                                           r"gradlab.int64.*\.float\(\)"):
        gradlab.igamma(gradlab.tensor([1, 2]), gradlab.tensor([1, 2]))
    # an integer tensor beside a float one is promoted, and the methods exist
    got = a.igamma(gradlab.tensor([1, 2])).tolist()
    assert got == pytest.approx([1 - math.exp(-1), 1 - 3 * math.exp(-2)], rel=1e-6)
    assert a.igammac(a).dtype == gradlab.float32


def test_zeta_takes_numbers_beside_a_tensor_but_not_two_numbers():
    with pytest.raises(TypeError, match=r"special.zeta: expected at least one Tensor, got two "
                                        r"numbers"):
        special.zeta(2.0, 1.0)
    out = special.zeta(gradlab.tensor([2, 4]), 1)  # integers: the default float dtype
    assert out.dtype == gradlab.float32
    assert out.tolist() == pytest.approx([math.pi ** 2 / 6, math.pi ** 4 / 90], rel=1e-6)


def test_integer_inputs_give_the_default_float_dtype():
    for name in ONE_INPUT:
        assert getattr(special, name)(gradlab.tensor([1, 2])).dtype == gradlab.float32, name


@needs_torch
@settings(max_examples=15, deadline=None)
@given(st.floats(-700, 700), st.sampled_from(["erfcx", "log_ndtr", "i0e", "i1e",
                                              "scaled_modified_bessel_k1"]))
def test_any_float64_value_matches_torch(value, name):
    x = np.array([value, value / 7, value / 300])
    ours = getattr(special, name)(gradlab.tensor(x)).numpy()
    # (subnormal results carry fewer bits: one unit in their last place may differ)
    _assert_same(ours, getattr(torch.special, name)(torch.from_numpy(x)).numpy(), rtol=2e-13,
                 atol=2 * np.finfo(np.float64).smallest_subnormal)
