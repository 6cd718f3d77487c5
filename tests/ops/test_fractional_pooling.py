"""fractional_max_pool2d/3d (and their *_with_indices names): with the same _random_samples,
values, indices and gradients equal PyTorch's; gradcheck, gradgradcheck and forward mode;
ties, NaN and -inf windows; the window sequence in float32; output_ratio; errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from gradlab.ops import fractional_pooling
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch


def F(lib):
    return lib.nn.functional


def samples_array(x, spatial, seed=7):
    """(N, C, spatial) samples in [0, 1) for an input like ``x`` (N = 1 if unbatched)."""
    batch = 1 if x.ndim == spatial + 1 else x.shape[0]
    return np.random.default_rng(seed).random((batch, x.shape[-spatial - 1], spatial))


def samples_for(lib, x, spatial, seed=7):
    """The same samples for gradlab and PyTorch, in x's dtype and on its device."""
    return lib.tensor(samples_array(x, spatial, seed), dtype=x.dtype).to(x.device)


def pool2d(kernel, out=None, ratio=None):
    return lambda lib, x: F(lib).fractional_max_pool2d(
        x, kernel, out, ratio, _random_samples=samples_for(lib, x, 2))


def pool3d(kernel, out=None, ratio=None):
    return lambda lib, x: F(lib).fractional_max_pool3d(
        x, kernel, out, ratio, _random_samples=samples_for(lib, x, 3))


CASES = [
    OpCase("fractional_max_pool2d", pool2d(2, (4, 3)), ((2, 3, 9, 7),),
           variants=(((3, 9, 7),), ((0, 3, 9, 7),))),
    OpCase("fractional_max_pool2d", pool2d((3, 2), (5, 6)), ((1, 2, 11, 13),),
           id="fractional_max_pool2d_overlapping"),
    OpCase("fractional_max_pool2d", pool2d(2, ratio=(0.5, 0.7)), ((2, 2, 10, 9),),
           id="fractional_max_pool2d_ratio"),
    OpCase("fractional_max_pool2d_with_indices",
           lambda lib, x: F(lib).fractional_max_pool2d_with_indices(
               x, 3, 4, _random_samples=samples_for(lib, x, 2)), ((1, 2, 8, 8),)),
    OpCase("fractional_max_pool3d", pool3d(2, (3, 4, 3)), ((1, 2, 6, 7, 5),),
           variants=(((2, 6, 7, 5),),)),
    OpCase("fractional_max_pool3d", pool3d((2, 3, 1), ratio=0.5), ((2, 1, 7, 8, 6),),
           id="fractional_max_pool3d_ratio"),
    OpCase("fractional_max_pool3d_with_indices",
           lambda lib, x: F(lib).fractional_max_pool3d_with_indices(
               x, 2, (2, 3, 2), _random_samples=samples_for(lib, x, 3)), ((1, 2, 5, 6, 4),)),
]
globals().update(standard_op_tests(CASES))


# --- the same windows, values and indices as PyTorch ------------------------------------------

def both(spatial, x, kernel, out=None, ratio=None, samples=None, dtype=np.float64):
    """gradlab's and PyTorch's (values, indices, input gradient) for the same samples."""
    pool = f"fractional_max_pool{spatial}d"
    results = []
    for lib in (gradlab, torch):
        t = lib.tensor(x.astype(dtype), requires_grad=True)
        u = samples if samples is not None else samples_array(x, spatial)
        values, indices = getattr(F(lib), pool)(
            t, kernel, out, ratio, return_indices=True,
            _random_samples=lib.tensor(np.asarray(u), dtype=t.dtype))
        cot = np.random.default_rng(3).standard_normal(tuple(values.shape))
        values.backward(lib.tensor(cot, dtype=t.dtype))
        results.append((values.detach().numpy(), indices.numpy(), t.grad.numpy()))
    return results


