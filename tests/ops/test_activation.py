"""Activations and erf: forward vs NumPy, gradcheck, values and gradients vs PyTorch."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import gradlab
import gradlab.autograd.forward_ad as fwAD
from gradlab.ops import activation
from tests.oracle import (
    OpCase,
    needs_torch,
    standard_op_tests,
    torch,
)

UN_VARIANTS = (((),), ((0, 3),))
SHAPE = ((3, 4),)


def F(lib):
    """The functional namespace: torch.nn.functional, or gradlab's activation module."""
    return torch.nn.functional if lib is torch else activation


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


_erf = np.vectorize(math.erf, otypes=[np.float64])
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _case(name, fn, numpy, domain, gradgrad=True, id=None):
    return OpCase(name, fn, SHAPE, numpy=numpy, domain=domain, variants=UN_VARIANTS,
                  gradgrad=gradgrad, id=id or name)


CASES = [
    _case("leaky_relu", lambda lib, x: F(lib).leaky_relu(x),
          lambda np, x: np.where(x > 0, x, 0.01 * x), (-2, 2)),
    _case("leaky_relu", lambda lib, x: F(lib).leaky_relu(x, 0.2),
          lambda np, x: np.where(x > 0, x, 0.2 * x), (-2, 2), id="leaky_relu_0.2"),
    _case("elu", lambda lib, x: F(lib).elu(x), lambda np, x: np.where(x > 0, x, np.expm1(x)),
          (-3, 2)),
    _case("elu", lambda lib, x: F(lib).elu(x, alpha=0.5),
          lambda np, x: np.where(x > 0, x, 0.5 * np.expm1(x)), (-3, 2), id="elu_alpha"),
    _case("selu", lambda lib, x: lib.selu(x),
          lambda np, x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)), (-3, 2)),
    _case("celu", lambda lib, x: lib.celu(x, alpha=2.0),
          lambda np, x: np.where(x > 0, x, 2.0 * np.expm1(x / 2.0)), (-3, 2)),
    _case("gelu", lambda lib, x: F(lib).gelu(x),
          lambda np, x: 0.5 * x * (1 + _erf(x / np.sqrt(2))), (-4, 4)),
    _case("gelu", lambda lib, x: F(lib).gelu(x, approximate="tanh"),
          lambda np, x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
          (-4, 4), id="gelu_tanh"),
    _case("silu", lambda lib, x: F(lib).silu(x), lambda np, x: x * _sigmoid(x), (-6, 6)),
    _case("softplus", lambda lib, x: F(lib).softplus(x), lambda np, x: _softplus(x), (-5, 5)),
    _case("softplus", lambda lib, x: F(lib).softplus(x, beta=2.0, threshold=5.0),
          lambda np, x: np.where(2 * x > 5, x, _softplus(2 * x) / 2), (-4, 4),
          id="softplus_beta_threshold"),
    _case("hardtanh", lambda lib, x: F(lib).hardtanh(x), lambda np, x: np.clip(x, -1, 1),
          (-2, 2)),
    _case("hardtanh", lambda lib, x: F(lib).hardtanh(x, -0.5, 1.5),
          lambda np, x: np.clip(x, -0.5, 1.5), (-2, 2), id="hardtanh_bounds"),
    _case("relu6", lambda lib, x: F(lib).relu6(x), lambda np, x: np.clip(x, 0, 6), (-2, 8)),
    _case("logsigmoid", lambda lib, x: F(lib).logsigmoid(x), lambda np, x: -_softplus(-x),
          (-10, 10)),
    _case("mish", lambda lib, x: F(lib).mish(x), lambda np, x: x * np.tanh(_softplus(x)),
          (-5, 5)),
    _case("hardsigmoid", lambda lib, x: F(lib).hardsigmoid(x),
          lambda np, x: np.clip(x / 6 + 0.5, 0, 1), (-5, 5)),
    _case("hardswish", lambda lib, x: F(lib).hardswish(x),
          lambda np, x: x * np.clip(x / 6 + 0.5, 0, 1), (-5, 5)),
    _case("erf", lambda lib, x: lib.erf(x), lambda np, x: _erf(x), (-3, 3)),
    _case("erf", lambda lib, x: x.erf(), lambda np, x: _erf(x), (-3, 3), id="erf_method"),
]


globals().update(standard_op_tests(CASES))


# --- node names, bindings -----------------------------------------------------------------------

NODE_NAMES = {
    "leaky_relu": "LeakyReluBackward0", "elu": "EluBackward0", "selu": "EluBackward0",
    "celu": "CeluBackward0", "gelu": "GeluBackward0", "silu": "SiluBackward0",
    "softplus": "SoftplusBackward0", "hardtanh": "HardtanhBackward0",
    "relu6": "HardtanhBackward0", "logsigmoid": "LogSigmoidBackward0", "mish": "MishBackward0",
    "hardsigmoid": "HardsigmoidBackward0", "hardswish": "HardswishBackward0",
}


