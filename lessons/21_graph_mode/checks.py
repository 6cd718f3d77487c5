"""Lesson 21's checks: a replay against gradlab's traced model (values, buffers, random draws
and gradients), live nodes against a reference walk on graphs with dead code and in-place
changes, and the norm clip against its closed form, traced on one side of the threshold and
run on the other.

While ``replay`` is checked, ``Graph.run`` (gradlab's own replay) refuses to run, so the
loop has to be the student's.
"""

import warnings
from contextlib import contextmanager

import numpy as np

import gradlab
from gradlab import jit, nn
from gradlab.jit.graph import Graph, leaves
from lessons.expect import check, expect, expect_close, expect_equal, expect_gradcheck


@contextmanager
def _own_loop_only():
    def refuse(self, inputs, constants):
        raise AssertionError("replay called graph.run: write the loop over graph.nodes yourself")

    saved = Graph.run
    Graph.run = refuse
    try:
        yield
    finally:
        Graph.run = saved


def _block(rng):
    """A residual block with BatchNorm (training mode) and dropout: in-place changes,
    buffers that move, random draws."""
    width = int(rng.integers(3, 7))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.bn, self.drop = nn.Linear(width, width), nn.BatchNorm1d(width), \
                nn.Dropout(float(rng.uniform(0.2, 0.5)))

        def forward(self, x):
            out = self.bn(self.fc(x))
            out += x
            return self.drop(out.tanh())

    return Block(), (int(rng.integers(4, 9)), width)


def _mlp(rng):
    sizes = [int(s) for s in rng.integers(2, 8, size=4)]
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU() if rng.random() < 0.5 else nn.Sigmoid()]
    return nn.Sequential(*layers[:-1]), (int(rng.integers(2, 6)), sizes[0])


def _seeded(rng, shape):
    return gradlab.tensor(rng.normal(size=shape), dtype=gradlab.float32)


@check("replay")
def replay(student, rng):
    for build, what in ((_mlp, "an MLP"), (_block, "a residual block with BatchNorm, += and "
                                                   "dropout, in training mode")):
        gradlab.manual_seed(int(rng.integers(1 << 30)))
        model, shape = build(rng)
        traced = jit.trace(model, _seeded(rng, shape))
        graph = traced.graph
        constants = [t for _, t, _ in graph.constants]
        x = _seeded(rng, shape)
        seed = int(rng.integers(1 << 30))
        buffers = [b.detach().clone() for b in model.buffers()]
        gradlab.manual_seed(seed)
        want = traced(x).detach()
        after = [b.detach().clone() for b in model.buffers()]
        with gradlab.no_grad():
            for b, old in zip(model.buffers(), buffers):
                b.copy_(old)
        gradlab.manual_seed(seed)
        with _own_loop_only():
            got = student.replay(graph, [x], constants)
        expect_close(got, want, f"{what}, {len(graph.nodes)} nodes, input {shape}: your replay "
                     "against the traced model (same seed)", rtol=1e-6, atol=1e-7)
        for (name, b), expected in zip(model.named_buffers(), after):
            expect_close(b, expected, f"{what}: buffer {name} after your replay (in-place "
                         "changes happen when they are replayed)", rtol=1e-6, atol=1e-7)

    def fn(a, b):
        return (a @ b).tanh().sum(1) * a[:, 0]

    n, k, m = (int(s) for s in rng.integers(2, 5, size=3))
    a = gradlab.tensor(rng.normal(size=(n, k)), requires_grad=True)
    b = gradlab.tensor(rng.normal(size=(k, m)), requires_grad=True)
    graph = jit.trace(fn, (a, b)).graph
    with _own_loop_only():
        expect_gradcheck(lambda p, q: student.replay(graph, [p, q], []), (a, b),
                         f"gradients through your replay of tanh(a @ b).sum(1) * a[:, 0], "
                         f"a {n}×{k}, b {k}×{m}, float64")


# --- live nodes ------------------------------------------------------------------------------

def _changes_in_place(node) -> bool:
    return node.op.endswith("_") or (node.op == "batch_norm" and bool(node.args[5]))


