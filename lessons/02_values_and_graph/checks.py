"""Lesson 2's checks: the expression's values, names, edges and gradients; op counts and
leaves of random graphs with shared values, and of a chain too deep for recursion."""

from collections import Counter

import gradlab
from lessons.expect import check, expect, expect_close, expect_equal, expect_tensor

_UNARY = {"tanh": lambda t: t.tanh(), "sin": lambda t: t.sin(),
          "sigmoid": lambda t: t.sigmoid(), "neg": lambda t: -t}
_BINARY = {"add": lambda s, t: s + t, "mul": lambda s, t: s * t, "sub": lambda s, t: s - t}
_DEEP = 2500  # ops in the chain: well past Python's recursion limit of 1000


def _scalar(rng, requires_grad=False, name=None):
    t = gradlab.tensor(float(rng.uniform(-2, 2)), dtype=gradlab.float64,
                       requires_grad=requires_grad)
    t.name = name
    return t


def _random_graph(rng):
    """A random graph over a few leaves and constants, with shared intermediate values.

    Returns the output, the op counts it must have (counted as each op ran, not by a
    walk), the leaves it depends on, and every tensor (so that none is freed early).
    """
    leaves = [_scalar(rng, True, f"x{k}") for k in range(int(rng.integers(2, 5)))]
    constants = [_scalar(rng, False, f"k{k}") for k in range(2)]
    pool, results, used, counts = list(leaves), [], set(), Counter()

    def record(out, *operands):
        counts[out.grad_fn.name()] += 1
        used.update(id(t) for t in operands)
        pool.append(out)
        results.append(out)
        return out

    for _ in range(int(rng.integers(4, 9))):
        first = pool[int(rng.integers(len(pool)))]
        if rng.random() < 0.4:
            op = list(_UNARY)[int(rng.integers(len(_UNARY)))]
            record(_UNARY[op](first), first)
        else:
            op = list(_BINARY)[int(rng.integers(len(_BINARY)))]
            other = (pool + constants)[int(rng.integers(len(pool) + len(constants)))]
            record(_BINARY[op](first, other), first, other)
    # A value used twice for sure: the graph is a DAG, not a tree.
    shared = results[int(rng.integers(len(results)))]
    squashed = record(shared.tanh(), shared)
    record(shared * squashed, shared, squashed)
    unused = [t for t in results if id(t) not in used]
    output = unused[0]
    for t in unused[1:]:
        output = record(output + t, output, t)
    reached = [leaf for leaf in leaves if id(leaf) in used]
    return output, dict(counts), reached, leaves + constants + results


def _deep_chain(rng):
    """x -> sin -> mul -> sin -> ... : _DEEP ops in a line."""
    x = _scalar(rng, True, "x")
    y = x
    for k in range(_DEEP):
        y = y.sin() if k % 2 else y * 0.999
    return x, y


def _expect_edge(later, earlier, later_name, earlier_name):
    """``later``'s node has an edge to ``earlier``'s node."""
    ok = any(fn is earlier.grad_fn for fn, _ in later.grad_fn.next_functions)
    expect(ok, f"{later_name}.grad_fn.next_functions leads to {earlier_name}.grad_fn",
           f"an edge to {earlier_name}'s node", "an edge to it" if ok else "no such edge",
           f"compute {later_name} from the tensor {earlier_name} itself")


def _without_recursion(walk, deep):
    """``walk(deep)``, where a RecursionError fails the check with a short message (the
    traceback of a recursion error is a thousand identical lines)."""
    try:
        return walk(deep)
    except RecursionError:
        expect(False, f"walking a chain of {_DEEP} ops", "an answer", "RecursionError",
               "the walk calls itself once per node and Python stops at 1000 calls deep: "
               "keep the nodes still to visit in a list (a stack) and loop while it is not "
               "empty")


