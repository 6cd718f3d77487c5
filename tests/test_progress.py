"""The training-loop progress bar: a tqdm bar with deliberate defaults."""

import io
import sys

import pytest
from tqdm import tqdm

import gradlab
from gradlab.utils import progress as progress_module
from gradlab.utils.progress import progress, trange


def last_line(buf: io.StringIO) -> str:
    return buf.getvalue().replace("\n", "\r").rstrip("\r").split("\r")[-1]


def test_counts_iterations_and_shows_total_and_desc():
    buf = io.StringIO()
    bar = progress(range(7), desc="epoch 1", file=buf)
    assert isinstance(bar, tqdm) and bar.total == 7
    assert list(bar) == list(range(7))
    assert bar.n == 7
    line = last_line(buf)
    assert line.startswith("epoch 1: 100%") and "7/7" in line


def test_set_postfix_shows_a_loss_tensor_as_a_number():
    buf = io.StringIO()
    with progress(range(3), file=buf) as bar:
        for i in bar:
            bar.set_postfix(loss=gradlab.tensor(0.25 * (i + 1)), lr=1e-3)
    line = last_line(buf)
    assert "loss=0.75" in line and "lr=0.001" in line and "tensor" not in line
    open_bar = progress(total=1, file=buf)
    open_bar.set_postfix({"acc": gradlab.tensor([0.5])})  # dict form, one-element 1-d tensor
    assert "acc=0.5" in last_line(buf)
    open_bar.close()


def test_set_postfix_leaves_other_values_alone():
    buf = io.StringIO()
    bar = progress(total=2, file=buf)
    bar.set_postfix(stage="warmup", batch=gradlab.ones(2))
    line = last_line(buf)
    assert "stage=warmup" in line and "batch=tensor([1., 1.])" in line
    bar.close()


def test_manual_bar_update_and_close():
    buf = io.StringIO()
    bar = progress(total=10, unit="batch", file=buf)
    bar.update(4)
    bar.update(6)
    bar.close()
    assert bar.n == 10 and "10/10" in last_line(buf) and "batch/s" in last_line(buf)
    assert buf.getvalue().endswith("\n")  # leave=True: the finished bar stays on screen


def test_leave_false_erases_the_bar():
    buf = io.StringIO()
    with progress(range(2), file=buf, leave=False) as bar:
        list(bar)
    assert last_line(buf).strip() == ""


def test_trange_and_defaults():
    buf = io.StringIO()
    bar = trange(2, 8, 2, file=buf)
    assert list(bar) == [2, 4, 6] and bar.total == 3
    assert bar.dynamic_ncols and bar.smoothing == pytest.approx(0.1)
    assert progress(range(1), file=buf, smoothing=0.5).smoothing == 0.5  # overridable


def test_auto_disable_without_a_terminal_but_not_when_asked(monkeypatch):
    class Pipe(io.StringIO):
        def isatty(self):
            return False

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    monkeypatch.setattr(sys, "stderr", Pipe())
    assert progress(range(3)).disable is True
    assert progress(range(3), disable=False).disable is False
    assert progress(range(3), file=io.StringIO()).disable is False  # file= asks for a bar
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert progress(range(3)).disable is False
    monkeypatch.setattr(sys, "stderr", Pipe())
    monkeypatch.setitem(sys.modules, "ipykernel", object())  # Jupyter renders bars
    assert progress(range(3)).disable is False
    assert progress_module._auto_disable(None) is False


def test_disabled_bar_still_iterates_and_prints_nothing():
    buf = io.StringIO()
    bar = progress(range(4), file=buf, disable=True)
    bar.set_postfix(loss=gradlab.tensor(1.0))
    assert list(bar) == [0, 1, 2, 3] and buf.getvalue() == ""
