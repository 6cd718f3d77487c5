"""F.unfold (im2col), F.fold (col2im) and Tensor.unfold: forward vs NumPy loops, gradcheck,
gradgradcheck, values and gradients vs PyTorch, the fold∘unfold property, and errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import gradlab
from gradlab.ops import sliding_windows
from tests.oracle import SCALAR, OpCase, needs_torch, standard_op_tests, torch


def F(lib):
    """nn.functional of either library (gradlab's is the ops module's functions)."""
    return lib.nn.functional


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _blocks(size, kernel, dilation, padding, stride):
    return tuple((size[d] + 2 * padding[d] - dilation[d] * (kernel[d] - 1) - 1) // stride[d] + 1
                 for d in range(2))


def np_unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """im2col by loops over every window and every value in it."""
    k, d, p, s = map(_pair, (kernel_size, dilation, padding, stride))
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    n, c, h, w = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh, ow = _blocks((h, w), k, d, p, s)
    out = np.zeros((n, c * k[0] * k[1], oh * ow), dtype=x.dtype)
    for ci in range(c):
        for i in range(k[0]):
            for j in range(k[1]):
                for r in range(oh):
                    for q in range(ow):
                        out[:, (ci * k[0] + i) * k[1] + j, r * ow + q] = \
                            padded[:, ci, r * s[0] + i * d[0], q * s[1] + j * d[1]]
    return out[0] if unbatched else out


def np_fold(cols, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im by loops: each column value added onto the pixel it came from."""
    size, k, d, p, s = map(_pair, (output_size, kernel_size, dilation, padding, stride))
    unbatched = cols.ndim == 2
    if unbatched:
        cols = cols[None]
    n, c = cols.shape[0], cols.shape[1] // (k[0] * k[1])
    oh, ow = _blocks(size, k, d, p, s)
    padded = np.zeros((n, c, size[0] + 2 * p[0], size[1] + 2 * p[1]), dtype=cols.dtype)
    for ci in range(c):
        for i in range(k[0]):
            for j in range(k[1]):
                for r in range(oh):
                    for q in range(ow):
                        padded[:, ci, r * s[0] + i * d[0], q * s[1] + j * d[1]] += \
                            cols[:, (ci * k[0] + i) * k[1] + j, r * ow + q]
    out = padded[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]]
    return out[0] if unbatched else out


def np_tensor_unfold(x, dim, size, step):
    """Tensor.unfold by slicing out each window and stacking them."""
    if x.ndim == 0:
        return x.reshape(1)[:size]
    moved = np.moveaxis(x, dim, -1)
    count = (moved.shape[-1] - size) // step + 1
    windows = np.stack([moved[..., w * step:w * step + size] for w in range(count)], axis=-2)
    return np.moveaxis(windows, -2, dim % x.ndim)


def unfold_case(name, shape, *args, **kwargs):
    return OpCase(name, lambda lib, x: F(lib).unfold(x, *args, **kwargs), (shape,),
                  numpy=lambda np, x: np_unfold(x, *args, **kwargs))


def fold_case(name, shape, *args, **kwargs):
    return OpCase(name, lambda lib, x: F(lib).fold(x, *args, **kwargs), (shape,),
                  numpy=lambda np, x: np_fold(x, *args, **kwargs))


def window_case(name, shape, dim, size, step, variants=()):
    return OpCase(name, lambda lib, x: x.unfold(dim, size, step), (shape,),
                  numpy=lambda np, x: np_tensor_unfold(x, dim, size, step), variants=variants)


UNFOLD_CASES = [
    unfold_case("unfold_2x2", (2, 3, 4, 5), 2),
    unfold_case("unfold_rect_stride_pad", (2, 2, 5, 6), (2, 3), stride=(2, 1), padding=(1, 0)),
    unfold_case("unfold_dilation", (1, 2, 6, 7), 3, dilation=2, padding=1),
    unfold_case("unfold_all_args", (2, 1, 7, 6), (3, 2), (1, 2), (2, 1), (2, 3)),
    unfold_case("unfold_whole_image", (2, 3, 3, 4), (3, 4)),
    unfold_case("unfold_unbatched", (3, 5, 5), 2, stride=2),
]
UNFOLD_CASES.append(OpCase("unfold_empty_batch", lambda lib, x: F(lib).unfold(x, 2),
                           ((0, 2, 3, 3),), numpy=lambda np, x: np_unfold(x, 2)))

