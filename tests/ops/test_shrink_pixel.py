"""The shrinks, softsign, softmin, glu, prelu, rrelu, pixel_shuffle/unshuffle and rms_norm:
forward vs NumPy, gradcheck, values and gradients vs PyTorch, rrelu's random slopes, errors."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
import gradlab.autograd.forward_ad as fwAD
from gradlab.ops import pixel_ops, shrink_activations
from tests.oracle import OpCase, away_from_zero, needs_torch, standard_op_tests, torch

OURS = types.SimpleNamespace(**{name: getattr(module, name)
                                for module in (shrink_activations, pixel_ops)
                                for name in module.FUNCTIONAL})


def F(lib):
    """The functional namespace: torch.nn.functional, or gradlab's two new op modules."""
    return torch.nn.functional if lib is torch else OURS


def away_from_kinks(*kinks, width=0.05):
    """Inputs in [-2, 2] kept ``width`` away from the points where the derivative jumps."""
    def make(rng, dtype, shapes):
        arrays = []
        for shape in shapes:
            x = rng.uniform(-2, 2, shape)
            for k in kinks:
                x = np.where(np.abs(x - k) < width, k + 2 * width, x)
            arrays.append(x.astype(dtype))
        return arrays
    return make


def prelu_inputs(rng, dtype, shapes):
    x = away_from_zero(rng, dtype, shapes[:1])[0]
    return [x, rng.uniform(0.05, 0.5, shapes[1]).astype(dtype)]


def _glu(np, x, dim):
    a, b = np.split(x, 2, axis=dim)
    return a / (1 + np.exp(-b))


