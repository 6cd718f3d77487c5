"""Lesson 16: convolution (the reference solution)."""

import numpy as np

import gradlab
import gradlab.nn.functional as F


def conv_output_size(size, kernel, stride=1, padding=0):
    """How many positions a kernel of width ``kernel`` takes along an input of width ``size``."""
    # The padded input is size + 2·padding wide; the kernel's first position is 0, its
    # last one starts kernel cells before the end, and it moves stride cells at a time.
    return (size + 2 * padding - kernel) // stride + 1


def conv2d_naive(x, weight, stride=1, padding=0):
    """Cross-correlate one image x (C, H, W) with kernels weight (O, C, kh, kw), in NumPy loops.

    Returns the (O, Oh, Ow) feature maps.
    """
    c, h, w = x.shape
    o, _, kh, kw = weight.shape
    oh = conv_output_size(h, kh, stride, padding)
    ow = conv_output_size(w, kw, stride, padding)
    x = np.pad(x, ((0, 0), (padding, padding), (padding, padding)))
    out = np.zeros((o, oh, ow), dtype=np.result_type(x, weight))
    for r in range(oh):
        for q in range(ow):
            top, left = r * stride, q * stride
            window = x[:, top:top + kh, left:left + kw]          # (C, kh, kw)
            for k in range(o):
                # No flip: PyTorch's "convolution" is a cross-correlation.
                out[k, r, q] = (window * weight[k]).sum()
    return out


def im2col(x, kernel_size, stride=1, padding=0):
    """Every window of x (N, C, H, W) as a column: a (N, C·kh·kw, Oh·Ow) tensor.

    Row (c, i, j) of the columns holds input channel c at kernel offset (i, j),
    the order of weight.reshape(O, -1). Built from gradlab ops, so it has a graph.
    """
    kh, kw = kernel_size
    n, c, h, w = x.shape
    oh = conv_output_size(h, kh, stride, padding)
    ow = conv_output_size(w, kw, stride, padding)
    if padding:
        x = F.pad(x, (padding, padding, padding, padding))
    pieces = []
    for i in range(kh):
        for j in range(kw):
            # What kernel offset (i, j) sees at every output position: a strided slice.
            pieces.append(x[:, :, i:i + stride * (oh - 1) + 1:stride,
                            j:j + stride * (ow - 1) + 1:stride])        # (N, C, Oh, Ow)
    cols = gradlab.stack(pieces, dim=2)                                  # (N, C, kh·kw, Oh, Ow)
    return cols.reshape(n, c * kh * kw, oh * ow)


def conv2d_im2col(x, weight, bias=None, stride=1, padding=0):
    """conv2d as one matrix product: (O, C·kh·kw) @ (N, C·kh·kw, Oh·Ow) -> (N, O, Oh, Ow)."""
    n, _, h, w = x.shape
    o, _, kh, kw = weight.shape
    oh = conv_output_size(h, kh, stride, padding)
    ow = conv_output_size(w, kw, stride, padding)
    cols = im2col(x, (kh, kw), stride, padding)
    out = weight.reshape(o, -1) @ cols                 # broadcast over the batch: (N, O, Oh·Ow)
    if bias is not None:
        out = out + bias.reshape(1, o, 1)
    return out.reshape(n, o, oh, ow)


def input_grad_as_conv(grad_out, weight, padding=0):
    """The gradient of conv2d(x, weight, padding=padding) (stride 1) w.r.t. x, as a convolution.

    dL/dx[c, a, b] = Σ_{o,i,j} grad_out[o, a−i, b−j] · weight[o, c, i, j]: the output
    gradient, padded by k−1−padding, cross-correlated with the kernel flipped in space
    and with its in/out channels swapped.
    """
    kh, kw = weight.shape[2:]
    flipped = weight.flip((2, 3)).transpose(0, 1)      # (C, O, kh, kw)
    return F.conv2d(grad_out, flipped, padding=(kh - 1 - padding, kw - 1 - padding))


if __name__ == "__main__":
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