FOLD_CASES = [
    fold_case("fold_overlapping", (2, 12, 9), (4, 4), 2),
    fold_case("fold_tiles", (2, 8, 4), (4, 4), 2, stride=2),
    fold_case("fold_stride_pad_dilation", (1, 12, 9), (5, 6), (2, 3), dilation=(2, 1),
              padding=1, stride=(2, 2)),
    fold_case("fold_unbatched", (18, 3), (3, 4), (3, 2), padding=(0, 1), stride=(1, 2)),
]

WINDOW_CASES = [
    window_case("tensor_unfold_overlapping", (2, 7, 3), 1, 3, 1),
    window_case("tensor_unfold_overlapping_step2", (9,), 0, 4, 2),
    window_case("tensor_unfold_tiles", (3, 8), -1, 2, 2),
    window_case("tensor_unfold_gaps", (8, 2), 0, 2, 3),
    window_case("tensor_unfold_whole_dim", (5,), 0, 5, 1),
    window_case("tensor_unfold_size_0", (2, 4), 1, 0, 2),
    window_case("tensor_unfold_0d", SCALAR[0], 0, 1, 1),
    window_case("tensor_unfold_0d_size_0", SCALAR[0], -1, 0, 3),
    window_case("tensor_unfold_empty", (0, 3), 1, 2, 1),
]

globals().update(standard_op_tests(UNFOLD_CASES, prefix="unfold_"))
globals().update(standard_op_tests(FOLD_CASES, prefix="fold_"))
globals().update(standard_op_tests(WINDOW_CASES, prefix="tensor_unfold_"))


# --- properties ------------------------------------------------------------------------------

def window_count(size, kernel, dilation, padding, stride):
    """How many windows cover each pixel, counted window by window."""
    count = np.zeros((size[0] + 2 * padding[0], size[1] + 2 * padding[1]))
    oh, ow = _blocks(size, kernel, dilation, padding, stride)
    for r in range(oh):
        for q in range(ow):
            for i in range(kernel[0]):
                for j in range(kernel[1]):
                    count[r * stride[0] + i * dilation[0], q * stride[1] + j * dilation[1]] += 1
    return count[padding[0]:padding[0] + size[0], padding[1]:padding[1] + size[1]]


pairs = st.tuples(st.integers(1, 3), st.integers(1, 3))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 2), c=st.integers(1, 3), h=st.integers(1, 7), w=st.integers(1, 7),
       kernel=pairs, dilation=pairs, stride=pairs,
       padding=st.tuples(st.integers(0, 2), st.integers(0, 2)), seed=st.integers(0, 2**16))
