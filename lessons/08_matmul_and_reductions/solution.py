"""Lesson 8: matmul and reductions in backward (the reference solution)."""

import gradlab
from gradlab.autograd import Function


class MatMul(Function):
    """y = a @ b for 2-D a (n, k) and b (k, m).

    dL/da = G @ b.T   (n, m) @ (m, k) -> (n, k), a's shape
    dL/db = a.T @ G   (k, n) @ (n, m) -> (k, m), b's shape
    """

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        # Each gradient has the shape of its input: the shapes leave one way to multiply.
        return grad @ b.T, a.T @ grad


class SumDim(Function):
    """y = x.sum(dim, keepdim). Every x in a row counts once: dy/dx = 1, so the
    gradient of the row's sum is copied back to each element of the row."""

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        ctx.dim, ctx.keepdim = dim, keepdim
        return x.sum(dim, keepdim=keepdim)

    @staticmethod
    def backward(ctx, grad):
        if not ctx.keepdim:
            # Put the summed dim back as size 1, so broadcasting lines it up with x's.
            grad = grad.unsqueeze(ctx.dim)
        # One gradient per forward argument: x gets one, dim and keepdim get None.
        return grad.expand(ctx.input_shapes[0]), None, None


class Mean(Function):
    """y = x.mean(dim, keepdim) = sum / n: the sum's gradient, divided by n = x.shape[dim]."""

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        ctx.dim, ctx.keepdim = dim, keepdim
        return x.mean(dim, keepdim=keepdim)

    @staticmethod
    def backward(ctx, grad):
        shape = ctx.input_shapes[0]
        if not ctx.keepdim:
            grad = grad.unsqueeze(ctx.dim)
        return grad.expand(shape) / shape[ctx.dim], None, None


class MaxDim(Function):
    """y = x.max(dim, keepdim).values. Only the winner moves the max: its slope is 1,
    every other element's is 0, so the gradient goes to the argmax alone."""

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        values, indices = x.max(dim, keepdim=True)
        ctx.dim, ctx.keepdim = dim, keepdim
        ctx.save_for_backward(indices)  # where each max came from
        return values if keepdim else values.squeeze(dim)

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        if not ctx.keepdim:
            grad = grad.unsqueeze(ctx.dim)
        # A 0/1 mask with one 1 per row, at the index max returned (even when there are ties).
        winners = grad.new_zeros(ctx.input_shapes[0]).scatter(ctx.dim, indices, 1.0)
        return winners * grad, None, None


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
