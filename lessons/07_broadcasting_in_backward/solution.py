"""Lesson 7: broadcasting in backward (the reference solution)."""

import gradlab
from gradlab.autograd import Function


def unbroadcast(grad, shape):
    """Sum ``grad``, the gradient of a broadcast result, down to ``shape``, the shape of
    the input that was broadcast: over the leading dims broadcasting added, and over
    the dims where ``shape`` has size 1 (keeping them, with size 1)."""
    shape = tuple(shape)
    # 1. Broadcasting lined the shapes up on the right and added dims in front: each
    #    slice along them is one more copy of the input, so their gradients add up.
    lead = grad.dim() - len(shape)
    if lead:  # only with dims to sum: grad.sum(()) would sum over everything
        grad = grad.sum(tuple(range(lead)))
    # 2. A dim of size 1 was stretched: sum its copies, keeping the dim (size 1).
    ones = tuple(i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1)
    if ones:
        grad = grad.sum(ones, keepdim=True)
    return grad


class BroadcastAdd(Function):
    """a + b for broadcastable shapes.   d/da = 1, d/db = 1, each summed to its shape."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.a_shape, ctx.b_shape = a.shape, b.shape
        return a + b

    @staticmethod
    def backward(ctx, grad):
        # d/da = d/db = 1: grad itself, summed over the copies each input was made into.
        return unbroadcast(grad, ctx.a_shape), unbroadcast(grad, ctx.b_shape)


class BroadcastMul(Function):
    """a * b for broadcastable shapes.   d/da = b, d/db = a, each summed to its shape."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        # grad * b has the broadcast shape (each copy of a met its own b): sum it back.
        return unbroadcast(grad * b, a.shape), unbroadcast(grad * a, b.shape)


def show(t):
    """A tensor's shape and its values, rounded, on one line."""
    return f"{tuple(t.shape)} {t.detach().double().numpy().round(3).tolist()}"


if __name__ == "__main__":
    # x is a batch of 3 rows; w (4,) is broadcast over the rows, b (3, 1) over the columns.
    gradlab.manual_seed(0)
    x = gradlab.randn(3, 4, requires_grad=True)
    w = gradlab.randn(4, requires_grad=True)
    b = gradlab.zeros(3, 1, requires_grad=True)
    (x * w + b).sum().backward()
    print("built-in ops:   w.grad", show(w.grad), "  b.grad", show(b.grad))

    x.grad = w.grad = b.grad = None
    BroadcastAdd.apply(BroadcastMul.apply(x, w), b).sum().backward()
    print("your Functions: w.grad", show(w.grad), "  b.grad", show(b.grad))
