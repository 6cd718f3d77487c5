"""Every breakpoint kind pauses a real training run at the right event, with a clear reason."""

from __future__ import annotations

import math

import pytest

import gradlab
from gradlab import events, nn
from gradlab.debug import (
    GradNormBreakpoint,
    IterationBreakpoint,
    LossBreakpoint,
    ModuleBreakpoint,
    NonFiniteBreakpoint,
    OpBreakpoint,
    Session,
    TensorBreakpoint,
    report,
)

pytestmark = pytest.mark.timeout(30)
WAIT = 10


def mlp(steps: int = 3):
    gradlab.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    x, y = gradlab.randn(8, 2), gradlab.randn(8, 1)
    x.name = "x"
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()


def pauses(breakpoint, fn, *args, most: int = 20, detail_interval: float = 0.1):
    """Run ``fn`` with one breakpoint; return (event, reason, iteration) at each pause, the log."""
    log, seen = [], []
    with events.subscribe(log.append), Session(detail_interval=detail_interval) as session:
        session.add_breakpoint(breakpoint)
        run = session.run_function(fn, *args)
        while len(seen) < most and session.wait_paused(WAIT):
            snap = session.snapshot()
            seen.append((session.paused_event, snap.pause_reason, snap.iteration))
            session.resume()
        if len(seen) == most:
            session.stop()
        assert session.wait_finished(WAIT)
    assert run.status in ("finished", "stopped"), run.traceback
    return seen, log


def test_op_breakpoint_forward_and_backward():
    seen, log = pauses(OpBreakpoint("relu"), mlp, 2)
    kinds = [type(e).__name__ for e, _, _ in seen]
    assert kinds == ["OpForward", "BackwardNode"] * 2
    assert all(e.op == "relu" for e, _, _ in seen)
    assert seen[0][1] == "breakpoint: op relu, at the forward of relu (op1)"
    assert seen[1][1] == "breakpoint: op relu, at the backward of relu (op1)"
    assert seen[0][0] is next(e for e in log if isinstance(e, events.OpForward) and
                              e.op == "relu")


def test_op_breakpoint_backward_only_skips_ops_inside_backward():
    seen, _ = pauses(OpBreakpoint("linear", phase="backward"), mlp, 1)
    assert [(type(e).__name__, e.module) for e, _, _ in seen] == [("BackwardNode", "2"),
                                                                   ("BackwardNode", "0")]
    # 'matmul' runs inside linear's backward: those are not the program's ops
    seen, _ = pauses(OpBreakpoint("matmul", phase="forward"), mlp, 1)
    assert seen == []


def test_module_breakpoint_pauses_on_entering_the_module():
    seen, _ = pauses(ModuleBreakpoint("2"), mlp, 1)
    assert [(type(e).__name__, e.op) for e, _, _ in seen] == [("OpForward", "linear"),
                                                               ("BackwardNode", "linear")]
    assert seen[0][1] == "breakpoint: module 2, at the forward of linear (op2)"


def test_tensor_breakpoint_read_written_and_accumulated():
    def raw():
        w = gradlab.randn(3, 2, requires_grad=True)
        w.name = "w"
        x = gradlab.randn(4, 3)
        loss = (x @ w).relu().sum()
        loss.backward()
        with gradlab.no_grad():
            w -= 0.1 * w.grad

    seen, _ = pauses(TensorBreakpoint("w"), raw)
    assert [type(e).__name__ for e, _, _ in seen] == ["OpForward", "GradAccumulated",
                                                       "OpForward"]
    assert seen[0][0].op == "matmul" and seen[2][0].op == "sub_"
    assert seen[0][1] == "breakpoint: tensor 'w' read by the forward of matmul (op0)"
    assert seen[1][1] == "breakpoint: gradient of tensor 'w' accumulated"
    assert seen[2][1] == "breakpoint: tensor 'w' read by the forward of sub_"


def log_of_negative():
    x = gradlab.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * 2
    z = y.log()  # log(-4) = NaN: the op that produces it
    loss = (z * 3).sum()
    loss.backward()


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_nan_break_pauses_at_the_op_that_produced_it():
    seen, log = pauses(NonFiniteBreakpoint(), log_of_negative)
    assert len(seen) == 1  # not again at the ops the NaN flows through
    event, reason, _ = seen[0]
    assert isinstance(event, events.OpForward) and event.op == "log"
    assert reason == "NaN (1 of 3 values) in the output of log (op1)"
    ops = [e.op for e in log if isinstance(e, events.OpForward) and e.node_id is not None]
    assert ops == ["mul", "log", "mul", "sum"]  # later ops held NaN too, and did not pause


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_inf_break_in_backward_names_the_node():
    def sqrt_at_zero():
        x = gradlab.tensor([0.0, 4.0], requires_grad=True)
        x.sqrt().sum().backward()  # d sqrt(x)/dx = 1 / (2 sqrt(x)) = inf at 0

    seen, _ = pauses(NonFiniteBreakpoint(), sqrt_at_zero)
    assert len(seen) == 1
    event, reason, _ = seen[0]
    assert isinstance(event, events.BackwardNode) and event.op == "sqrt"
    assert reason == ("Inf (1 of 2 values) in the gradient that the backward of sqrt (op0) "
                      "sends to its input 0")


