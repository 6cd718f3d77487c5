"""gradlab.profiler: intervals, nesting, averages, the table, traces and schedules."""

from __future__ import annotations

import gzip
import json
import os
import re
import threading

import pytest

import gradlab
from gradlab import events, nn
from gradlab.profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)
from tests.oracle import needs_torch, torch


def _names(evts, kind=None):
    return [e.name for e in evts if kind is None or e.kind == kind]


def test_ops_and_backward_nodes_are_recorded_and_nested():
    a = gradlab.randn(4, requires_grad=True)
    b = gradlab.randn(4, requires_grad=True)
    with profile() as prof:
        (a * b).sum().backward()
    evts = prof.events()
    # forward, then SumBackward0's expand and MulBackward0's two products
    assert _names(evts, "op") == ["mul", "sum", "expand", "mul", "mul"]
    assert _names(evts, "backward") == ["SumBackward0", "MulBackward0"]
    node = next(e for e in evts if e.name == "MulBackward0")
    assert [c.name for c in node.children] == ["mul", "mul"]
    for child in node.children:
        assert child.parent is node
        assert node.start_us <= child.start_us and child.end_us <= node.end_us
    assert node.self_cpu_time_total == pytest.approx(
        node.cpu_time_total - sum(c.cpu_time_total for c in node.children))
    assert all(e.thread == threading.get_ident() for e in evts)
    assert events.listeners == []  # the profile stopped listening when the block ended


def test_ranges_hold_their_ops_and_self_times_count_nothing_twice():
    x = gradlab.randn(64, 64, requires_grad=True)
    w = gradlab.randn(64, 64, requires_grad=True)
    with profile() as prof:
        with record_function("forward"):
            y = (x @ w).tanh().sum()
        with record_function("backward"):
            y.backward()
    evts = prof.events()
    fwd = next(e for e in evts if e.name == "forward")
    assert [c.name for c in fwd.children] == ["matmul", "tanh", "sum"]
    bwd = next(e for e in evts if e.name == "backward")
    assert {c.kind for c in bwd.children} == {"backward"}
    top = [e for e in evts if e.parent is None]
    assert [e.name for e in top] == ["forward", "backward"]
    assert sum(e.self_cpu_time_total for e in evts) == pytest.approx(
        sum(e.cpu_time_total for e in top))
    assert evts.self_cpu_time_total <= evts.wall_us


def test_record_function_as_a_decorator_and_outside_a_profile():
    @record_function("helper")
    def helper(t):
        return t * 3

    helper(gradlab.ones(2))  # no profile: nothing happens, nothing breaks
    with profile() as prof:
        helper(gradlab.ones(2))
    (rng,) = [e for e in prof.events() if e.kind == "range"]
    assert rng.name == "helper" and [c.name for c in rng.children] == ["mul"]


def test_key_averages_group_by_name_shapes_and_module():
    model = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))
    with profile(record_shapes=True) as prof:
        model(gradlab.randn(7, 3)).sum().backward()
    by_name = {r.key: r for r in prof.key_averages()}
    assert by_name["linear"].count == 2 and by_name["AddmmBackward0"].count == 2
    total = sum(e.cpu_time_total for e in prof.events() if e.name == "linear")
    assert by_name["linear"].cpu_time_total == pytest.approx(total)
    assert by_name["linear"].cpu_time == pytest.approx(total / 2)
    shapes = {(r.key, str(r.input_shapes)) for r in prof.key_averages(group_by_input_shape=True)}
    assert ("linear", "[[7, 3], [5, 3], [5]]") in shapes
    assert ("linear", "[[7, 5], [2, 5], [2]]") in shapes
    modules = {(r.key, r.module) for r in prof.key_averages(group_by_module=True)}
    assert ("linear", "0") in modules and ("linear", "2") in modules
    assert ("relu", "1") in modules


def test_grouping_by_shape_needs_recorded_shapes():
    with profile() as prof:
        gradlab.ones(2) * 2
    with pytest.raises(ValueError, match="record_shapes=True"):
        prof.key_averages(group_by_input_shape=True)
    with pytest.raises(ValueError, match="no Python stacks"):
        prof.events().key_averages(group_by_stack_n=5)


def test_profile_memory_counts_the_bytes_each_op_allocates():
    x = gradlab.randn(1000)
    with profile(profile_memory=True) as prof:
        y = x * 2
        v = y.view(10, 100)  # a view allocates nothing
    mul, view = (e for e in prof.events() if e.kind == "op")
    assert (mul.name, mul.cpu_memory_usage, mul.self_cpu_memory_usage) == ("mul", 4000, 4000)
    assert (view.name, view.cpu_memory_usage) == ("view", 0)
    assert "CPU Mem" in prof.key_averages().table()
    assert v.shape == (10, 100)


