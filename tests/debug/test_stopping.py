"""Stopping a run wherever it is, and the threads a run starts (they belong to it)."""

from __future__ import annotations

import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import gradlab
from gradlab.debug import ScriptRun, Session
from gradlab.debug import runner as runner_module
from gradlab.debug.runner import current_run, live_runs
from tests.waiting import wait_for

pytestmark = pytest.mark.timeout(30)
WAIT = 10
GRACE = 0.05  # the watchdog's interval in these tests: fast, and still gives events a chance

SPIN = """
import threading
print("spinning", flush=True)
n = 0
while True:  # pure Python: no gradlab event to be stopped at
    n += 1
"""


def write(tmp_path, text: str, name: str = "script.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_a_pure_python_loop_is_stopped_between_two_statements(tmp_path):
    run = ScriptRun.for_script(write(tmp_path, SPIN)).start()
    assert wait_for(lambda: "spinning" in run.output)
    run.request_stop(GRACE)
    assert run.wait(WAIT), "the watchdog did not stop a script spinning in pure Python"
    assert run.status == "stopped" and run.traceback is None and run.interrupted >= 1
    assert run.stopping and not run.threads


def test_session_stop_ends_a_script_that_never_calls_gradlab(tmp_path):
    with Session() as session:
        run = session.run_script(write(tmp_path, SPIN))
        assert wait_for(lambda: "spinning" in run.output)
        session.stop()  # the default grace: half a second
        assert session.wait_finished(WAIT)
    assert run.status == "stopped" and session.status == "stopped"
    said = [line.text for line in session.snapshot().log if line.kind == "phase"]
    assert any("stopped between two of its statements" in text for text in said)


def test_quitting_with_stop_ends_a_spinning_script(tmp_path):
    """The app's quit-and-stop path: detach("stop") must not leave the process waiting."""
    session = Session()
    run = session.run_script(write(tmp_path, SPIN))
    assert wait_for(lambda: "spinning" in run.output)
    session.detach("stop")
    assert run.wait(WAIT) and run.status == "stopped"


def test_a_run_in_gradlab_code_stops_at_its_next_event_not_asynchronously():
    """Training with gradlab ops: the cooperative stop lands first, the watchdog never fires."""
    def train():
        w = gradlab.ones(64, requires_grad=True)
        while True:
            (w * 2).sum().backward()

    with Session() as session:
        run = session.run_function(train)
        time.sleep(0.05)
        session.stop()
        assert session.wait_finished(WAIT)
    assert run.status == "stopped" and run.interrupted == 0


def test_busy_in_gradlab_looks_past_the_standard_library():
    parked, release = threading.Event(), threading.Event()

    def in_test_code():  # this file is the "script": blocked in threading's wait, called here
        parked.set()
        release.wait(WAIT)

    with Session() as session:  # a run paused inside gradlab: Stepper.hold -> Condition.wait
        run = session.run_function(lambda: gradlab.ones(2) * 2, pause_at_start=True)
        assert session.wait_paused(WAIT)
        other = threading.Thread(target=in_test_code)
        other.start()
        assert parked.wait(WAIT)
        try:
            assert runner_module._busy_in_gradlab(run.thread.ident)
            assert not runner_module._busy_in_gradlab(other.ident)
        finally:
            release.set()
            other.join(WAIT)
            session.resume()
            assert session.wait_finished(WAIT)


def test_threads_a_script_starts_print_into_its_output_and_stop_with_it(tmp_path, capsys):
    path = write(tmp_path, """
        import threading
        from concurrent.futures import ThreadPoolExecutor

        def helper(name):
            print(f"{name} says hi", flush=True)
            n = 0
            while True:
                n += 1

        threading.Thread(target=helper, args=("thread",)).start()
        pool = ThreadPoolExecutor(1)
        pool.submit(print, "pool says hi")
        pool.shutdown(wait=True)
        helper("main")
    """)
    run = ScriptRun.for_script(path).start()
    assert wait_for(lambda: "main says hi" in run.output and "thread says hi" in run.output)
    assert len(run.threads) >= 2  # the worker and the spinning helper
    print("the test's own line")  # written while the run's threads are routed
    run.request_stop(GRACE)
    assert run.wait(WAIT) and run.status == "stopped"
    assert wait_for(lambda: not run.threads), "a thread the script started outlived its stop"
    assert "pool says hi" in run.output
    assert "StopRun" not in run.output  # a stopped helper thread ends quietly
    out = capsys.readouterr().out
    assert "the test's own line" in out and "says hi" not in out


def test_thread_start_is_put_back_when_no_run_is_going():
    original = threading.Thread.start
    seen = {}

    def train():
        seen["patched"] = threading.Thread.start is not original
        seen["run"] = current_run()
        with ThreadPoolExecutor(1) as pool:
            seen["child run"] = pool.submit(current_run).result()

    run = ScriptRun.for_function(train).start()
    assert run.wait(WAIT) and run.status == "finished", run.traceback
    assert seen == {"patched": True, "run": run, "child run": run}
    assert wait_for(lambda: threading.Thread.start is original)
    assert current_run() is None and run not in live_runs()


def test_a_thread_started_outside_any_run_is_not_adopted():
    started = threading.Event()
    release = threading.Event()

    def train():
        started.set()
        release.wait(WAIT)

    run = ScriptRun.for_function(train).start()
    assert started.wait(WAIT)
    try:
        result = {}
        bystander = threading.Thread(target=lambda: result.setdefault("run", current_run()))
        bystander.start()  # from the test's thread, while the run's patch is installed
        bystander.join(WAIT)
        assert result == {"run": None} and bystander not in run.threads
        assert run in live_runs()
    finally:
        release.set()
    assert run.wait(WAIT)


def test_request_stop_twice_starts_one_watchdog(tmp_path):
    run = ScriptRun.for_script(write(tmp_path, SPIN)).start()
    assert wait_for(lambda: "spinning" in run.output)
    before = set(threading.enumerate())
    run.request_stop(GRACE)
    run.request_stop(GRACE)
    watchdogs = [t for t in threading.enumerate()
                 if t.name.startswith("gradlab stop:") and t not in before]
    assert len(watchdogs) == 1 and watchdogs[0].daemon
    assert run.wait(WAIT) and run.status == "stopped"
