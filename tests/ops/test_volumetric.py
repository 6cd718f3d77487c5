"""3-D convolutions and pools (compositions of the 2-D ops over depth) vs loop NumPy
references, gradchecks, forward mode and PyTorch; ties and NaN (which max wins and where
its gradient goes, its D·H·W index), random geometries, and every error the ops raise."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.nn.test_convolution import np_conv, np_conv_transpose
from tests.nn.test_pooling import np_pool
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch

pytestmark = pytest.mark.filterwarnings("ignore:Using padding=.same.")


def F(lib):
    return lib.nn.functional


def np_adaptive(np, x, out, kind="avg", indices=False):
    """Adaptive pooling by its definition: windows [⌊i·n/o⌋, ⌈(i+1)·n/o⌉) along each dim."""
    size = x.shape[2:]
    result = np.zeros(x.shape[:2] + tuple(out))
    where = np.zeros(result.shape, dtype=np.int64)
    for pos in np.ndindex(*out):
        ranges = [np.arange(i * n // o, -(-(i + 1) * n // o)) for i, n, o in zip(pos, size, out)]
        window = x[(slice(None), slice(None)) + np.ix_(*ranges)].reshape(x.shape[:2] + (-1,))
        at = (slice(None), slice(None)) + pos
        result[at] = window.mean(-1) if kind == "avg" else window.max(-1)
        where[at] = np.ravel_multi_index(np.ix_(*ranges), size).ravel()[window.argmax(-1)]
    return (result, where) if indices else result


CONV = [
    OpCase("conv3d", lambda lib, x, w, b: F(lib).conv3d(x, w, b),
           ((2, 2, 3, 4, 3), (2, 2, 2, 3, 2), (2,)), numpy=np_conv),
    OpCase("conv3d_stride_padding_dilation_groups",
           lambda lib, x, w, b: F(lib).conv3d(x, w, b, (2, 1, 2), (1, 0, 1), (1, 2, 1), 2),
           ((1, 4, 4, 3, 4), (4, 2, 2, 2, 2), (4,)),
           numpy=lambda np, x, w, b: np_conv(np, x, w, b, (2, 1, 2), (1, 0, 1), (1, 2, 1), 2)),
    OpCase("conv3d_same_even_kernel",
           lambda lib, x, w: F(lib).conv3d(x, w, padding="same", dilation=(1, 1, 2)),
           ((1, 2, 4, 3, 5), (2, 2, 2, 3, 2)),
           numpy=lambda np, x, w: np_conv(np, x, w, None, 1, "same", (1, 1, 2))),
    OpCase("conv3d_valid_depth_padding_only",
           lambda lib, x, w: F(lib).conv3d(x, w, None, 1, (2, 0, 0)),
           ((1, 2, 2, 3, 3), (2, 2, 3, 2, 2)),
           numpy=lambda np, x, w: np_conv(np, x, w, None, 1, (2, 0, 0))),
    OpCase("conv3d_unbatched", lambda lib, x, w: F(lib).conv3d(x, w, padding=1),
           ((2, 3, 4, 3), (2, 2, 2, 3, 2)),
           numpy=lambda np, x, w: np_conv(np, x[None], w, None, 1, 1)[0]),
    OpCase("conv_transpose3d", lambda lib, x, w, b: F(lib).conv_transpose3d(x, w, b),
           ((2, 3, 3, 2, 3), (3, 2, 2, 3, 2), (2,)), numpy=np_conv_transpose),
    OpCase("conv_transpose3d_all_arguments",
           lambda lib, x, w, b: F(lib).conv_transpose3d(x, w, b, (2, 1, 2), (1, 0, 1),
                                                        (1, 0, 1), 2, (1, 2, 1)),
           ((1, 4, 3, 2, 3), (4, 1, 3, 2, 2), (2,)),
           numpy=lambda np, x, w, b: np_conv_transpose(np, x, w, b, (2, 1, 2), (1, 0, 1),
                                                       (1, 0, 1), 2, (1, 2, 1))),
    OpCase("conv_transpose3d_gaps_and_unbatched",  # stride 3 > kernel 2: depths nothing hits
           lambda lib, x, w: F(lib).conv_transpose3d(x, w, stride=(3, 1, 1), padding=(1, 0, 0)),
           ((2, 3, 2, 3), (2, 2, 2, 2, 2)),
           numpy=lambda np, x, w: np_conv_transpose(np, x[None], w, None, (3, 1, 1),
                                                    (1, 0, 0))[0]),
]

POOL = [
    OpCase("max_pool3d", lambda lib, x: F(lib).max_pool3d(x, 2), ((2, 2, 4, 2, 4),),
           numpy=lambda np, x: np_pool(np, x, 2)),
    OpCase("max_pool3d_pad_dilation_ceil",
           lambda lib, x: F(lib).max_pool3d(x, 3, 2, 1, (2, 1, 1), ceil_mode=True),
           ((1, 1, 6, 5, 4),), numpy=lambda np, x: np_pool(np, x, 3, 2, 1, (2, 1, 1), True)),
    OpCase("max_pool3d_indices",
           lambda lib, x: F(lib).max_pool3d(x, (2, 3, 2), 1, (1, 1, 0), return_indices=True),
           ((1, 2, 3, 4, 3),),
           numpy=lambda np, x: (np_pool(np, x, (2, 3, 2), 1, (1, 1, 0)),
                                np_pool(np, x, (2, 3, 2), 1, (1, 1, 0), indices=True))),
    OpCase("max_pool3d_unbatched", lambda lib, x: F(lib).max_pool3d(x, 2, 1), ((2, 3, 4, 3),),
           numpy=lambda np, x: np_pool(np, x[None], 2, 1)[0]),
    OpCase("avg_pool3d", lambda lib, x: F(lib).avg_pool3d(x, 2), ((2, 2, 4, 2, 4),),
           numpy=lambda np, x: np_pool(np, x, 2, kind="avg")),
    # ceil mode: the last window starts inside but hangs over the input's end (6 = 2·2 + 2)
    OpCase("avg_pool3d_ceil_overhang", lambda lib, x: F(lib).avg_pool3d(x, 3, 2, 0, True),
           ((1, 1, 6, 3, 6),), numpy=lambda np, x: np_pool(np, x, 3, 2, 0, ceil_mode=True,
                                                           kind="avg")),
    OpCase("avg_pool3d_pad_ceil_exclude_pad",
           lambda lib, x: F(lib).avg_pool3d(x, (3, 2, 3), (2, 1, 2), 1, True, False),
           ((1, 1, 5, 4, 6),),
           numpy=lambda np, x: np_pool(np, x, (3, 2, 3), (2, 1, 2), 1, ceil_mode=True,
                                       kind="avg", count_include_pad=False)),
    OpCase("avg_pool3d_divisor_override",
           lambda lib, x: F(lib).avg_pool3d(x, 2, 1, 1, divisor_override=3), ((1, 2, 3, 4, 3),),
           numpy=lambda np, x: np_pool(np, x, 2, 1, 1, kind="avg", divisor_override=3)),
    OpCase("avg_pool3d_unbatched", lambda lib, x: F(lib).avg_pool3d(x, (1, 2, 2)),
           ((2, 3, 4, 4),), numpy=lambda np, x: np_pool(np, x[None], (1, 2, 2), kind="avg")[0]),
    OpCase("adaptive_avg_pool3d", lambda lib, x: F(lib).adaptive_avg_pool3d(x, (3, 2, 4)),
           ((1, 1, 5, 3, 7),), numpy=lambda np, x: np_adaptive(np, x, (3, 2, 4))),
    OpCase("adaptive_avg_pool3d_global_none",
           lambda lib, x: F(lib).adaptive_avg_pool3d(x, (1, None, 2)), ((2, 3, 4, 4),)),
    OpCase("adaptive_max_pool3d", lambda lib, x: F(lib).adaptive_max_pool3d(x, (3, 2, 3)),
           ((1, 1, 5, 3, 5),), numpy=lambda np, x: np_adaptive(np, x, (3, 2, 3), "max")),
    OpCase("adaptive_max_pool3d_indices",
           lambda lib, x: F(lib).adaptive_max_pool3d(x, (2, 3, 2), return_indices=True),
           ((1, 1, 3, 4, 5),),
           numpy=lambda np, x: np_adaptive(np, x, (2, 3, 2), "max", indices=True)),
    OpCase("adaptive_max_pool3d_equal_windows_unbatched",
           lambda lib, x: F(lib).adaptive_max_pool3d(x, 2), ((2, 4, 2, 4),),
           numpy=lambda np, x: np_adaptive(np, x[None], (2, 2, 2), "max")[0]),
]

globals().update(standard_op_tests(CONV, prefix="conv_"))
globals().update(standard_op_tests(POOL, prefix="pool_"))


def test_exported_where_pytorch_exports_them():
    for name in ("conv3d", "conv_transpose3d", "max_pool3d"):
        assert getattr(gradlab, name) is getattr(gradlab.nn.functional, name)
    for name in ("avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d"):
        assert not hasattr(gradlab, name) and callable(getattr(gradlab.nn.functional, name))


def test_outputs_are_contiguous_like_torch_so_view_works():
    x = gradlab.randn(2, 2, 4, 4, 4)
    outputs = [gradlab.conv3d(x, gradlab.randn(3, 2, 2, 2, 2)),
               gradlab.conv_transpose3d(x, gradlab.randn(2, 3, 2, 2, 2)),
               *F(gradlab).max_pool3d(x, 2, return_indices=True), F(gradlab).avg_pool3d(x, 2),
               F(gradlab).adaptive_avg_pool3d(x, 3), *F(gradlab).adaptive_max_pool3d(x, 3, True)]
    for y in outputs:
        assert y.is_contiguous() and y.view(2, -1).shape[0] == 2


# --- ties and NaN: which max wins ------------------------------------------------------------

MAX_POOLS = [
    lambda lib, x: F(lib).max_pool3d(x, 2, return_indices=True),
    lambda lib, x: F(lib).max_pool3d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
    lambda lib, x: F(lib).max_pool3d(x, (3, 2, 2), (1, 2, 1), (1, 0, 1), (2, 1, 2),
                                     return_indices=True),
    lambda lib, x: F(lib).adaptive_max_pool3d(x, (3, 2, 3), return_indices=True),
    lambda lib, x: F(lib).adaptive_max_pool3d(x, (2, 3, 2), return_indices=True),
]


def _run_both(pool, x, cot_seed=0):
    ours, theirs = gradlab.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (yg, ig), (yt, it) = pool(gradlab, ours), pool(torch, theirs)
    cot = np.random.default_rng(cot_seed).standard_normal(tuple(yt.shape))
    yg.backward(gradlab.tensor(cot))
    yt.backward(torch.tensor(cot))
    return (yg, ig, ours.grad), (yt, it, theirs.grad)


@needs_torch
@pytest.mark.parametrize("pool", MAX_POOLS, ids=range(len(MAX_POOLS)))
def test_ties_go_to_the_first_max_in_depth_row_column_order_like_torch(pool):
    """Inputs of 0s and 1s tie everywhere: the index and the gradient's one target must be
    PyTorch's (the first max scanning depth, then rows, then columns)."""
    x = np.random.default_rng(1).integers(0, 2, (2, 2, 5, 6, 5)).astype(float)
    x[0, 0, :2, :2, :2] = 1.0  # a whole window of equal values
    (yg, ig, gg), (yt, it, gt) = _run_both(pool, x)
    np.testing.assert_array_equal(yg.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(ig.numpy(), it.numpy())
    np.testing.assert_allclose(gg.numpy(), gt.numpy(), rtol=1e-12, atol=0)


def test_a_tie_across_depth_and_rows_picks_the_earlier_depth_without_torch():
    """(d=0, h=1) and (d=1, h=0) tie: depth comes first in the scan, so d=0 wins (a max over
    depth first, then over the plane, would pick h=0)."""
    x = np.zeros((1, 1, 2, 2, 1))
    x[0, 0, 0, 1, 0] = x[0, 0, 1, 0, 0] = 5.0
    xt = gradlab.tensor(x, requires_grad=True)
    y, index = gradlab.max_pool3d(xt, (2, 2, 1), return_indices=True)
    y.sum().backward()
    assert index.item() == 1  # d·H·W + h·W + w = 0 + 1 + 0
    assert xt.grad.numpy()[0, 0, 0, 1, 0] == 1 and xt.grad.numpy().sum() == 1


@needs_torch
@pytest.mark.parametrize("pool", MAX_POOLS, ids=range(len(MAX_POOLS)))
def test_nan_wins_and_inf_stays_like_torch(pool):
    x = np.random.default_rng(2).integers(0, 3, (1, 2, 5, 6, 5)).astype(float)
    mask = np.random.default_rng(3).random(x.shape)
    x[mask < 0.06], x[mask > 0.95] = np.nan, -np.inf
    (yg, ig, gg), (yt, it, gt) = _run_both(pool, x)
    np.testing.assert_array_equal(yg.detach().numpy(), yt.detach().numpy())  # NaN == NaN here
    np.testing.assert_array_equal(ig.numpy(), it.numpy())
    np.testing.assert_allclose(gg.numpy(), gt.numpy(), rtol=1e-12, atol=0)


# --- random geometries --------------------------------------------------------------------------

def _compare(ours_fn, theirs_fn, arrays, rtol=1e-10, grads=True):
    ours = [gradlab.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, t = ours_fn(*ours), theirs_fn(*theirs)
    assert tuple(y.shape) == tuple(t.shape)
    np.testing.assert_allclose(y.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=1e-12)
    if not grads:
        return
    cot = np.random.default_rng(0).standard_normal(tuple(t.shape))
    y.backward(gradlab.tensor(cot))
    t.backward(torch.tensor(cot))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=1e-12)


triples = st.tuples


@needs_torch
@settings(max_examples=20, deadline=None)
@given(data=st.data(), transposed=st.booleans())
def test_convolutions_match_torch_on_random_geometry(data, transposed):
    draw = data.draw
    groups = draw(st.sampled_from([1, 2]))
    cg, cog = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    k = draw(triples(*[st.integers(1, 3)] * 3))
    s = draw(triples(*[st.integers(1, 3)] * 3))
    d = draw(triples(*[st.integers(1, 2)] * 3))
    p = draw(triples(*[st.integers(0, 2)] * 3))
    rng = np.random.default_rng(0)
    if transposed:
        o = tuple(draw(st.integers(0, max(ss, dd) - 1)) for ss, dd in zip(s, d))
        size = [draw(st.integers(1, 4)) for _ in range(3)]
        size = [max(n, 1 + -(-(2 * pp - dd * (kk - 1) - oo) // ss)) for n, pp, dd, kk, oo, ss
                in zip(size, p, d, k, o, s)]  # the output must not be empty
        arrays = [rng.standard_normal((2, cg * groups, *size)),
                  rng.standard_normal((cg * groups, cog, *k)), rng.standard_normal(cog * groups)]
        _compare(lambda x, w, b: gradlab.conv_transpose3d(x, w, b, s, p, o, groups, d),
                 lambda x, w, b: torch.conv_transpose3d(x, w, b, s, p, o, groups, d), arrays)
        return
    size = [draw(st.integers(max(1, dd * (kk - 1) + 1 - 2 * pp), 6)) for kk, dd, pp in
            zip(k, d, p)]
    arrays = [rng.standard_normal((2, cg * groups, *size)),
              rng.standard_normal((cog * groups, cg, *k)), rng.standard_normal(cog * groups)]
    _compare(lambda x, w, b: gradlab.conv3d(x, w, b, s, p, d, groups),
             lambda x, w, b: torch.conv3d(x, w, b, s, p, d, groups), arrays)


@needs_torch
@settings(max_examples=30, deadline=None)
@given(data=st.data(), kind=st.sampled_from(["max", "avg", "adaptive_max", "adaptive_avg"]))
def test_pools_match_torch_on_random_geometry(data, kind):
    """Every window rule (padding, dilation, ceil mode's overhanging windows, the divisors,
    uneven adaptive windows) on small integer inputs, where ties are everywhere."""
    draw = data.draw
    size = draw(triples(*[st.integers(1, 6)] * 3))
    x = np.random.default_rng(5).integers(0, 4, (2, 2, *size)).astype(float)
    if kind.startswith("adaptive"):
        out = tuple(draw(st.integers(1, n + 1)) for n in size)
        out = tuple(min(o, n) if draw(st.booleans()) else o for o, n in zip(out, size))
        name = f"{kind}_pool3d"
        if kind == "adaptive_max":
            return _compare(lambda t: F(gradlab).adaptive_max_pool3d(t, out, True)[0],
                            lambda t: F(torch).adaptive_max_pool3d(t, out, True)[0], [x])
        return _compare(lambda t: getattr(F(gradlab), name)(t, out),
                        lambda t: getattr(F(torch), name)(t, out), [x])
    k = tuple(draw(st.integers(1, min(3, n + 1))) for n in size)
    s = draw(triples(*[st.integers(1, 3)] * 3))
    p = tuple(draw(st.integers(0, kk // 2)) for kk in k)
    d = draw(triples(*[st.integers(1, 2)] * 3)) if kind == "max" else (1, 1, 1)
    ceil = draw(st.booleans())
    args = (k, s, p, d, ceil) if kind == "max" else (k, s, p, ceil)
    try:
        getattr(F(torch), f"{kind}_pool3d")(torch.tensor(x), *args)
    except RuntimeError:  # no window fits: both refuse
        with pytest.raises(RuntimeError, match=f"{kind}_pool3d: input of shape"):
            getattr(F(gradlab), f"{kind}_pool3d")(gradlab.tensor(x), *args)
        return
    if kind == "max":
        # A dilated window can lie wholly in the padding: its index points past the input,
        # and PyTorch's backward then writes its gradient out of bounds (into the next
        # channel); gradlab's drops it. Compare the values and indices only then.
        out = F(torch).max_pool3d(torch.tensor(x), *args).shape[2:]
        outside = any(all(not 0 <= o * step - pad + tap * dil < n for tap in range(kernel))
                      for n, kernel, step, pad, dil, count in zip(size, k, s, p, d, out)
                      for o in range(count))
        _compare(lambda t: F(gradlab).max_pool3d(t, k, s, p, d, ceil),
                 lambda t: F(torch).max_pool3d(t, k, s, p, d, ceil), [x], grads=not outside)
        ig = F(gradlab).max_pool3d(gradlab.tensor(x), k, s, p, d, ceil, True)[1]
        it = F(torch).max_pool3d(torch.tensor(x), k, s, p, d, ceil, True)[1]
        np.testing.assert_array_equal(ig.numpy(), it.numpy())
        return
    include, override = draw(st.booleans()), draw(st.sampled_from([None, 2, -3]))
    _compare(lambda t: F(gradlab).avg_pool3d(t, k, s, p, ceil, include, override),
             lambda t: F(torch).avg_pool3d(t, k, s, p, ceil, include, override), [x])


# --- second order ------------------------------------------------------------------------------

def test_hessian_vector_product_through_conv3d_by_forward_over_reverse():
    """H·v of Σ tanh(conv3d(x, W, b))²: forward mode through conv2d's backward ops."""
    from tests.nn.test_convolution import hvp_two_ways

    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal(s) for s in ((1, 2, 4, 3, 4), (2, 2, 2, 2, 2), (2,))]
    hvp, by_differences = hvp_two_ways(lambda x, w, b: gradlab.tanh(gradlab.conv3d(
        x, w, b, stride=(2, 1, 1), padding=1)).pow(2).sum(), arrays)
    for have, want in zip(hvp, by_differences):
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6)


# --- errors that teach -------------------------------------------------------------------------

def _t(*shape, dtype=None):
    return gradlab.zeros(*shape, dtype=dtype)


ERRORS = [
    (lambda: gradlab.conv3d(_t(1, 2, 4, 4), _t(1, 2, 3, 3)),
     r"conv3d: expected a 5-D weight, got shape \(1, 2, 3, 3\)"),
    (lambda: gradlab.conv3d(_t(4, 4, 4), _t(1, 1, 3, 3, 3)),
     r"conv3d: expected a 4-D \(unbatched\) or 5-D \(batched\) input \(N, C, D, H, W\).*"
     r"\(4, 4, 4\).*unsqueeze"),
    (lambda: gradlab.conv3d(_t(1, 3, 4, 4, 4), _t(2, 1, 3, 3, 3)),
     r"conv3d: given groups=1, weight of shape \(2, 1, 3, 3, 3\) expects input with 1 "
     r"channels.*has 3"),
    (lambda: gradlab.conv3d(_t(1, 4, 4, 4, 4), _t(3, 2, 1, 1, 1), groups=2),
     r"conv3d: out_channels \(3.*divisible by groups \(2\)"),
    (lambda: gradlab.conv3d(_t(1, 4, 4, 4, 4), _t(2, 2, 1, 1, 1), groups=0),
     r"conv3d: groups must be a positive int, got 0"),
    (lambda: gradlab.conv3d(_t(1, 1, 2, 4, 4), _t(1, 1, 3, 1, 1)),
     r"conv3d: the kernel \(size \(3, 1, 1\).*spans 3 along spatial dim 0 \(D, H, W\).*"
     r"padded input's 2"),
    (lambda: gradlab.conv3d(_t(1, 1, 4, 4, 4), _t(1, 1, 3, 3, 3), stride=2, padding="same"),
     r"conv3d: padding='same' is not supported for strided convolutions"),
    (lambda: gradlab.conv3d(_t(1, 1, 4, 4, 4), _t(1, 1, 3, 3, 3), padding="full"),
     r"conv3d: padding must be 'valid', 'same', an int or a tuple of 3 ints"),
    (lambda: gradlab.conv3d(_t(1, 1, 4, 4, 4), _t(1, 1, 3, 3, 3), padding=-1),
     r"conv3d: padding must be non-negative"),
    (lambda: gradlab.conv3d(_t(1, 1, 4, 4, 4), _t(1, 1, 3, 3, 3), stride=(1, 2)),
     r"conv3d: stride must be an int or a tuple of 3 ints, got \(1, 2\)"),
    (lambda: gradlab.conv3d(_t(1, 1, 4, 4, 4), _t(1, 1, 3, 3, 3), dilation=0),
     r"conv3d: dilation must be positive"),
    (lambda: gradlab.conv3d(_t(1, 1, 4, 4, 4), _t(2, 1, 3, 3, 3), _t(3)),
     r"conv3d: bias must have shape \(2,\)"),
    (lambda: gradlab.conv3d(_t(1, 1, 4, 4, 4, dtype=gradlab.int64), _t(1, 1, 3, 3, 3)),
     r"conv3d: expected floating point tensors.*\.float\(\)"),
    (lambda: gradlab.conv3d(_t(1, 1, 4, 4, 4), _t(1, 1, 3, 3, 3, dtype=gradlab.float64)),
     r"conv3d: input \(gradlab.float32\), weight \(gradlab.float64\).*same dtype"),
    (lambda: gradlab.conv_transpose3d(_t(3, 3), _t(3, 1, 2, 2, 2)),
     r"conv_transpose3d: expected a 4-D \(unbatched\) or 5-D"),
    (lambda: gradlab.conv_transpose3d(_t(1, 3, 2, 2, 2), _t(2, 1, 2, 2, 2)),
     r"conv_transpose3d: weight of shape \(2, 1, 2, 2, 2\).*expects input with 2 channels.*"
     r"has 3"),
    (lambda: gradlab.conv_transpose3d(_t(1, 3, 2, 2, 2), _t(3, 1, 2, 2, 2), groups=2),
     r"conv_transpose3d: groups \(2\) must be a positive int dividing in_channels \(3"),
    (lambda: gradlab.conv_transpose3d(_t(1, 2, 2, 2, 2), _t(2, 1, 2, 2, 2), stride=(2, 1, 1),
                                      output_padding=(2, 0, 0)),
     r"conv_transpose3d: output_padding \(2, 0, 0\) must be smaller than either stride"),
    (lambda: gradlab.conv_transpose3d(_t(1, 2, 2, 2, 2), _t(2, 1, 2, 2, 2), padding=-1),
     r"conv_transpose3d: padding \(-1, -1, -1\) and output_padding .* non-negative"),
    (lambda: gradlab.conv_transpose3d(_t(1, 2, 1, 1, 1), _t(2, 1, 1, 1, 1), padding=1),
     r"conv_transpose3d: the output size \(-1, -1, -1\) is not positive.*less padding"),
    (lambda: gradlab.conv_transpose3d(_t(1, 2, 2, 2, 2), _t(2, 1, 2, 2, 2), _t(2)),
     r"conv_transpose3d: bias must have shape \(1,\)"),
    (lambda: gradlab.max_pool3d([1.0], 2), r"max_pool3d: expected a tensor, got list"),
    (lambda: gradlab.max_pool3d(_t(4, 4, 4), 2),
     r"max_pool3d: expected a 4-D \(unbatched\) or 5-D \(batched\) input.*\(N, C, D, H, W\)"),
    (lambda: gradlab.max_pool3d(_t(1, 1, 4, 4, 4, dtype=gradlab.int64), 2),
     r"max_pool3d: expected a floating point input, got gradlab.int64.*\.float\(\)"),
    (lambda: gradlab.max_pool3d(_t(1, 1, 4, 4, 4), 2, padding=2),
     r"max_pool3d: padding \(2, 2, 2\) must be between 0 and half the kernel_size"),
    (lambda: gradlab.max_pool3d(_t(1, 1, 2, 4, 4), 3),
     r"max_pool3d: input of shape \(1, 1, 2, 4, 4\) is too small for kernel_size \(3, 3, 3\)"),
    (lambda: gradlab.max_pool3d(_t(1, 1, 4, 4, 4), 2, stride=0),
     r"max_pool3d: stride must be positive"),
    (lambda: F(gradlab).avg_pool3d(_t(1, 1, 4, 4, 4), 2, divisor_override=0),
     r"avg_pool3d: divisor_override must be non-zero"),
    (lambda: F(gradlab).avg_pool3d(_t(1, 1, 1, 4, 4), 2, padding=1),
     r"avg_pool3d: input of shape \(1, 1, 1, 4, 4\) is smaller than kernel_size \(2, 2, 2\) "
     r"\(padding does not count here\)"),
    (lambda: F(gradlab).avg_pool3d(_t(1, 1, 4, 4, 4), (2, 2)),
     r"avg_pool3d: kernel_size must be an int or a tuple of 3 ints, got \(2, 2\)"),
    (lambda: F(gradlab).adaptive_avg_pool3d(_t(4, 4, 4), 2),
     r"adaptive_avg_pool3d: expected a 4-D or 5-D input, got shape \(4, 4, 4\)"),
    (lambda: F(gradlab).adaptive_avg_pool3d(_t(1, 4, 4, 4), (2, 2)),
     r"adaptive_avg_pool3d: output_size must be 3 positive ints, got \(2, 2\)"),
    (lambda: F(gradlab).adaptive_max_pool3d(_t(1, 4, 4, 4, dtype=gradlab.int64), 2),
     r"adaptive_max_pool3d: expected a floating point input, got gradlab.int64"),
]


@pytest.mark.parametrize("call, message", ERRORS, ids=range(len(ERRORS)))
def test_errors_name_the_op_and_the_fix(call, message):
    with pytest.raises((RuntimeError, ValueError, TypeError), match=message):
        call()


@needs_torch
@pytest.mark.parametrize("x", [np.array([2.0, 3.0, 0.0, 3.0]), np.full(4, -np.inf)],
                         ids=["numbers", "minus_inf"])
def test_max_pool3d_window_wholly_in_the_padding_is_minus_inf_as_torch(x):
    """Depth 1, kernel 2 dilated by 2, padding 1: each window reads depths -1 and 1, both
    outside. PyTorch gives -inf and the first index at or after 0 (past the end)."""
    x = x.reshape(2, 2, 1, 1, 1)
    args = ((2, 1, 1), 1, (1, 0, 0), (2, 1, 1))
    values, index = F(gradlab).max_pool3d(gradlab.tensor(x), *args, return_indices=True)
    theirs, their_index = F(torch).max_pool3d(torch.tensor(x), *args, return_indices=True)
    np.testing.assert_array_equal(values.numpy(), theirs.numpy())
    np.testing.assert_array_equal(index.numpy(), their_index.numpy())
