"""Lesson 16: convolution.

Fill in the five functions marked TODO, then check them with `gradlab check 16`
(or press k in the app). Run this file under the debugger with r in the app.
"""

import numpy as np

import gradlab
import gradlab.nn.functional as F


def conv_output_size(size, kernel, stride=1, padding=0):
    """How many positions a kernel of width ``kernel`` takes along an input of width ``size``."""
    # TODO: the padded input is size + 2 * padding wide; count the kernel's positions,
    #       stride cells apart (round down)
    raise NotImplementedError("conv_output_size")


def conv2d_naive(x, weight, stride=1, padding=0):
    """Cross-correlate one image x (C, H, W) with kernels weight (O, C, kh, kw), in NumPy loops.

    Returns the (O, Oh, Ow) feature maps.
    """
    # TODO: zero-pad x with np.pad, then for every output position (r, q) take the
    #       (C, kh, kw) window starting at (r * stride, q * stride) and, for every
    #       output channel k, sum window * weight[k]
    raise NotImplementedError("conv2d_naive")


def im2col(x, kernel_size, stride=1, padding=0):
    """Every window of x (N, C, H, W) as a column: a (N, C·kh·kw, Oh·Ow) tensor.

    Row (c, i, j) of the columns holds input channel c at kernel offset (i, j),
    the order of weight.reshape(O, -1). Build it from gradlab ops, so it has a graph.
    """
    # TODO: pad with F.pad; for each kernel offset (i, j) slice out what that offset sees
    #       at every output position (a slice with step `stride`), stack the kh·kw slices
    #       on a new dim 2 and reshape to (N, C·kh·kw, Oh·Ow)
    raise NotImplementedError("im2col")


def conv2d_im2col(x, weight, bias=None, stride=1, padding=0):
    """conv2d as one matrix product: (O, C·kh·kw) @ (N, C·kh·kw, Oh·Ow) -> (N, O, Oh, Ow)."""
    # TODO: columns from im2col, times the weight flattened to (O, C·kh·kw),
    #       plus the bias (one per output channel), reshaped to (N, O, Oh, Ow)
    raise NotImplementedError("conv2d_im2col")


def input_grad_as_conv(grad_out, weight, padding=0):
    """The gradient of conv2d(x, weight, padding=padding) (stride 1) w.r.t. x, as a convolution."""
    # TODO: flip the kernel in space, swap its in/out channels, and cross-correlate
    #       grad_out with it using padding kernel - 1 - padding
    raise NotImplementedError("input_grad_as_conv")


if __name__ == "__main__":
    # What the app runs when you press r: step it with n (ops) and b (backward).
    # A 6x6 image, dark on the left and bright from column 3 on, and a kernel that
    # answers "how much brighter is it on the right?": a vertical-edge detector.
    image = gradlab.zeros(1, 1, 6, 6)
    image[:, :, :, 3:] = 1.0
    image.requires_grad_(True)          # only so that the app shows the slices and their gradient
    weight = gradlab.tensor([[[[-1.0, 0.0, 1.0]] * 3]], requires_grad=True)   # (1, 1, 3, 3)
    y = conv2d_im2col(image, weight)
    loss = y.sum()
    loss.backward()
    print("feature map, 4x4 (the edge lights up in columns 1 and 2):")
    print(y[0, 0])
    print("same as F.conv2d:", bool(((y - F.conv2d(image, weight)).abs() < 1e-6).all()))
    print("d(sum of the map)/d(kernel): each entry sums the pixels that offset saw")
    print(weight.grad[0, 0])

    # The price of im2col: the columns hold every pixel up to kh·kw times over.
    images, _ = gradlab.datasets.load_digits()
    batch = images[:64].clone()                                 # (64, 1, 8, 8)
    kernels = gradlab.randn(8, 1, 3, 3, requires_grad=True)
    before = gradlab.memory.memory_stats("cpu")["activation_bytes"]
    maps = conv2d_im2col(batch, kernels, padding=1)             # (64, 8, 8, 8)
    saved = gradlab.memory.memory_stats("cpu")["activation_bytes"] - before
    print(f"64 digits: input {batch.numel() * 4:,} bytes, saved for backward {saved:,} bytes")
