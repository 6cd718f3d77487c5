"""The ``gradlab`` command: the built-in demo trains and reports what the engine did."""

from __future__ import annotations

import io
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
