"""Convolutions: conv1d/conv2d/conv_transpose vs a loop NumPy reference, gradchecks, PyTorch.

Also the layers (Conv1d, Conv2d, ConvTranspose1d/2d): init, repr, state_dict,
padding modes, and every error the ops raise.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
import gradlab.nn as nn
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch

pytestmark = pytest.mark.filterwarnings("ignore:Using padding=.same.")

# --- a direct NumPy reference: one window at a time ---------------------------------------------


def _pairs(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def np_conv(np, x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Cross-correlation by its definition (any number of spatial dims); 'same' as PyTorch."""
    n_sp = x.ndim - 2
    k = w.shape[2:]
    stride, dilation = _pairs(stride, n_sp), _pairs(dilation, n_sp)
    if padding == "same":
        pads = [(d * (kk - 1) // 2, d * (kk - 1) - d * (kk - 1) // 2) for d, kk in
                zip(dilation, k)]
    elif padding == "valid":
        pads = [(0, 0)] * n_sp
    else:
        pads = [(p, p) for p in _pairs(padding, n_sp)]
    xp = np.pad(x, [(0, 0), (0, 0)] + pads)
    out_size = [(xp.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1
                for i in range(n_sp)]
    co, cg = w.shape[:2]
    out = np.zeros((x.shape[0], co, *out_size))
    for pos in np.ndindex(*out_size):
        window = xp[(slice(None), slice(None)) + tuple(
            slice(p * s, p * s + d * (kk - 1) + 1, d) for p, s, d, kk in
            zip(pos, stride, dilation, k))]
        for g in range(groups):
            wg = w[g * co // groups:(g + 1) * co // groups]
            xg = window[:, g * cg:(g + 1) * cg]
            out[(slice(None), slice(g * co // groups, (g + 1) * co // groups)) + pos] = \
                np.tensordot(xg, wg, axes=(list(range(1, 2 + n_sp)), list(range(1, 2 + n_sp))))
    if b is not None:
        out += b.reshape((-1,) + (1,) * n_sp)
    return out


def np_conv_transpose(np, x, w, b=None, stride=1, padding=0, output_padding=0, groups=1,
                      dilation=1):
    """Each input value adds its weighted kernel onto the output (the definition)."""
    n_sp = x.ndim - 2
    k = w.shape[2:]
    s, p, op, d = (_pairs(v, n_sp) for v in (stride, padding, output_padding, dilation))
    cin, cog = w.shape[:2]
    size = [(x.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1
            for i in range(n_sp)]
    full = np.zeros((x.shape[0], cog * groups, *[sz + 2 * pp for sz, pp in zip(size, p)]))
    cg = cin // groups
    for pos in np.ndindex(*x.shape[2:]):
        for kpos in np.ndindex(*k):
            at = tuple(q * ss + kk * dd for q, ss, kk, dd in zip(pos, s, kpos, d))
            for g in range(groups):
                contrib = x[(slice(None), slice(g * cg, (g + 1) * cg)) + pos] @ \
                    w[(slice(g * cg, (g + 1) * cg), slice(None)) + kpos]
                full[(slice(None), slice(g * cog, (g + 1) * cog)) + at] += contrib
    out = full[(slice(None), slice(None)) + tuple(slice(pp, pp + sz) for pp, sz in zip(p, size))]
    if b is not None:
        out = out + b.reshape((-1,) + (1,) * n_sp)
    return out


def F(lib):
    return lib.nn.functional


CONV = [
    OpCase("conv2d", lambda lib, x, w, b: F(lib).conv2d(x, w, b),
           ((2, 3, 6, 7), (4, 3, 3, 2), (4,)), numpy=np_conv),
    OpCase("conv2d_stride_padding", lambda lib, x, w, b: F(lib).conv2d(x, w, b, 2, 1),
           ((2, 3, 7, 6), (4, 3, 3, 3), (4,)),
           numpy=lambda np, x, w, b: np_conv(np, x, w, b, 2, 1)),
    OpCase("conv2d_tuples_dilation",
           lambda lib, x, w: F(lib).conv2d(x, w, None, (1, 2), (2, 1), (2, 1)),
           ((1, 2, 6, 7), (3, 2, 2, 3)),
           numpy=lambda np, x, w: np_conv(np, x, w, None, (1, 2), (2, 1), (2, 1))),
    OpCase("conv2d_groups", lambda lib, x, w, b: F(lib).conv2d(x, w, b, 1, 1, 1, 2),
           ((2, 4, 5, 5), (6, 2, 3, 3), (6,)),
           numpy=lambda np, x, w, b: np_conv(np, x, w, b, 1, 1, 1, 2)),
    OpCase("conv2d_depthwise_strided",
           lambda lib, x, w: F(lib).conv2d(x, w, stride=(2, 1), padding=1, groups=3),
           ((2, 3, 6, 5), (3, 1, 3, 3)),
           numpy=lambda np, x, w: np_conv(np, x, w, None, (2, 1), 1, 1, 3)),
    OpCase("conv2d_same_even_kernel",
           lambda lib, x, w, b: F(lib).conv2d(x, w, b, padding="same", dilation=(1, 2)),
           ((2, 2, 5, 6), (3, 2, 2, 4), (3,)),
           numpy=lambda np, x, w, b: np_conv(np, x, w, b, 1, "same", (1, 2))),
    OpCase("conv2d_valid", lambda lib, x, w: F(lib).conv2d(x, w, padding="valid"),
           ((1, 2, 4, 4), (2, 2, 4, 1)), numpy=lambda np, x, w: np_conv(np, x, w, None)),
    OpCase("conv2d_unbatched", lambda lib, x, w: F(lib).conv2d(x, w, padding=1),
           ((2, 4, 4), (3, 2, 3, 3)),
           numpy=lambda np, x, w: np_conv(np, x[None], w, None, 1, 1)[0]),
    OpCase("conv2d_kernel_is_input", lambda lib, x, w: F(lib).conv2d(x, w),
           ((2, 2, 3, 3), (2, 2, 3, 3)), numpy=lambda np, x, w: np_conv(np, x, w)),
    OpCase("conv1d", lambda lib, x, w, b: F(lib).conv1d(x, w, b, 2, 2, 1, 2),
           ((2, 4, 9), (6, 2, 3), (6,)),
           numpy=lambda np, x, w, b: np_conv(np, x, w, b, 2, 2, 1, 2)),
    OpCase("conv1d_same_dilated", lambda lib, x, w: F(lib).conv1d(x, w, padding="same",
                                                                    dilation=2),
           ((2, 3, 8), (2, 3, 4)),
           numpy=lambda np, x, w: np_conv(np, x, w, None, 1, "same", 2)),
    OpCase("conv_transpose2d",
           lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, 2, 1, 1, 2),
           ((2, 4, 3, 4), (4, 3, 3, 3), (6,)),
           numpy=lambda np, x, w, b: np_conv_transpose(np, x, w, b, 2, 1, 1, 2)),
    OpCase("conv_transpose2d_dilated_outpad",
           lambda lib, x, w: F(lib).conv_transpose2d(x, w, None, 1, (1, 0), (1, 0), 1, (2, 1)),
           ((1, 2, 3, 4), (2, 3, 3, 2)),
           numpy=lambda np, x, w: np_conv_transpose(np, x, w, None, 1, (1, 0), (1, 0), 1,
                                                    (2, 1))),
    OpCase("conv_transpose2d_stride_tuple",
           lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, stride=(3, 2), padding=(0, 1)),
           ((2, 2, 3, 3), (2, 2, 2, 3), (2,)),
           numpy=lambda np, x, w, b: np_conv_transpose(np, x, w, b, (3, 2), (0, 1))),
    OpCase("conv_transpose1d",
           lambda lib, x, w, b: F(lib).conv_transpose1d(x, w, b, 3, 1, 2),
           ((2, 2, 4), (2, 3, 3), (3,)),
           numpy=lambda np, x, w, b: np_conv_transpose(np, x, w, b, 3, 1, 2)),
]

globals().update(standard_op_tests(CONV))


# --- properties over random geometries ------------------------------------------------------

@needs_torch
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_conv2d_matches_torch_on_random_geometry(data):
    """Values, input/weight/bias gradients and the output shape, for any legal geometry."""
    draw = data.draw
    groups = draw(st.sampled_from([1, 2]))
    cg, cog = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    d = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    p = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    size = [draw(st.integers(max(1, dd * (kk - 1) + 1 - 2 * pp), 8)) for kk, dd, pp in
            zip(k, d, p)]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, cg * groups, *size)),
              rng.standard_normal((cog * groups, cg, *k)), rng.standard_normal(cog * groups)]
    ours = [gradlab.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y = gradlab.conv2d(*ours, stride=s, padding=p, dilation=d, groups=groups)
    t = torch.conv2d(*theirs, stride=s, padding=p, dilation=d, groups=groups)
    assert tuple(y.shape) == tuple(t.shape)
    np.testing.assert_allclose(y.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-10)
    cot = rng.standard_normal(tuple(t.shape))
    y.backward(gradlab.tensor(cot))
    t.backward(torch.tensor(cot))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_the_three_maps_are_adjoint():
    """⟨conv(x, W), g⟩ = ⟨x, conv_transpose(g, W)⟩: the identity every backward here uses."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 4, 7, 6)), rng.standard_normal((6, 2, 3, 2))
    kw = dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
    y = gradlab.conv2d(gradlab.tensor(x), gradlab.tensor(w), **kw)
    g = rng.standard_normal(tuple(y.shape))
    back = gradlab.conv_transpose2d(gradlab.tensor(g), gradlab.tensor(w),
                                    output_padding=(x.shape[2] + 2 - 3) % 2, **kw)
    assert tuple(back.shape) == x.shape
    np.testing.assert_allclose((y.numpy() * g).sum(), (x * back.numpy()).sum(), rtol=1e-12)


@needs_torch
def test_long_columns_are_multiplied_in_blocks_and_still_match_torch():
    """16 samples of 20x20 give 5184 columns: whole blocks, and a shorter block left over."""
    from gradlab.ops import _im2col

    for block in (_im2col._COLUMNS, _im2col._SUM_COLUMNS):
        assert 16 * 18 * 18 > block and 16 * 18 * 18 % block != 0
    rng = np.random.default_rng(4)
    x, w, b = rng.standard_normal((16, 2, 20, 20)), rng.standard_normal((3, 2, 3, 3)), \
        rng.standard_normal(3)
    ours = [gradlab.tensor(a, requires_grad=True) for a in (x, w, b)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    y, ty = gradlab.conv2d(*ours), torch.conv2d(*theirs)
    g = rng.standard_normal(tuple(y.shape))
    y.backward(gradlab.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-9)


def test_float32_stays_float32_and_graph_names():
    x = gradlab.randn(2, 1, 6, 6)
    w = gradlab.randn(3, 1, 3, 3, requires_grad=True)
    y = gradlab.conv2d(x, w)
    assert y.dtype is gradlab.float32
    assert y.grad_fn.name() == "ConvolutionBackward0"
    y.sum().backward()
    assert w.grad.dtype is gradlab.float32 and w.grad.shape == w.shape


def test_double_backward_through_conv_weight_gradient():
    """d/dx of ‖∂L/∂W‖²: the weight gradient is itself differentiable (create_graph)."""
    rng = np.random.default_rng(4)
    xs, ws = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((2, 2, 3, 3))
    x = gradlab.tensor(xs, requires_grad=True)
    w = gradlab.tensor(ws, requires_grad=True)
    (gw,) = gradlab.autograd.grad(gradlab.conv2d(x, w, padding=1).sum(), [w], create_graph=True)
    (gw * gw).sum().backward()
    if torch is not None:
        xt, wt = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
        (gwt,) = torch.autograd.grad(torch.conv2d(xt, wt, padding=1).sum(), [wt],
                                     create_graph=True)
        (gwt * gwt).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10)
    else:  # the sum's weight gradient is Σ of windows: its x-gradient is 2·Σ over windows
        assert np.abs(x.grad.numpy()).sum() > 0


def hvp_two_ways(loss, arrays, seed=5):
    """H·v of the scalar ``loss(*tensors)`` at ``arrays`` along a random v, two ways: as the
    tangent of the gradient (forward-over-reverse: the jvp of every op backward runs) and
    as a central difference of the gradient along v. (Shared by the nn op tests.)"""
    from gradlab.autograd import forward_ad as fwAD

    rng = np.random.default_rng(seed)
    directions = [rng.standard_normal(a.shape) for a in arrays]

    def gradient(shift):
        moved = [gradlab.tensor(a + shift * v, requires_grad=True)
                 for a, v in zip(arrays, directions)]
        return [g.numpy() for g in gradlab.autograd.grad(loss(*moved), moved)]

    with fwAD.dual_level():
        duals = [fwAD.make_dual(gradlab.tensor(a, requires_grad=True), gradlab.tensor(v))
                 for a, v in zip(arrays, directions)]
        grads = gradlab.autograd.grad(loss(*duals), duals, create_graph=True)
        tangents = [fwAD.unpack_dual(g).tangent for g in grads]
    eps = 1e-5
    by_differences = [(p - m) / (2 * eps) for p, m in zip(gradient(eps), gradient(-eps))]
    return [t.detach().numpy() for t in tangents], by_differences


@pytest.mark.parametrize("op, shapes, kwargs", [
    ("conv2d", ((2, 4, 6, 5), (6, 2, 3, 2), (6,)), dict(stride=(2, 1), padding=1, groups=2)),
    ("conv_transpose2d", ((2, 4, 3, 3), (4, 3, 2, 3), (6,)), dict(stride=2, groups=2)),
    ("conv1d", ((2, 3, 7), (4, 3, 3), (4,)), dict(padding=1, dilation=2)),
], ids=["conv2d", "conv_transpose2d", "conv1d"])
def test_hessian_vector_product_by_forward_over_reverse(op, shapes, kwargs):
    """H·v of L = Σ tanh(conv(x, W, b))² wrt x, W and b at once.

    The backward runs conv_transpose (T), the weight gradient (B, fed the forward's saved
    columns of x: its tangent rule must unfold ẋ itself) and tanh's helper op.
    """
    conv = getattr(gradlab.nn.functional, op)
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal(s) for s in shapes]
    hvp, by_differences = hvp_two_ways(
        lambda x, w, b: gradlab.tanh(conv(x, w, b, **kwargs)).pow(2).sum(), arrays)
    for have, want in zip(hvp, by_differences):
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6)


# --- errors that teach ------------------------------------------------------------------------

def _t(*shape, dtype=None):
    return gradlab.zeros(*shape, dtype=dtype)


CONV_ERRORS = [
    (lambda: gradlab.conv2d(_t(1, 3, 8, 8), _t(6, 1, 5, 5)),
     r"conv2d: given groups=1, weight of shape \(6, 1, 5, 5\) expects input with 1 "
     r"channels.*\(1, 3, 8, 8\) has 3.*in_channels"),
    (lambda: gradlab.conv2d(_t(1, 4, 8, 8), _t(8, 4, 3, 3), groups=4),
     r"conv2d: given groups=4.*expects input with 16 channels"),
    (lambda: gradlab.conv2d(_t(1, 4, 8, 8), _t(6, 2, 3, 3), groups=4),
     r"conv2d: out_channels \(6.*divisible by groups \(4\)"),
    (lambda: gradlab.conv2d(_t(1, 1, 4, 4), _t(1, 1, 5, 5)),
     r"conv2d: the kernel \(size \(5, 5\).*spans 5.*padded input's 4.*Fix"),
    (lambda: gradlab.conv2d(_t(1, 1, 4, 4), _t(1, 1, 3, 3), stride=2, padding="same"),
     r"conv2d: padding='same' is not supported for strided convolutions.*stride=1"),
    (lambda: gradlab.conv2d(_t(1, 1, 4, 4), _t(1, 1, 3, 3), padding="full"),
     r"conv2d: padding must be 'valid', 'same'"),
    (lambda: gradlab.conv2d(_t(3, 8, 8), _t(1, 1, 3, 3)),
     r"conv2d: given groups=1.*expects input with 1 channels.*shape \(3, 8, 8\) has 3"),
    (lambda: gradlab.conv2d(_t(8, 8), _t(1, 1, 3, 3)),
     r"conv2d: expected a 3-D \(unbatched\) or 4-D \(batched\) input.*\(8, 8\).*unsqueeze"),
    (lambda: gradlab.conv2d(_t(1, 1, 8, 8), _t(1, 3, 3)),
     r"conv2d: expected a 4-D weight, got shape \(1, 3, 3\)"),
    (lambda: gradlab.conv2d(_t(1, 1, 8, 8), _t(2, 1, 3, 3), _t(3)),
     r"conv2d: bias must have shape \(2,\).*got \(3,\)"),
    (lambda: gradlab.conv2d(_t(1, 1, 8, 8), _t(2, 1, 3, 3), stride=0),
     r"conv2d: stride must be positive, got \(0, 0\)"),
    (lambda: gradlab.conv2d(_t(1, 1, 8, 8), _t(2, 1, 3, 3), padding=-1),
     r"conv2d: padding must be non-negative"),
    (lambda: gradlab.conv2d(_t(1, 1, 8, 8), _t(2, 1, 3, 3), stride=(1, 2, 3)),
     r"conv2d: stride must be an int or a tuple of 2 ints"),
    (lambda: gradlab.conv2d(_t(1, 1, 8, 8), _t(2, 1, 3, 3, dtype=gradlab.float64)),
     r"conv2d: input \(gradlab.float32\), weight \(gradlab.float64\).*same dtype.*\.to\("),
    (lambda: gradlab.conv2d(_t(1, 1, 8, 8, dtype=gradlab.int64), _t(2, 1, 3, 3)),
     r"conv2d: expected floating point tensors, got gradlab.int64.*\.float\(\)"),
    (lambda: gradlab.conv1d(_t(1, 2, 2), _t(1, 2, 3)),
     r"conv1d: the kernel \(size \(3,\).*spans 3"),
    (lambda: gradlab.conv_transpose2d(_t(1, 3, 4, 4), _t(2, 2, 3, 3)),
     r"conv_transpose2d: weight of shape \(2, 2, 3, 3\).*expects input with 2 channels.*has 3"),
    (lambda: gradlab.conv_transpose2d(_t(1, 2, 4, 4), _t(2, 2, 3, 3), stride=2,
                                      output_padding=2),
     r"conv_transpose2d: output_padding \(2, 2\) must be smaller than either stride"),
    (lambda: gradlab.conv_transpose2d(_t(1, 3, 4, 4), _t(3, 2, 3, 3), groups=2),
     r"conv_transpose2d: groups \(2\) must be a positive int dividing in_channels \(3"),
    (lambda: gradlab.conv_transpose2d(_t(1, 2, 1, 1), _t(2, 2, 1, 1), padding=1),
     r"conv_transpose2d: the output size \(-1, -1\) is not positive.*less padding"),
]


@pytest.mark.parametrize("call, message", CONV_ERRORS, ids=[str(i) for i in
                                                             range(len(CONV_ERRORS))])
def test_conv_errors_name_the_op_and_the_fix(call, message):
    with pytest.raises((RuntimeError, ValueError), match=message):
        call()


# --- the layers ---------------------------------------------------------------------------------

LAYERS = [
    ("Conv2d", (1, 6, 5), {}),
    ("Conv2d", (4, 8, (3, 2)), dict(stride=2, padding=1, dilation=2, groups=2, bias=False,
                                    padding_mode="reflect")),
    ("Conv2d", (3, 3, 3), dict(padding="same", padding_mode="circular")),
    ("Conv1d", (2, 4, 3), dict(padding="valid", padding_mode="replicate")),
    ("ConvTranspose2d", (4, 2, 3), dict(stride=2, output_padding=1, groups=2)),
    ("ConvTranspose1d", (2, 3, 2), dict(dilation=2, bias=False)),
]


def torch_twin(name, args, kwargs, with_their_weights=False):
    """``nn.<name>(*args, **kwargs)`` built by gradlab and by PyTorch, checked to have the same
    repr and state_dict (keys and shapes). ``with_their_weights``: both in float64, ours
    holding PyTorch's values, so that outputs and gradients can be compared."""
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert tuple(ours.state_dict()[key].shape) == tuple(value.shape)
    if with_their_weights:
        theirs, ours = theirs.double(), ours.double()
        ours.load_state_dict({k: gradlab.tensor(v.numpy())
                              for k, v in theirs.state_dict().items()})
    return ours, theirs


@needs_torch
@pytest.mark.parametrize("name, args, kwargs", LAYERS, ids=[f"{n}{i}" for i, (n, _, _) in
                                                            enumerate(LAYERS)])
def test_layer_matches_torch(name, args, kwargs):
    """repr, state_dict keys and shapes as PyTorch; forward and gradients with its weights."""
    ours, theirs = torch_twin(name, args, kwargs, with_their_weights=True)
    spatial = 1 if name.endswith("1d") else 2
    x = np.random.default_rng(0).standard_normal((2, args[0]) + (7,) * spatial)
    xg, xt = gradlab.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yg, yt = ours(xg), theirs(xt)
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    (yg * yg).sum().backward()
    (yt * yt).sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-9, atol=1e-12)


def test_default_init_is_uniform_within_one_over_sqrt_fan_in():
    """kaiming_uniform_(a=√5) gives U(±1/√fan_in), and the bias the same bound."""
    layer = nn.Conv2d(6, 16, 5)
    bound = 1 / math.sqrt(6 * 25)
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert w.shape == (16, 6, 5, 5) and b.shape == (16,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.9 * bound  # it fills the range, not a tiny part of it
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound  # the std of U(-a, a) is a/√3
    assert layer.weight.requires_grad and layer.weight.dtype is gradlab.float32


def test_layer_dtype_argument_and_parameters():
    layer = nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2, dtype=gradlab.float64)
    assert layer.weight.shape == (4, 3, 3, 3) and layer.weight.dtype is gradlab.float64
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    y = layer(gradlab.randn(1, 4, 5, 5, dtype=gradlab.float64), output_size=(12, 12))
    assert tuple(y.shape) == (1, 6, 12, 12)
    with pytest.raises(ValueError, match=r"ConvTranspose2d: requested an output size of "
                                         r"\(14, 14\).*range from 11 to 12"):
        layer(gradlab.randn(1, 4, 5, 5, dtype=gradlab.float64), output_size=(14, 14))


@pytest.mark.parametrize("make, message", [
    (lambda: nn.Conv2d(3, 6, 3, groups=2), r"Conv2d: in_channels \(3\) must be divisible by "
                                           r"groups \(2\)"),
    (lambda: nn.Conv2d(4, 6, 3, groups=4), r"Conv2d: out_channels \(6\) must be divisible"),
    (lambda: nn.Conv2d(4, 6, 3, groups=0), r"Conv2d: groups must be a positive integer"),
    (lambda: nn.Conv2d(1, 1, 3, stride=2, padding="same"), r"Conv2d: padding='same' is not "
                                                           r"supported for strided"),
    (lambda: nn.Conv1d(1, 1, 3, padding="full"), r"Conv1d: padding must be 'same', 'valid'"),
    (lambda: nn.Conv2d(1, 1, 3, padding_mode="mirror"), r"Conv2d: padding_mode must be one"),
    (lambda: nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect"),
     r"Only 'zeros' padding mode is supported for ConvTranspose2d"),
])
def test_layer_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@needs_torch
def test_lenet_features_match_torch():
    """conv 6@5x5, relu, pool, conv 16@5x5, relu, pool on 1x28x28: values and all gradients."""
    def features(lib, x, w1, b1, w2, b2):
        f = lib.nn.functional
        h = f.max_pool2d(f.relu(f.conv2d(x, w1, b1)), 2)
        return f.max_pool2d(f.relu(f.conv2d(h, w2, b2)), 2)

    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in
              [(4, 1, 28, 28), (6, 1, 5, 5), (6,), (16, 6, 5, 5), (16,)]]
    ours = [gradlab.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    yg, yt = features(gradlab, *ours), features(torch, *theirs)
    assert tuple(yg.shape) == (4, 16, 4, 4)
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-4)
    yg.sum().backward()
    yt.sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-3, atol=1e-3)