def _softmin(np, x, dim):
    e = np.exp(-x - (-x).max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _prelu(np, x, w):
    w = w.reshape((1, -1) + (1,) * (x.ndim - 2)) if w.size > 1 else w.reshape(())
    return np.where(x > 0, x, w * x)


def _unshuffle(np, x, r):
    """Element by element: out[..., c·r² + i·r + j, y, x] = in[..., c, y·r + i, x·r + j]."""
    *batch, c, h, w = x.shape
    out = np.empty((*batch, c * r * r, h // r, w // r), dtype=x.dtype)
    for ch in range(c):
        for i in range(r):
            for j in range(r):
                out[..., ch * r * r + i * r + j, :, :] = x[..., ch, i::r, j::r]
    return out


def _shuffle(np, x, r):
    """The inverse: in[..., c·r² + i·r + j, y, x] goes to out[..., c, y·r + i, x·r + j]."""
    *batch, c, h, w = x.shape
    out = np.empty((*batch, c // (r * r), h * r, w * r), dtype=x.dtype)
    for ch in range(c // (r * r)):
        for i in range(r):
            for j in range(r):
                out[..., ch, i::r, j::r] = x[..., ch * r * r + i * r + j, :, :]
    return out


EPS64 = np.finfo(np.float64).eps


def _rms(np, x, k, w=None, eps=EPS64):
    axes = tuple(range(x.ndim - k, x.ndim))
    y = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    return y if w is None else y * w


UN = ((3, 4),)
UN_VARIANTS = (((),), ((0, 3),))
SHRINK = away_from_kinks(0.5, -0.5)

CASES = [
    OpCase("softsign", lambda lib, x: F(lib).softsign(x), UN,
           numpy=lambda np, x: x / (1 + np.abs(x)), inputs=away_from_zero,
           variants=UN_VARIANTS),
    OpCase("softshrink", lambda lib, x: F(lib).softshrink(x), UN,
           numpy=lambda np, x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0.0)),
           inputs=SHRINK, variants=UN_VARIANTS),
    OpCase("softshrink", lambda lib, x: F(lib).softshrink(x, 1.0), UN,
           numpy=lambda np, x: x - np.clip(x, -1, 1), inputs=away_from_kinks(1, -1),
           id="softshrink_1"),
    OpCase("hardshrink", lambda lib, x: F(lib).hardshrink(x), UN,
           numpy=lambda np, x: np.where(np.abs(x) > 0.5, x, 0.0), inputs=SHRINK,
           variants=UN_VARIANTS),
    OpCase("hardshrink", lambda lib, x: x.hardshrink(1.2), UN,
           numpy=lambda np, x: np.where(np.abs(x) > 1.2, x, 0.0),
           inputs=away_from_kinks(1.2, -1.2), id="hardshrink_method"),
    OpCase("tanhshrink", lambda lib, x: F(lib).tanhshrink(x), UN,
           numpy=lambda np, x: x - np.tanh(x), variants=UN_VARIANTS),
    OpCase("softmin", lambda lib, x: F(lib).softmin(x, dim=1), ((2, 3, 4),),
           numpy=lambda np, x: _softmin(np, x, 1), variants=(((0, 3),),)),
    OpCase("softmin", lambda lib, x: F(lib).softmin(x, -1, dtype=lib.float64), UN,
           numpy=lambda np, x: _softmin(np, x, -1), id="softmin_dtype"),
    OpCase("glu", lambda lib, x: F(lib).glu(x), ((3, 4),),
           numpy=lambda np, x: _glu(np, x, -1), domain=(-4, 4), variants=(((0, 6),),)),
    OpCase("glu", lambda lib, x: F(lib).glu(x, 0), ((4, 2, 3),),
           numpy=lambda np, x: _glu(np, x, 0), domain=(-4, 4), id="glu_dim0"),
    OpCase("prelu", lambda lib, x, w: F(lib).prelu(x, w), ((2, 3, 4), (3,)),
           numpy=_prelu, inputs=prelu_inputs, variants=(((0, 3), (3,)), ((2, 3), (3,)))),
    OpCase("prelu", lambda lib, x, w: x.prelu(w), ((2, 3, 4), (1,)),
           numpy=_prelu, inputs=prelu_inputs, variants=(((), (1,)), ((5,), ())),
           id="prelu_one_slope"),
    OpCase("rrelu", lambda lib, x: F(lib).rrelu(x), UN,
           numpy=lambda np, x: np.where(x > 0, x, x * (1 / 8 + 1 / 3) / 2),
           inputs=away_from_zero, variants=UN_VARIANTS,
           jvp=False),  # PyTorch has no forward AD for rrelu: checked on its own below
    OpCase("rrelu", lambda lib, x: lib.rrelu(x, 0.1, 0.5), UN,
           numpy=lambda np, x: np.where(x > 0, x, 0.3 * x), inputs=away_from_zero,
           jvp=False, id="rrelu_bounds"),
    OpCase("pixel_shuffle", lambda lib, x: F(lib).pixel_shuffle(x, 2), ((2, 8, 3, 2),),
           numpy=lambda np, x: _shuffle(np, x, 2), variants=(((1, 4, 1, 1),),)),
    OpCase("pixel_shuffle", lambda lib, x: lib.pixel_shuffle(x, 3), ((9, 2, 1),),
           numpy=lambda np, x: _shuffle(np, x, 3), id="pixel_shuffle_3d"),
    OpCase("pixel_unshuffle", lambda lib, x: F(lib).pixel_unshuffle(x, 2), ((2, 3, 4, 6),),
           numpy=lambda np, x: _unshuffle(np, x, 2)),
    OpCase("pixel_unshuffle", lambda lib, x: lib.pixel_unshuffle(x, 3), ((2, 1, 2, 3, 3),),
           numpy=lambda np, x: _unshuffle(np, x, 3), id="pixel_unshuffle_5d"),
    OpCase("rms_norm", lambda lib, x: F(lib).rms_norm(x, (4,)), ((3, 4),),
           numpy=lambda np, x: _rms(np, x, 1), variants=(((0, 4),),)),
    OpCase("rms_norm", lambda lib, x, w: F(lib).rms_norm(x, (3, 4), w, eps=1e-3),
           ((2, 3, 4), (3, 4)), numpy=lambda np, x, w: _rms(np, x, 2, w, 1e-3),
           id="rms_norm_weight"),
    OpCase("rms_norm", lambda lib, x: lib.rms_norm(x, [2, 3, 4]), ((2, 3, 4),),
           numpy=lambda np, x: _rms(np, x, 3), id="rms_norm_all_dims"),
]

globals().update(standard_op_tests(CASES))


# --- node names and bindings --------------------------------------------------------------------

NODE_NAMES = {
    "softsign": "DivBackward0", "softshrink": "SoftshrinkBackward0",
    "hardshrink": "HardshrinkBackward0", "tanhshrink": "SubBackward0",
    "softmin": "SoftmaxBackward0", "glu": "GluBackward0", "rrelu": "RreluWithNoiseBackward0",
}


@pytest.mark.parametrize("name", sorted(NODE_NAMES))
def test_node_names_follow_pytorch(name):
    x = gradlab.tensor([[-1.0, 0.7], [0.2, 2.0]], requires_grad=True)
    args = (1,) if name in ("softmin", "glu") else ()
    assert getattr(OURS, name)(x, *args).grad_fn.name() == NODE_NAMES[name]
    w = gradlab.tensor([0.25], requires_grad=True)
    assert OURS.prelu(x, w).grad_fn.name() == "PreluKernelBackward0"
    if torch is not None:
        t = torch.tensor([[-1.0, 0.7], [0.2, 2.0]], requires_grad=True)
        assert getattr(torch.nn.functional, name)(t, *args).grad_fn.name() == NODE_NAMES[name]


def test_bindings_follow_pytorch():
    for name in ("hardshrink", "prelu", "rrelu", "rrelu_", "pixel_shuffle", "pixel_unshuffle",
                 "rms_norm"):
        assert getattr(gradlab, name) is getattr(OURS, name), name
    for name in ("softsign", "softshrink", "tanhshrink", "softmin", "glu"):
        assert not hasattr(gradlab, name), name
    for name in shrink_activations.FUNCTIONAL + pixel_ops.FUNCTIONAL:
        assert getattr(gradlab.nn.functional, name) is getattr(OURS, name), name
    assert gradlab.Tensor.hardshrink is shrink_activations.hardshrink
    assert gradlab.Tensor.prelu is shrink_activations.prelu
    if torch is not None:
        assert all(hasattr(torch, n) for n in shrink_activations.__all__ + pixel_ops.__all__)
        assert not any(hasattr(torch, n) for n in ("softsign", "softshrink", "glu", "softmin"))


# --- prelu: the weight's gradient ---------------------------------------------------------------

def test_prelu_weight_gradient_sums_x_over_the_negative_values_of_each_channel():
    x = gradlab.tensor([[[-1.0, 2.0], [3.0, -4.0]], [[-0.5, 0.0], [1.0, -2.0]]])
    w = gradlab.tensor([0.1, 0.2], requires_grad=True)
    OURS.prelu(x, w).sum().backward()
    # channel 0: -1 - 0.5 + 0 (x = 0 counts on the negative side, contributing 0); channel 1:
    # -4 - 2
    assert w.grad.tolist() == [-1.5, -6.0]
    one = gradlab.tensor(0.3, requires_grad=True)
    OURS.prelu(x, one).sum().backward()
    assert one.grad.shape == () and one.grad.item() == pytest.approx(-7.5)


def test_prelu_jvp_covers_input_and_weight_tangents():
    rng = np.random.default_rng(3)
    x, tx = rng.standard_normal((2, 3, 2)), rng.standard_normal((2, 3, 2))
    w, tw = rng.uniform(0.1, 0.4, 3), rng.standard_normal(3)
    with fwAD.dual_level():
        out = OURS.prelu(fwAD.make_dual(gradlab.tensor(x), gradlab.tensor(tx)),
                         fwAD.make_dual(gradlab.tensor(w), gradlab.tensor(tw)))
        tangent = fwAD.unpack_dual(out).tangent.numpy()
    wb, twb = w.reshape(1, 3, 1), tw.reshape(1, 3, 1)
    np.testing.assert_allclose(tangent, np.where(x > 0, tx, wb * tx + x * twb), rtol=1e-12)


# --- rrelu: random slopes while training --------------------------------------------------------

def test_rrelu_eval_is_leaky_relu_with_the_mean_slope():
    x = gradlab.tensor(np.linspace(-3, 3, 13), requires_grad=True)
    y = gradlab.tensor(np.linspace(-3, 3, 13), requires_grad=True)
    out = OURS.rrelu(x, 0.1, 0.3)
    ref = gradlab.nn.functional.leaky_relu(y, 0.2)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-15)
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.grad.numpy())  # slope 0.2 at x = 0 too


@pytest.mark.parametrize("dtype", [gradlab.float64, gradlab.float32, gradlab.float16])
def test_rrelu_training_draws_slopes_in_bounds_and_backward_uses_them(device, dtype):
    gradlab.manual_seed(0)
    values = np.concatenate([np.linspace(-3, -0.1, 2000), [0.0], np.linspace(0.1, 3, 500)])
    x = gradlab.tensor(values, dtype=dtype, device=device, requires_grad=True)
    out = OURS.rrelu(x, 0.1, 0.4, training=True)
    assert out.dtype is dtype
    stored = x.detach().cpu().numpy().astype(np.float64)  # the values as the dtype holds them
    negative, positive = stored < 0, stored > 0
    slopes = np.ones_like(stored)
    nonzero = stored != 0
    slopes[nonzero] = out.detach().cpu().numpy().astype(np.float64)[nonzero] / stored[nonzero]
    tol = 2e-3 if dtype is gradlab.float16 else 1e-6
    assert slopes[negative].min() >= 0.1 - tol and slopes[negative].max() <= 0.4 + tol
    assert abs(slopes[negative].mean() - 0.25) < 0.01          # uniform: mean (l + u)/2
    assert slopes[negative].std() > 0.08                        # spread ~ 0.3/√12 = 0.087
    np.testing.assert_array_equal(slopes[positive], 1.0)
    weights = np.arange(values.size) % 7 + 1.0
    out.backward(gradlab.tensor(weights, dtype=dtype, device=device))
    got = x.grad.cpu().numpy().astype(np.float64)
    np.testing.assert_allclose(got[nonzero], (slopes * weights)[nonzero], rtol=tol)
    zero = int(np.flatnonzero(~nonzero)[0])
    assert 0.1 - tol <= got[zero] / weights[zero] <= 0.4 + tol  # x = 0 takes a drawn slope


def test_rrelu_training_repeats_under_manual_seed_and_varies_without():
    x = gradlab.full((50,), -1.0)
    gradlab.manual_seed(7)
    first = OURS.rrelu(x, training=True).tolist()
    second = OURS.rrelu(x, training=True).tolist()
    gradlab.manual_seed(7)
    assert OURS.rrelu(x, training=True).tolist() == first
    assert second != first


def test_rrelu_training_tangent_uses_the_drawn_slopes():
    x = gradlab.tensor(np.linspace(-2, 2, 9))
    t = gradlab.tensor(np.arange(1.0, 10.0))
    gradlab.manual_seed(1)
    with fwAD.dual_level():
        out = OURS.rrelu(fwAD.make_dual(x, t), training=True)
        primal, tangent = fwAD.unpack_dual(out)
    slope = np.where(x.numpy() > 0, 1.0, primal.numpy() / np.where(x.numpy() == 0, 1, x.numpy()))
    nonzero = x.numpy() != 0
    np.testing.assert_allclose(tangent.numpy()[nonzero], (slope * t.numpy())[nonzero])


def test_rrelu_inplace_writes_into_the_input_and_keeps_gradients():
    base = gradlab.tensor([-2.0, 1.0, -4.0], requires_grad=True)
    h = base * 1.0
    out = OURS.rrelu_(h, 0.25, 0.25, training=True)  # lower == upper: a known slope
    assert out is h and h.tolist() == [-0.5, 1.0, -1.0]
    out.sum().backward()
    assert base.grad.tolist() == [0.25, 1.0, 0.25]
    r = gradlab.tensor([-1.0, 2.0])
    assert OURS.rrelu(r, inplace=True) is r and r.tolist()[1] == 2.0


@needs_torch
def test_rrelu_training_modules_agree_on_the_distribution():
    x = np.full(4000, -1.0)
    theirs = -torch.nn.functional.rrelu(torch.tensor(x), training=True).numpy()
    gradlab.manual_seed(3)
    ours = -OURS.rrelu(gradlab.tensor(x), training=True).numpy()
    for stat in (np.mean, np.min, np.max):
        assert abs(stat(ours) - stat(theirs)) < 0.01, stat.__name__


# --- softmin, glu: details -----------------------------------------------------------------------

@needs_torch
def test_softmin_without_dim_warns_and_picks_pytorchs_dim():
    x = np.random.default_rng(0).standard_normal((2, 3))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        ours = OURS.softmin(gradlab.tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.functional.softmin(torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_glu_does_not_overflow_for_large_gates():
    x = gradlab.tensor([[1.0, 2.0, -1000.0, 1000.0]], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = OURS.glu(x)
        out.sum().backward()
    assert out.tolist() == [[0.0, 2.0]]
    assert x.grad.tolist() == [[0.0, 1.0, 0.0, 0.0]]


# --- pixel_shuffle / pixel_unshuffle ------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(batch=st.lists(st.integers(0, 2), max_size=2), c=st.integers(1, 3),
       r=st.integers(1, 3), h=st.integers(1, 3), w=st.integers(1, 3))
def test_pixel_shuffle_and_unshuffle_invert_each_other(batch, c, r, h, w):
    shape = (*batch, c * r * r, h, w)
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    up = gradlab.pixel_shuffle(gradlab.tensor(x), r)
    assert tuple(up.shape) == (*batch, c, h * r, w * r)
    np.testing.assert_array_equal(gradlab.pixel_unshuffle(up, r).numpy(), x)
    down = gradlab.pixel_unshuffle(gradlab.tensor(up.numpy()), r)
    np.testing.assert_array_equal(gradlab.pixel_shuffle(down, r).numpy(), up.numpy())
    if torch is not None:
        np.testing.assert_array_equal(up.numpy(), torch.pixel_shuffle(torch.tensor(x), r))


def test_pixel_shuffle_of_an_empty_batch_has_gradients_of_the_input_shape():
    """(PyTorch 2.13's own PixelShuffleBackward0 fails here, so no torch comparison.)"""
    x = gradlab.zeros(0, 4, 1, 1, requires_grad=True)
    out = gradlab.pixel_shuffle(x, 2)
    assert tuple(out.shape) == (0, 1, 2, 2)
    out.sum().backward()
    assert tuple(x.grad.shape) == (0, 4, 1, 1)


def test_pixel_shuffle_keeps_integer_dtypes():
    x = gradlab.arange(8).reshape(1, 4, 1, 2)
    out = gradlab.pixel_shuffle(x, 2)
    assert out.dtype is gradlab.int64
    assert out.tolist() == [[[[0, 2, 1, 3], [4, 6, 5, 7]]]]


# --- rms_norm: the default eps ------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_rms_norm_default_eps_matches_pytorch(dtype):
    """eps=None is the machine epsilon of the computation dtype: float16 and bfloat16 are
    computed in float32, so tiny inputs show which eps was used."""
    x = np.array([[1e-3, -2e-3], [1e-4, 3e-4]])
    w = np.array([1.5, -0.5])
    ours = gradlab.rms_norm(gradlab.tensor(x, dtype=getattr(gradlab, dtype)), (2,),
                            gradlab.tensor(w, dtype=getattr(gradlab, dtype)))
    theirs = torch.rms_norm(torch.tensor(x, dtype=getattr(torch, dtype)), (2,),
                            torch.tensor(w, dtype=getattr(torch, dtype)))
    assert ours.dtype.name == dtype
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=1e-2)


def test_rms_norm_default_eps_is_the_dtypes_machine_epsilon():
    x = gradlab.tensor([[1e-8]], dtype=gradlab.float64)
    eps = np.finfo(np.float64).eps  # 2.2e-16, as large as x² = 1e-16: it shows
    assert gradlab.rms_norm(x, (1,)).item() == pytest.approx(1e-8 / np.sqrt(1e-16 + eps),
                                                              rel=1e-12)
    assert gradlab.rms_norm(x, (1,), eps=0.0).item() == pytest.approx(1.0, rel=1e-12)


# --- errors that teach --------------------------------------------------------------------------

X = gradlab.ones(2, 3)
IMG = gradlab.ones(1, 3, 4, 4)

ERRORS = [
    (lambda: OURS.softshrink(X, -0.5), ValueError, r"softshrink: lambd must be >= 0"),
    (lambda: OURS.hardshrink(gradlab.tensor([1, 2])), RuntimeError,
     r"hardshrink: expected a floating point tensor, got .*int64"),
    (lambda: OURS.softsign([1.0, 2.0]), TypeError, r"softsign: expected a Tensor, got list"),
    (lambda: OURS.softmin(gradlab.tensor([1, 2]), 0), RuntimeError,
     r"softmin: expected a floating point"),
    (lambda: OURS.glu(X), RuntimeError,
     r"glu: dim -1 has odd size 3 \(shape \(2, 3\)\).*make that dim's size even"),
    (lambda: OURS.glu(gradlab.tensor(1.0)), RuntimeError, r"glu: a 0-d tensor has no dim"),
    (lambda: OURS.glu(X, 2), IndexError, r"glu: dimension 2 is out of range"),
    (lambda: OURS.prelu(X, gradlab.ones(2)), RuntimeError,
     r"prelu: weight has 2 values but the input \(shape \(2, 3\)\) has 3 channel"),
    (lambda: OURS.prelu(gradlab.ones(3), gradlab.ones(3)), RuntimeError,
     r"prelu: weight has 3 values .* has 1 channel"),
    (lambda: OURS.prelu(X, gradlab.ones(3, 1)), RuntimeError,
     r"prelu: weight must be 0-d or 1-D"),
    (lambda: OURS.prelu(X, gradlab.ones(3, dtype=gradlab.float64)), RuntimeError,
     r"prelu: weight is gradlab.float64 but input is gradlab.float32.*weight.to"),
    (lambda: OURS.rrelu(X, 0.5, 0.2), RuntimeError,
     r"rrelu: lower \(0.5\) must be <= upper \(0.2\).*swap them"),
    (lambda: OURS.pixel_shuffle(IMG, 2), RuntimeError,
     r"pixel_shuffle: the channel dim \(-3\) .* size 3, which is not divisible by "
     r"upscale_factor² = 4"),
    (lambda: OURS.pixel_shuffle(gradlab.ones(4, 4), 2), RuntimeError,
     r"pixel_shuffle: expected an input of shape \(\*, C, H, W\), at least 3 dims, got "
     r"shape \(4, 4\)"),
    (lambda: OURS.pixel_shuffle(IMG, 0), RuntimeError,
     r"pixel_shuffle: upscale_factor must be positive, got 0"),
    (lambda: OURS.pixel_unshuffle(IMG, 1.5), TypeError,
     r"pixel_unshuffle: downscale_factor must be an int, got float"),
    (lambda: OURS.pixel_unshuffle(gradlab.ones(1, 1, 3, 4), 2), RuntimeError,
     r"pixel_unshuffle: the height \(dim -2\) .* is 3, which is not divisible by "
     r"downscale_factor=2.*crop or pad"),
    (lambda: OURS.pixel_unshuffle(gradlab.ones(1, 1, 4, 5), 2), RuntimeError,
     r"pixel_unshuffle: the width \(dim -1\) .* is 5"),
    (lambda: OURS.rms_norm(X, (4,)), RuntimeError,
     r"rms_norm: normalized_shape=\(4,\) must match the last dims of the input, expected "
     r"an input of shape \(\*, 4\), got \(2, 3\)"),
    (lambda: OURS.rms_norm(X, (2, 2, 3)), RuntimeError, r"rms_norm: normalized_shape"),
    (lambda: OURS.rms_norm(X, 3, gradlab.ones(2)), RuntimeError,
     r"rms_norm: weight must have shape normalized_shape=\(3,\), got \(2,\)"),
    (lambda: OURS.rms_norm(gradlab.tensor([[1, 2]]), 2), RuntimeError,
     r"rms_norm: expected a floating point tensor"),
]


@pytest.mark.parametrize("call, error, match", ERRORS,
                         ids=[m.split(":")[0] + str(i) for i, (_, _, m) in enumerate(ERRORS)])
def test_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()