@needs_torch
@settings(max_examples=40, deadline=None)
@given(data=st.data(), spatial=st.sampled_from([2, 3]), dtype=st.sampled_from(["f4", "f8"]))
def test_values_indices_and_gradients_equal_torchs(data, spatial, dtype):
    """Any size, kernel and output size that fit: the same windows, so exactly the same
    values and indices; the gradients (scatter-adds of the same numbers) equal too."""
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(spatial))
    spare = spatial == 3  # (PyTorch's 3-D pool wants output + kernel - 1 < size, strictly)
    size = tuple(data.draw(st.integers(k + spare, k + 9)) for k in kernel)
    out = tuple(data.draw(st.integers(1, n - k + 1 - spare)) for n, k in zip(size, kernel))
    rng = np.random.default_rng(data.draw(st.integers(0, 999)))
    x = rng.standard_normal((2, 3) + size)
    u = rng.random((2, 3, spatial))
    (v, i, g), (tv, ti, tg) = both(spatial, x, kernel, out, samples=u, dtype=np.dtype(dtype))
    np.testing.assert_array_equal(v, tv)
    np.testing.assert_array_equal(i, ti)
    np.testing.assert_allclose(g, tg, rtol=1e-6, atol=1e-6)


@needs_torch
def test_the_sequence_is_computed_in_the_inputs_dtype():
    """For u = 0.15306085 (n = 100 to 30, k = 2), float32 rounds window 25 to start at 85,
    float64 at 84: PyTorch computes in the input's dtype, and so does gradlab."""
    u = np.float32(0.15306085348129272)
    x = np.arange(100 * 100, dtype=np.float64).reshape(1, 1, 100, 100)
    starts = {}
    for dtype in (np.float32, np.float64):
        (_, idx, _), (_, tidx, _) = both(2, x, 2, 30, samples=np.full((1, 1, 2), u),
                                         dtype=dtype)
        np.testing.assert_array_equal(idx, tidx)
        starts[dtype] = idx[0, 0, 0] % 100 - 1  # each window's max is its last column
    assert starts[np.float32][25] == 85 and starts[np.float64][25] == 84


