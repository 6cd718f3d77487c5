"""Screenshot tests of the app's main screens (pytest-textual-snapshot's ``snap_compare``).

The app runs in static mode (no timings on screen) at a fixed terminal size,
on a seeded script, so each picture is the same on every run. After a
deliberate change to a screen, look at the new pictures and accept them with
``pytest tests/tui/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pytest_textual_snapshot")

from tests.tui.test_app import TINY, paused_after, runs, step, write  # noqa: E402, F401
from tui.app import GradlabApp  # noqa: E402

pytestmark = pytest.mark.timeout(60)


def test_home_screen(snap_compare, runs):  # noqa: F811
    assert snap_compare(GradlabApp(static=True, session_factory=runs), terminal_size=(80, 24))


def test_help_screen(snap_compare, runs):  # noqa: F811
    assert snap_compare(GradlabApp(static=True, session_factory=runs), press=["question_mark"],
                        terminal_size=(80, 24))


def test_debugger_paused_mid_backward(snap_compare, runs, tmp_path):  # noqa: F811
    app = GradlabApp(script=write(tmp_path, "tiny", TINY), static=True, session_factory=runs)

    async def three_backward_nodes(pilot) -> None:
        screen = pilot.app.screen
        await paused_after(pilot, screen, None, "the pause at the start")
        for _ in range(3):
            await step(pilot, screen, "b", "a backward node")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=three_backward_nodes)


def test_debugger_wide_paused_mid_backward(snap_compare, runs, tmp_path):  # noqa: F811
    """150 columns: the graph beside the inspector, the optimizer tab under it."""
    app = GradlabApp(script=write(tmp_path, "tiny", TINY), static=True, session_factory=runs)

    async def four_backward_nodes(pilot) -> None:
        screen = pilot.app.screen
        await paused_after(pilot, screen, None, "the pause at the start")
        for _ in range(4):
            await step(pilot, screen, "b", "a backward node")
        # The optimizer tab, not memory: live bytes are the whole process's, so they
        # depend on what earlier tests left alive.
        screen.query_one("#tabs").active = "tab-optimizer"
        await pilot.pause()

    assert snap_compare(app, terminal_size=(150, 45), run_before=four_backward_nodes)


def test_lesson_screen(snap_compare, runs, tmp_path, monkeypatch):  # noqa: F811
    """Lesson 1 at 120 columns: the text beside the debugger on the student's new file."""
    monkeypatch.setenv("HOME", str(tmp_path))  # the title shows ~/gradlab-lessons/...
    monkeypatch.setenv("GRADLAB_LESSONS_DIR", str(tmp_path / "gradlab-lessons"))
    monkeypatch.setenv("GRADLAB_DATA_DIR", str(tmp_path / "data"))
    app = GradlabApp(lesson=1, static=True, session_factory=runs)

    async def paused(pilot) -> None:
        await paused_after(pilot, pilot.app.screen, None, "the pause at the start")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=paused)
