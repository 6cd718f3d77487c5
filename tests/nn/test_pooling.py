"""Pooling: max/avg/adaptive pools vs a loop NumPy reference, gradchecks and PyTorch.

Also ties and NaN (which max wins, where the gradient goes), return_indices,
the layers' reprs, and every error the ops raise.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import gradlab
import gradlab.nn as nn
from tests.nn.test_convolution import torch_twin
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch


def _pairs(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def np_pool(np, x, kernel, stride=None, padding=0, dilation=1, ceil_mode=False, kind="max",
            count_include_pad=True, divisor_override=None, indices=False):
    """Pooling by its definition, one window at a time (PyTorch's size and divisor rules)."""
    n_sp = x.ndim - 2
    k = _pairs(kernel, n_sp)
    s = _pairs(stride if stride is not None else kernel, n_sp)
    p, d = _pairs(padding, n_sp), _pairs(dilation, n_sp)
    size = x.shape[2:]
    out_size = []
    for i in range(n_sp):
        o = (size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1 + (s[i] - 1 if ceil_mode else 0)) \
            // s[i] + 1
        if ceil_mode and (o - 1) * s[i] >= size[i] + p[i]:
            o -= 1
        out_size.append(o)
    out = np.zeros(x.shape[:2] + tuple(out_size))
    where = np.zeros(out.shape, dtype=np.int64)
    for pos in np.ndindex(*out_size):
        starts = [q * s[i] - p[i] for i, q in enumerate(pos)]
        coords = [[st_ + j * d[i] for j in range(k[i])] for i, st_ in enumerate(starts)]
        inside = [[c for c in cs if 0 <= c < size[i]] for i, cs in enumerate(coords)]
        window = x[(slice(None), slice(None)) + np.ix_(*inside)].reshape(x.shape[:2] + (-1,))
        flat = np.ravel_multi_index(np.ix_(*inside), size).ravel()
        at = (slice(None), slice(None)) + pos
        if kind == "max":
            out[at] = window.max(-1)
            where[at] = flat[window.argmax(-1)]  # argmax: the first max, as PyTorch
        else:
            if divisor_override:
                div = divisor_override
            elif count_include_pad:
                div = np.prod([min(st_ + k[i], size[i] + p[i]) - st_
                               for i, st_ in enumerate(starts)])
            else:
                div = window.shape[-1]
            out[at] = window.sum(-1) / div
    return where if indices else out


def F(lib):
    return lib.nn.functional


POOL = [
    OpCase("max_pool2d", lambda lib, x: F(lib).max_pool2d(x, 2), ((2, 3, 6, 8),),
           numpy=lambda np, x: np_pool(np, x, 2)),
    OpCase("max_pool2d_odd_size_floor", lambda lib, x: F(lib).max_pool2d(x, 2), ((1, 2, 5, 7),),
           numpy=lambda np, x: np_pool(np, x, 2)),
    OpCase("max_pool2d_overlap_pad", lambda lib, x: F(lib).max_pool2d(x, 3, 2, 1),
           ((2, 2, 7, 6),), numpy=lambda np, x: np_pool(np, x, 3, 2, 1)),
    OpCase("max_pool2d_dilation_ceil",
           lambda lib, x: F(lib).max_pool2d(x, (3, 2), (2, 1), (1, 0), (1, 2), ceil_mode=True),
           ((1, 2, 8, 7),),
           numpy=lambda np, x: np_pool(np, x, (3, 2), (2, 1), (1, 0), (1, 2), True)),
    OpCase("max_pool2d_ceil", lambda lib, x: F(lib).max_pool2d(x, 3, 2, ceil_mode=True),
           ((1, 2, 6, 8),), numpy=lambda np, x: np_pool(np, x, 3, 2, ceil_mode=True)),
    OpCase("max_pool2d_indices",
           lambda lib, x: F(lib).max_pool2d(x, 3, 2, 1, return_indices=True)[1],
           ((2, 2, 7, 6),), numpy=lambda np, x: np_pool(np, x, 3, 2, 1, indices=True),
           grad=False, strided=False),
    OpCase("max_pool2d_unbatched", lambda lib, x: F(lib).max_pool2d(x, 2, 1), ((2, 4, 5),),
           numpy=lambda np, x: np_pool(np, x[None], 2, 1)[0]),
    OpCase("max_pool1d", lambda lib, x: F(lib).max_pool1d(x, 3, 2, 1), ((2, 3, 9),),
           numpy=lambda np, x: np_pool(np, x, 3, 2, 1)),
    OpCase("max_pool1d_dilation_ceil",
           lambda lib, x: F(lib).max_pool1d(x, 2, 3, 0, 2, ceil_mode=True), ((1, 2, 10),),
           numpy=lambda np, x: np_pool(np, x, 2, 3, 0, 2, True)),
    OpCase("avg_pool2d", lambda lib, x: F(lib).avg_pool2d(x, 2), ((2, 3, 6, 8),),
           numpy=lambda np, x: np_pool(np, x, 2, kind="avg")),
    OpCase("avg_pool2d_pad_ceil",
           lambda lib, x: F(lib).avg_pool2d(x, 3, 2, 1, ceil_mode=True), ((1, 2, 6, 7),),
           numpy=lambda np, x: np_pool(np, x, 3, 2, 1, ceil_mode=True, kind="avg")),
    OpCase("avg_pool2d_exclude_pad",
           lambda lib, x: F(lib).avg_pool2d(x, (3, 2), (2, 1), (1, 1), True, False),
           ((1, 2, 6, 5),),
           numpy=lambda np, x: np_pool(np, x, (3, 2), (2, 1), (1, 1), ceil_mode=True,
                                       kind="avg", count_include_pad=False)),
    OpCase("avg_pool2d_divisor_override",
           lambda lib, x: F(lib).avg_pool2d(x, 2, 1, 1, divisor_override=3), ((1, 2, 4, 5),),
           numpy=lambda np, x: np_pool(np, x, 2, 1, 1, kind="avg", divisor_override=3)),
    OpCase("avg_pool1d", lambda lib, x: F(lib).avg_pool1d(x, 3, 2, 1, True, False),
           ((2, 2, 8),),
           numpy=lambda np, x: np_pool(np, x, 3, 2, 1, ceil_mode=True, kind="avg",
                                       count_include_pad=False)),
    OpCase("adaptive_avg_pool2d", lambda lib, x: F(lib).adaptive_avg_pool2d(x, (4, 3)),
           ((2, 2, 9, 7),)),
    OpCase("adaptive_avg_pool2d_global", lambda lib, x: F(lib).adaptive_avg_pool2d(x, 1),
           ((2, 3, 5, 4),), numpy=lambda np, x: x.mean((2, 3), keepdims=True)),
    OpCase("adaptive_avg_pool2d_none", lambda lib, x: F(lib).adaptive_avg_pool2d(x, (None, 2)),
           ((1, 2, 3, 4),)),
    OpCase("adaptive_avg_pool1d", lambda lib, x: F(lib).adaptive_avg_pool1d(x, 4),
           ((2, 3, 7),)),
    OpCase("adaptive_max_pool2d", lambda lib, x: F(lib).adaptive_max_pool2d(x, (2, 3)),
           ((2, 2, 6, 6),), numpy=lambda np, x: np_pool(np, x, (3, 2))),
    OpCase("adaptive_max_pool1d", lambda lib, x: F(lib).adaptive_max_pool1d(x, 2),
           ((1, 2, 6),), numpy=lambda np, x: np_pool(np, x, 3)),
    # uneven, overlapping windows (7 into 3, 5 into 2): gathered, masked, then max
    OpCase("adaptive_max_pool2d_uneven", lambda lib, x: F(lib).adaptive_max_pool2d(x, (3, 2)),
           ((2, 2, 7, 5),)),
    OpCase("adaptive_max_pool2d_uneven_indices", lambda lib, x: F(lib).adaptive_max_pool2d(
        x, (3, 2), return_indices=True), ((1, 2, 7, 5),)),
    OpCase("adaptive_max_pool1d_uneven_indices", lambda lib, x: F(lib).adaptive_max_pool1d(
        x, 3, return_indices=True), ((2, 3, 7),)),
]

globals().update(standard_op_tests(POOL))


# --- ties and NaN: which max wins ----------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("args", [(2,), (3, 2, 1), (3, 1), ((2, 3), (1, 2), 0, (2, 1))])
def test_max_pool_ties_go_to_the_first_max_like_torch(args):
    """Many equal values (small integers, ReLU zeros): indices and gradients as PyTorch."""
    x = np.random.default_rng(0).integers(0, 3, size=(2, 3, 7, 8)).astype(np.float64)
    ours = gradlab.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    og, ig = gradlab.nn.functional.max_pool2d(ours, *args, return_indices=True)
    ot, it = torch.nn.functional.max_pool2d(theirs, *args, return_indices=True)
    np.testing.assert_array_equal(ig.numpy(), it.numpy())
    cot = np.random.default_rng(1).standard_normal(tuple(ot.shape))
    og.backward(gradlab.tensor(cot))
    ot.backward(torch.tensor(cot))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


@needs_torch
@pytest.mark.parametrize("args", [(3, 2, 1), (2,)])  # overlapping windows; tiled windows
def test_max_pool_nan_wins_like_torch(args):
    """NaN is the max, and the gradient goes to the window's last NaN, as in PyTorch."""
    x = np.random.default_rng(2).standard_normal((1, 2, 6, 6))
    x[0, 0, 1, 1] = x[0, 0, 0, 1] = x[0, 1, 4, 5] = x[0, 1, 5, 4] = np.nan
    ours, theirs = gradlab.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    og, ig = gradlab.nn.functional.max_pool2d(ours, *args, return_indices=True)
    ot, it = torch.nn.functional.max_pool2d(theirs, *args, return_indices=True)
    np.testing.assert_array_equal(np.isnan(og.detach().numpy()), np.isnan(ot.detach().numpy()))
    assert np.isnan(og.detach().numpy()).any()
    np.testing.assert_array_equal(ig.numpy(), it.numpy())
    cot = np.random.default_rng(3).standard_normal(tuple(ot.shape))
    gradlab.nn.functional.max_pool2d(ours, *args).backward(gradlab.tensor(cot))
    ot.backward(torch.tensor(cot))  # overlapping windows add in another order: 1 ulp
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


@needs_torch
@pytest.mark.parametrize("args", [(2,), (2, 2, 1), ((2, 3), None, 0, 1, True), (3,)])
def test_tiled_max_pool_second_derivative_like_torch(args):
    """Tiled windows (stride = kernel) keep a mask: grad of grad is a gather, as PyTorch's."""
    rng = np.random.default_rng(5)
    x, cot, v = rng.standard_normal((2, 3, 7, 9)), None, None
    ours, theirs = gradlab.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    results = []
    for lib, t in ((gradlab, ours), (torch, theirs)):
        y = lib.nn.functional.max_pool2d(t, *args)
        cot = rng.standard_normal(tuple(y.shape)) if cot is None else cot
        c = lib.tensor(cot, requires_grad=True)
        (gx,) = lib.autograd.grad(y, t, c, create_graph=True)
        v = rng.standard_normal(tuple(gx.shape)) if v is None else v
        (gc,) = lib.autograd.grad(gx, c, lib.tensor(v))
        results.append((gx.detach().numpy(), gc.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@needs_torch
@pytest.mark.parametrize("pool, args", [
    ("max_pool2d", (2, 2, 1)), ("max_pool2d", (3, 1, 1)), ("max_pool2d", ((3, 2), 2, (1, 1), 2)),
    ("max_pool1d", (3, 2, 1)), ("adaptive_max_pool2d", ((3, 4),)),
    ("adaptive_max_pool2d", ((2, 5),))])
def test_max_pool_windows_of_minus_inf_and_nan_pick_as_torch(pool, args):
    """A window of -inf keeps its first position inside the input (the padding is -inf
    too, and once won the tie: a negative index, the gradient lost); among NaNs the
    last wins, in adaptive windows as well."""
    rng = np.random.default_rng(7)
    shape = (1, 2, 7) if pool == "max_pool1d" else (1, 2, 5, 7)
    x = rng.choice([-np.inf, 0.0, 1.0, np.nan], size=shape, p=[0.7, 0.1, 0.1, 0.1])
    ours, theirs = gradlab.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    og, ig = getattr(gradlab.nn.functional, pool)(ours, *args, return_indices=True)
    ot, it = getattr(torch.nn.functional, pool)(theirs, *args, return_indices=True)
    np.testing.assert_array_equal(ig.numpy(), it.numpy())
    np.testing.assert_array_equal(og.detach().numpy(), ot.detach().numpy())
    cot = rng.standard_normal(tuple(ot.shape))
    og.backward(gradlab.tensor(cot))
    ot.backward(torch.tensor(cot))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def test_adaptive_pools_give_contiguous_outputs_and_take_numpy_sizes():
    """Uneven windows gather in another order; the result is C-ordered, as PyTorch's, so
    ``.view(n, -1)`` after the pool works. NumPy integers are sizes too."""
    x = gradlab.randn(2, 3, 7, 9)
    y = gradlab.nn.functional.adaptive_avg_pool2d(x, (3, 4))
    assert y.is_contiguous() and y.view(2, -1).shape == (2, 36)
    size = np.int64(2)
    assert gradlab.nn.functional.adaptive_max_pool2d(x, size).shape == (2, 3, 2, 2)
    assert gradlab.nn.functional.max_pool2d(x, size).shape == (2, 3, 3, 4)
    with pytest.raises(TypeError, match="adaptive_avg_pool2d: output_size must be ints"):
        gradlab.nn.functional.adaptive_avg_pool2d(x, (2.5, 2))


def test_max_pool_gradient_goes_to_the_first_max_without_torch():
    x = gradlab.tensor([[[[1.0, 3.0], [3.0, 0.0]]]], requires_grad=True)
    out, idx = gradlab.nn.functional.max_pool2d(x, 2, return_indices=True)
    out.backward(gradlab.ones_like(out))
    assert out.item() == 3.0 and idx.item() == 1
    np.testing.assert_array_equal(x.grad.numpy(), [[[[0.0, 1.0], [0.0, 0.0]]]])


@pytest.mark.parametrize("args", [(2,), (3, 1)])  # tiled windows; overlapping windows
def test_max_pool_frees_what_it_saved_after_backward(args):
    """A second backward through the same graph is an error, as in PyTorch."""
    x = gradlab.randn(1, 2, 4, 4, requires_grad=True)
    y = gradlab.nn.functional.max_pool2d(x, *args).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time: .max_pool2d"):
        y.backward()


def test_overlapping_windows_add_their_gradients():
    """An input that is the max of several windows collects all their gradients."""
    x = gradlab.zeros(1, 1, 5, 5)
    x.data[0, 0, 2, 2] = 1.0
    x.requires_grad_()
    y = gradlab.nn.functional.max_pool2d(x, 3, 1)
    assert tuple(y.shape) == (1, 1, 3, 3) and float(y.sum()) == 9.0
    y.sum().backward()
    assert x.grad.numpy()[0, 0, 2, 2] == 9.0 and x.grad.numpy().sum() == 9.0


def test_max_pool_tangent_is_the_input_tangent_at_the_max_and_indices_have_none():
    """Forward mode: each output moves as its window's max moves (the winners stay put)."""
    from gradlab.autograd import forward_ad as fwAD

    rng = np.random.default_rng(7)
    x, v = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((2, 3, 6, 6))
    with fwAD.dual_level():
        dual = fwAD.make_dual(gradlab.tensor(x), gradlab.tensor(v))
        out, idx = gradlab.nn.functional.max_pool2d(dual, 3, 2, 1, return_indices=True)
        tangent = fwAD.unpack_dual(out).tangent
        assert fwAD.unpack_dual(idx).tangent is None
    flat = idx.numpy().reshape(2, 3, -1)
    want = np.take_along_axis(v.reshape(2, 3, -1), flat, axis=-1).reshape(tuple(out.shape))
    np.testing.assert_array_equal(tangent.numpy(), want)


@pytest.mark.parametrize("pool", [
    lambda F, x: F.max_pool2d(x, 3, 2, 1),  # overlapping windows: the scatter adds up
    lambda F, x: F.max_pool1d(x.flatten(2), 2, dilation=2, ceil_mode=True),
    lambda F, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
    lambda F, x: F.adaptive_avg_pool2d(x, (4, 3)),  # 7 x 5 to 4 x 3: averaging matrices
], ids=["max_pool2d", "max_pool1d", "avg_pool2d", "adaptive_avg_pool2d"])
def test_hessian_vector_product_by_forward_over_reverse(pool):
    """H·v of Σ pool(x)³: the tangent of the gradient runs the tangent rules of the pools'
    backward ops (max pool's scatter, avg pool's spread) and matches a central difference."""
    from tests.nn.test_convolution import hvp_two_ways

    x = np.random.default_rng(8).standard_normal((2, 3, 7, 5))
    (hvp,), (want,) = hvp_two_ways(
        lambda t: pool(gradlab.nn.functional, t).pow(3).sum(), [x])
    np.testing.assert_allclose(hvp, want, rtol=1e-5, atol=1e-6)


def test_pool_keeps_dtype_and_names_the_op():
    x = gradlab.randn(2, 3, 4, 4, requires_grad=True)
    y = gradlab.nn.functional.max_pool2d(x, 2)
    z = gradlab.nn.functional.avg_pool2d(x, 2)
    assert y.dtype is gradlab.float32 and z.dtype is gradlab.float32
    assert y.grad_fn.op == "max_pool2d" and z.grad_fn.op == "avg_pool2d"


# --- properties --------------------------------------------------------------------------------

@needs_torch
@settings(max_examples=30, deadline=None)
@given(data=st.data(), kind=st.sampled_from(["max", "avg"]))
def test_pools_match_torch_on_random_geometry(data, kind):
    draw = data.draw
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    d = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) if kind == "max" else (1, 1)
    p = tuple(draw(st.integers(0, kk // 2)) for kk in k)
    ceil = draw(st.booleans())
    size = [draw(st.integers(max(1, dd * (kk - 1) + 1 - 2 * pp), 8)) for kk, dd, pp in
            zip(k, d, p)]
    x = np.random.default_rng(0).standard_normal((2, 2, *size))
    ours, theirs = gradlab.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    # PyTorch returns garbage for a dilated window that holds only padding: skip those.
    assume(all(any(0 <= q * ss - pp + j * dd < n for j in range(kk)) for n, kk, ss, pp, dd in
               zip(size, k, s, p, d) for q in range(n + 2 * pp)
               if q * ss - pp + dd * (kk - 1) < n + pp))
    if kind == "max":
        y = gradlab.nn.functional.max_pool2d(ours, k, s, p, d, ceil)
        t = torch.nn.functional.max_pool2d(theirs, k, s, p, d, ceil)
    else:
        include = draw(st.booleans())
        y = gradlab.nn.functional.avg_pool2d(ours, k, s, p, ceil, include)
        t = torch.nn.functional.avg_pool2d(theirs, k, s, p, ceil, include)
    assert tuple(y.shape) == tuple(t.shape)
    np.testing.assert_allclose(y.detach().numpy(), t.detach().numpy(), rtol=1e-12)
    cot = np.random.default_rng(1).standard_normal(tuple(t.shape))
    y.backward(gradlab.tensor(cot))
    t.backward(torch.tensor(cot))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-14)


# --- errors -------------------------------------------------------------------------------------

def _t(*shape, dtype=None):
    return gradlab.zeros(*shape, dtype=dtype)


POOL_ERRORS = [
    (lambda: gradlab.max_pool2d(_t(1, 1, 4, 4), 3, padding=2),
     r"max_pool2d: padding \(2, 2\) must be between 0 and half the kernel_size \(3, 3\).*<= 1"),
    (lambda: gradlab.max_pool2d(_t(1, 1, 2, 2), 3),
     r"max_pool2d: input of shape \(1, 1, 2, 2\) is too small for kernel_size \(3, 3\)"),
    (lambda: gradlab.max_pool2d(_t(4, 4), 2),
     r"max_pool2d: expected a 3-D \(unbatched\) or 4-D \(batched\) input.*\(4, 4\)"),
    (lambda: gradlab.max_pool2d(_t(1, 1, 4, 4), 2, stride=0),
     r"max_pool2d: stride must be positive, got \(0, 0\)"),
    (lambda: gradlab.max_pool2d(_t(1, 1, 4, 4), (2, 2, 2)),
     r"max_pool2d: kernel_size must be an int or a tuple of 2 ints"),
    (lambda: gradlab.max_pool2d(_t(1, 1, 4, 4, dtype=gradlab.int64), 2),
     r"max_pool2d: expected a floating point input.*\.float\(\)"),
    (lambda: gradlab.max_pool1d(_t(1, 2), 3),
     r"max_pool1d: input of shape \(1, 2\) is too small"),
    (lambda: gradlab.avg_pool1d(_t(1, 1, 4), 2, padding=2),
     r"avg_pool1d: padding \(2,\) must be between 0 and half"),
    (lambda: gradlab.nn.functional.avg_pool2d(_t(1, 1, 4, 4), 2, divisor_override=0),
     r"avg_pool2d: divisor_override must be non-zero"),
    (lambda: gradlab.nn.functional.adaptive_avg_pool2d(_t(1, 1, 4, 4), (0, 2)),
     r"adaptive_avg_pool2d: output_size must be 2 positive ints"),
    (lambda: gradlab.nn.functional.adaptive_max_pool2d(_t(1, 1, 5, 4), (2, -1)),
     r"adaptive_max_pool2d: output_size must be 2 positive ints"),
]


@pytest.mark.parametrize("call, message", POOL_ERRORS, ids=[str(i) for i in
                                                             range(len(POOL_ERRORS))])
def test_pool_errors_name_the_op_and_the_fix(call, message):
    with pytest.raises((RuntimeError, ValueError, NotImplementedError), match=message):
        call()


# --- layers ----------------------------------------------------------------------------------

POOL_LAYERS = [
    ("MaxPool2d", (2,), {}), ("MaxPool2d", ((3, 2), 1, 1), dict(ceil_mode=True)),
    ("MaxPool1d", (3, 2), dict(dilation=2)), ("AvgPool1d", (3,), {}),
    ("AvgPool2d", (3, 2, 1), dict(count_include_pad=False)),
    ("AdaptiveAvgPool2d", ((2, 3),), {}), ("AdaptiveAvgPool1d", (3,), {}),
    ("AdaptiveMaxPool2d", (2,), {}), ("AdaptiveMaxPool1d", (2,), {}),
]


@needs_torch
@pytest.mark.parametrize("name, args, kwargs", POOL_LAYERS,
                         ids=[f"{n}{i}" for i, (n, _, _) in enumerate(POOL_LAYERS)])
def test_pool_layer_matches_torch(name, args, kwargs):
    ours, theirs = torch_twin(name, args, kwargs)
    assert list(ours.state_dict()) == []
    shape = (2, 3, 8) if name.endswith("1d") else (2, 3, 8, 6)
    x = np.random.default_rng(0).standard_normal(shape)
    np.testing.assert_allclose(ours(gradlab.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(),
                               rtol=1e-12)


def test_max_pool_layer_return_indices():
    out, idx = nn.MaxPool2d(2, return_indices=True)(gradlab.arange(16.0).reshape(1, 1, 4, 4))
    np.testing.assert_array_equal(out.numpy().ravel(), [5, 7, 13, 15])
    np.testing.assert_array_equal(idx.numpy().ravel(), [5, 7, 13, 15])
    assert idx.dtype is gradlab.int64
