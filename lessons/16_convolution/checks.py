"""Lesson 16's checks: random images, kernels, strides and paddings against F.conv2d."""

import numpy as np

import gradlab
import gradlab.nn.functional as F
from lessons.expect import (
    check,
    expect,
    expect_close,
    expect_equal,
    expect_gradcheck,
    expect_tensor,
)


def _geometry(rng, *, max_stride=3, max_padding=2):
    """A random (H, W, kh, kw, stride, padding) whose output is at least 1x1."""
    while True:
        h, w = (int(v) for v in rng.integers(3, 10, size=2))
        kh, kw = (int(v) for v in rng.integers(1, 5, size=2))
        stride = int(rng.integers(1, max_stride + 1))
        padding = int(rng.integers(0, max_padding + 1))
        if h + 2 * padding >= kh and w + 2 * padding >= kw:
            return h, w, kh, kw, stride, padding


def _text(h, w, kh, kw, stride, padding):
    return f"{h}x{w} input, {kh}x{kw} kernel, stride {stride}, padding {padding}"


def _tensor(rng, *shape, requires_grad=False):
    return gradlab.tensor(rng.standard_normal(shape), dtype=gradlab.float64,
                          requires_grad=requires_grad)


def _graph(t):
    return "None" if t.grad_fn is None else f"a grad_fn ({t.grad_fn.name()})"


def _columns(x, kh, kw, stride, padding):
    """A NumPy im2col to compare with: (N, C·kh·kw, Oh·Ow), rows in (c, i, j) order."""
    n, c, h, w = x.shape
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    oh = (h + 2 * padding - kh) // stride + 1
    ow = (w + 2 * padding - kw) // stride + 1
    cols = np.zeros((n, c, kh, kw, oh, ow))
    for r in range(oh):
        for q in range(ow):
            cols[:, :, :, :, r, q] = x[:, :, r * stride:r * stride + kh, q * stride:q * stride + kw]
    return cols.reshape(n, c * kh * kw, oh * ow)


@check("conv_output_size")
def conv_output_size(student, rng):
    for _ in range(6):
        h, w, kh, kw, stride, padding = _geometry(rng, max_stride=4, max_padding=3)
        x = gradlab.zeros(1, 1, h, w)
        expected = F.conv2d(x, gradlab.zeros(1, 1, kh, kw), stride=stride,
                            padding=padding).shape[-1]
        got = student.conv_output_size(w, kw, stride, padding)
        expect_equal(got, expected, f"output width for a width-{w} input, kernel {kw}, stride "
                     f"{stride}, padding {padding} (what F.conv2d gives)")
    # A case where the stride does not divide evenly: the last partial step is dropped.
    size = int(rng.integers(10, 30)) * 2 + 1
    expect_equal(student.conv_output_size(size, 2, 2, 0), (size - 2) // 2 + 1,
                 f"width-{size} input, kernel 2, stride 2: a window that would stick out is "
                 "not taken (round down)")
    expect_equal(student.conv_output_size(size, 3), size - 2,
                 f"width-{size} input, kernel 3, default stride 1 and padding 0")


@check("conv2d_naive")
def conv2d_naive(student, rng):
    for _ in range(2):
        h, w, kh, kw, stride, padding = _geometry(rng, max_stride=2, max_padding=1)
        c, o = (int(v) for v in rng.integers(1, 4, size=2))
        x = rng.standard_normal((c, h, w))
        weight = rng.standard_normal((o, c, kh, kw))
        want = F.conv2d(gradlab.tensor(x[None]), gradlab.tensor(weight), stride=stride,
                        padding=padding)[0]
        got = student.conv2d_naive(x, weight, stride, padding)
        what = f"{c}-channel {_text(h, w, kh, kw, stride, padding)}, {o} output channels"
        expect(isinstance(got, np.ndarray), f"conv2d_naive returns a NumPy array ({what})",
               "a numpy.ndarray", f"a {type(got).__name__}")
        if got.shape == tuple(want.shape) and kh * kw > 1:
            mirrored = gradlab.tensor(np.ascontiguousarray(weight[:, :, ::-1, ::-1]))
            flipped = F.conv2d(gradlab.tensor(x[None]), mirrored, stride=stride,
                               padding=padding)[0].numpy()
            was_flipped = np.allclose(got, flipped) and not np.allclose(flipped, want.numpy())
            expect(not was_flipped, f"cross-correlation, not a flipped-kernel convolution "
                   f"({what})", "the kernel used as it is",
                   "the kernel was flipped" if was_flipped else "the kernel used as it is",
                   "PyTorch's conv2d does not flip the kernel: multiply x[i + a, j + b] by "
                   "w[a, b]")
        expect_close(got, want, f"feature maps of a {what}", rtol=1e-9, atol=1e-9)