@pytest.mark.parametrize("name", activation.FUNCTIONAL)
def test_each_activation_is_one_node_named_like_pytorch(name):
    x = gradlab.tensor([-1.0, 0.5], requires_grad=True)
    out = getattr(activation, name)(x)
    assert out.grad_fn.name() == NODE_NAMES[name]
    assert out.grad_fn.next_functions[0][0].name() == "AccumulateGrad"
    if torch is not None:
        t = getattr(torch.nn.functional, name)(torch.tensor([-1.0, 0.5], requires_grad=True))
        assert t.grad_fn.name() == NODE_NAMES[name]


def test_bindings_follow_pytorch():
    """Top-level and Tensor methods only where PyTorch has them."""
    for name in ("erf", "selu", "celu"):
        assert getattr(gradlab, name) is getattr(activation, name)
    for name in ("leaky_relu", "gelu", "silu", "softplus", "mish", "hardswish"):
        assert not hasattr(gradlab, name), name
        assert not hasattr(gradlab.Tensor, name), name
    x = gradlab.tensor([0.5])
    assert x.erf().item() == pytest.approx(math.erf(0.5), abs=1e-7)
    if torch is not None:
        assert all(hasattr(torch, n) for n in ("erf", "selu", "celu"))
        assert not any(hasattr(torch.Tensor, n) for n in ("leaky_relu", "gelu", "silu"))


# --- erf ------------------------------------------------------------------------------------------

def test_erf_is_accurate_to_1e15_in_float64():
    x = np.concatenate([np.linspace(-7, 7, 20001), [1.999999999, 2.0, 2.000000001, 1e-300]])
    got = gradlab.erf(gradlab.tensor(x)).numpy()
    want = _erf(x)
    assert np.abs(got - want).max() < 2e-15
    # relative accuracy near 0, where erf(x) ~ 2x/sqrt(pi)
    tiny = np.array([1e-10, -3e-8, 1e-300])
    np.testing.assert_allclose(gradlab.erf(gradlab.tensor(tiny)).numpy(), _erf(tiny),
                               rtol=1e-15)


def test_erf_special_values_and_dtypes():
    x = gradlab.tensor(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, -1e300]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = gradlab.erf(x).numpy()
    np.testing.assert_array_equal(got[[0, 2, 3, 5, 6]], [0.0, 1.0, -1.0, 1.0, -1.0])
    assert np.signbit(got[1]) and np.isnan(got[4])
    ints = gradlab.erf(gradlab.tensor([0, 1]))
    assert ints.dtype is gradlab.float32
    np.testing.assert_allclose(ints.numpy(), [0.0, math.erf(1)], rtol=1e-6)
    half = gradlab.erf(gradlab.tensor([0.5, -2.5], dtype=gradlab.float16))
    assert half.dtype is gradlab.float16
    np.testing.assert_allclose(half.numpy().astype(float), _erf([0.5, -2.5]), rtol=1e-3)


# --- extreme inputs: no overflow, no NaN, no warnings ---------------------------------------

EXTREME = np.array([-1e4, -800.0, -50.0, -20.5, 19.5, 20.5, 50.0, 800.0, 1e4])


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_extreme_inputs_match_torch(case, dtype):
    x = EXTREME.astype(dtype)
    ours = gradlab.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow in a branch where() discards is a bug too
        out = case.fn(gradlab, ours)
        out.sum().backward()
    ref = case.fn(torch, theirs)
    ref.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6, atol=1e-30)
    assert np.isfinite(ours.grad.numpy()).all()


def test_softplus_is_exactly_linear_past_the_threshold():
    x = gradlab.tensor([25.0, 1000.0], dtype=gradlab.float64, requires_grad=True)
    out = activation.softplus(x)
    assert out.tolist() == [25.0, 1000.0]
    out.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_logsigmoid_stays_finite_where_log_of_sigmoid_does_not():
    x = gradlab.tensor([-800.0], dtype=gradlab.float64)
    assert activation.logsigmoid(x).tolist() == [-800.0]


def test_kinks_take_pytorchs_side():
    """At the points where the derivative jumps, PyTorch's choice of one-sided derivative."""
    cases = [
        (lambda t: activation.leaky_relu(t, 0.1), [0.0], [0.1]),
        (lambda t: activation.elu(t, 2.0), [0.0], [2.0]),
        (activation.hardtanh, [-1.0, 1.0], [0.0, 0.0]),
        (activation.relu6, [0.0, 6.0], [0.0, 0.0]),
        (activation.hardsigmoid, [-3.0, 3.0], [0.0, 0.0]),
        (activation.hardswish, [-3.0, 3.0], [0.0, 1.0]),  # the outer slopes (PyTorch 2.13)
    ]
    for fn, at, slope in cases:
        x = gradlab.tensor(at, dtype=gradlab.float64, requires_grad=True)
        fn(x).sum().backward()
        assert x.grad.tolist() == slope


