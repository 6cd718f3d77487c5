"""Lesson 4: local derivative rules.

Write forward and backward of the five ops marked TODO, then softplus from two of
them. Check with `gradlab check 4` (or press k in the app); run this file under the
debugger with r in the app.

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
        # TODO: save x for backward and return x squared
        raise NotImplementedError("Square.forward")

    @staticmethod
    def backward(ctx, grad_output):
        # TODO: get x back from ctx.saved_tensors; return grad_output times d(x²)/dx
        raise NotImplementedError("Square.backward")


class Mul(Function):
    """a·b.   d/da = b, d/db = a: each input's gradient needs the other input."""

    @staticmethod
    def forward(ctx, a, b):
        # TODO: save a and b, return their product
        raise NotImplementedError("Mul.forward")

    @staticmethod
    def backward(ctx, grad_output):
        # TODO: return two gradients, (for a, for b)
        raise NotImplementedError("Mul.backward")


class Exp(Function):
    """e^x.   d/dx = e^x, the output itself: save it, and backward computes no exp."""

    @staticmethod
    def forward(ctx, x):
        # TODO: compute y = e^x, save y (only y), return y
        raise NotImplementedError("Exp.forward")

    @staticmethod
    def backward(ctx, grad_output):
        # TODO: grad_output times the saved output
        raise NotImplementedError("Exp.backward")


class Sigmoid(Function):
    """σ(x) = 1 / (1 + e^-x).   d/dx = σ(x)·(1 - σ(x)), written with the output s."""

    @staticmethod
    def forward(ctx, x):
        # TODO: compute s = σ(x), save s (only s), return s
        raise NotImplementedError("Sigmoid.forward")

    @staticmethod
    def backward(ctx, grad_output):
        # TODO: grad_output times s·(1 - s)
        raise NotImplementedError("Sigmoid.backward")


class Log(Function):
    """ln x.   d/dx = 1/x: backward needs the input."""

    @staticmethod
    def forward(ctx, x):
        # TODO: save x, return ln x (x.log())
        raise NotImplementedError("Log.forward")

    @staticmethod
    def backward(ctx, grad_output):
        # TODO: grad_output times d(ln x)/dx
        raise NotImplementedError("Log.backward")


def softplus(x):
    """ln(1 + e^x), built from your Exp and Log; its derivative comes out as σ(x)."""
    # TODO: call your ops with .apply (Exp.apply(x), Log.apply(...)), not x.exp()
    raise NotImplementedError("softplus")


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