@check("build_expression")
def build_expression(student, rng):
    a, b, c = (_scalar(rng, True, name) for name in "abc")
    f = _scalar(rng, bool(rng.integers(2)), "f")
    result = student.build_expression(a, b, c, f)
    expect(isinstance(result, tuple) and len(result) == 3, "build_expression returns (e, d, L)",
           "a tuple of 3 tensors", repr(result)[:80])
    e, d, L = result
    for value, name in ((e, "e"), (d, "d"), (L, "L")):
        expect_tensor(value, f"{name} is a gradlab tensor")
        expect_equal(value.name, name, f"the name of {name}")
    av, bv, cv, fv = (t.item() for t in (a, b, c, f))
    expect_close(e, av * bv, f"e = a·b with a = {av:.3f}, b = {bv:.3f}")
    expect_close(d, av * bv + cv, f"d = e + c with c = {cv:.3f}")
    expect_close(L, (av * bv + cv) * fv, f"L = d·f with f = {fv:.3f}")
    kinds = tuple(None if t.grad_fn is None else t.grad_fn.name() for t in (e, d, L))
    expect_equal(kinds, ("MulBackward0", "AddBackward0", "MulBackward0"),
                 "the ops that made e, d and L (their grad_fn.name())")
    # The edges: L's node leads to d's, d's to e's, e's to the leaves a and b.
    _expect_edge(L, d, "L", "d")
    _expect_edge(d, e, "d", "e")
    behind_e = {id(fn.variable) for fn, _ in e.grad_fn.next_functions
                if fn is not None and fn.name() == "AccumulateGrad"}
    expect(behind_e == {id(a), id(b)}, "e.grad_fn.next_functions leads to the leaves a and b",
           "the AccumulateGrad nodes of a and b", f"{len(behind_e)} of them")
    L.backward()
    expect_close(a.grad, bv * fv, "dL/da = b·f after L.backward()")
    expect_close(b.grad, av * fv, "dL/db = a·f")
    expect_close(c.grad, fv, "dL/dc = f")
    if f.requires_grad:
        expect_close(f.grad, av * bv + cv, "dL/df = d (this time f requires grad)")


@check("op_counts")
def op_counts(student, rng):
    output, counts, _, keep = _random_graph(rng)
    got = student.op_counts(output)
    expect(isinstance(got, dict), "op_counts returns a dict", "a dict", type(got).__name__)
    expect_equal(got, counts, f"op counts of a random graph of {sum(counts.values())} ops "
                 "(one of them used twice)")
    leaf = _scalar(rng, True, "x")
    expect_equal(student.op_counts(leaf), {}, "op counts of a leaf (no grad_fn)")
    del keep
    x, deep = _deep_chain(rng)
    expect_equal(_without_recursion(student.op_counts, deep),
                 {"MulBackward0": _DEEP // 2, "SinBackward0": _DEEP // 2},
                 f"op counts of a chain of {_DEEP} ops (too deep for recursion)")


@check("find_leaves")
def find_leaves(student, rng):
    output, _, reached, keep = _random_graph(rng)
    got = student.find_leaves(output)
    expect(isinstance(got, list), "find_leaves returns a list", "a list", type(got).__name__)
    names = sorted(str(t.name) for t in got if isinstance(t, gradlab.Tensor))
    expect_equal(names, sorted(t.name for t in reached),
                 "the names of the leaves found in a random graph (constants need no grad)")
    expect_equal(len(got), len(reached), "each leaf listed once")
    same = {id(t) for t in got} == {id(t) for t in reached}
    expect(same, "the leaves are the tensors themselves (node.variable)", "the very tensors",
           "the very tensors" if same else "copies or other tensors")
    del keep
    leaf = _scalar(rng, True, "w")
    alone = student.find_leaves(leaf)
    expect(isinstance(alone, list) and len(alone) == 1 and alone[0] is leaf,
           "a leaf that requires grad is its own only leaf", "[w]", repr(alone)[:80])
    constant = _scalar(rng, False, "k")
    expect_equal(student.find_leaves(constant), [], "a tensor that needs no grad has no leaves")
    x, deep = _deep_chain(rng)
    found = _without_recursion(student.find_leaves, deep)
    expect(len(found) == 1 and found[0] is x, f"the one leaf of a chain of {_DEEP} ops",
           "[x]", repr([getattr(t, "name", t) for t in found])[:80])