@check("im2col")
def im2col(student, rng):
    h, w, kh, kw, stride, padding = _geometry(rng)
    n, c = (int(v) for v in rng.integers(1, 4, size=2))
    x = _tensor(rng, n, c, h, w, requires_grad=True)
    what = f"batch of {n}, {c} channels, {_text(h, w, kh, kw, stride, padding)}"
    got = student.im2col(x, (kh, kw), stride, padding)
    expect_tensor(got, f"im2col returns a tensor ({what})")
    expect_close(got, _columns(x.detach().numpy(), kh, kw, stride, padding),
                 f"the columns, rows in (channel, kernel row, kernel column) order ({what})",
                 rtol=1e-12, atol=1e-12)
    expect(got.grad_fn is not None, f"the columns have a graph back to x ({what})",
           "a grad_fn", _graph(got),
           "slice, stack and reshape gradlab tensors; no NumPy in between")
    # The gradient of the columns' sum counts, for every pixel, the windows it falls in.
    got.sum().backward()
    covered = np.zeros((h + 2 * padding, w + 2 * padding))
    for top in range(0, h + 2 * padding - kh + 1, stride):
        for left in range(0, w + 2 * padding - kw + 1, stride):
            covered[top:top + kh, left:left + kw] += 1
    expect_close(x.grad[0, 0], covered[padding:padding + h, padding:padding + w],
                 "gradient of sum(columns) w.r.t. x: how many windows each pixel is in "
                 f"({_text(h, w, kh, kw, stride, padding)})", rtol=1e-12, atol=1e-12)


@check("conv2d_im2col")
def conv2d_im2col(student, rng):
    for use_bias in (True, False):
        h, w, kh, kw, stride, padding = _geometry(rng)
        n, c, o = (int(v) for v in rng.integers(1, 4, size=3))
        x = _tensor(rng, n, c, h, w, requires_grad=True)
        weight = _tensor(rng, o, c, kh, kw, requires_grad=True)
        bias = _tensor(rng, o, requires_grad=True) if use_bias else None
        what = (f"batch of {n}, {c}->{o} channels, {_text(h, w, kh, kw, stride, padding)}, "
                f"{'with' if use_bias else 'no'} bias")
        got = student.conv2d_im2col(x, weight, bias, stride, padding)
        expect_tensor(got, f"conv2d_im2col returns a tensor ({what})")
        want = F.conv2d(x, weight, bias, stride=stride, padding=padding)
        expect_close(got, want, f"output vs F.conv2d ({what})", rtol=1e-10, atol=1e-10)
        upstream = _tensor(rng, *want.shape)
        leaves = [x, weight] + ([bias] if use_bias else [])
        expected = gradlab.autograd.grad((want * upstream).sum(), leaves)
        expect(got.grad_fn is not None, f"the output has a graph ({what})", "a grad_fn",
               _graph(got),
               "build it from gradlab ops so autograd can run backward through it")
        found = gradlab.autograd.grad((got * upstream).sum(), leaves, allow_unused=True)
        for name, g, e in zip(("x", "weight", "bias"), found, expected):
            expect_close(g, e, f"gradient w.r.t. {name} vs F.conv2d's ({what})", rtol=1e-10,
                         atol=1e-10)
    h, w, kh, kw, stride, padding = _geometry(rng, max_stride=2, max_padding=1)
    x = _tensor(rng, 1, 2, min(h, 5), min(w, 5), requires_grad=True)
    weight = _tensor(rng, 2, 2, min(kh, 3), min(kw, 3), requires_grad=True)
    bias = _tensor(rng, 2, requires_grad=True)
    expect_gradcheck(lambda a, b, c: student.conv2d_im2col(a, b, c, stride, padding),
                     (x, weight, bias), f"gradcheck of conv2d_im2col in float64 (stride "
                     f"{stride}, padding {padding})")


@check("input_grad_as_conv")
def input_grad_as_conv(student, rng):
    for _ in range(2):
        h, w = (int(v) for v in rng.integers(4, 9, size=2))
        kh, kw = (int(v) for v in rng.integers(1, 5, size=2))
        padding = int(rng.integers(0, min(kh, kw)))
        n, c, o = (int(v) for v in rng.integers(1, 4, size=3))
        x = _tensor(rng, n, c, h, w, requires_grad=True)
        weight = _tensor(rng, o, c, kh, kw)
        y = F.conv2d(x, weight, padding=padding)
        grad_out = _tensor(rng, *y.shape)
        (want,) = gradlab.autograd.grad(y, [x], grad_out)
        got = student.input_grad_as_conv(grad_out, weight, padding)
        expect_tensor(got, "input_grad_as_conv returns a tensor")
        expect_close(got, want, f"dL/dx of conv2d with a {kh}x{kw} kernel, padding {padding}, "
                     f"{c}->{o} channels, {h}x{w} input (what backward computes)",
                     rtol=1e-10, atol=1e-10)
