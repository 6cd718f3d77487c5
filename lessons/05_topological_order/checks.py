"""Lesson 5's checks: random expression graphs with shared parts, and long chains.

Every random graph is drawn again until visiting its nodes breadth-first (in the
order they are first reached from the output) is *wrong* for it: a node would run
before one of its users. So an engine that ignores the order fails these checks.
"""

import numpy as np

import gradlab
from lessons.expect import check, expect, expect_close

_KINDS = ("add", "mul", "sub", "scale", "tanh", "square")
_CHAIN = 1500  # steps of v = v * c + x: 3,000 ops, far past Python's 1,000 nested calls


def _next(node):
    return [fn for fn, _ in node.next_functions if fn is not None]


def _inputs(value):
    return [inp for inp, _ in value.inputs]


def _label(node) -> str:
    name = node.name() if callable(getattr(node, "name", None)) else type(node).__name__
    return f"{name} (node {node.id})" if hasattr(node, "id") else name


def _walk(root, children) -> list:
    """Everything reachable from ``root``, breadth-first in the order first reached."""
    order, seen = [root], {root}
    k = 0
    while k < len(order):
        for child in children(order[k]):
            if child not in seen:
                seen.add(child)
                order.append(child)
        k += 1
    return order


def _is_valid(order, children) -> bool:
    position = {node: k for k, node in enumerate(order)}
    return all(position[c] > position[n] for n in order for c in children(n))


def _plan(rng, n_leaves: int, n_ops: int) -> list:
    """A random expression as steps (kind, i, j, c) over the values made so far, using
    every input."""
    while True:
        steps, used = [], set()
        n = n_leaves
        for _ in range(n_ops):
            kind = _KINDS[int(rng.integers(len(_KINDS)))]
            i = int(rng.integers(max(0, n - 3), n))  # a recent value: the graph grows deep
            j = int(rng.integers(0, n))  # any earlier value: shared subexpressions
            steps.append((kind, i, j, round(float(rng.uniform(-2, 2)), 2)))
            used.update((i, j) if kind in ("add", "mul", "sub") else (i,))
            n += 1
        if used.issuperset(range(n_leaves)):
            return steps


def _build(plan, leaves):
    """Run ``plan`` on ``leaves`` (Values or tensors alike); all values and the output,
    the sum of the last value and every value nothing else used."""
    values, used = list(leaves), set()
    for kind, i, j, c in plan:
        a, b = values[i], values[j]
        if kind == "add":
            v = a + b
        elif kind == "mul":
            v = a * b
        elif kind == "sub":
            v = a - b
        elif kind == "scale":
            v = a * c
        elif kind == "tanh":
            v = a.tanh()
        else:
            v = a**2
        used.update((i, j) if kind in ("add", "mul", "sub") else (i,))
        values.append(v)
    out = values[-1]
    for k in range(len(leaves), len(values) - 1):
        if k not in used:
            out = out + values[k]
    return values, out


def _text(plan, n_leaves: int) -> str:
    return f"a random graph of {len(plan)} ops on {n_leaves} inputs, with shared parts"


def _tensor_graph(rng):
    """A random graph over small float64 vectors whose breadth-first order is invalid."""
    for _ in range(200):
        n_leaves, plan = 3, _plan(rng, 3, int(rng.integers(8, 14)))
        leaves = [gradlab.tensor(rng.uniform(-1, 1, size=3), dtype=gradlab.float64,
                                 requires_grad=True) for _ in range(n_leaves)]
        _, out = _build(plan, leaves)
        if not _is_valid(_walk(out.grad_fn, _next), _next):
            return out, _text(plan, n_leaves)
    raise AssertionError("no random graph with a wrong breadth-first order was found")


def _order_problem(order, output) -> str | None:
    """What is wrong with ``order`` as a backward order of the graph behind ``output``."""
    if not isinstance(order, (list, tuple)):
        return f"a {type(order).__name__}, not a list"
    order, nodes = list(order), _walk(output.grad_fn, _next)
    ids = [id(n) for n in order]
    if len(set(ids)) != len(ids):
        return f"{len(ids) - len(set(ids))} nodes listed twice"
    missing = {id(n) for n in nodes} - set(ids)
    extra = set(ids) - {id(n) for n in nodes}
    if missing or extra:
        return (f"{len(order)} entries: {len(missing)} of the graph's {len(nodes)} nodes "
                f"missing, {len(extra)} that are not in it")
    if order[0] is not output.grad_fn:
        return f"{_label(order[0])} first, not output.grad_fn, {_label(output.grad_fn)}"
    position = {id(n): k for k, n in enumerate(order)}
    for k, node in enumerate(order):
        for nxt in _next(node):
            if position[id(nxt)] < k:
                return (f"{_label(nxt)} at position {position[id(nxt)]}, before its user "
                        f"{_label(node)} at position {k}")
    return None


