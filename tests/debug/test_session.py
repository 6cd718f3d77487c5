"""Session: lifecycle, snapshots, detaching, scripts that fail, reporting, and the cost rules."""

from __future__ import annotations

import textwrap
import threading
import time

import pytest

import gradlab
from gradlab import events, nn
from gradlab.debug import (
    STATUSES,
    NonFiniteBreakpoint,
    OpBreakpoint,
    Session,
    Snapshot,
    StopRun,
    report,
)

pytestmark = pytest.mark.timeout(30)
WAIT = 10

SCRIPT = """
import sys
import gradlab
from gradlab import nn

gradlab.manual_seed(0)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
x, y = gradlab.randn(8, 2), gradlab.randn(8, 1)
for step in range(steps):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
"""


def write(tmp_path, text: str, name: str = "train.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def session_listeners() -> int:
    return sum(getattr(cb, "__self__", None).__class__ is Session
               for cb in events.listeners + events.light_listeners)


def test_script_lifecycle_and_snapshot(tmp_path, capsys):
    path = write(tmp_path, SCRIPT)
    session = Session()
    assert session.status == "idle" and session.snapshot().status == "idle"
    v0 = session.version
    run = session.run_script(path, ["4"])
    assert session.wait_finished(WAIT)
    snap = session.snapshot()
    assert isinstance(snap, Snapshot) and snap.status == "finished" in STATUSES
    assert run.status == "finished" and run.exit_code == 0
    assert snap.version > v0 and snap.version == session.version
    assert snap.iteration == 4 and len(snap.losses) == 4
    assert snap.output.count("loss") == 4 and snap.output.startswith("step 0 loss")
    assert "step 0" not in capsys.readouterr().out  # captured, not printed
    assert any(line.kind == "output" and line.text.startswith("step 3") for line in snap.log)
    assert snap.error is None and snap.pause_reason is None
    session.detach()
    assert session_listeners() == 0


def test_version_only_moves_on_changes():
    with Session() as session:
        v = session.version
        assert session.version == v
        gradlab.ones(2, requires_grad=True) * 3  # an op on this thread: recorded
        assert session.version > v


def test_context_manager_detaches():
    with Session() as session:
        assert session.attached and session_listeners() == 1
    assert not session.attached and session_listeners() == 0


def test_script_that_raises_is_failed_with_its_traceback(tmp_path):
    path = write(tmp_path, """
        import gradlab
        x = gradlab.ones(2, 3)
        y = x @ x  # shapes don't line up
    """, "crash.py")
    with Session() as session:
        run = session.run_script(path)
        assert session.wait_finished(WAIT)
        snap = session.snapshot()
    assert snap.status == "failed" == run.status
    assert f'File "{path}", line 4, in <module>' in snap.error
    assert snap.error.splitlines()[1].startswith(f'  File "{path}"')
    assert snap.error.rstrip().splitlines()[-1].startswith("RuntimeError: matmul")
    assert any(line.kind == "error" and "matmul" in line.text for line in snap.log)


def test_sys_exit_zero_is_finished(tmp_path):
    path = write(tmp_path, "import sys\nprint('bye')\nsys.exit(0)\n")
    with Session() as session:
        session.run_script(path)
        assert session.wait_finished(WAIT)
        assert session.status == "finished" and session.snapshot().output == "bye\n"


def test_detach_continue_while_paused_lets_the_script_finish(tmp_path):
    path = write(tmp_path, SCRIPT)
    session = Session()
    run = session.run_script(path, ["3"], pause_at_start=True)
    assert session.wait_paused(WAIT) and session.status == "paused"
    session.detach("continue")
    assert session_listeners() == 0
    assert run.wait(WAIT) and run.status == "finished"
    assert run.output.count("loss") == 3


def test_detach_stop_while_paused_stops_the_script(tmp_path):
    path = write(tmp_path, SCRIPT)
    session = Session()
    run = session.run_script(path, ["50"])
    session.pause()
    assert session.wait_paused(WAIT)
    session.detach("stop")
    assert run.wait(WAIT) and run.status == "stopped" and session.status == "stopped"
    assert run.traceback is None and session_listeners() == 0
    assert run.output.count("loss") < 50


def test_stop_is_never_raised_at_memory_or_metric_events():
    """A Memory event may come from a __del__, where Python would only print the StopRun."""
    go, out = threading.Event(), []

    def target():
        assert go.wait(WAIT)
        for event in (events.Memory(events.next_seq(), "free", "cpu", 8, "other", 0, 0),
                      events.Metric(events.next_seq(), {"accuracy": 0.5})):
            try:
                events.emit(event)
                out.append(type(event).__name__)
            except StopRun:
                out.append(f"stopped at {type(event).__name__}")
        gradlab.ones(2) * 2  # an op: stopped here
        out.append("went on")

    with Session() as session:
        run = session.run_function(target)
        session.stop()
        go.set()
        assert session.wait_finished(WAIT)
    assert out == ["Memory", "Metric"] and run.status == "stopped"


GARBAGE = """
import gc
import gradlab
from gradlab import nn

gc.set_threshold(20, 1, 1)  # collect often: tensors die in the collector, in Storage.__del__


class Cycle:
    def __init__(self, t):
        self.t, self.me = t, self


model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
opt = gradlab.optim.SGD(model.parameters(), lr=0.01)
x, y = gradlab.randn(16, 8), gradlab.randn(16, 1)
for step in range(100000):
    keep = [Cycle(gradlab.randn(8, 8)) for _ in range(5)]
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
"""


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("how", ["stop", "detach"])
def test_stopping_a_paused_run_raises_nothing_in_del(tmp_path, capfd, how):
    with Session(detail_interval=0) as session:  # every event: Memory events too
        run = session.run_script(write(tmp_path, GARBAGE))
        time.sleep(0.2)
        session.pause()
        assert session.wait_paused(WAIT)
        session.stop() if how == "stop" else session.detach("stop")
        assert session.wait_finished(WAIT) and run.status == "stopped"
    err = capfd.readouterr().err
    assert "Exception ignored" not in err and "Exception ignored" not in run.output
    assert "StopRun" not in err + run.output


def test_stop_gets_past_a_scripts_except_exception(tmp_path):
    path = write(tmp_path, """
        import gradlab
        w = gradlab.ones(3, requires_grad=True)
        for i in range(100000):
            try:
                (w * 2).sum().backward()
            except Exception:
                print("swallowed")
    """)
    with Session() as session:
        run = session.run_script(path)
        time.sleep(0.05)
        session.stop()
        assert session.wait_finished(WAIT)
    assert run.status == "stopped" and "swallowed" not in run.output


def test_other_threads_never_block_while_the_run_is_paused(tmp_path):
    with Session() as session:
        session.run_script(write(tmp_path, SCRIPT), pause_at_start=True)
        assert session.wait_paused(WAIT)
        v = session.version
        result = {}

        def elsewhere():
            result["value"] = ((gradlab.ones(2, requires_grad=True) * 5).sum()).item()

        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join(WAIT)
        assert result == {"value": 10.0}  # ran to the end while the script stays paused
        assert session.version > v and session.status == "paused"
        session.resume()
        assert session.wait_finished(WAIT)


def test_one_run_at_a_time(tmp_path):
    with Session() as session:
        session.run_script(write(tmp_path, SCRIPT), pause_at_start=True)
        assert session.wait_paused(WAIT)
        with pytest.raises(RuntimeError, match=r"train.py is still running .*stop\(\) it or "
                                               r"wait_finished\(\) first"):
            session.run_function(print)
        session.stop()
        assert session.wait_finished(WAIT) and session.status == "stopped"
        run = session.run_function(lambda: 7)  # a second run after the first ended
        assert session.wait_finished(WAIT) and run.result == 7
        assert session.status == "finished"


def test_report_emits_metric_events():
    seen = []
    with events.subscribe(seen.append), Session() as session:
        report(accuracy=0.5, epoch=2)
        session.report(loss=1.25)
        snap = session.snapshot()
    metrics = [e.values for e in seen if isinstance(e, events.Metric)]
    assert metrics == [{"accuracy": 0.5, "epoch": 2}, {"loss": 1.25}]
    assert snap.metrics["accuracy"] == ((0, 0.5),) and snap.epoch == 2
    assert snap.losses[-1][1] == 1.25


@pytest.mark.parametrize("values, match", [
    ({}, r"nothing to report; pass numbers by name, e.g. report\(accuracy=0.93\)"),
    ({"loss": "low"}, "loss must be a number .*got str"),
    ({"flag": True}, "flag must be a number .*got bool"),
])
def test_report_errors_teach(values, match):
    with pytest.raises(TypeError, match=match):
        report(**values)


def test_report_a_tensor_says_item():
    with pytest.raises(TypeError, match=r"loss must be a number .*got Tensor; pass loss.item\(\)"):
        report(loss=gradlab.tensor(1.0))


def test_breakpoint_management():
    with Session() as session:
        assert session.toggle_op_breakpoint("relu") is True
        assert session.snapshot().breakpoints == ("op relu (forward and backward)",)
        assert session.toggle_op_breakpoint("relu") is False and session.breakpoints == []
        session.break_on_nonfinite = True
        session.break_on_nonfinite = True  # once only
        assert session.break_on_nonfinite and len(session.breakpoints) == 1
        assert isinstance(session.breakpoints[0], NonFiniteBreakpoint)
        session.break_on_nonfinite = False
        assert session.breakpoints == []
        bp = session.add_breakpoint(OpBreakpoint("mul"))
        session.breakpoints.clear()  # a copy: the session keeps its own
        assert session.breakpoints == [bp]
        session.remove_breakpoint(bp)
        with pytest.raises(ValueError, match="is not set; session.breakpoints lists"):
            session.remove_breakpoint(bp)
        with pytest.raises(TypeError, match=r"expected a breakpoint such as OpBreakpoint"):
            session.add_breakpoint("relu")


def test_watch_names_parameters():
    model = nn.Linear(2, 3)
    with Session() as session:
        session.watch(model)
        assert session.recorder.names[id(model.weight)] == "weight"
        with pytest.raises(TypeError, match="watch: expected nn.Module objects, got int"):
            session.watch(3)


def test_argument_errors():
    with pytest.raises(ValueError, match="detail_interval must be seconds >= 0"):
        Session(detail_interval=-1)
    with pytest.raises(ValueError, match="mode must be 'continue' .* or 'stop'"):
        Session().detach("later")


# --- the cost rules -----------------------------------------------------------------------------
def training_with_probe(session_box, steps, probe, sleep=0.0):
    """An MLP loop that calls probe(step, session) after each optimizer step."""
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    x, y = gradlab.randn(8, 2), gradlab.randn(8, 1)
    for step in range(steps):
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        probe(step, session_box[0])
        time.sleep(sleep)


def test_light_when_running_freely_full_for_per_op_breakpoints():
    light = []

    def probe(step, session):
        light.append(session.light)
        if step == 2:
            session.break_on_nonfinite = True  # needs every op: full at once
            light.append(session.light)
        if step == 4:
            session.break_on_nonfinite = False  # light again at once

    with Session(detail_interval=60) as session:
        run = session.run_function(training_with_probe, [session], 7, probe)
        assert session.wait_finished(WAIT), run.traceback
    # iteration 1 in full, then light; full while the NaN breakpoint is set
    assert light == [True, True, True, False, False, False, True, True]


def test_detail_interval_zero_records_everything():
    light = []
    with Session(detail_interval=0) as session:
        session.run_function(training_with_probe, [session], 4,
                             lambda step, s: light.append(s.light))
        assert session.wait_finished(WAIT)
        snap = session.snapshot()
    assert light == [False] * 4
    assert [g.iteration for g in snap.history] == [1, 2, 3] and snap.graph.iteration == 4


def test_one_full_iteration_every_detail_interval():
    light = []
    with Session(detail_interval=0.2) as session:
        session.run_function(training_with_probe, [session], 20,
                             lambda step, s: light.append(s.light), sleep=0.03)
        assert session.wait_finished(WAIT)
        snap = session.snapshot()
    # >= 0.6 s of training: the first iteration and at least one more in full, most light
    assert light[0] is True and light.count(False) >= 1 and light.count(True) >= 10
    assert snap.history and snap.history[-1].iteration > 2  # fresh graphs kept coming
