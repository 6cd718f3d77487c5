"""Lesson 4: local derivative rules (the reference solution).

Each op is a Function with two static methods. forward(ctx, *inputs) computes
the result from tensors (nothing is recorded inside it) and saves what backward
will need; backward(ctx, grad_output) gets dloss/d(output) and returns
dloss/d(input), one per input of forward: grad_output times the local derivative.
"""

import gradlab
from gradlab.autograd import Function


class Square(Function):
    """x².   d/dx = 2x: backward needs the input."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 2 * x


class Mul(Function):
    """a·b.   d/da = b, d/db = a: each input's gradient needs the other input."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output * b, grad_output * a


class Exp(Function):
    """e^x.   d/dx = e^x, the output itself: save it, and backward computes no exp."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y


class Sigmoid(Function):
    """σ(x) = 1 / (1 + e^-x).   d/dx = σ(x)·(1 - σ(x)), written with the output s."""

    @staticmethod
    def forward(ctx, x):
        s = 1 / (1 + (-x).exp())
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return grad_output * s * (1 - s)


class Log(Function):
    """ln x.   d/dx = 1/x: backward needs the input."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.log()

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output / x


def softplus(x):
    """ln(1 + e^x), built from your Exp and Log; its derivative comes out as σ(x)."""
    return Log.apply(1 + Exp.apply(x))


if __name__ == "__main__":
    # What the app runs when you press r: gradlab's own ops first, then yours.
    x = gradlab.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    x.name = "x"
    (1 + x.exp()).log().sum().backward()
    print("gradlab's exp and log: d softplus/dx =", x.grad)
    try:
        mine = gradlab.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        mine.name = "mine"
        softplus(mine).sum().backward()
        print("your Exp and Log:      d softplus/dx =", mine.grad)
        print("sigmoid(x), the exact answer:         ", x.detach().sigmoid())
    except NotImplementedError as todo:
        print(f"{todo} is still a TODO")
