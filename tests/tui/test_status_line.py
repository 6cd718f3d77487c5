"""The debugger's status line says what the session is doing in words.

Built from hand-made snapshots, so each case is exact: a pause that waits for the
next whole iteration, and a graph that misses ops that ran before recording began.
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from gradlab.debug.snapshot import Position
from tests.tui.test_panels import EMPTY, graph
from tui.screens.debugger import DebuggerScreen


def status(snapshot, waits: bool = False) -> str:
    screen = DebuggerScreen("train.py")
    screen.session = SimpleNamespace(waits_for_next_iteration=waits)
    screen.snapshot = snapshot
    return screen.status_text()


RUNNING = replace(EMPTY, status="running", iteration=3, epoch=1, graph=graph(),
                  position=Position("op", "forward of relu (op1) in module act", "op1"))


def test_a_pause_waiting_for_the_next_iteration_says_so():
    assert "pausing where the next iteration begins" not in status(RUNNING)
    text = status(RUNNING, waits=True)
    assert "pausing where the next iteration begins[/] (p again: now)" in text
    assert text.startswith("[b $success]running[/] · iteration 3 · epoch 1 · forward of relu")


def test_a_partial_graph_is_named_and_a_whole_one_is_not():
    assert "partial graph" not in status(RUNNING)
    partial = replace(RUNNING, graph=replace(graph(), partial=True))
    assert "partial graph: some ops ran before recording began" in status(partial)