def test_fold_of_unfold_is_x_times_the_window_count(n, c, h, w, kernel, dilation, stride, padding,
                                                    seed):
    assume(all((h, w)[d] + 2 * padding[d] >= dilation[d] * (kernel[d] - 1) + 1 for d in range(2)))
    x = np.random.default_rng(seed).standard_normal((n, c, h, w))
    args = dict(kernel_size=kernel, dilation=dilation, padding=padding, stride=stride)
    cols = sliding_windows.unfold(gradlab.tensor(x), **args)
    back = sliding_windows.fold(cols, (h, w), **args)
    want = x * window_count((h, w), kernel, dilation, padding, stride)
    np.testing.assert_allclose(back.numpy(), want, rtol=1e-12, atol=1e-12)
    # fold is unfold's adjoint: <unfold(x), y> = <x, fold(y)>
    y = np.random.default_rng(seed + 1).standard_normal(tuple(cols.shape))
    lhs = float((cols.numpy() * y).sum())
    rhs = float((x * sliding_windows.fold(gradlab.tensor(y), (h, w), **args).numpy()).sum())
    assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs))


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 6), min_size=1, max_size=3), data=st.data())
def test_tensor_unfold_matches_slicing_and_its_grad_counts_windows(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = data.draw(st.integers(0, shape[dim]))
    step = data.draw(st.integers(1, 4))
    x = np.random.default_rng(0).standard_normal(shape)
    t = gradlab.tensor(x, requires_grad=True)
    y = t.unfold(dim, size, step)
    np.testing.assert_array_equal(y.detach().numpy(), np_tensor_unfold(x, dim, size, step))
    y.sum().backward()
    # each value's gradient is the number of windows it lies in
    n, d = shape[dim], dim % len(shape)
    count = np.zeros(n)
    for start in range(0, n - size + 1, step):
        count[start:start + size] += 1
    want = np.broadcast_to(count.reshape((-1,) + (1,) * (len(shape) - d - 1)), shape)
    np.testing.assert_array_equal(t.grad.numpy(), want)


# --- views, names, double backward ----------------------------------------------------------

def test_tensor_unfold_is_a_view_of_the_input():
    x = gradlab.arange(6.0)
    windows = x.unfold(0, 2, 2)
    assert windows._data.base is x._data or windows._data.base is x._data.base
    windows.mul_(2)  # non-overlapping windows are writable, and write through
    assert x.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    strided = gradlab.from_numpy(np.arange(12.0)[::2])  # non-contiguous input: still a view
    assert np.shares_memory(strided.unfold(0, 3, 1).numpy(), strided.numpy())


def test_overlapping_windows_are_read_only():
    """One value sits in several windows; writing one window would change the others."""
    windows = gradlab.arange(5.0).unfold(0, 3, 1)
    with pytest.raises(RuntimeError, match="read-only"):
        windows.add_(1)


def test_inplace_write_through_windows_reaches_the_gradient():
    x = gradlab.arange(6.0, requires_grad=True)
    y = x * 1
    y.unfold(0, 3, 3).mul_(gradlab.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


@needs_torch
def test_node_names_match_pytorch():
    for lib in (gradlab, torch):
        x = lib.ones(1, 1, 3, 3, dtype=lib.float64, requires_grad=True)
        cols = F(lib).unfold(x, 2)
        image = F(lib).fold(cols * 1, (3, 3), 2)
        v = lib.arange(6.0, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad((v.unfold(0, 3, 1) ** 2).sum(), v, create_graph=True)
        names = [type(t.grad_fn).__name__ for t in (cols, image, v.unfold(0, 2, 1), g)]
        if lib is gradlab:
            ours = names
    assert ours == names == ["Im2ColBackward0", "Col2ImBackward0", "UnfoldBackward0",
                             "UnfoldBackwardBackward0"]


def test_second_derivative_through_unfold_and_fold():
    """d/dx of the gradient of Σ unfold(x)² is 2·count(x): count = windows per pixel."""
    x = gradlab.tensor(np.random.default_rng(3).standard_normal((1, 1, 3, 3)),
                       requires_grad=True)
    (g,) = gradlab.autograd.grad((sliding_windows.unfold(x, 2) ** 2).sum(), x,
                                 create_graph=True)
    count = window_count((3, 3), (2, 2), (1, 1), (0, 0), (1, 1))
    np.testing.assert_allclose(g.detach().numpy()[0, 0], 2 * count * x.detach().numpy()[0, 0])
    (gg,) = gradlab.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy()[0, 0], 2 * count)


# --- errors ---------------------------------------------------------------------------------

X4 = gradlab.zeros(2, 3, 4, 4)


@pytest.mark.parametrize("call, error, match", [
    (lambda: sliding_windows.unfold(gradlab.zeros(4, 4), 2), RuntimeError,
     r"unfold: expected a 4-D \(N, C, H, W\) or unbatched 3-D \(C, H, W\) input, got shape "
     r"\(4, 4\) \(2-D\).*Tensor.unfold"),
    (lambda: sliding_windows.unfold(X4, 0), RuntimeError,
     r"unfold: kernel_size must be positive, got \(0, 0\)"),
    (lambda: sliding_windows.unfold(X4, 2, stride=(1, 0)), RuntimeError,
     r"unfold: stride must be positive, got \(1, 0\)"),
    (lambda: sliding_windows.unfold(X4, 2, dilation=-1), RuntimeError,
     r"unfold: dilation must be positive, got \(-1, -1\)"),
    (lambda: sliding_windows.unfold(X4, 2, padding=-1), RuntimeError,
     r"unfold: padding must be non-negative, got \(-1, -1\)"),
    (lambda: sliding_windows.unfold(X4, (2, 2, 2)), TypeError,
     r"unfold: kernel_size must be an int or a pair of ints \(height, width\), got \(2, 2, 2\)"),
    (lambda: sliding_windows.unfold(X4, 2.0), TypeError,
     r"unfold: kernel_size must be an int or a pair of ints"),
    (lambda: sliding_windows.unfold(X4, (2, 5)), RuntimeError,
     r"unfold: a window \(kernel_size \(2, 5\), dilation \(1, 1\)\) spans 5 along spatial "
     r"dim 1, more than the padded image's 4 .*Fix: a smaller kernel"),
    (lambda: sliding_windows.fold(gradlab.zeros(1, 12, 8), (4, 4), 2), RuntimeError,
     r"fold: expected L = 9 windows for output_size \(4, 4\), kernel \(2, 2\), stride "
     r"\(1, 1\) \(a 3 x 3 grid.*got 8 \(input shape \(1, 12, 8\)\)"),
    (lambda: sliding_windows.fold(gradlab.zeros(1, 10, 12), (4, 5), 2), RuntimeError,
     r"fold: dim 1 of the input \(shape \(1, 10, 12\)\) holds C·kh·kw values per window, so "
     r"it must be divisible by kh·kw = 4 \(kernel \(2, 2\)\), got 10"),
    (lambda: sliding_windows.fold(gradlab.zeros(12, 8, 1, 1), (4, 4), 2), RuntimeError,
     r"fold: expected a 3-D \(N, C·kh·kw, L\) or unbatched 2-D \(C·kh·kw, L\) input, got "
     r"shape \(12, 8, 1, 1\) \(4-D\)"),
    (lambda: sliding_windows.fold(gradlab.zeros(1, 12, 9), (4, 4, 4), 2), TypeError,
     r"fold: output_size must be an int or a pair of ints"),
    (lambda: sliding_windows.fold(gradlab.zeros(1, 4, 1), (1, 1), 2), RuntimeError,
     r"fold: a window .* spans 2 along spatial dim 0, more than the padded image's 1"),
    (lambda: gradlab.arange(5.0).unfold(0, 6, 1), RuntimeError,
     r"unfold: window size 6 is larger than dim 0 of size 5 \(shape \(5,\)\)"),
    (lambda: gradlab.arange(5.0).unfold(0, 2, 0), RuntimeError,
     r"unfold: step must be positive, got 0"),
    (lambda: gradlab.arange(5.0).unfold(0, -1, 1), RuntimeError,
     r"unfold: size must be non-negative, got -1"),
    (lambda: gradlab.tensor(3.0).unfold(0, 2, 1), RuntimeError,
     r"unfold: a 0-d tensor holds one value, so the window size must be 0 or 1, got 2"),
    (lambda: gradlab.arange(5.0).unfold(1, 2, 1), IndexError,
     r"unfold: dimension 1 is out of range for a tensor with 1 dimension"),
])
def test_errors_say_what_is_wrong(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_functional_names_are_the_ops_modules_functions():
    assert gradlab.nn.functional.unfold is sliding_windows.unfold
    assert gradlab.nn.functional.fold is sliding_windows.fold
