"""IterationGraph: the graph of one iteration, built from the events of a real program."""

from __future__ import annotations

import dataclasses
import gc
import weakref

import numpy as np
import pytest

import gradlab
import gradlab.nn as nn
import gradlab.nn.functional as F
from gradlab import events
from gradlab.debug.derivatives import derivative_rule
from gradlab.debug.graph import IterationGraph, shape_label
from gradlab.debug.recorder import Recorder


def feed(graph: IterationGraph):
    """A listener that builds ``graph`` the way the Recorder does."""
    def listen(event):
        if isinstance(event, events.OpForward) and event.node_id is not None:
            graph.add_op(event)
        elif isinstance(event, events.BackwardNode):
            graph.mark_backward(event)
        elif isinstance(event, events.GradAccumulated):
            graph.grad_accumulated(event)
        elif isinstance(event, events.Phase) and event.kind == "backward_begin":
            graph.add_roots(event.roots)
    return listen


def mlp():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def names_of(model):
    table = {id(p): name for name, p in model.named_parameters()}
    return lambda t: table.get(id(t))


def run_step(model, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    return loss


MLP_EDGES = {
    ("in0", "op0", "(5, 4)"), ("param:0.weight", "op0", "(8, 4)"),
    ("param:0.bias", "op0", "(8)"), ("op0", "op1", "(5, 8)"), ("op1", "op2", "(5, 8)"),
    ("param:2.weight", "op2", "(3, 8)"), ("param:2.bias", "op2", "(3)"),
    ("op2", "op3", "(5, 3)"), ("in1", "op3", "(5)"),
}


def test_mlp_graph_nodes_edges_states_and_keys():
    model = mlp()
    x, y = gradlab.randn(5, 4), gradlab.tensor([0, 1, 2, 0, 1])
    graph = IterationGraph(1, name_of=names_of(model))
    forward_states = {}

    def listen(event):
        feed(graph)(event)
        if isinstance(event, events.Phase) and event.kind == "backward_begin":
            forward_states.update({k: n.state for k, n in graph.nodes.items()})

    with events.subscribe(listen):
        loss = run_step(model, x, y)
    snap = graph.freeze(current="op3")
    ops = [n for n in snap.nodes if n.kind == "op"]
    assert [(n.key, n.label, n.module) for n in ops] == [
        ("op0", "linear", "0"), ("op1", "relu", "1"), ("op2", "linear", "2"),
        ("op3", "cross_entropy", None)]
    assert {n.key: n.kind for n in snap.nodes if n.kind != "op"} == {
        "in0": "input", "in1": "input", "param:0.weight": "parameter",
        "param:0.bias": "parameter", "param:2.weight": "parameter", "param:2.bias": "parameter"}
    assert {(e.source, e.target, e.label) for e in snap.edges} == MLP_EDGES
    # before backward everything had run forward; afterwards ops and parameters are done
    assert set(forward_states.values()) == {"forward"}
    assert {n.key: n.state for n in snap.nodes} == {
        **{n.key: "backward" for n in ops},
        **{k: "backward" for k in ("param:0.weight", "param:0.bias", "param:2.weight",
                                   "param:2.bias")},
        "in0": "forward", "in1": "forward"}
    relu = snap.node("op1")
    assert relu.backward_name == "ReluBackward0" and relu.node_id is not None
    assert relu.input_shapes == ((5, 8),) and relu.output_shapes == ((5, 8),)
    assert relu.dtype == "float32" and relu.device == "cpu"
    assert relu.derivative == derivative_rule("relu") and relu.duration >= 0
    assert snap.current == "op3" and snap.iteration == 1 and snap.truncated == 0
    assert snap.node("op3").value.mean == pytest.approx(loss.item())
    with pytest.raises(KeyError, match="no node 'op9'"):
        snap.node("op9")


def test_node_summaries_hold_values_and_gradients():
    model = mlp()
    x, y = gradlab.randn(5, 4), gradlab.tensor([0, 1, 2, 0, 1])
    graph = IterationGraph(1, name_of=names_of(model))
    with events.subscribe(feed(graph)):
        run_step(model, x, y)
    snap = graph.freeze()
    relu = snap.node("op1")
    hidden = F.relu(F.linear(x, model[0].weight, model[0].bias))
    assert relu.value.min >= 0 and relu.value.mean == pytest.approx(hidden.mean().item())
    assert relu.grad.shape == (5, 8) and len(relu.grad_inputs) == 1
    assert relu.grad_inputs[0].shape == (5, 8)
    loss_node = snap.node("op3")
    assert loss_node.grad.numel == 1 and loss_node.grad.mean == 1.0  # d loss / d loss
    w = snap.node("param:0.weight")
    assert w.grad.norm == pytest.approx(float(np.linalg.norm(model[0].weight.grad.numpy())))
    assert w.value.mean == pytest.approx(model[0].weight.mean().item())
    assert snap.node("in0").value.norm == pytest.approx(float(np.linalg.norm(x.numpy())))


def test_two_iterations_have_the_same_keys_and_shape_key():
    model = mlp()
    x, y = gradlab.randn(5, 4), gradlab.tensor([0, 1, 2, 0, 1])
    snaps = []
    for i in range(2):
        graph = IterationGraph(i + 1, name_of=names_of(model))
        with events.subscribe(feed(graph)):
            run_step(model, x * (i + 1) if i else x, y)
        snaps.append(graph.freeze())
    a, b = snaps
    assert [n.key for n in a.nodes] == [n.key for n in b.nodes]
    assert a.shape_key == b.shape_key
    other = IterationGraph(3, name_of=names_of(model))
    with events.subscribe(feed(other)):
        run_step(model, gradlab.randn(7, 4), gradlab.tensor([0, 1, 2, 0, 1, 2, 0]))
    assert other.freeze().shape_key != a.shape_key  # another batch size: other edge labels


def test_parameters_without_names_get_id_keys_and_data_inputs_are_deduplicated():
    w = nn.Parameter(gradlab.randn(3, 3))
    x = gradlab.randn(2, 3)
    graph = IterationGraph(1)
    with events.subscribe(feed(graph)):
        h = x @ w
        out = (h * x).sum()  # x used twice: one box
    snap = graph.freeze()
    keys = [n.key for n in snap.nodes]
    assert f"param:{id(w)}" in keys
    assert keys.count("in0") == 1 and "in1" not in keys
    assert snap.node(f"param:{id(w)}").label == "param (3, 3)"
    assert out.requires_grad


def test_ops_made_before_attaching_show_as_created_then_backward():
    a = gradlab.randn(3, requires_grad=True)
    b = (a * 2).exp()  # recorded while nobody listened
    graph = IterationGraph(1)
    states = {}

    def listen(event):
        feed(graph)(event)
        if isinstance(event, events.Phase) and event.kind == "backward_begin":
            states.update({k: n.state for k, n in graph.nodes.items()})

    with events.subscribe(listen):
        loss = b.sum()
        loss.backward()
    snap = graph.freeze()
    labels = {n.label: n for n in snap.nodes if n.kind == "op"}
    assert set(labels) == {"sum", "exp", "mul"}
    assert states[labels["exp"].key] == "created" and states[labels["mul"].key] == "created"
    assert states[labels["sum"].key] == "forward"
    assert all(n.state == "backward" for n in labels.values())
    assert labels["exp"].backward_name == "ExpBackward0"
    leaf = next(n for n in snap.nodes if n.kind == "leaf")
    edges = {(e.source, e.target) for e in snap.edges}
    assert {(leaf.key, labels["mul"].key), (labels["mul"].key, labels["exp"].key),
            (labels["exp"].key, labels["sum"].key)} <= edges


def test_deep_graph_made_before_attaching_is_walked_without_recursion():
    x = gradlab.ones(2, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y + 1
    graph = IterationGraph(1, summaries=False)
    with events.subscribe(feed(graph)):
        y.sum().backward()
    assert len(graph) == 3002  # sum, 3000 adds, the leaf
    assert sum(1 for n in graph.nodes.values() if n.state == "backward") == 3002


def test_truncation_counts_the_nodes_left_out():
    model = mlp()
    graph = IterationGraph(1, max_nodes=4, name_of=names_of(model))
    with events.subscribe(feed(graph)):
        run_step(model, gradlab.randn(5, 4), gradlab.tensor([0, 1, 2, 0, 1]))
    snap = graph.freeze()
    assert len(snap.nodes) == 4 and snap.truncated > 0
    keys = {n.key for n in snap.nodes}
    assert all(e.source in keys and e.target in keys for e in snap.edges)


def test_snapshot_is_frozen_and_holds_no_live_tensors():
    model = mlp()
    x = gradlab.randn(5, 4)
    graph = IterationGraph(1, name_of=names_of(model))
    with events.subscribe(feed(graph)):
        run_step(model, x, gradlab.tensor([0, 1, 2, 0, 1]))
    snap = graph.freeze()
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.nodes[0].state = "forward"
    alive = weakref.ref(x)
    del x, graph
    gc.collect()
    assert alive() is None
    assert snap.node("in0").value.shape == (5, 4)


def test_freeze_is_cached_until_something_changes():
    graph = IterationGraph(1)
    a = gradlab.randn(3, requires_grad=True)
    listen = feed(graph)
    with events.subscribe(listen):
        b = a * 3
    first, again = graph.freeze(), graph.freeze()
    assert first.nodes is again.nodes and first.edges is again.edges
    with events.subscribe(listen):
        b.sum().backward()
    assert graph.freeze().nodes is not first.nodes


def test_recorder_graph_keys_stay_stable_over_iterations():
    model = mlp()
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    x, y = gradlab.randn(5, 4), gradlab.tensor([0, 1, 2, 0, 1])
    rec = Recorder(history=4)
    with events.subscribe(rec.handle):
        for _ in range(3):
            opt.zero_grad()
            run_step(model, x, y)
            opt.step()
    snap = rec.snapshot(version=0, status="running", position=None, pause_reason=None,
                        output="", error=None, breakpoints=())
    graphs = [*snap.history, snap.graph]
    assert [g.iteration for g in graphs] == [1, 2, 3]
    assert len({g.shape_key for g in graphs}) == 1
    assert all({(e.source, e.target, e.label) for e in g.edges} == MLP_EDGES for g in graphs)


def test_shape_label():
    assert shape_label((64, 32)) == "(64, 32)"
    assert shape_label(gradlab.Size([3])) == "(3)" and shape_label(()) == "()"


def test_forward_mode_tangents_are_recorded_with_the_values():
    """A dual tensor's ops carry their tangent into the snapshot (the inspector shows it,
    the graph marks the box). The graph holds recorded ops, so x requires grad."""
    import gradlab.autograd.forward_ad as fwAD

    graph = IterationGraph(1, summaries=True)
    x = gradlab.tensor([1.0, 2.0], dtype=gradlab.float64, requires_grad=True)
    with events.subscribe(feed(graph)), fwAD.dual_level():
        dual = fwAD.make_dual(x, gradlab.tensor([1.0, 0.5], dtype=gradlab.float64))
        (dual * dual).sum()
    ops = {n.label: n for n in graph.freeze().nodes if n.kind == "op"}
    assert set(ops) == {"make_dual", "mul", "sum"}
    assert ops["mul"].tangent is not None and ops["mul"].tangent.shape == (2,)
    assert abs(ops["sum"].tangent.max - 4.0) < 1e-12  # d/dt Σx² = 2·(1·1 + 2·0.5)


class Mean(gradlab.autograd.Function):
    """A user's op named like a built-in one."""

    @staticmethod
    def forward(ctx, x):
        ctx.n = x.numel()
        return x.sum()

    @staticmethod
    def backward(ctx, grad):
        return grad.expand(ctx.n)


def test_a_users_own_function_is_described_as_such_not_by_its_name():
    graph = IterationGraph(1)
    x = gradlab.ones(3, requires_grad=True)
    with events.subscribe(feed(graph)):
        Mean.apply(x * 2)
    ops = {n.label: n for n in graph.freeze().nodes if n.kind == "op"}
    assert "your own Function" in ops["mean"].derivative and "Mean" in ops["mean"].derivative
    assert ops["mul"].derivative == derivative_rule("mul")