def _expect_valid_order(student, output, what: str) -> None:
    n = len(_walk(output.grad_fn, _next))
    try:
        order = student.topological_order(output)
    except RecursionError:
        expect(False, f"a backward order for {what}", "an order", "RecursionError",
               "Python allows about 1,000 nested calls: keep the nodes to visit in a list "
               "used as a stack instead of calling the function again")
    problem = _order_problem(order, output)
    expect(problem is None, f"a backward order for {what}",
           f"each of its {n} nodes once, each before the nodes it sends gradients to",
           problem or "so it is",
           "list a node only after all of its users: post-order, then reverse")


@check("topological_order")
def topological_order(student, rng):
    # The lesson's example, with the two users of a = x·x in both orders.
    c = round(float(rng.uniform(-3, 3)), 2)
    x = gradlab.tensor(rng.uniform(-2, 2, size=3), dtype=gradlab.float64, requires_grad=True)
    a = x * x
    _expect_valid_order(student, a + a * c, f"a = x·x, y = a + a·{c}")
    _expect_valid_order(student, a * c + a, f"a = x·x, y = a·{c} + a")
    for _ in range(4):
        output, text = _tensor_graph(rng)
        _expect_valid_order(student, output, text)

    # A long chain that reuses x at every step: recursion runs out of Python's stack.
    x = gradlab.tensor(rng.uniform(-1, 1, size=2), dtype=gradlab.float64, requires_grad=True)
    c = float(rng.uniform(0.2, 0.8))
    v = x
    for _ in range(_CHAIN):
        v = v * c + x
    _expect_valid_order(student, v, f"a chain of {2 * _CHAIN:,} ops")


def _value_graph(student, rng):
    """A random graph as student Values and as gradlab scalars, on which running the
    chain rule in breadth-first order gives wrong gradients."""
    for _ in range(200):
        n_leaves, plan = 3, _plan(rng, 3, int(rng.integers(8, 14)))
        data = rng.uniform(-1, 1, size=n_leaves)
        leaves = [gradlab.tensor(d, dtype=gradlab.float64, requires_grad=True) for d in data]
        tensors, out = _build(plan, leaves)
        for t in tensors[n_leaves:]:
            t.retain_grad()
        out.retain_grad()
        out.backward()
        right = [0.0 if t.grad is None else t.grad.item() for t in tensors + [out]]
        # The same graph run in breadth-first order (a wrong order for it):
        values, root = _build(plan, [student.Value(d) for d in data])
        root.grad = 1.0
        for v in _walk(root, _inputs):
            for inp, local in v.inputs:
                inp.grad += local * v.grad
        wrong = [v.grad for v in values + [root]]
        if not np.allclose(wrong, right, rtol=1e-6, atol=1e-9):
            values, root = _build(plan, [student.Value(d) for d in data])
            return values, root, right, _text(plan, n_leaves)
    raise AssertionError("no random graph with a wrong breadth-first order was found")


@check("backward")
def backward(student, rng):
    # The lesson's example with random numbers: a = x·x is used by y directly and via c·a.
    x0, c = round(float(rng.uniform(-2, 2)), 3), round(float(rng.uniform(-3, 3)), 2)
    x = student.Value(x0)
    a = x * x
    y = a + a * c
    student.backward(y)
    expect_close(x.grad, 2 * x0 * (1 + c),
                 f"dy/dx for a = x·x, y = a {c:+}·a at x = {x0} (a has two users)", rtol=1e-9)

    values, root, right, text = _value_graph(student, rng)
    student.backward(root)
    n_leaves = 3
    got = [v.grad for v in values + [root]]
    expect_close(got[:n_leaves], right[:n_leaves],
                 f"gradients of the {n_leaves} inputs, {text}, against gradlab", rtol=1e-9,
                 atol=1e-12)
    expect_close(got[n_leaves:], right[n_leaves:],
                 "gradients of every intermediate Value and the output, against gradlab's "
                 "(retain_grad)", rtol=1e-9, atol=1e-12)

    # A long chain v = v * w + x: the gradients follow from forward-mode derivatives.
    x0, w0 = float(rng.uniform(-1, 1)), float(rng.uniform(0.3, 0.7))
    x, w = student.Value(x0), student.Value(w0)
    v, value, dx, dw = x, x0, 1.0, 0.0
    for _ in range(2 * _CHAIN):
        v = v * w + x
        value, dx, dw = value * w0 + x0, dx * w0 + 1.0, dw * w0 + value
    what = f"a chain of {4 * _CHAIN:,} ops, v = v·w + x repeated"
    try:
        student.backward(v)
    except RecursionError:
        expect(False, f"backward through {what}", "gradients", "RecursionError",
               "keep the Values to visit in a list used as a stack, not in nested calls")
    expect_close([x.grad, w.grad], [dx, dw], f"dv/dx and dv/dw for {what}", rtol=1e-9)