@needs_torch
def test_channels_last_conv_weights_lay_out_and_train_as_torchs():
    """Module.to(memory_format=) and nn.utils.convert_conv2d_weight_memory_format: PyTorch's
    strides, and the same values after a training step."""
    rng = np.random.default_rng(5)
    w, b = rng.normal(size=(4, 3, 3, 3)), rng.normal(size=4)
    x = rng.normal(size=(2, 3, 6, 6))
    results = []
    for lib in (gradlab, torch):
        conv = lib.nn.Conv2d(3, 4, 3).double()
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(w))
            conv.bias.copy_(lib.tensor(b))
        model = lib.nn.Sequential(conv, lib.nn.Sequential(lib.nn.ConvTranspose2d(4, 2, 3)))
        lib.nn.utils.convert_conv2d_weight_memory_format(model, lib.channels_last)
        moved = lib.nn.Conv2d(3, 4, 3).to(lib.float64, memory_format=lib.channels_last)
        strides = (conv.weight.stride(), model[1][0].weight.stride(), moved.weight.stride(),
                   moved.bias.stride())
        opt = lib.optim.SGD(conv.parameters(), lr=0.1)
        conv(lib.tensor(x)).square().sum().backward()
        opt.step()
        results.append((strides, conv.weight.detach().numpy().copy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)
