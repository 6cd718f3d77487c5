"""Lesson 7: broadcasting in backward.

Three things to write:

1. unbroadcast(grad, shape): sum the gradient of a broadcast result back to the shape
   of the input that was broadcast.
2. BroadcastAdd: a + b as an autograd Function, for any broadcastable shapes.
3. BroadcastMul: a * b the same way.

Check them with `gradlab check 7` (or press k in the app). Press r in the app to run
this file under the debugger.
"""

import gradlab
from gradlab.autograd import Function


def unbroadcast(grad, shape):
    """Sum ``grad``, the gradient of a broadcast result, down to ``shape``, the shape of
    the input that was broadcast: over the leading dims broadcasting added, and over
    the dims where ``shape`` has size 1 (keeping them, with size 1)."""
    # TODO: 1. sum over the first grad.dim() - len(shape) dims
    #       2. sum with keepdim=True over each dim i where shape[i] == 1 < grad.shape[i]
    raise NotImplementedError("unbroadcast")


class BroadcastAdd(Function):
    """a + b for broadcastable shapes.   d/da = 1, d/db = 1, each summed to its shape."""

    @staticmethod
    def forward(ctx, a, b):
        # TODO: remember the two shapes on ctx (ctx.a_shape = a.shape, ...); return a + b
        raise NotImplementedError("BroadcastAdd.forward")

    @staticmethod
    def backward(ctx, grad):
        # TODO: return one gradient per input, each with the shape of its input
        raise NotImplementedError("BroadcastAdd.backward")


class BroadcastMul(Function):
    """a * b for broadcastable shapes.   d/da = b, d/db = a, each summed to its shape."""

    @staticmethod
    def forward(ctx, a, b):
        # TODO: save a and b for backward (ctx.save_for_backward); return a * b
        raise NotImplementedError("BroadcastMul.forward")

    @staticmethod
    def backward(ctx, grad):
        # TODO: grad * b for a and grad * a for b, each summed back to its input's shape
        raise NotImplementedError("BroadcastMul.backward")


def show(t):
    """A tensor's shape and its values, rounded, on one line."""
    return f"{tuple(t.shape)} {t.detach().double().numpy().round(3).tolist()}"


if __name__ == "__main__":
    # What the app runs when you press r: step it with n (ops) and b (backward nodes).
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
