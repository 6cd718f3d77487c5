"""``gradlab render SCRIPT``: runs a training script, draws its K-th backward, fails clearly."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

import gradlab
from gradlab import cli

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")

TRAIN = """
import sys
import gradlab
import gradlab.nn as nn

print("argv", sys.argv[1:])
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
x = gradlab.randn(5, 3)
y = gradlab.randn(5, 1)
for step in range(1000):
    pred = model(x) * (step + 1)   # step K's graph has a different constant
    loss = ((pred - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("done step", step)
"""


def script(tmp_path, text: str, name: str = "train.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


@needs_dot
def test_render_writes_the_first_backward_and_stops_the_script(tmp_path, capsys):
    out = tmp_path / "graph.svg"
    status = cli.main(["render", script(tmp_path, TRAIN), "--epochs", "3", "-o", str(out)])
    printed = capsys.readouterr().out
    assert status == 0
    assert "argv ['--epochs', '3']" in printed  # the script got its own arguments
    assert "done step" not in printed  # stopped right after the first backward
    assert "wrote the forward graph of backward #1" in printed
    root = ET.fromstring(out.read_bytes())
    texts = {t.text for t in root.iter() if t.tag.endswith("text")}
    assert {"0.weight", "2.bias", "linear", "tanh", "mean"} <= texts
    assert gradlab.is_grad_enabled()  # the interrupted backward left grad mode as it was


def test_render_step_view_depth_and_dot_output(tmp_path, capsys):
    out = tmp_path / "graph.dot"
    status = cli.main(["render", script(tmp_path, TRAIN), "-o", str(out), "--step", "3",
                       "--view", "backward", "--depth", "0", "--grads"])
    printed = capsys.readouterr().out
    assert status == 0
    assert printed.count("done step") == 2  # steps 0 and 1 finished; stopped in step 2
    dot = out.read_text()
    assert dot.startswith("digraph gradlab_backward")
    assert "<B>model : Sequential</B>" in dot and "MeanBackward0" in dot
    assert "grad 1.0000" in dot  # what the mean node received


def test_arguments_after_a_double_dash_all_go_to_the_script(tmp_path, capsys):
    out = tmp_path / "g.dot"
    status = cli.main(["render", script(tmp_path, TRAIN), "--lr", "1", "-o", str(out), "--",
                       "-o", "model.pt", "--values"])
    assert status == 0
    assert "argv ['--lr', '1', '-o', 'model.pt', '--values']" in capsys.readouterr().out
    assert "data " not in out.read_text()


def test_a_failing_script_prints_its_traceback_exits_non_zero_and_writes_nothing(
        tmp_path, capsys):
    path = script(tmp_path, """
        import gradlab
        x = gradlab.ones(2, requires_grad=True)
        def load_data():
            raise ValueError("boom: no data here")
        load_data()
        (x * 2).sum().backward()
    """)
    out = tmp_path / "graph.svg"
    assert cli.main(["render", path, "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "in load_data" in err and "ValueError: boom" in err
    assert "raised ValueError; no graph written" in err
    assert not out.exists()


def test_a_script_without_backward_is_an_error(tmp_path, capsys):
    path = script(tmp_path, "import gradlab\nprint((gradlab.ones(2) * 2).sum())\n")
    out = tmp_path / "graph.svg"
    assert cli.main(["render", path, "-o", str(out)]) == 1
    assert "never called backward()" in capsys.readouterr().err
    assert not out.exists()
    assert cli.main(["render", script(tmp_path, TRAIN.replace("range(1000)", "range(2)")),
                     "-o", str(out), "--step", "5"]) == 1
    assert "ran 2 backward pass(es), fewer than --step 5" in capsys.readouterr().err
    assert cli.main(["render", path]) == 2
    assert "-o FILE" in capsys.readouterr().err
    assert cli.main(["render", str(tmp_path / "missing.py"), "-o", str(out)]) == 1
    assert "no such script" in capsys.readouterr().err


def test_a_script_calling_sys_exit_before_backward(tmp_path, capsys):
    path = script(tmp_path, "import sys\nsys.exit(3)\n")
    assert cli.main(["render", path, "-o", str(tmp_path / "g.svg")]) == 1
    assert "exited with status 3" in capsys.readouterr().err


def test_the_real_command_line_exit_status(tmp_path):
    path = script(tmp_path, "raise RuntimeError('broken script')\n")
    result = subprocess.run([sys.executable, "-m", "gradlab.cli", "render", path, "-o",
                             str(tmp_path / "g.svg")], capture_output=True, text=True)
    assert result.returncode == 1
    assert "RuntimeError: broken script" in result.stderr
    assert not (tmp_path / "g.svg").exists()
