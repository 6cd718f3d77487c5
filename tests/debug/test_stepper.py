"""Stepping a real training run at each granularity, pause/resume, and the Stepper itself."""

from __future__ import annotations

import threading
import time

import pytest

import gradlab
from gradlab import events, nn
from gradlab.debug import STEP_KINDS, Session, StopRun
from gradlab.debug.stepper import Stepper
from gradlab.utils.data import DataLoader, TensorDataset

pytestmark = pytest.mark.timeout(30)
WAIT = 10  # seconds: far more than any step takes; a failure, never a hang


def train(epochs: int = 3):
    """Two epochs of two batches: an MLP with SGD, batches from a DataLoader."""
    gradlab.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    x, y = gradlab.randn(8, 2), gradlab.randn(8, 1)
    loader = DataLoader(TensorDataset(x, y), batch_size=4)
    for _ in range(epochs):
        for xb, yb in loader:
            opt.zero_grad()
            loss = ((model(xb) - yb) ** 2).mean()
            loss.backward()
            opt.step()


def expected_stops(log, kind: str) -> list[int]:
    """The seqs where a step of ``kind`` must stop, computed from the full event list."""
    stops, in_step, depth, awaiting = [], False, 0, True
    for e in log:
        if isinstance(e, events.Phase):
            if e.kind == "step":
                in_step = True
            elif e.kind == "step_end":
                in_step = False
            elif e.kind == "backward_begin":
                depth += 1
            elif e.kind == "backward_end":
                depth, awaiting = depth - 1, True
            elif e.kind == "epoch" and kind == "epoch":
                stops.append(e.seq)
        elif isinstance(e, events.OpForward):
            if kind == "op" and not in_step and not depth:
                stops.append(e.seq)
            if kind == "iteration" and e.node_id is not None and awaiting:
                stops.append(e.seq)
                awaiting = False
        elif isinstance(e, events.BackwardNode) and kind == "backward":
            stops.append(e.seq)
        elif isinstance(e, events.OptimizerStep) and kind == "update":
            stops.append(e.seq)
    return stops


@pytest.mark.parametrize("kind, count", [("op", 8), ("backward", 7), ("update", 5),
                                         ("iteration", 3), ("epoch", 2)])
def test_step_sequence_follows_the_events(kind, count):
    log = []
    with events.subscribe(log.append), Session(detail_interval=60) as session:
        session.run_function(train, pause_at_start=True)
        assert session.wait_paused(WAIT)
        start = session.paused_event.seq
        stops, reasons = [], set()
        for _ in range(count):
            session.step(kind)
            assert session.wait_paused(WAIT), f"no pause after step({kind!r})"
            stops.append(session.paused_event.seq)
            reasons.add(session.snapshot().pause_reason)
        session.resume()
        assert session.wait_finished(WAIT) and session.status == "finished"
    want = [seq for seq in expected_stops(log, kind) if seq > start][:count]
    assert stops == want
    assert reasons == {f"step: next {dict(op='op', backward='backward node', update='optimizer update', iteration='iteration', epoch='epoch')[kind]}"}  # noqa: E501


def test_step_backward_walks_the_whole_backward_pass():
    """From the first op of iteration 1, 'backward' steps visit every node once, in order."""
    log = []
    with events.subscribe(log.append), Session() as session:
        session.run_function(train, 1, pause_at_start=True)
        assert session.wait_paused(WAIT)
        ops = []
        while True:
            session.step("backward")
            if not session.wait_paused(WAIT):
                break
            event = session.paused_event
            ops.append(event.op)
            assert session.snapshot().position.event == "backward"
        assert session.wait_finished(WAIT)
    assert ops == [e.op for e in log if isinstance(e, events.BackwardNode)]
    assert ops[:5] == ["mean", "pow", "sub", "linear", "relu"]


def test_pause_at_start_stops_at_the_first_pausable_event():
    log = []
    with events.subscribe(log.append), Session() as session:
        session.run_function(train, 1, pause_at_start=True)
        assert session.wait_paused(WAIT)
        assert session.status == "paused"
        first = session.paused_event
        assert session.snapshot().pause_reason == "paused at the start"
        session.resume()
        assert session.wait_finished(WAIT)
    pausable = [e for e in log if isinstance(e, (events.OpForward, events.BackwardNode,
                                                 events.OptimizerStep))]
    assert first is pausable[0]


