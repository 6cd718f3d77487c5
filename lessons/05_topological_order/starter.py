"""Lesson 5: topological order and backward().

Two functions to write, both without recursion (no function calling itself):

1. topological_order(output): the nodes of the graph behind a gradlab tensor, in an
   order backward() may run them.
2. backward(root): a tiny backward engine for the Value class below.

Check them with `gradlab check 5` (or press k in the app). Press r in the app to run
this file under the debugger.
"""

import math

import gradlab


def next_nodes(node):
    """The nodes ``node`` sends gradients to: its ``next_functions`` without empty entries.

    ``node.next_functions`` has one entry per tensor argument of the op, as in
    PyTorch: ``(next_node, output_nr)`` where the argument needs a gradient, and
    ``(None, 0)`` where it does not. A leaf that requires grad shows up as an
    ``AccumulateGrad`` node.
    """
    return [fn for fn, _ in node.next_functions if fn is not None]


def topological_order(output):
    """Every node of the graph behind ``output``, each once, in an order where each node
    comes before every node in its ``next_functions`` (``output.grad_fn`` first)."""
    # TODO: walk from output.grad_fn with an explicit stack (a list), not recursion;
    #       list each node after all of its next nodes (post-order), then reverse the list
    raise NotImplementedError("topological_order")


class Value:
    """One number that remembers how it was computed: a whole autograd in a page.

    ``inputs`` holds one pair ``(input, local derivative)`` per input. For
    ``c = a * b`` it is ``((a, b.data), (b, a.data))``, because dc/da = b and
    dc/db = a. ``backward`` turns these local derivatives into gradients.
    """

    def __init__(self, data, inputs=(), op=""):
        self.data = float(data)
        self.grad = 0.0
        self.inputs = tuple(inputs)
        self.op = op

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return Value(self.data + other.data, ((self, 1.0), (other, 1.0)), "+")

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return Value(self.data * other.data, ((self, other.data), (other, self.data)), "*")

    __radd__ = __add__
    __rmul__ = __mul__

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return other + (-self)

    def __pow__(self, k):
        """A number to the power k (a plain number): d(x**k)/dx = k x**(k-1)."""
        return Value(self.data**k, ((self, k * self.data ** (k - 1)),), f"**{k}")

    def tanh(self):
        """d tanh(x)/dx = 1 - tanh(x)**2."""
        t = math.tanh(self.data)
        return Value(t, ((self, 1.0 - t * t),), "tanh")

    def exp(self):
        """d exp(x)/dx = exp(x)."""
        e = math.exp(self.data)
        return Value(e, ((self, e),), "exp")

    def backward(self):
        backward(self)

    def __repr__(self):
        return f"Value({self.data:.4g}, grad={self.grad:.4g})"


def backward(root):
    """Set ``root.grad = 1`` and add d(root)/d(v) into ``v.grad`` for every Value v that
    root was computed from (every grad starts at 0)."""
    # TODO: 1. order the Values so each comes before its inputs (no recursion)
    #       2. root.grad = 1.0, then for each v in that order and each (inp, local) in
    #          v.inputs: inp.grad += local * v.grad
    raise NotImplementedError("backward")


if __name__ == "__main__":
    # What the app runs when you press r: step it with n (ops) and b (backward nodes).
    # x is used twice: by b and by y. y = 4 x**2, so dy/dx = 8x = 16 at x = 2.
    x = gradlab.tensor(2.0, dtype=gradlab.float64, requires_grad=True)
    a = x * x
    b = a * 3
    y = a + b
    y.backward()
    print(f"gradlab: y = {y.item()}, dy/dx = {x.grad.item()}")
    print("your order:", [node.name() for node in topological_order(y)])

    xv = Value(2.0)
    av = xv * xv
    yv = av + av * 3
    backward(yv)
    print(f"your engine: y = {yv.data}, dy/dx = {xv.grad}")
