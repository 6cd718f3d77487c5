"""ScriptRun: a script or function in a worker thread, its output and errors captured."""

from __future__ import annotations

import os
import sys
import textwrap
import threading

import pytest

from gradlab.debug import ScriptRun, StopRun
from gradlab.debug.runner import script_environment, script_traceback

pytestmark = pytest.mark.timeout(30)


def write(tmp_path, text: str, name: str = "script.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def finish(run: ScriptRun) -> ScriptRun:
    run.start()
    assert run.wait(10), f"{run} did not end within 10 s"
    return run


def test_script_output_is_captured_not_printed(tmp_path, capsys):
    path = write(tmp_path, """
        import sys
        print("hello from the script")
        print("to stderr", file=sys.stderr)
    """)
    run = finish(ScriptRun.for_script(path))
    assert run.status == "finished" and run.exit_code == 0 and run.error is None
    assert run.output == "hello from the script\nto stderr\n"
    captured = capsys.readouterr()
    assert "hello" not in captured.out and "stderr" not in captured.err


def test_streams_are_put_back_after_the_run(tmp_path):
    before = sys.stdout, sys.stderr
    finish(ScriptRun.for_script(write(tmp_path, "print('x')\n")))
    assert (sys.stdout, sys.stderr) == before


def test_argv_path_and_main_as_python_would_set_them(tmp_path):
    path = write(tmp_path, """
        import sys
        if __name__ == "__main__":
            print(repr(sys.argv))
            print(sys.path[0])
    """)
    argv, syspath = list(sys.argv), list(sys.path)
    run = finish(ScriptRun.for_script(path, ["--lr", 3]))
    lines = run.output.splitlines()
    assert lines[0] == repr([path, "--lr", "3"])
    assert lines[1] == str(tmp_path)
    assert sys.argv == argv and sys.path == syspath


def test_script_environment_restores_after_an_error(tmp_path):
    argv, syspath = list(sys.argv), list(sys.path)
    with pytest.raises(ZeroDivisionError), script_environment(str(tmp_path / "s.py"), ["a"]):
        assert sys.argv[1:] == ["a"] and sys.path[0] == str(tmp_path)
        raise ZeroDivisionError
    assert sys.argv == argv and sys.path == syspath


def test_script_that_raises_fails_with_a_trimmed_traceback(tmp_path):
    path = write(tmp_path, """
        def main():
            values = [1, 2]
            return values[5]

        main()
    """, "broken.py")
    run = finish(ScriptRun.for_script(path))
    assert run.status == "failed" and run.exit_code == 1
    assert isinstance(run.error, IndexError)
    lines = run.traceback.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1] == f'  File "{path}", line 6, in <module>'  # starts at the script
    assert f'File "{path}", line 4, in main' in run.traceback
    assert "runpy" not in run.traceback and "runner.py" not in run.traceback
    assert lines[-1] == "IndexError: list index out of range"


@pytest.mark.parametrize("code, status, exit_code", [
    ("sys.exit(0)", "finished", 0), ("sys.exit()", "finished", 0),
    ("sys.exit(3)", "failed", 3), ("sys.exit('bad input')", "failed", 1),
])
def test_sys_exit(tmp_path, code, status, exit_code):
    run = finish(ScriptRun.for_script(write(tmp_path, f"import sys\n{code}\nprint('after')\n")))
    assert (run.status, run.exit_code) == (status, exit_code)
    assert "after" not in run.output
    if code == "sys.exit('bad input')":
        assert run.output == "bad input\n"
    assert (run.traceback is None) == (status == "finished")


def test_function_run_returns_its_result():
    run = finish(ScriptRun.for_function(lambda a, b=1: a * 10 + b, (4,), {"b": 2}))
    assert (run.status, run.result, run.exit_code) == ("finished", 42, 0)


def test_function_traceback_starts_at_the_function():
    def train():
        raise ValueError("lr must be positive")

    run = finish(ScriptRun.for_function(train))
    assert run.status == "failed" and str(run.error) == "lr must be positive"
    lines = run.traceback.splitlines()
    assert lines[1].endswith("in train") and "test_runner.py" in lines[1]
    assert "runner.py\"" not in run.traceback.replace("test_runner.py", "")


def test_stop_run_ends_with_status_stopped():
    def train():
        print("before")
        raise StopRun

    run = finish(ScriptRun.for_function(train))
    assert (run.status, run.error, run.traceback, run.output) == ("stopped", None, None,
                                                                   "before\n")


def test_stop_run_is_not_an_exception():
    assert issubclass(StopRun, BaseException) and not issubclass(StopRun, Exception)


def test_other_threads_write_through_while_a_run_prints(capsys):
    started, go_on = threading.Event(), threading.Event()

    def train():
        print("worker says hi")
        started.set()
        assert go_on.wait(5)
        print("worker done")

    run = ScriptRun.for_function(train).start()
    assert started.wait(5)
    print("main thread line")  # while the routed stream is installed
    go_on.set()
    assert run.wait(10)
    assert run.output == "worker says hi\nworker done\n"
    assert capsys.readouterr().out == "main thread line\n"


def test_output_is_bounded_and_keeps_the_end():
    def chatty():
        for i in range(2000):
            print(f"line {i}")

    run = finish(ScriptRun.for_function(chatty, output_limit=1000))
    assert len(run.output) <= 1000
    assert run.output.endswith("line 1999\n")


def test_on_output_and_on_end_callbacks():
    written, ended = [], []
    run = finish(ScriptRun.for_function(lambda: print("a"), on_output=written.append,
                                        on_end=lambda r: ended.append(r.status)))
    assert "".join(written) == "a\n" and ended == ["finished"]
    assert run.done.is_set()


def test_worker_thread_is_not_a_daemon():
    run = ScriptRun.for_function(lambda: None)
    assert run.thread.daemon is False
    finish(run)
    assert not run.running


def test_errors_teach():
    with pytest.raises(FileNotFoundError, match="no such script: .*nowhere.py"):
        ScriptRun.for_script("nowhere.py")
    with pytest.raises(TypeError, match="expected a function to run, got int"):
        ScriptRun.for_function(3)


def test_script_traceback_without_the_script_frame_keeps_everything():
    try:
        raise KeyError("k")
    except KeyError as error:
        text = script_traceback(error, os.path.abspath("elsewhere.py"))
    assert "KeyError: 'k'" in text and "test_script_traceback" in text
