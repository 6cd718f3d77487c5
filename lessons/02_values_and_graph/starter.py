"""Lesson 2: values and the computation graph.

Fill in the three functions marked TODO, then check them with `gradlab check 2`
(or press k in the app). Run this file under the debugger with r in the app.

Reminders from the lesson:
    t.grad_fn                the node that made t (None for a leaf)
    node.name()              its kind, e.g. "MulBackward0" or "AccumulateGrad"
    node.next_functions      one entry per tensor input: (node, output_nr), and
                             (None, 0) when that input needs no gradient
    node.variable            (AccumulateGrad nodes only) the leaf tensor behind it
"""

import gradlab


def build_expression(a, b, c, f):
    """L = (a·b + c)·f as three gradlab ops; returns (e, d, L), each with its name set."""
    # TODO: e = a·b, d = e + c, L = d·f; set e.name = "e", d.name = "d", L.name = "L"
    #       and return e, d, L
    raise NotImplementedError("build_expression")


def op_counts(output):
    """How many nodes of each kind the graph behind ``output`` has, by node.name().

    Each node counts once, however many paths lead to it; AccumulateGrad nodes
    are not ops and are not counted. A leaf (no grad_fn) has no ops: {}.
    """
    # TODO: walk from output.grad_fn with a stack and a seen-set (no recursion:
    #       graphs can be thousands of nodes deep) and count node.name()
    raise NotImplementedError("op_counts")


def find_leaves(output):
    """The leaf tensors that ``output`` depends on and that will receive a .grad, each once."""
    # TODO: walk the graph as in op_counts and collect node.variable of every
    #       AccumulateGrad node; if output is a leaf itself, the answer is [output]
    #       when it requires grad, else []
    raise NotImplementedError("find_leaves")


if __name__ == "__main__":
    # What the app runs when you press r: n steps through mul, add, mul; b through backward.
    a = gradlab.tensor(3.0, requires_grad=True)
    b = gradlab.tensor(-2.0, requires_grad=True)
    c = gradlab.tensor(4.0, requires_grad=True)
    f = gradlab.tensor(0.5)  # a constant: no gradient wanted
    a.name, b.name, c.name, f.name = "a", "b", "c", "f"
    e = a * b
    d = e + c
    L = d * f
    L.backward()
    print(f"L = {L.item()}; dL/da = {a.grad.item()}, dL/db = {b.grad.item()}, "
          f"dL/dc = {c.grad.item()}")
    try:
        print("ops:", op_counts(L))
        print("leaves:", [leaf.name for leaf in find_leaves(L)])
    except NotImplementedError as todo:
        print(f"{todo} is still a TODO")