@needs_torch
@pytest.mark.parametrize("spatial", [2, 3])
def test_ties_nan_and_all_minus_inf_windows_pick_torchs_position(spatial):
    """Ties go to the first max in scan order, a NaN wins (the last one), a window of -inf
    keeps its first position; the gradient goes to the same place as PyTorch's."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, (2, 2) + (9,) * spatial).astype(float)  # many ties
    x.reshape(-1)[rng.choice(x.size, 12, replace=False)] = np.nan
    x[0, 1] = -np.inf
    (v, i, g), (tv, ti, tg) = both(spatial, x, 3, 4)
    np.testing.assert_array_equal(v, tv)
    np.testing.assert_array_equal(i, ti)
    np.testing.assert_array_equal(g, tg)


def test_the_first_and_last_windows_touch_the_edges_and_steps_are_floor_or_ceil_alpha():
    x = gradlab.tensor(np.arange(40.0).reshape(1, 1, 1, 40))  # increasing: max at window end
    for u in (0.0, 0.3, 0.99):
        _, idx = F(gradlab).fractional_max_pool2d(
            x, (1, 3), (1, 12), return_indices=True,
            _random_samples=gradlab.tensor([[[u, 0.5]]], dtype=gradlab.float64))
        starts = idx.numpy()[0, 0, 0] - 2
        assert starts[0] == 0 and starts[-1] == 40 - 3
        assert set(np.diff(starts)) <= {3, 4}  # alpha = 37 / 11 = 3.36...


def test_default_samples_are_drawn_with_rand():
    """Without _random_samples: rand(N, C, spatial) in the input's dtype (N = 1 unbatched)."""
    for x, pool, spatial in ((gradlab.randn(2, 3, 10, 10), F(gradlab).fractional_max_pool2d, 2),
                             (gradlab.randn(3, 6, 7, 8), F(gradlab).fractional_max_pool3d, 3)):
        gradlab.manual_seed(5)
        drawn = pool(x, 2, output_ratio=0.5)
        gradlab.manual_seed(5)
        batch = 1 if x.ndim == spatial + 1 else x.shape[0]
        given_ = pool(x, 2, output_ratio=0.5,
                      _random_samples=gradlab.rand(batch, x.shape[-spatial - 1], spatial))
        np.testing.assert_array_equal(drawn.numpy(), given_.numpy())
        assert tuple(drawn.shape[-spatial:]) == tuple(n // 2 for n in x.shape[-spatial:])


@needs_torch
def test_output_ratio_sizes_and_a_single_ratio():
    """int(size · ratio) per dim, as PyTorch; a single number serves every dim (PyTorch's
    fractional_max_pool2d needs a tuple there; its module and 3-D function take one)."""
    x = np.random.default_rng(1).standard_normal((1, 2, 13, 11))
    ours = F(gradlab).fractional_max_pool2d(gradlab.tensor(x), 2, output_ratio=0.7,
                                            _random_samples=samples_for(gradlab,
                                                                        gradlab.tensor(x), 2))
    theirs = torch.nn.FractionalMaxPool2d(2, output_ratio=0.7, _random_samples=samples_for(
        torch, torch.tensor(x), 2))(torch.tensor(x))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert tuple(ours.shape) == (1, 2, 9, 7)


def test_with_indices_names_always_return_the_indices():
    x = gradlab.randn(1, 2, 8, 8, 8)
    u = gradlab.rand(1, 2, 3)
    values, idx = F(gradlab).fractional_max_pool3d_with_indices(x, 2, 4, return_indices=False,
                                                                _random_samples=u)
    assert idx.dtype is gradlab.int64
    np.testing.assert_array_equal(
        values.numpy(), F(gradlab).fractional_max_pool3d(x, 2, 4, _random_samples=u).numpy())
    np.testing.assert_array_equal(values.numpy().reshape(1, 2, -1),
                                  np.take_along_axis(x.numpy().reshape(1, 2, -1),
                                                     idx.numpy().reshape(1, 2, -1), -1))


@needs_torch
def test_grad_fn_names_are_pytorchs():
    for spatial in (2, 3):
        pool = f"fractional_max_pool{spatial}d"
        names = []
        for lib in (gradlab, torch):
            x = lib.randn(1, 1, *(6,) * spatial, requires_grad=True)
            names.append(getattr(F(lib), pool)(x, 2, 3).grad_fn.name())
        assert names[0] == names[1] == f"FractionalMaxPool{spatial}DBackward0"


# --- errors -------------------------------------------------------------------------------------

def _x(lib, shape=(1, 2, 9, 7), dtype="float64"):
    return lib.ones(shape, dtype=getattr(lib, dtype))


def _u(lib, shape=(1, 2, 2), dtype="float64"):
    return lib.full(shape, 0.5, dtype=getattr(lib, dtype))


ERRORS = [
    (lambda lib: F(lib).fractional_max_pool2d(_x(lib), 2, _random_samples=_u(lib)),
     ValueError, "fractional_max_pool2d requires specifying either an output_size or an "
                 "output_ratio"),
    (lambda lib: F(lib).fractional_max_pool2d(_x(lib), 2, (9, 3), _random_samples=_u(lib)),
     RuntimeError, r"pool height 2 too large relative to input height 9: 9 windows of 2 need "
                   r"an input height of at least 10 .* at most 8"),
    (lambda lib: F(lib).fractional_max_pool3d(_x(lib, (1, 2, 8, 9, 9)), 2, (7, 4, 5),
                                              _random_samples=_u(lib, (1, 2, 3))),
     RuntimeError, r"pool time 2 too large relative to input time 8: 7 windows of 2 need an "
                   r"input time of at least 9 \(output \+ kernel - 1, \+ 1 in 3-D"),
    (lambda lib: F(lib).fractional_max_pool2d(_x(lib), 2, (4, -1), _random_samples=_u(lib)),
     RuntimeError, r"output_size must not be negative, got \(4, -1\)"),
    (lambda lib: F(lib).fractional_max_pool2d(_x(lib), (2, 2, 2), 3, _random_samples=_u(lib)),
     RuntimeError, r"kernel_size must be an int or a tuple of 2 ints, got \(2, 2, 2\)"),
    (lambda lib: F(lib).fractional_max_pool2d(_x(lib), 2, (3, 3, 3), _random_samples=_u(lib)),
     RuntimeError, "output_size must be an int or a tuple of 2 ints"),
    (lambda lib: F(lib).fractional_max_pool2d(_x(lib, (9, 7)), 2, 3, _random_samples=_u(lib)),
     RuntimeError, r"expected a 3-D \(C, H, W\) or 4-D \(N, C, H, W\) input, got shape "
                   r"\(9, 7\)"),
    (lambda lib: F(lib).fractional_max_pool3d(_x(lib, (8, 9, 9)), 2, 3,
                                              _random_samples=_u(lib, (1, 8, 3))),
     RuntimeError, r"expected a 4-D \(C, T, H, W\) or 5-D"),
    (lambda lib: F(lib).fractional_max_pool2d(_x(lib, (1, 2, 0, 7)), 2, 3,
                                              _random_samples=_u(lib)),
     RuntimeError, r"non-zero size in every dim but the batch dim, got shape \(1, 2, 0, 7\)"),
    (lambda lib: F(lib).fractional_max_pool2d(_x(lib), 2, 3, _random_samples=_u(lib,
                                                                                dtype="float32")),
     RuntimeError, r"Expect _random_samples to have the same dtype as input: .*float32 vs "
                   r".*float64. Fix: _random_samples.to\(input.dtype\)"),
    (lambda lib: F(lib).fractional_max_pool2d(_x(lib), 2, 3, _random_samples=_u(lib, (2, 2))),
     RuntimeError, r"Expect _random_samples to have 3 dimensions \(N=1, C=2, 2\), got shape "
                   r"\(2, 2\)"),
    (lambda lib: F(lib).fractional_max_pool2d(_x(lib), 2, 3, _random_samples=_u(lib, (1, 3, 2))),
     RuntimeError, r"_random_samples of shape \(1, 3, 2\) don't fit an input of shape "
                   r"\(1, 2, 9, 7\): expected \(N=1, C=2, 2\)"),
    (lambda lib: F(lib).fractional_max_pool2d(_x(lib, (2, 2, 9, 7)), 2, 3,
                                              _random_samples=_u(lib)),
     RuntimeError, r"expected \(N=2, C=2, 2\)"),
    (lambda lib: F(lib).fractional_max_pool3d(_x(lib, (1, 2, 8, 9, 9)), 2, 3,
                                              _random_samples=_u(lib)),
     RuntimeError, r"_random_samples of shape \(1, 2, 2\) .* expected \(N=1, C=2, 3\)"),
]


@pytest.mark.parametrize("call, error, match", ERRORS)
def test_errors_teach_and_have_torchs_type(call, error, match):
    with pytest.raises(error, match=match):
        call(gradlab)
    if torch is not None:
        with pytest.raises(error):
            call(torch)


@pytest.mark.parametrize("call, error, match", [
    (lambda: F(gradlab).fractional_max_pool2d(_x(gradlab, dtype="int64"), 2, 3,
                                              _random_samples=_u(gradlab)),
     RuntimeError, "expected a floating point input, got gradlab.int64. Fix: convert with "
                   r".float\(\)"),
    (lambda: F(gradlab).fractional_max_pool2d(_x(gradlab), 0, 3, _random_samples=_u(gradlab)),
     RuntimeError, r"kernel_size must be positive, got \(0, 0\)"),  # PyTorch: windows of -inf
    (lambda: F(gradlab).fractional_max_pool2d(_x(gradlab), 2, output_ratio=(0.5, 0.5, 0.5),
                                              _random_samples=_u(gradlab)),
     ValueError, "output_ratio must be a number or a tuple of 2 numbers in"),
    (lambda: F(gradlab).fractional_max_pool2d(  # float32 rounds (6 + 1e8)·1 up to 1e8 + 8
        _x(gradlab, dtype="float32"), 2, (8, 3),
        _random_samples=gradlab.full((1, 2, 2), 1e8, dtype=gradlab.float32)),
     RuntimeError, r"_random_samples put a window outside the input: the samples must lie in "
                   r"\[0, 1\)"),
    (lambda: F(gradlab).fractional_max_pool2d(_x(gradlab), 2, 3, _random_samples=[0.5]),
     TypeError, "_random_samples must be a tensor, got list"),
    (lambda: F(gradlab).fractional_max_pool2d(np.ones((1, 2, 9, 7)), 2, 3),
     TypeError, "fractional_max_pool2d: expected a tensor, got ndarray"),
])
def test_gradlab_only_errors(call, error, match):
    """Where PyTorch says something else (or nothing: a kernel of 0 pools empty windows)."""
    with pytest.raises(error, match=match):
        call()


# --- where the names live; the 3-D *_with_indices ---------------------------------------------

def test_bindings_follow_pytorch():
    for name in fractional_pooling.FUNCTIONAL:
        assert getattr(gradlab.nn.functional, name) is getattr(fractional_pooling, name)
        assert not hasattr(gradlab, name)
    for name in ("max_pool3d_with_indices", "adaptive_max_pool3d_with_indices"):
        assert hasattr(gradlab.nn.functional, name)
    if torch is not None:
        for name in fractional_pooling.FUNCTIONAL + ["max_pool3d_with_indices",
                                                     "adaptive_max_pool3d_with_indices"]:
            assert hasattr(torch.nn.functional, name) and not hasattr(torch, name), name
