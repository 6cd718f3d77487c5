"""Lesson 8: matmul and reductions in backward.

Write forward and backward of four ops as gradlab.autograd.Function subclasses:
MatMul (2-D), SumDim and Mean over one dim (keepdim either way), and MaxDim.
forward may use gradlab's ops (nothing is recorded inside it); backward returns
one gradient per forward argument, built from tensor ops.
Check your work with `gradlab check 8` (or press k in the app); run this file
under the debugger with r.
"""

import gradlab
from gradlab.autograd import Function


class MatMul(Function):
    """y = a @ b for 2-D a (n, k) and b (k, m)."""

    @staticmethod
    def forward(ctx, a, b):
        # TODO: save a and b for backward (ctx.save_for_backward) and return a @ b
        raise NotImplementedError("MatMul.forward")

    @staticmethod
    def backward(ctx, grad):
        # TODO: grad has y's shape (n, m). Return (dL/da, dL/db): each must have the
        #       shape of its input, (n, k) and (k, m). Which products of grad, a.T and
        #       b.T give those shapes?
        raise NotImplementedError("MatMul.backward")


class SumDim(Function):
    """y = x.sum(dim, keepdim)."""

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        # TODO: keep dim and keepdim on ctx (ctx.dim = dim ...) and return the sum
        raise NotImplementedError("SumDim.forward")

    @staticmethod
    def backward(ctx, grad):
        # TODO: copy grad back over x's shape, ctx.input_shapes[0]. Without keepdim the
        #       summed dim is gone from grad: put it back first (unsqueeze). Return three
        #       things, one per forward argument: the gradient, None, None.
        raise NotImplementedError("SumDim.backward")


class Mean(Function):
    """y = x.mean(dim, keepdim)."""

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        # TODO: as in SumDim, with the mean
        raise NotImplementedError("Mean.forward")

    @staticmethod
    def backward(ctx, grad):
        # TODO: the mean is the sum divided by n, the size of the reduced dim
        raise NotImplementedError("Mean.backward")


class MaxDim(Function):
    """y = x.max(dim, keepdim).values (the values only, not the indices)."""

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        # TODO: x.max(dim, keepdim=True) gives (values, indices). Save the indices for
        #       backward, keep dim and keepdim, return the values (squeezed if not keepdim)
        raise NotImplementedError("MaxDim.forward")

    @staticmethod
    def backward(ctx, grad):
        # TODO: the gradient goes only to the element that won: build a 0/1 mask of
        #       x's shape with a 1 at each saved index (new_zeros, then scatter) and
        #       multiply it by grad (unsqueezed first if not keepdim)
        raise NotImplementedError("MaxDim.backward")


if __name__ == "__main__":
    # Step it with n (ops) and b (backward nodes): your four ops appear in the graph.
    gradlab.manual_seed(1)
    A = gradlab.randn(3, 4, requires_grad=True)
    B = gradlab.randn(4, 2, requires_grad=True)
    A.name, B.name = "A", "B"
    y = MatMul.apply(A, B)                                    # (3, 2)
    row_sum = SumDim.apply(y, 1, False)                       # (3,)
    row_max = MaxDim.apply(y, 1, False)                       # (3,)
    loss = Mean.apply(row_sum + row_max, 0, False)            # 0-d
    loss.backward()
    print(f"loss = {loss.item():.4f}")
    print("dL/dA =", A.grad)

    # The same computation with gradlab's built-in ops must give the same gradients.
    A2, B2 = A.detach().requires_grad_(), B.detach().requires_grad_()
    y2 = A2 @ B2
    (y2.sum(1) + y2.amax(1)).mean().backward()
    print("same as built-ins:", gradlab.allclose(A.grad, A2.grad),
          gradlab.allclose(B.grad, B2.grad))
