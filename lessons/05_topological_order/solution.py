"""Lesson 5: topological order and backward() (the reference solution)."""

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
    # Depth-first post-order with an explicit stack. An entry (node, True) means "all of
    # node's next nodes are listed now": it was pushed below them, so it pops after them.
    post_order, expanded = [], set()
    stack = [(output.grad_fn, False)]
    while stack:
        node, inputs_listed = stack.pop()
        if inputs_listed:
            post_order.append(node)
            continue
        if node in expanded:  # reached again through another user: already handled
            continue
        expanded.add(node)
        stack.append((node, True))
        for nxt in next_nodes(node):
            if nxt not in expanded:
                stack.append((nxt, False))
    # Post-order lists each node after its inputs; backward needs the reverse.
    post_order.reverse()
    return post_order


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
    # 1. Count each Value's users: how many edges point at it (gradlab's engine does
    #    the same in _discover). x * x counts twice for x: it sends two gradients.
    users = {root: 0}
    stack = [root]
    while stack:
        v = stack.pop()
        for inp, _ in v.inputs:
            if inp not in users:
                users[inp] = 0
                stack.append(inp)
            users[inp] += 1
    # 2. A Value is ready once all its users have passed their gradient on: only then
    #    is its own gradient complete, and it may pass it to its inputs (chain rule).
    root.grad = 1.0
    ready = [root]
    while ready:
        v = ready.pop()
        for inp, local in v.inputs:
            inp.grad += local * v.grad
            users[inp] -= 1
            if users[inp] == 0:
                ready.append(inp)


if __name__ == "__main__":
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
