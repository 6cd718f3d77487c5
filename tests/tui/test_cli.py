"""The app's commands (tui/cli.py): plain ``gradlab`` opens the home screen, ``gradlab run``
the debugger on a script, ``gradlab serve`` the app in browsers."""

from __future__ import annotations

import io
import os
import shlex
import sys
import time

import pytest

from tests.test_cli import engine_runs  # noqa: F401 - a fixture
from tests.waiting import wait_for
from tui import cli


@pytest.fixture
def app_runs(monkeypatch) -> list[dict]:
    """Replace running the Textual app by a record of how it was made."""
    from tui.app import AppResult, GradlabApp

    opened: list[dict] = []

    def run(app):
        opened.append({"script": app.script, "args": app.script_args,
                       "pause": app.pause_at_start, **({"lesson": app.lesson} if app.lesson
                                                       else {})})
        return AppResult()

    monkeypatch.setattr(GradlabApp, "run", run)
    return opened


def test_plain_gradlab_opens_the_app_home_screen(app_runs, engine_runs):  # noqa: F811
    assert cli.main([]) == 0
    assert app_runs == [{"script": None, "args": (), "pause": True}]
    assert engine_runs == []  # the engine demo is `gradlab demo` now


def test_run_opens_the_debugger_on_the_script(app_runs, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    assert cli.main(["run", str(script), "--epochs", "2", "--lr", "0.1"]) == 0
    assert cli.main(["run", "--no-pause", str(script)]) == 0
    assert app_runs == [{"script": str(script), "args": ("--epochs", "2", "--lr", "0.1"),
                         "pause": True},
                        {"script": str(script), "args": (), "pause": False}]


def test_run_a_missing_script_is_an_error(app_runs, capsys):
    assert cli.main(["run", "no_such_script.py"]) == 2
    assert "no such script: no_such_script.py" in capsys.readouterr().err
    assert app_runs == []


def test_serve_runs_this_python_with_the_app_arguments(monkeypatch, capsys):
    import textual_serve.server

    served = []

    class Server:
        def __init__(self, command, host, port, title):
            served.append((command, host, port, title))

        def serve(self):
            served.append("serving")

    monkeypatch.setattr(textual_serve.server, "Server", Server)
    assert cli.main(["serve", "--port", "8123", "--", "run", "train.py", "--epochs", "3"]) == 0
    command = shlex.join([sys.executable, "-m", "tui", "run",
                          os.path.abspath("train.py"), "--epochs", "3"])
    assert served == [(command, "localhost", 8123, "gradlab"), "serving"]
    assert "http://localhost:8123" in capsys.readouterr().out
    from tui.serve import serve_command

    assert serve_command([]) == shlex.join([sys.executable, "-m", "tui"])


def test_a_script_let_run_on_is_waited_for_and_its_output_printed():
    class Run:  # a ScriptRun that prints twice, then ends
        name, status, exit_code, traceback = "train.py", "finished", 0, None
        outputs = iter(["epoch 1\n", "epoch 1\nepoch 2\n", "epoch 1\nepoch 2\ndone\n"])
        output = "epoch 1\n"
        polls = 0

        def wait(self, timeout):
            self.polls += 1
            self.output = next(self.outputs)
            return self.polls == 3

    out = io.StringIO()
    released = []
    assert cli._wait_for(Run(), poll=0, out=out, release=lambda: released.append(out.tell())) \
        == 0
    assert released == [len("gradlab: train.py runs on without the debugger (Ctrl+C stops "
                            "it)\nepoch 1\n")]  # released once what it printed is shown
    assert out.getvalue() == ("gradlab: train.py runs on without the debugger (Ctrl+C stops "
                              "it)\nepoch 1\nepoch 2\ndone\ngradlab: train.py finished\n")



def test_a_stopped_script_blocked_in_sleep_is_waited_for_with_a_note():
    from gradlab.debug import ScriptRun

    def sleeper():
        print("going to sleep", flush=True)
        time.sleep(0.6)  # a C call: the stop lands when it returns

    run = ScriptRun.for_function(sleeper).start()
    assert wait_for(lambda: "going to sleep" in run.output)
    run.request_stop(0.05)
    out = io.StringIO()
    cli._let_stopped_runs_end(out=out, notice_after=0.1, poll=0.05)
    assert run.done.is_set() and run.status == "stopped" and not run.threads
    assert out.getvalue().startswith("gradlab: waiting for sleeper to stop: it is inside a "
                                     "call Python can't interrupt")
    quiet = io.StringIO()
    cli._let_stopped_runs_end(out=quiet)  # nothing left to wait for: says nothing
    assert quiet.getvalue() == ""


@pytest.fixture
def student(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADLAB_LESSONS_DIR", str(tmp_path / "work"))
    monkeypatch.setenv("GRADLAB_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


def test_lesson_lists_or_opens_the_app_on_a_lesson(app_runs, student, capsys):
    assert cli.main(["lesson"]) == 0
    listing = capsys.readouterr().out
    assert "A derivative is a slope" in listing and "0 of" in listing
    assert app_runs == []  # the list is printed, no app
    assert cli.main(["lesson", "1"]) == 0
    assert app_runs == [{"script": None, "args": (), "pause": True, "lesson": 1}]
    assert (student / "work" / "01_derivative_as_slope.py").is_file()  # made for the app
    assert cli.main(["lesson", "99"]) == 2
    assert "there is no lesson '99'" in capsys.readouterr().err


def test_check_exits_0_only_when_every_task_passes(student, capsys):
    from lessons.catalog import get_lesson

    assert cli.main(["check", "1"]) == 1  # the untouched starter
    assert "not yet" in capsys.readouterr().out
    mine = student / "mine.py"
    mine.write_text(get_lesson(1).solution.read_text())
    assert cli.main(["check", "1", "--file", str(mine), "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert "all tasks pass" in out and "(seed 4)" in out


def test_the_gradlab_command_does_not_import_textual_until_the_app_opens():
    # `gradlab demo`/`render` go through tui.cli too: they must start as fast.
    import subprocess

    code = "import sys, tui.cli; print('textual' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.stdout.strip() == "False", result.stderr


def test_the_app_commands_come_first_then_the_engines():
    assert [c.name for c in cli.COMMANDS] == ["run", "lesson", "check", "serve", "demo",
                                              "render", "profile"]
