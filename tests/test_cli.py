"""The engine's commands (gradlab/cli.py): the built-in demo trains and reports what the
engine did. The app's commands (plain ``gradlab``, ``run``, ``serve``) are tested in
tests/tui/test_cli.py."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from gradlab import cli, demo


def test_demo_learns_two_moons_and_reports_engine_work():
    out = io.StringIO()
    accuracy = demo.run(steps=150, out=out)
    text = out.getvalue()
    assert accuracy > 0.95
    assert "forward pass     12 ops" in text
    assert "backward pass    12 nodes" in text
    assert "6 gradients accumulated" in text


def test_cli_runs_the_demo_by_default(capsys):
    assert cli.main(["demo", "--steps", "50"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("gradlab ")
    assert "step   50" in printed


def test_cli_version_and_bad_arguments(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--version"])
    assert exit_info.value.code == 0
    assert "gradlab 0.1.0" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["demo", "--steps", "many"])
    assert exit_info.value.code == 2


def test_console_entry_point_runs_as_a_module():
    result = subprocess.run([sys.executable, "-m", "gradlab.cli", "demo", "--steps", "20"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "SGD update" in result.stdout


@pytest.fixture
def engine_runs(monkeypatch) -> list[dict]:
    """Replace the engine demo by a recorder of the arguments it was given."""
    calls: list[dict] = []
    monkeypatch.setattr(demo, "run", lambda **kwargs: calls.append(kwargs))
    return calls


@pytest.mark.parametrize("argv, expected", [
    (["demo"], {"steps": 300, "lr": 0.5}),
    (["demo", "--steps", "50"], {"steps": 50, "lr": 0.5}),
    (["demo", "engine"], {"steps": 300, "lr": 0.5}),
    (["demo", "engine", "--steps", "7", "--lr", "0.1"], {"steps": 7, "lr": 0.1}),
    (["demo", "--steps", "50", "engine"], {"steps": 50, "lr": 0.5}),  # options before the name
])
def test_cli_routes_to_the_engine_demo(engine_runs, argv, expected):
    assert cli.main(argv) == 0
    assert engine_runs == [expected]


@pytest.mark.parametrize("name, module_name", [("moons", "moons_mlp"), ("digits", "digits_cnn")])
def test_cli_routes_to_the_examples_with_their_options(monkeypatch, name, module_name):
    import importlib

    module = importlib.import_module(f"gradlab.examples.{module_name}")
    seen = []
    monkeypatch.setattr(module, "run", seen.append)
    assert cli.main(["demo", name, "--epochs", "3", "--lr", "0.2", "--batch-size", "8",
                     "--seed", "5", "--quiet", "--save", "w.safetensors"]) == 0
    (args,) = seen
    assert (args.epochs, args.lr, args.batch_size, args.seed, args.quiet, args.save) == \
        (3, 0.2, 8, 5, True, "w.safetensors")


def test_cli_help_says_what_each_demo_does(capsys):
    for argv in (["--help"], ["demo", "--help"], ["demo", "moons", "--help"],
                 ["demo", "digits", "--help"], ["demo", "engine", "--help"]):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(argv)
        assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # help wraps to the terminal's width
    assert "demo" in text and "multi-layer perceptron" in text and "convolutional" in text
    assert "--batch-size" in text and "--save PATH" in text and "--steps STEPS" in text
    assert "Source: gradlab.examples.digits_cnn" in text


def test_cli_unknown_demo_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["demo", "mnist"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'mnist'" in capsys.readouterr().err


def test_the_command_line_does_not_import_textual():
    # `gradlab demo`/`render` start fast: Textual loads only when the app opens.
    code = "import sys, gradlab.cli; print('textual' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.stdout.strip() == "False", result.stderr


TRAINING_SCRIPT = """
import sys
import gradlab
from gradlab import nn
steps = int(sys.argv[1])
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
x, y = gradlab.randn(16, 4), gradlab.randint(0, 2, (16,))
for step in range(steps):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    if step == int(sys.argv[2]):
        raise ValueError("the script's own bug")
print("script finished")
"""


def _training_script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(TRAINING_SCRIPT)
    return str(path)


def test_profile_records_the_asked_steps_and_stops_the_script(tmp_path, capsys):
    script = _training_script(tmp_path)
    trace = tmp_path / "trace.json"
    assert cli.main(["profile", script, "100", "-1", "--steps", "2", "--memory", "--modules",
                     "-o", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "2 step(s) recorded after skipping 1" in out
    assert "script finished" not in out  # stopped after its third backward
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("Name"))
    assert "CPU Mem" in header and "Module" in header
    rows = {line.split()[0]: line for line in lines}
    assert rows["ProfilerStep*"].split()[-1] == "2"  # the two steps, one row (no module)
    linear_rows = [line for line in lines if line.startswith("linear ")]
    assert sorted(line.split()[-1] for line in linear_rows) == ["0", "2"]  # by module
    assert all(line.split()[-2] == "2" for line in linear_rows)  # once per recorded step
    assert json.loads(trace.read_text())["traceEvents"]


def test_profile_of_a_script_that_ends_early_or_fails(tmp_path, capsys):
    script = _training_script(tmp_path)
    assert cli.main(["profile", script, "3", "-1", "--steps", "10", "--skip", "0"]) == 0
    out = capsys.readouterr().out
    assert "3 step(s) recorded" in out and "script finished" in out
    assert cli.main(["profile", script, "5", "2", "--steps", "10"]) == 1
    captured = capsys.readouterr()
    assert "ValueError: the script's own bug" in captured.err
    assert "Self CPU time total" in captured.out  # what ran before the error is shown
    assert cli.main(["profile", script, "0", "-1"]) == 1
    assert "nothing was recorded" in capsys.readouterr().err


def test_profile_refuses_bad_options(tmp_path, capsys):
    script = _training_script(tmp_path)
    assert cli.main(["profile", script, "2", "-1", "--sort", "speed"]) == 2
    assert "--sort must be one of" in capsys.readouterr().err
    assert cli.main(["profile", script, "2", "-1", "--steps", "0"]) == 2
    assert "steps >= 1" in capsys.readouterr().err
    assert cli.main(["profile", str(tmp_path / "missing.py")]) == 2
    assert "no script at" in capsys.readouterr().err
