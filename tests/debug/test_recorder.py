"""Recorder: iterations, epochs, losses, metrics, optimizer state, memory, log, positions."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
import gradlab.nn as nn
import gradlab.nn.functional as F
from gradlab import events
from gradlab.debug.recorder import Recorder
from gradlab.utils.data import DataLoader, TensorDataset


def snap(rec: Recorder):
    return rec.snapshot(version=1, status="running", position=None, pause_reason=None,
                        output="", error=None, breakpoints=("op relu",))


def mlp():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def data(n=5):
    return gradlab.randn(n, 4), gradlab.randint(0, 3, (n,))


def train(model, opt, steps, x, y):
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


class Starts:
    """Records the Recorder, counting the events that began an iteration."""

    def __init__(self, rec: Recorder) -> None:
        self.rec = rec
        self.count = 0
        self.positions = []

    def __call__(self, event) -> None:
        self.rec.handle(event)
        self.count += self.rec.started_iteration
        position = self.rec.position(event)
        if position is not None:
            self.positions.append(position)


def test_optimizer_loop_iterations_losses_and_history():
    model, (x, y) = mlp(), data()
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    rec = Recorder(history=2)
    starts = Starts(rec)
    with events.subscribe(starts):
        losses = train(model, opt, 5, x, y)
    s = snap(rec)
    assert rec.iteration == s.iteration == 5 and starts.count == 5
    assert [it for it, _ in s.losses] == [1, 2, 3, 4, 5]
    np.testing.assert_allclose([v for _, v in s.losses], losses, rtol=1e-6)
    assert rec.last_loss == pytest.approx(losses[-1])
    assert [g.iteration for g in s.history] == [3, 4]  # bounded to 2, oldest first
    assert s.graph.iteration == 5 and s.graph.loss == pytest.approx(losses[-1])
    assert s.optimizers[0].steps == 5 and not rec.in_optimizer_step
    assert s.breakpoints == ("op relu",) and s.status == "running"


def test_manual_no_grad_sgd_loop_counts_each_forward_backward():
    w = gradlab.randn(4, 1, requires_grad=True)
    x, t = gradlab.randn(8, 4), gradlab.randn(8, 1)
    rec = Recorder()
    starts = Starts(rec)
    with events.subscribe(starts):
        for _ in range(4):
            loss = ((x @ w - t) ** 2).mean()
            loss.backward()
            with gradlab.no_grad():
                w -= 0.1 * w.grad
                w.grad = None
    assert rec.iteration == 4 and starts.count == 4
    assert len(rec.losses) == 4
    kinds = {n.kind for n in snap(rec).graph.nodes}
    assert kinds == {"op", "leaf", "input"}  # w is a leaf, not a named parameter


def test_gradient_accumulation_counts_each_backward_as_an_iteration():
    model = mlp()
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    rec = Recorder()
    with events.subscribe(rec.handle):
        for _ in range(3):
            opt.zero_grad()
            for _ in range(2):
                x, y = data()
                (F.cross_entropy(model(x), y) / 2).backward()
            opt.step()
    assert rec.iteration == 6
    assert snap(rec).optimizers[0].steps == 3


def test_epochs_count_passes_of_the_first_loader_only():
    x, y = data(8)
    train_loader = DataLoader(TensorDataset(x, y), batch_size=4)
    val_loader = DataLoader(TensorDataset(x, y), batch_size=8)
    model = mlp()
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    rec = Recorder()
    with events.subscribe(rec.handle):
        for _ in range(3):
            for xb, yb in train_loader:
                train(model, opt, 1, xb, yb)
            with gradlab.no_grad():
                for xb, _ in val_loader:
                    model(xb)
    assert rec.epoch == 3 and rec.iteration == 6
    with events.subscribe(rec.handle):
        events.emit(events.Metric(events.next_seq(), {"epoch": 10}))
        for _ in train_loader:  # a reported epoch wins over loader passes
            pass
    assert rec.epoch == 10


def test_metrics_and_a_reported_loss_win_over_backward_roots():
    model, (x, y) = mlp(), data()
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    rec = Recorder()
    with events.subscribe(rec.handle):
        train(model, opt, 1, x, y)
        events.emit(events.Metric(events.next_seq(), {"accuracy": 0.5, "loss": 7.0,
                                                      "note": "text is skipped"}))
        train(model, opt, 1, x, y)
        events.emit(events.Metric(events.next_seq(), {"accuracy": 0.75, "loss": 6.0}))
    s = snap(rec)
    assert s.metrics["accuracy"] == ((1, 0.5), (2, 0.75))
    assert "note" not in s.metrics
    assert s.losses == ((1, 7.0), (2, 6.0)) and rec.last_loss == 6.0
    assert any(line.kind == "metric" and "accuracy=0.5" in line.text for line in s.log)


def test_sgd_momentum_state_matches_hand_computation():
    model, (x, y) = mlp(), data()
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    weight = model[0].weight
    rec = Recorder()
    grads = []
    with events.subscribe(rec.handle):
        for _ in range(2):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            grads.append(weight.grad.numpy().astype(np.float64))
            before = weight.detach().numpy().copy()
            opt.step()
    buf = 0.9 * grads[0] + grads[1]
    o = snap(rec).optimizers[0]
    assert (o.name, o.steps, o.source) == ("SGD", 2, id(opt))
    assert o.groups[0]["momentum"] == 0.9 and "params" not in o.groups[0]
    p = next(q for q in o.params if q.name == "0.weight")
    assert (p.shape, p.group, p.lr, p.step) == ((8, 4), 0, 0.1, 2)
    assert p.state_norms["momentum_buffer"] == pytest.approx(np.linalg.norm(buf), rel=1e-5)
    assert p.grad_norm == pytest.approx(np.linalg.norm(grads[1]), rel=1e-5)
    moved = weight.detach().numpy() - before
    assert p.update_norm == pytest.approx(np.linalg.norm(moved), rel=1e-4)
    assert p.update_norm == pytest.approx(0.1 * np.linalg.norm(buf), rel=1e-4)
    assert {q.name for q in o.params} == {"0.weight", "0.bias", "2.weight", "2.bias"}


def test_adam_state_matches_hand_computation():
    model, (x, y) = mlp(), data()
    opt = gradlab.optim.Adam(model.parameters(), lr=0.01, betas=(0.8, 0.99))
    rec = Recorder()
    rec.learn_names(nn.ModuleDict({"net": model}))  # explicit names win over frame search
    with events.subscribe(rec.handle):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        g = model[2].weight.grad.numpy().astype(np.float64)
        opt.step()
    o = snap(rec).optimizers[0]
    p = next(q for q in o.params if q.name == "net.2.weight")
    assert o.name == "Adam" and o.groups[0]["betas"] == (0.8, 0.99)
    assert p.step == 1 and p.state_scalars == {"step": 1.0}
    assert p.state_norms["exp_avg"] == pytest.approx(0.2 * np.linalg.norm(g), rel=1e-5)
    assert p.state_norms["exp_avg_sq"] == pytest.approx(0.01 * np.linalg.norm(g * g), rel=1e-5)
    # step 1: m_hat / sqrt(v_hat) = g / |g|, so each entry moves by lr
    expected = 0.01 * np.sqrt(np.count_nonzero(g))
    assert p.update_norm == pytest.approx(expected, rel=1e-3)


def test_memory_by_category_and_bounded_timeline():
    model, (x, y) = mlp(), data()
    opt = gradlab.optim.Adam(model.parameters(), lr=0.01)
    rec = Recorder(memory_points=5, memory_interval=0.0)
    with events.subscribe(rec.handle):
        train(model, opt, 2, x, y)
    cpu = next(m for m in snap(rec).memory if m.device == "cpu")
    stats = gradlab.memory_stats()
    assert cpu.live_bytes == stats["allocated_bytes"] and cpu.peak_bytes == stats["peak_bytes"]
    assert cpu.by_category == {c: stats[f"{c}_bytes"] for c in
                               ("parameter", "gradient", "activation", "optimizer", "other")}
    param_bytes = sum(p.numel() * 4 for p in model.parameters())
    assert cpu.by_category["parameter"] >= param_bytes
    assert cpu.by_category["optimizer"] >= 2 * param_bytes  # Adam's two moments
    assert len(cpu.timeline) == 5
    times = [s.time for s in cpu.timeline]
    assert times == sorted(times) and times[0] >= 0


def test_light_listening_counts_iterations_and_samples_memory():
    model, (x, y) = mlp(), data()
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    rec = Recorder(memory_interval=0.0)
    rec.full = False
    starts = Starts(rec)
    with events.subscribe(starts, light=True):
        losses = train(model, opt, 3, x, y)
    s = snap(rec)
    assert rec.iteration == 3 and starts.count == 3
    assert s.graph is None and s.history == ()  # no graph without op events
    np.testing.assert_allclose([v for _, v in s.losses], losses, rtol=1e-6)
    cpu = next(m for m in s.memory if m.device == "cpu")
    assert len(cpu.timeline) >= 3 and cpu.by_category["parameter"] > 0


def test_log_is_bounded_and_speaks_plainly():
    model, (x, y) = mlp(), data()
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    rec = Recorder(log_lines=12)
    with events.subscribe(rec.handle):
        train(model, opt, 2, x, y)
    rec.log("break", "paused: NaN in grad of op4")
    log = snap(rec).log
    assert len(log) == 12
    assert (log[-1].kind, log[-1].text) == ("break", "paused: NaN in grad of op4")
    assert log[-2].text == "SGD step 2 done"
    assert any(line.text == "SGD update of 2.bias: |grad| " + line.text.split("|grad| ")[1]
               for line in log if line.kind == "update")
    rec2 = Recorder()
    with events.subscribe(rec2.handle):
        train(model, opt, 1, x, y)
    texts = [line.text for line in snap(rec2).log]
    assert "forward relu (op1) in 1 -> (5, 8)" in texts
    assert "backward linear (op2)" in texts and "backward begins" in " ".join(texts)


def test_positions_describe_where_the_run_is():
    model, (x, y) = mlp(), data()
    opt = gradlab.optim.Adam(model.parameters(), lr=0.01)
    rec = Recorder()
    starts = Starts(rec)
    with events.subscribe(starts):
        train(model, opt, 1, x, y)
    texts = [(p.event, p.description, p.node) for p in starts.positions]
    assert texts[0] == ("iteration", "iteration 1 begins: forward of linear (op0) in module 0",
                        "op0")
    assert ("op", "forward of relu (op1) in module 1", "op1") in texts
    assert ("backward", "backward of linear (op2) in module 2", "op2") in texts
    assert ("grad", "gradient accumulated into 0.weight", "param:0.weight") in texts
    assert ("update", "Adam update of 2.bias", "param:2.bias") in texts
    assert any(e == "op" and d.endswith("inside the optimizer step") for e, d, _ in texts)
    assert any(e == "phase" and "backward begins from loss" in d for e, d, _ in texts)
    node_id = snap(rec).graph.node("op1").node_id
    assert rec.key_for_node(node_id) == "op1" and rec.key_for_node(-1) is None


def test_graph_truncation_and_summaries_off():
    model, (x, y) = mlp(), data()
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    rec = Recorder(max_graph_nodes=4, summaries=False)
    with events.subscribe(rec.handle):
        train(model, opt, 1, x, y)
    g = snap(rec).graph
    # kept: op0 (linear), its input and its two parameters; left out: relu, the second linear
    # and its two parameters, cross_entropy (the targets feed only a left-out op: never seen)
    assert [n.key for n in g.nodes] == ["op0", "in0", "param:0.weight", "param:0.bias"]
    assert g.truncated == 5
    assert all(n.value is None and n.grad is None for n in g.nodes)


def test_steps_per_second_from_iteration_times():
    now = [0.0]
    model, (x, y) = mlp(), data()
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    rec = Recorder(clock=lambda: now[0])
    with events.subscribe(rec.handle):
        for _ in range(5):
            train(model, opt, 1, x, y)
            now[0] += 0.25
    assert rec.steps_per_second == pytest.approx(4.0)
    assert Recorder().steps_per_second is None


# --- partial graphs: ops that ran before the recording began -----------------------------------
def op_states(graph):
    return [(n.label, n.state, n.value is not None) for n in graph.nodes if n.kind == "op"]


def test_graph_is_partial_when_its_iteration_began_unrecorded():
    lin, x = nn.Linear(4, 3), gradlab.randn(5, 4)
    h = lin(x)  # nobody listens yet
    rec = Recorder()
    with events.subscribe(rec.handle):
        assert rec.complete  # nothing begun: the first iteration will be whole
        h.relu().sum().backward()
        first = snap(rec).graph
        assert first.partial and not rec.complete
        assert op_states(first) == [("relu", "backward", True), ("linear", "backward", False),
                                    ("sum", "backward", True)]  # linear ran unseen
        lin(x).relu().sum().backward()
        s = snap(rec)
    assert rec.complete and not s.graph.partial and s.history[-1].partial
    assert op_states(s.graph) == [("linear", "backward", True), ("relu", "backward", True),
                                  ("sum", "backward", True)]


def test_graph_is_partial_when_recording_begins_mid_backward():
    lin, x = nn.Linear(4, 3), gradlab.randn(5, 4)
    rec, seen = Recorder(), []

    def from_backward_on(event):  # as if the session switched to full during backward
        if seen or isinstance(event, events.BackwardNode):
            seen.append(event)
            rec.handle(event)

    with events.subscribe(from_backward_on):
        lin(x).tanh().sum().backward()
    graph = snap(rec).graph
    assert graph.partial and not rec.complete
    assert {n.state for n in graph.nodes if n.kind == "op"} == {"backward"}


def test_going_light_mid_iteration_leaves_its_graph_partial():
    lin, x = nn.Linear(4, 3), gradlab.randn(5, 4)
    rec = Recorder()
    with events.subscribe(rec.handle) as sub:
        h = lin(x)  # iteration 1 begins, in full
        sub.light = True
        rec.listening(False)
        assert not rec.complete and snap(rec).graph.partial
        h.relu().sum().backward()  # unseen ops
        assert rec.iteration == 1
        sub.light = False
        rec.listening(True)
        lin(x).relu().sum().backward()  # iteration 2, whole
        assert rec.iteration == 2 and rec.complete and not snap(rec).graph.partial
        rec.listening(False)  # after its backward ended: nothing of it is missed
        assert not rec.complete and not snap(rec).graph.partial


def test_forward_mode_ops_join_the_graph_without_a_backward_node():
    """With nothing requiring grad there are no backward nodes, but ops whose outputs carry
    tangents are boxes of the graph, connected, each with its tangent."""
    import gradlab.autograd.forward_ad as fwAD
    from gradlab.debug import Session

    def run():
        x = gradlab.tensor([1.0, 2.0], dtype=gradlab.float64)
        with fwAD.dual_level():
            dual = fwAD.make_dual(x, gradlab.tensor([1.0, 0.5], dtype=gradlab.float64))
            (dual * dual).sum()
        (x * 2).sum()  # no tangent, no grad: still only a log line

    with Session() as session:
        session.run_function(run)
        assert session.wait_finished(10)
        snap = session.snapshot()
    graph = snap.graph
    ops = {n.label: n for n in graph.nodes if n.kind == "op"}
    assert list(ops) == ["make_dual", "mul", "sum"]
    assert ops["sum"].tangent is not None and abs(ops["sum"].tangent.max - 4.0) < 1e-12
    edges = {(e.source, e.target) for e in graph.edges}
    assert (ops["make_dual"].key, ops["mul"].key) in edges
    assert (ops["mul"].key, ops["sum"].key) in edges
    assert any("(no graph)" in line.text for line in snap.log)


def test_stepping_onto_a_forward_mode_op_points_at_its_box():
    import gradlab.autograd.forward_ad as fwAD
    from gradlab.debug import Session

    def run():
        x = gradlab.tensor([1.0, 2.0], dtype=gradlab.float64)
        with fwAD.dual_level():
            dual = fwAD.make_dual(x, gradlab.tensor([1.0, 0.5], dtype=gradlab.float64))
            dual.sin()

    with Session() as session:
        session.run_function(run, pause_at_start=True)
        assert session.wait_paused(10)  # at make_dual, the first op
        session.step("op")  # to sin
        assert session.wait_paused(10)
        snap = session.snapshot()
        session.resume()
        assert session.wait_finished(10)
    assert "forward of sin" in snap.position.description
    assert "forward mode" in snap.position.description
    assert snap.graph.node(snap.position.node).label == "sin"
