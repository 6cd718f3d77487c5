"""Lesson 2: values and the computation graph (the reference solution)."""

import gradlab


def build_expression(a, b, c, f):
    """L = (a·b + c)·f as three gradlab ops; returns (e, d, L), each with its name set."""
    e = a * b
    e.name = "e"
    d = e + c
    d.name = "d"
    L = d * f
    L.name = "L"
    return e, d, L


def _nodes(output):
    """Every node of the graph behind ``output``, each once (a stack, not recursion)."""
    if output.grad_fn is None:
        return []
    found, seen, stack = [], set(), [output.grad_fn]
    while stack:
        node = stack.pop()
        if node in seen:  # reached a second time along another path
            continue
        seen.add(node)
        found.append(node)
        for fn, _ in node.next_functions:
            if fn is not None:  # (None, 0): that input needs no gradient
                stack.append(fn)
    return found


def op_counts(output):
    """How many nodes of each kind the graph behind ``output`` has, by node.name()."""
    counts = {}
    for node in _nodes(output):
        if node.name() != "AccumulateGrad":
            counts[node.name()] = counts.get(node.name(), 0) + 1
    return counts


def find_leaves(output):
    """The leaf tensors that ``output`` depends on and that will receive a .grad, each once."""
    if output.grad_fn is None:
        return [output] if output.requires_grad else []
    return [node.variable for node in _nodes(output) if node.name() == "AccumulateGrad"]


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