def test_nan_in_the_data_names_the_input():
    def bad_data():
        x = gradlab.tensor([1.0, float("nan")])
        x.name = "batch"
        w = gradlab.ones(2, requires_grad=True)
        (x * w).sum().backward()

    seen, _ = pauses(NonFiniteBreakpoint(), bad_data)
    event, reason, _ = seen[0]
    assert event.op == "mul"
    assert reason == ("NaN (1 of 2 values) in the output of mul (op0); its input batch already "
                      "held NaN (1 of 2 values)")


def test_grad_norm_breakpoint_once_per_backward():
    def big_gradient():
        w = gradlab.ones(3, requires_grad=True)
        for _ in range(2):
            (w * 100).sum().backward()  # d/dw = 100 per element: norm 100 * sqrt(3)

    seen, _ = pauses(GradNormBreakpoint(50), big_gradient)
    assert len(seen) == 2
    for event, reason, _ in seen:
        assert isinstance(event, events.BackwardNode) and event.op == "mul"
        assert reason == (f"breakpoint: gradient norm {100 * math.sqrt(3):.4g} > 50, sent by "
                          "the backward of mul (op0) to its input 0")


@pytest.mark.parametrize("detail_interval", [0.0, 60.0])  # always full / light between
def test_iteration_breakpoint(detail_interval):
    seen, log = pauses(IterationBreakpoint(3), mlp, 4, detail_interval=detail_interval)
    assert len(seen) == 1
    event, reason, iteration = seen[0]
    assert reason == "breakpoint: iteration 3 begins" and iteration == 3
    assert isinstance(event, events.OpForward) and event.node_id is not None
    ended = [e for e in log if isinstance(e, events.Phase) and e.kind == "backward_end"]
    assert ended[1].seq < event.seq < ended[2].seq  # the first op after the second backward


def rising_loss():
    w = gradlab.tensor(1.0, requires_grad=True)
    for i in range(1, 6):
        (w * i).backward()  # the loss of iteration i is i


def test_loss_breakpoint_from_backward_roots():
    seen, _ = pauses(LossBreakpoint(2.5), rising_loss, detail_interval=60)
    assert [(type(e).__name__, e.kind, it) for e, _, it in seen] == [
        ("Phase", "backward_begin", 3), ("Phase", "backward_begin", 4),
        ("Phase", "backward_begin", 5)]
    assert seen[0][1] == "breakpoint: loss 3 > 2.5 (iteration 3)"


def test_loss_breakpoint_from_a_reported_loss():
    def reports():
        for value in (0.5, 7.0, float("nan")):
            report(loss=value)

    seen, _ = pauses(LossBreakpoint(1), reports)
    assert [e.values["loss"] for e, _, _ in seen][:1] == [7.0]
    assert len(seen) == 2 and "loss nan" in seen[1][1]


def test_breakpoint_on_another_thread_is_logged_not_paused():
    with Session() as session:
        session.add_breakpoint(OpBreakpoint("relu"))
        mlp(1)  # this thread: no run of the session, so it must not block
        snap = session.snapshot()
    assert snap.status == "idle"
    lines = [line.text for line in snap.log if line.kind == "break"]
    assert lines and lines[0].startswith("breakpoint: op relu, at the forward of relu")
    assert "not paused" in lines[0]


def test_describe_and_needs_full_events():
    assert OpBreakpoint("relu").describe() == "op relu (forward and backward)"
    assert OpBreakpoint("relu", "forward").describe() == "op relu (forward)"
    assert ModuleBreakpoint("encoder.0").describe() == "module encoder.0"
    assert TensorBreakpoint("x").describe() == "tensor 'x'"
    assert NonFiniteBreakpoint().describe() == "NaN/Inf in any value or gradient"
    assert GradNormBreakpoint(10).describe() == "gradient norm > 10"
    assert IterationBreakpoint(5).describe() == "iteration 5"
    assert LossBreakpoint(2.5).describe() == "loss > 2.5"
    full = [OpBreakpoint, ModuleBreakpoint, TensorBreakpoint, NonFiniteBreakpoint,
            GradNormBreakpoint]
    assert all(cls.needs_full_events for cls in full)
    assert not IterationBreakpoint.needs_full_events and not LossBreakpoint.needs_full_events
    assert repr(IterationBreakpoint(2)) == "<IterationBreakpoint: iteration 2>"


def test_module_path_matches_submodules_only():
    bp = ModuleBreakpoint("enc")
    assert bp._matches("enc") and bp._matches("enc.0.fc") and not bp._matches("encoder")


@pytest.mark.parametrize("make, error, match", [
    (lambda: OpBreakpoint(""), TypeError, "op must be an op name such as 'relu'"),
    (lambda: OpBreakpoint("relu", "sideways"), ValueError, "phase must be one of"),
    (lambda: ModuleBreakpoint(3), TypeError, "path must be a module path"),
    (lambda: TensorBreakpoint(None), TypeError, r"set it with t.name = 'x'"),
    (lambda: GradNormBreakpoint(-1), ValueError, "threshold must be a number >= 0"),
    (lambda: GradNormBreakpoint("big"), ValueError, "threshold must be a number >= 0"),
    (lambda: IterationBreakpoint(0), ValueError, "iterations count from 1"),
    (lambda: IterationBreakpoint(2.0), ValueError, "n must be an iteration number"),
    (lambda: LossBreakpoint(float("nan")), ValueError, "above must be a number"),
])
def test_constructor_errors_teach(make, error, match):
    with pytest.raises(error, match=match):
        make()