def endless(stop_flag: threading.Event, iterations: list):
    w = gradlab.ones(3, requires_grad=True)
    while not stop_flag.is_set() and len(iterations) < 100_000:
        loss = (w * 2).sum()
        loss.backward()
        iterations.append(1)


def test_pause_resume_and_stop_a_running_loop():
    flag, iterations = threading.Event(), []
    with Session() as session:
        run = session.run_function(endless, flag, iterations)
        deadline = time.monotonic() + WAIT
        while not iterations and time.monotonic() < deadline:
            time.sleep(0.01)
        session.pause()
        assert session.wait_paused(WAIT)
        assert session.status == "paused" and session.snapshot().pause_reason == "paused"
        assert isinstance(session.paused_event, (events.OpForward, events.BackwardNode))
        frozen = len(iterations)
        time.sleep(0.1)
        assert len(iterations) == frozen  # really paused
        session.resume()
        deadline = time.monotonic() + WAIT
        while len(iterations) == frozen and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(iterations) > frozen and session.status == "running"
        session.stop()
        assert session.wait_finished(WAIT)
        assert run.status == "stopped" and session.status == "stopped"


def test_control_calls_without_a_run_do_nothing():
    with Session() as session:
        session.pause()
        session.step("op")
        session.resume()
        session.stop()
        assert session.status == "idle"
        assert session.wait_paused(0.05) is False
        assert session.wait_finished(0.05) is True
        gradlab.ones(2) * 2  # this thread is never paused
    with pytest.raises(ValueError, match="step: kind must be one of .*'op'.*got 'ops'"):
        session.step("ops")
    assert STEP_KINDS == ("op", "backward", "update", "iteration", "epoch")


# --- the Stepper on its own -------------------------------------------------------------------
def hold_in_thread(stepper: Stepper, outcome: list) -> threading.Thread:
    def target():
        try:
            stepper.hold("test pause")
            outcome.append("went on")
        except StopRun:
            outcome.append("stopped")

    thread = threading.Thread(target=target)
    thread.start()
    return thread


@pytest.mark.parametrize("action, result", [("resume", "went on"), ("release", "went on"),
                                            ("stop", "stopped"), ("step", "went on")])
def test_stepper_hold_ends_on_each_control_call(action, result):
    stepper, outcome = Stepper(), []
    thread = hold_in_thread(stepper, outcome)
    done = threading.Event()
    assert stepper.wait_paused(WAIT, done)
    assert stepper.paused and stepper.pause_reason == "test pause"
    getattr(stepper, action)(*(["op"] if action == "step" else []))
    thread.join(WAIT)
    assert not thread.is_alive() and outcome == [result]
    assert not stepper.paused and stepper.pause_reason is None
    assert stepper.request == ("op" if action == "step" else None)


def test_stepper_wait_paused_times_out_and_sees_the_end():
    stepper, done = Stepper(), threading.Event()
    start = time.monotonic()
    assert stepper.wait_paused(0.1, done) is False
    assert 0.09 <= time.monotonic() - start < 2
    done.set()
    assert stepper.wait_paused(None, done) is False


def test_stepper_after_release_never_pauses():
    stepper = Stepper()
    stepper.release()
    stepper.pause()
    assert stepper.request is None
    stepper.hold("ignored")  # returns at once
    assert not stepper.paused


# --- pausing and stepping while the session listens lightly -------------------------------------
def light_loop(box: dict, steps: int, at_step: int, action):
    """An MLP loop; at ``at_step``, halfway through the forward, ``action(session)`` runs."""
    gradlab.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    x, y = gradlab.randn(8, 2), gradlab.randn(8, 1)
    for step in range(steps):
        opt.zero_grad()
        h = model[0](x)
        if step == at_step:
            box["light"] = box["session"].light
            action(box["session"])
        loss = ((model[2](model[1](h)) - y) ** 2).mean()
        loss.backward()
        opt.step()


def assert_whole(graph, iteration: int) -> None:
    assert graph.iteration == iteration and not graph.partial
    assert all(n.state != "created" for n in graph.nodes)
    assert all(n.value is not None for n in graph.nodes if n.kind == "op")