def test_table_has_pytorchs_columns_and_sorts():
    x = gradlab.randn(32, 32, requires_grad=True)
    with profile() as prof:
        for _ in range(3):
            (x @ x).exp().sum().backward()
    averages = prof.key_averages()
    text = averages.table(sort_by="cpu_time_total", row_limit=4)
    lines = text.splitlines()
    header = re.split(r"\s{2,}", lines[1].strip())
    assert header == ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                      "CPU time avg", "# of Calls"]
    rows = lines[3:3 + 4]
    assert lines[3 + 4].startswith("---") and len(rows) == 4
    totals = sorted((r.cpu_time_total for r in averages), reverse=True)
    assert rows[0].split()[0] == next(r.key for r in averages
                                      if r.cpu_time_total == totals[0])
    assert "Self CPU time total:" in text and "Wall time profiled:" in text
    counts = {r.split()[0]: int(r.split()[-1]) for r in
              averages.table(row_limit=0).splitlines()[3:-3]}
    assert counts["matmul"] == 3 + 6 and counts["MmBackward0"] == 3
    top = averages.table(top_level_events_only=True)
    assert "MmBackward0" in top
    only_top = prof.events().table(top_level_events_only=True)
    assert " mul " not in only_top  # MulBackward0's mul ops are nested, not top level


def test_table_sort_keys_are_checked_and_device_times_explained():
    with profile() as prof:
        gradlab.ones(2) + 1
    averages = prof.key_averages()
    with pytest.raises(ValueError, match="unknown sort_by 'speed'"):
        averages.table(sort_by="speed")
    with pytest.raises(ValueError, match="times ops on the host.*cpu_time_total"):
        averages.table(sort_by="cuda_time_total")


def test_chrome_trace_is_valid_json_with_nested_intervals(tmp_path):
    x = gradlab.randn(8, requires_grad=True)
    with profile(record_shapes=True, profile_memory=True) as prof:
        with record_function("step"):
            (x.exp() * x).sum().backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    doc = json.loads(path.read_text())
    trace = doc["traceEvents"]
    assert len(trace) == len(prof.events())
    assert {t["ph"] for t in trace} == {"X"}
    assert {t["cat"] for t in trace} == {"cpu_op", "autograd", "user_annotation"}
    step = next(t for t in trace if t["name"] == "step")
    for t in trace:
        assert step["ts"] <= t["ts"] and t["ts"] + t["dur"] <= step["ts"] + step["dur"] + 1e-2
    exp = next(t for t in trace if t["name"] == "exp")
    assert exp["args"]["Input Dims"] == [[8]] and exp["args"]["cpu bytes allocated"] == 32
    assert os.listdir(tmp_path) == ["trace.json"]  # written whole, no temporary left


def test_results_exist_only_after_recording():
    prof = profile()
    with pytest.raises(RuntimeError, match="nothing has been recorded yet"):
        prof.events()
    with pytest.raises(RuntimeError, match="not running"):
        prof.step()


def test_one_profile_at_a_time_and_an_error_inside_stops_it():
    with profile():
        with pytest.raises(RuntimeError, match="already recording"):
            with profile():
                pass
    with pytest.raises(ZeroDivisionError):
        with profile() as prof:
            gradlab.ones(2) * 2
            raise ZeroDivisionError("a crash inside the profiled block")
    assert events.listeners == [] and _names(prof.events(), "op") == ["mul"]
    with profile() as again:
        gradlab.ones(2) + 1
    assert _names(again.events(), "op") == ["add"]


def test_ops_on_other_threads_are_recorded_with_their_thread():
    def work():
        gradlab.ones(3) * 5

    with profile() as prof:
        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
        gradlab.ones(3) + 1
    threads = {e.name: e.thread for e in prof.events()}
    assert threads["mul"] != threads["add"] == threading.get_ident()


def test_schedule_records_the_active_steps_and_calls_on_trace_ready():
    x = gradlab.randn(4, requires_grad=True)
    windows = []

    def ready(p):
        windows.append([e.name for e in p.events() if e.kind == "range"])
    sched = schedule(wait=1, warmup=1, active=2, repeat=2)
    with profile(schedule=sched, on_trace_ready=ready) as prof:
        for _ in range(10):
            (x * 2).sum().backward()
            prof.step()
    assert windows == [["ProfilerStep#2", "ProfilerStep#3"],
                       ["ProfilerStep#6", "ProfilerStep#7"]]
    step = next(e for e in prof.events() if e.name == "ProfilerStep#7")
    assert [c.name for c in step.children][:2] == ["mul", "sum"]