@needs_torch
@pytest.mark.parametrize("name", ["leaky_relu", "elu", "hardtanh", "relu6", "hardsigmoid",
                                  "hardswish", "relu", "softshrink", "hardshrink"])
def test_kink_slopes_match_torch(name):
    """The one-sided slopes at every kink, checked against the oracle itself."""
    at = [-6.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0]
    grads = []
    for lib in (gradlab, torch):
        x = lib.tensor(at, dtype=lib.float64, requires_grad=True)
        getattr(lib.nn.functional, name)(x).sum().backward()
        grads.append(x.grad.numpy())
    # (PyTorch's hardsigmoid slope is float32's 1/6 even in float64, hence the tolerance)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-7, atol=0)


# --- in place ---------------------------------------------------------------------------------

INPLACE = ["leaky_relu", "elu", "selu", "celu", "silu", "hardtanh", "relu6", "mish",
           "hardsigmoid", "hardswish"]


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_matches_out_of_place_values_and_gradients(name):
    fn = getattr(activation, name)
    x = gradlab.tensor([-2.0, -0.5, 0.7, 3.5], dtype=gradlab.float64, requires_grad=True)
    expected = fn(x)
    (g_expected,) = gradlab.autograd.grad(expected.sum(), [x])
    h = x * 1.0  # a non-leaf may be changed in place
    version = h._version
    out = fn(h, inplace=True)
    assert out is h and h._version == version + 1
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    (g,) = gradlab.autograd.grad(out.sum(), [x])
    np.testing.assert_allclose(g.numpy(), g_expected.numpy(), rtol=1e-12)


def test_inplace_on_a_leaf_that_requires_grad_raises():
    x = gradlab.tensor([1.0, -1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="elu_: a leaf tensor that requires grad"):
        activation.elu(x, inplace=True)


# --- forward mode ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", INPLACE)
def test_inplace_forms_carry_the_same_tangent_as_out_of_place(name):
    fn = getattr(activation, name)
    x = gradlab.tensor([-2.0, -0.5, 0.7, 3.5], dtype=gradlab.float64)
    t = gradlab.tensor([0.5, -1.0, 2.0, 0.25], dtype=gradlab.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        expected = fwAD.unpack_dual(fn(dual)).tangent
        h = dual * 1.0
        got = fwAD.unpack_dual(fn(h, inplace=True)).tangent
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)
    assert not np.allclose(expected.numpy(), 0.0)


def test_forward_mode_through_a_small_network_matches_a_central_difference():
    """Linear -> Tanh -> Linear: one forward pass with a dual input gives J·t."""
    gradlab.manual_seed(0)
    model = gradlab.nn.Sequential(gradlab.nn.Linear(3, 5), gradlab.nn.Tanh(),
                                  gradlab.nn.Linear(5, 2)).double()
    x = gradlab.randn(4, 3, dtype=gradlab.float64)
    t = gradlab.randn(4, 3, dtype=gradlab.float64)
    with fwAD.dual_level():
        out = model(fwAD.make_dual(x, t))
        primal, tangent = fwAD.unpack_dual(out)
    eps = 1e-6
    with gradlab.no_grad():
        want = (model(x + eps * t) - model(x - eps * t)).numpy() / (2 * eps)
        np.testing.assert_allclose(primal.detach().numpy(), model(x).numpy(), rtol=1e-12)
    np.testing.assert_allclose(tangent.detach().numpy(), want, rtol=1e-6, atol=1e-9)


# --- errors -------------------------------------------------------------------------------------

def test_argument_errors_teach():
    x = gradlab.tensor([1.0, -1.0])
    with pytest.raises(ValueError, match="gelu: approximate must be 'none' or 'tanh', got 'fast'"):
        activation.gelu(x, approximate="fast")
    with pytest.raises(ValueError, match=r"hardtanh: min_val \(1.0\) cannot be greater than "
                                         r"max_val \(-1.0\)"):
        activation.hardtanh(x, 1.0, -1.0)
    with pytest.raises(ZeroDivisionError, match="celu: alpha cannot be 0"):
        activation.celu(x, alpha=0.0)
    with pytest.raises(RuntimeError, match=r"elu: expected a floating point tensor, got .*int64 "
                                           r"with shape \(2,\).*\.float\(\)"):
        activation.elu(gradlab.tensor([1, 2]))
    with pytest.raises(TypeError, match="silu: expected a Tensor, got list"):
        activation.silu([1.0, 2.0])
    with pytest.raises(TypeError, match="erf: expected a Tensor, got float"):
        gradlab.erf(0.5)