def test_pause_while_light_pauses_where_the_next_iteration_begins():
    box = {}
    with Session(detail_interval=60) as session:  # iteration 1 in full, then light
        box["session"] = session
        def pause(s):
            s.pause()
            box["waits"] = s.waits_for_next_iteration  # what the app shows meanwhile

        session.run_function(light_loop, box, 5, 2, pause)
        assert session.wait_paused(WAIT)
        assert box["waits"] is True and session.waits_for_next_iteration is False
        snap = session.snapshot()
        assert box["light"] is True
        assert snap.pause_reason == "paused" and snap.iteration == 4
        assert snap.position.event == "iteration"
        assert snap.position.description == "iteration 4 begins: forward of linear (op0)"
        assert snap.graph.iteration == 4 and not snap.graph.partial
        half_seen = snap.history[-1]  # the iteration the pause was asked in
        assert half_seen.iteration == 3 and half_seen.partial
        assert [n.label for n in half_seen.nodes if n.kind == "op" and n.value is None] == \
            ["linear"]  # ran before the session listened in full: no value recorded
        session.step("update")
        assert session.wait_paused(WAIT)
        graph = session.snapshot().graph
        assert_whole(graph, 4)
        assert [n.label for n in graph.nodes if n.kind == "op"] == \
            ["linear", "relu", "linear", "sub", "pow", "mean"]
        session.resume()
        assert session.wait_finished(WAIT) and session.status == "finished"


@pytest.mark.parametrize("kind, event_type, op", [
    ("op", events.OpForward, "linear"), ("backward", events.BackwardNode, "mean"),
    ("update", events.OptimizerStep, None), ("iteration", events.OpForward, "linear")])
def test_step_while_light_counts_from_the_next_whole_iteration(kind, event_type, op):
    box = {}
    with Session(detail_interval=60) as session:
        box["session"] = session
        session.run_function(light_loop, box, 5, 2, lambda s: s.step(kind))
        assert session.wait_paused(WAIT)
        snap, event = session.snapshot(), session.paused_event
        assert box["light"] is True and type(event) is event_type
        assert op is None or event.op == op
        assert snap.iteration == 4 and snap.pause_reason.startswith("step: next ")
        assert not snap.graph.partial and snap.graph.iteration == 4
        session.resume()
        assert session.wait_finished(WAIT)


def long_forward(box: dict):
    """One iteration in full, then a forward that never reaches a backward pass."""
    session = box["session"]
    w = gradlab.ones(3, requires_grad=True)
    (w * 2).sum().backward()  # iteration 1, in full; light from its backward_end on
    box["light"] = session.light
    h = w * 1.0  # unseen: the next iteration began lightly
    session.pause()  # waits for an iteration recorded in full: none comes
    for _ in range(5):
        h = h * 1.0
    box["ran"] = True
    session.pause()  # asked again: pauses at the next event
    h.exp()


def test_second_pause_pauses_at_once_when_no_iteration_ends():
    box = {}
    with Session(detail_interval=60) as session:
        box["session"] = session
        session.run_function(long_forward, box)
        assert session.wait_paused(WAIT)
        assert box == {"session": session, "light": True, "ran": True}
        assert session.paused_event.op == "exp"
        snap = session.snapshot()
        assert snap.pause_reason == "paused" and snap.graph.partial
        session.resume()
        assert session.wait_finished(WAIT)


def test_pause_while_recording_in_full_pauses_at_the_next_event():
    box = {}
    with Session(detail_interval=0) as session:  # every iteration in full
        box["session"] = session
        session.run_function(light_loop, box, 5, 2, lambda s: s.pause())
        assert session.wait_paused(WAIT)
        snap = session.snapshot()
        assert box["light"] is False and session.paused_event.op == "relu"
        assert snap.iteration == 3 and snap.position.description == "forward of relu (op1)"
        assert_whole(snap.graph, 3)
        session.resume()
        assert session.wait_finished(WAIT)


def test_stepper_gated_requests():
    stepper = Stepper()
    stepper.pause(next_iteration=True)
    assert stepper.request == "pause" and stepper.gated
    stepper.pause(next_iteration=True)  # again: no longer waits for an iteration
    assert stepper.request == "pause" and not stepper.gated
    stepper.step("epoch", next_iteration=True)  # epochs begin between iterations
    assert stepper.request == "epoch" and not stepper.gated
    stepper.step("backward", next_iteration=True)
    assert stepper.gated
    stepper.resume()
    assert stepper.request is None and not stepper.gated