def _live(graph) -> list:
    """The reference: which nodes reach an output or change something in place."""
    users: dict = {}
    for position, node in enumerate(graph.nodes):
        for v in leaves((node.args, node.kwargs)):
            users.setdefault(v.index, []).append(position)
    live = set()
    for position in range(len(graph.nodes) - 1, -1, -1):
        node = graph.nodes[position]
        outs = {v.index for v in leaves(node.outputs)}
        if _changes_in_place(node) or outs & {v.index for v in leaves(graph.outputs)} or \
                any(u in live for v in outs for u in users.get(v, [])):
            live.add(position)
    return sorted(live)


def _wasteful(rng):
    """A function with dead branches, a live in-place change and a dead one's inputs."""
    count = int(rng.integers(1, 4))
    counter = gradlab.zeros(())

    def fn(x):
        dead = [(x * (k + 1)).exp().sum() for k in range(count)]  # never used
        counter.add_(1)  # changes a tensor that outlives the call: live
        y = x.tanh()
        unused = y.mean(0)  # dead too
        z = y * 2 + x.relu()
        return z.sum(1), (dead, unused)[0][:0]

    return fn, count


@check("live_nodes")
def live_nodes(student, rng):
    fn, count = _wasteful(rng)
    x = _seeded(rng, (int(rng.integers(2, 5)), int(rng.integers(2, 5))))
    graph = jit.trace(fn, x, check_trace=False).graph
    ops = [n.op for n in graph.nodes]
    got = student.live_nodes(graph)
    expect_equal(list(got), _live(graph), f"the live nodes of {ops}: {count} dead exp().sum() "
                 "and a dead mean, a live counter.add_(1)")
    model, shape = _block(rng)
    for mode in ("train", "eval"):
        model.train(mode == "train")
        graph = jit.trace(model, _seeded(rng, shape), check_trace=False).graph
        expect_equal(list(student.live_nodes(graph)), _live(graph),
                     f"the residual block in {mode} mode: {[n.op for n in graph.nodes]}")

    def nothing_used(t):
        t.exp()
        return t

    graph = jit.trace(nothing_used, x).graph
    expect_equal(list(student.live_nodes(graph)), [], "x.exp() whose result is dropped, and "
                 "x returned as it is: nothing is live")


# --- a clip that traces well -------------------------------------------------------------------

def _clip(x, max_norm):
    norm = float(np.linalg.norm(x))
    return x * min(1.0, max_norm / norm)


@check("clip_to_norm")
def clip_to_norm(student, rng):
    n = int(rng.integers(3, 9))
    max_norm = float(rng.uniform(0.5, 2.0))
    small = rng.normal(size=n) * 0.05 * max_norm / np.sqrt(n)
    big = rng.normal(size=n) * 10 * max_norm
    for name, values in (("a small x (norm below max_norm)", small),
                         ("a big x (norm above)", big)):
        x = gradlab.tensor(values, dtype=gradlab.float64)
        expect_close(student.clip_to_norm(x, max_norm), _clip(values, max_norm),
                     f"clip_to_norm of {name}, max_norm {max_norm:.3f}", rtol=1e-9, atol=1e-12)
    for traced_on, run_on, text in ((small, big, "small"), (big, small, "big")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            traced = jit.trace(lambda t: student.clip_to_norm(t, max_norm),
                               gradlab.tensor(traced_on), check_trace=False)
        notes = [w for w in caught if issubclass(w.category, jit.TracerWarning)]
        expect(not notes, f"tracing on a {text} x reads no tensor into Python (no "
               "TracerWarning)", "none", f"{len(notes)}: {notes[0].message}" if notes else "")
        other = "big" if text == "small" else "small"
        expect_close(traced(gradlab.tensor(run_on)), _clip(run_on, max_norm),
                     f"traced on a {text} x, run on a {other} one: the other case",
                     rtol=1e-9, atol=1e-12)
    x = gradlab.tensor(big, requires_grad=True)
    expect_gradcheck(lambda t: student.clip_to_norm(t, max_norm), (x,),
                     "gradients of clip_to_norm where it clips (float64)")