def test_step_without_a_schedule_cuts_the_run_into_steps():
    with profile() as prof:
        for _ in range(3):
            gradlab.ones(2) * 2
            prof.step()
        gradlab.ones(2) + 1
    ranges = [e for e in prof.events() if e.kind == "range"]
    assert [r.name for r in ranges] == [f"ProfilerStep#{k}" for k in range(4)]
    assert [c.name for c in ranges[3].children] == ["add"]


def test_a_step_call_after_the_last_step_leaves_no_empty_step():
    with profile() as prof:
        for _ in range(3):
            gradlab.ones(2) * 2
            prof.step()
    assert [e.name for e in prof.events() if e.kind == "range"] == [
        "ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"]


def test_schedule_checks_its_arguments():
    with pytest.raises(ValueError, match="active must be at least 1"):
        schedule(wait=1, warmup=0, active=0)
    with pytest.raises(ValueError, match="wait must be an int"):
        schedule(wait=-1, warmup=0, active=1)


@needs_torch
@pytest.mark.filterwarnings("ignore:Profiler won't be using warmup")  # PyTorch's, for warmup=0
def test_schedule_decides_like_pytorchs():
    for args in (dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=0, active=1, repeat=3),
                 dict(wait=2, warmup=1, active=3, repeat=2, skip_first=3)):
        ours = schedule(**args)
        theirs = torch.profiler.schedule(**args)
        assert [ours(s).name for s in range(30)] == [theirs(s).name for s in range(30)]


@needs_torch
def test_table_header_matches_pytorchs():
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as tp:
        torch.ones(2) * 2
    theirs = re.split(r"\s{2,}", tp.key_averages().table().splitlines()[1].strip())
    with profile(activities=[ProfilerActivity.CPU]) as gp:
        gradlab.ones(2) * 2
    ours = re.split(r"\s{2,}", gp.key_averages().table().splitlines()[1].strip())
    assert ours == theirs


def test_tensorboard_trace_handler_writes_a_trace_per_window(tmp_path):
    with profile(schedule=schedule(wait=0, warmup=0, active=1, repeat=2),
                 on_trace_ready=tensorboard_trace_handler(tmp_path, "w1")) as prof:
        for _ in range(3):
            gradlab.ones(2) * 2
            prof.step()
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 2 and all(re.fullmatch(r"w1\.\d+\.pt\.trace\.json", f) for f in files)
    assert json.loads((tmp_path / files[0]).read_text())["traceEvents"]
    zipped = tmp_path / "z"
    with profile(on_trace_ready=tensorboard_trace_handler(zipped, "w", use_gzip=True)):
        gradlab.ones(2) * 2
    (name,) = os.listdir(zipped)
    assert name.endswith(".pt.trace.json.gz")
    assert json.loads(gzip.decompress((zipped / name).read_bytes()))["traceEvents"]


def test_unrecorded_options_warn_and_bad_activities_raise():
    with pytest.warns(UserWarning, match="with_stack"):
        profile(with_stack=True)
    with pytest.raises(TypeError, match="ProfilerActivity"):
        profile(activities=["cpu"])
    assert ProfilerAction.RECORD_AND_SAVE.name == "RECORD_AND_SAVE"


def test_the_older_autograd_profiler_api():
    from gradlab.autograd.profiler import profile as legacy

    with legacy() as prof:
        gradlab.ones(3) * 2
    assert _names(prof.function_events, "op") == ["mul"]
    assert "# of Calls" in prof.table() and prof.self_cpu_time_total > 0
    assert prof.total_average().count == 1
    with legacy(enabled=False) as off:
        gradlab.ones(3) * 2
    with pytest.raises(RuntimeError, match="nothing has been recorded"):
        off.events()


def test_backward_node_events_carry_their_timing():
    a = gradlab.randn(3, requires_grad=True)
    seen = []
    with events.subscribe(seen.append):
        (a * a).sum().backward()
    node = next(e for e in seen if isinstance(e, events.BackwardNode) and e.op == "mul")
    ops = [e for e in seen if isinstance(e, events.OpForward) and e.seq > node.seq - 3
           and e.seq < node.seq]
    assert node.node_name == "MulBackward0" and node.duration > 0
    assert ops and all(node.start <= o.start and o.start + o.duration <= node.start +
                       node.duration for o in ops)
