"""Pilot tests of the app: the flows a user goes through, on small real scripts.

Each test drives :class:`tui.app.GradlabApp` with ``run_test()`` (a headless
terminal) while a real :class:`gradlab.debug.Session` runs a script on its
training thread; waits poll the screen (never sleep blindly) and time out.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from pathlib import Path

import pytest

pytest.importorskip("textual")

from gradlab.debug import Session  # noqa: E402
from tui.app import DEMO_ARGS, AppResult, GradlabApp, demo_script  # noqa: E402
from tui.screens.debugger import DebuggerScreen  # noqa: E402
from tui.screens.help import HelpScreen  # noqa: E402
from tui.screens.home import HomeScreen  # noqa: E402
from tui.screens.lessons import LessonListScreen  # noqa: E402
from tui.screens.quit import QuitScreen  # noqa: E402
from tui.screens.traceback import TracebackScreen  # noqa: E402

pytestmark = pytest.mark.timeout(60)

TINY = """\
import gradlab
from gradlab import nn

gradlab.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
optimizer = gradlab.optim.SGD(model.parameters(), lr=0.1)
x = gradlab.tensor([[1.0, 2.0], [3.0, -1.0]])
for step in range(3):
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
print("tiny: done")
"""

NAN = """\
import gradlab

w = gradlab.tensor([1.0, 2.0], requires_grad=True)
data = gradlab.tensor([[1.0, 2.0], [float("nan"), 0.5]])  # one bad sample
for step in range(3):
    loss = (data * w).sum()
    loss.backward()
print("nan: done")
"""

CRASH = """\
import gradlab

x = gradlab.tensor([1.0, 2.0], requires_grad=True)
(x * 2).sum().backward()
print("crash: about to fail")
raise ValueError("crash: the script's own error")
"""

LONG = """\
import gradlab

w = gradlab.tensor([1.0, 2.0], requires_grad=True)
for step in range(300):
    (w * w).sum().backward()
print("long: done", step)
"""



def synchronously(test):
    """Run an async test with asyncio.run (no async plugin is needed for pytest)."""
    @functools.wraps(test)
    def run(*args, **kwargs):
        asyncio.run(test(*args, **kwargs))
    return run


def write(folder: Path, name: str, text: str) -> str:
    path = folder / f"{name}.py"
    path.write_text(text)
    return str(path)


async def wait_until(pilot, predicate, what: str, timeout: float = 15.0) -> None:
    """Let the app run until ``predicate()`` holds (checked every 50 ms)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pilot.pause(0.05)
        if predicate():
            return
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def notes(app) -> list[str]:
    """The messages of the app's notifications, oldest first."""
    return [n.message for n in app._notifications]


async def noted(pilot, app, text: str, what: str, timeout: float = 15.0) -> str:
    """Wait for a notification containing ``text`` and return it.

    ``notify`` posts a message, so a note made in the same call that set some
    state the test waited on may still be queued when that wait ends.
    """
    await wait_until(pilot, lambda: any(text in n for n in notes(app)), what, timeout)
    return next(n for n in reversed(notes(app)) if text in n)


def caught_up(screen) -> bool:
    """The screen drew the session's latest state."""
    snap = screen.snapshot
    return snap is not None and snap.version == screen.session.version


async def paused_after(pilot, screen, seq_before, what: str) -> None:
    """Wait until the screen shows the run paused at a position other than ``seq_before``."""
    def moved() -> bool:
        snap = screen.snapshot
        return (caught_up(screen) and snap.status == "paused" and snap.position is not None
                and snap.position.seq != seq_before)
    await wait_until(pilot, moved, what)


async def step(pilot, screen, key: str, what: str) -> None:
    """Press ``key`` and wait until the run pauses somewhere new."""
    before = screen.snapshot.position.seq
    await pilot.press(key)
    await paused_after(pilot, screen, before, what)


def debugger(app) -> DebuggerScreen:
    screen = app.screen
    assert isinstance(screen, DebuggerScreen), f"expected the debugger, got {screen!r}"
    return screen


@pytest.fixture
def runs():
    """Sessions the test started; afterwards every script must have ended (no stray thread)."""
    made: list[Session] = []

    def factory() -> Session:
        made.append(Session())
        return made[-1]

    yield factory
    for session in made:
        session.detach("stop")
        assert session.wait_finished(10), f"{session.run} still running after the test"


# --- home ------------------------------------------------------------------------------------
@synchronously
async def test_home_starts_the_demo_with_one_keypress(runs):
    app = GradlabApp(session_factory=runs)
    async with app.run_test(size=(80, 24)) as pilot:
        assert isinstance(app.screen, HomeScreen)
        assert app.focused is not None and app.focused.id == "demo"
        await pilot.press("enter")
        screen = debugger(app)
        assert screen.script == demo_script() and screen.args == DEMO_ARGS
        await paused_after(pilot, screen, None, "the demo paused at its start")
        assert screen.session.run.script == os.path.abspath(demo_script())
        assert "paused" in str(screen.query_one("#status").content)


@synchronously
async def test_home_lessons_and_open_a_script(tmp_path, runs, monkeypatch):
    monkeypatch.setenv("GRADLAB_LESSONS_DIR", str(tmp_path / "work"))
    monkeypatch.setenv("GRADLAB_DATA_DIR", str(tmp_path / "data"))
    script = write(tmp_path, "tiny", TINY)
    app = GradlabApp(session_factory=runs)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("l")
        assert isinstance(app.screen, LessonListScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("o")
        assert app.focused.id == "script-path"
        await pilot.press(*"nope.py", "enter")  # a path that is not there: stays home
        assert isinstance(app.screen, HomeScreen)
        app.screen.query_one("#script-path").value = script
        app.screen.query_one("#script-args").value = "--flag 'two words'"
        await pilot.press("enter")
        screen = debugger(app)
        assert screen.script == script and screen.args == ("--flag", "two words")


# --- stepping ----------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [(80, 24), (150, 45)])
@synchronously
async def test_stepping_a_whole_backward_pass_node_by_node(tmp_path, runs, size):
    app = GradlabApp(script=write(tmp_path, "tiny", TINY), session_factory=runs)
    async with app.run_test(size=size) as pilot:
        screen = debugger(app)
        assert screen.has_class("-wide") == (size[0] >= 110)
        await paused_after(pilot, screen, None, "the pause at the start")
        # the first backward node: the forward pass is all recorded by then
        await step(pilot, screen, "b", "the first backward")
        ops = [n.key for n in screen.snapshot.graph.nodes if n.kind == "op"]
        assert len(ops) >= 4  # linear, relu, linear, pow, mean
        seen, statuses = [], []
        for _ in ops:
            snap = screen.snapshot
            assert snap.position.event == "backward", snap.position
            assert snap.graph.node(snap.graph.current).state == "backward"
            seen.append(snap.graph.current)
            statuses.append(str(screen.query_one("#status").content))
            if len(seen) < len(ops):
                await step(pilot, screen, "b", "the next backward node")
        assert sorted(seen) == sorted(ops)  # every op's backward, one per press
        assert len(set(statuses)) == len(statuses)  # the status line moved each time
        assert all(n.state == "backward" for n in screen.snapshot.graph.nodes if n.kind == "op")
        await step(pilot, screen, "o", "the optimizer's first update")
        assert screen.snapshot.position.event == "update"
        before = screen.snapshot.position.seq
        await pilot.click("#btn-op")  # the toolbar: the mouse steps too
        await paused_after(pilot, screen, before, "the next op, by mouse")
        assert screen.snapshot.position.event in ("op", "iteration")  # the next one's first op



@synchronously
async def test_x_toggles_a_breakpoint_on_the_selected_op(tmp_path, runs):
    app = GradlabApp(script=write(tmp_path, "tiny", TINY), session_factory=runs)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = debugger(app)
        await paused_after(pilot, screen, None, "the pause at the start")
        await step(pilot, screen, "b", "the first backward node")  # the forward recorded
        relu = next(n for n in screen.snapshot.graph.nodes if n.label == "relu")
        screen.query_one("#graph").post_message(
            screen.query_one("#graph").NodeSelected(screen.query_one("#graph"), relu.key))
        await wait_until(pilot, lambda: screen.selected == relu.key, "the selection")
        await pilot.press("x")
        assert [b.describe() for b in screen.session.breakpoints] == \
            list(screen.session.snapshot().breakpoints)
        assert "relu" in screen.session.snapshot().breakpoints[0]
        await step(pilot, screen, "c", "the relu breakpoint")
        assert screen.snapshot.graph.current is not None
        assert screen.snapshot.graph.node(screen.snapshot.graph.current).label == "relu"
        await pilot.press("x")  # again: removed
        assert screen.session.breakpoints == []


@synchronously
async def test_break_on_nan(tmp_path, runs):
    app = GradlabApp(script=write(tmp_path, "nan", NAN), session_factory=runs)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = debugger(app)
        await paused_after(pilot, screen, None, "the pause at the start")
        await pilot.press("N")
        assert screen.session.break_on_nonfinite
        await step(pilot, screen, "c", "the NaN break")
        reason = screen.snapshot.pause_reason
        assert "nan" in reason.lower(), reason
        assert reason in str(screen.query_one("#status").content)


@synchronously
async def test_time_travel_over_recorded_iterations(tmp_path, runs):
    app = GradlabApp(script=write(tmp_path, "tiny", TINY), session_factory=runs)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = debugger(app)
        await paused_after(pilot, screen, None, "the pause at the start")
        for _ in range(2):
            await step(pilot, screen, "i", "next iteration")
        live = screen.snapshot.iteration
        assert [g.iteration for g in screen.snapshot.history][-1] == live - 1
        await pilot.press("left_square_bracket")
        assert screen.viewing == live - 1
        assert f"viewing iteration {live - 1}" in str(screen.query_one("#status").content)
        await pilot.press("right_square_bracket")
        assert screen.viewing is None


@synchronously
async def test_the_time_tab_shows_where_an_iteration_spent_its_time(tmp_path, runs):
    app = GradlabApp(script=write(tmp_path, "tiny", TINY), session_factory=runs)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = debugger(app)
        await paused_after(pilot, screen, None, "the pause at the start")
        for _ in range(2):
            await step(pilot, screen, "i", "next iteration")
        await pilot.press("left_square_bracket")  # the last whole iteration, backward included
        screen.query_one("#tabs").active = "tab-time"
        await pilot.pause()
        text = screen.query_one("#time").text
        rows = {line.split()[0]: line.split() for line in text.splitlines()[2:] if line.strip()}
        assert rows["linear"][1] == "2" and rows["relu"][1] == "1"
        assert float(rows["linear"][2]) > 0 and float(rows["linear"][3]) > 0  # fwd, bwd ms
        assert text.startswith(f"iteration {screen.viewing}")


# --- the image, errors, quitting -------------------------------------------------------------
@synchronously
async def test_g_saves_the_graph_as_svg(tmp_path, runs, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = GradlabApp(script=write(tmp_path, "tiny", TINY), session_factory=runs)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = debugger(app)
        await paused_after(pilot, screen, None, "the pause at the start")
        await step(pilot, screen, "b", "a backward node")
        await pilot.press("g")
        image = tmp_path / f"gradlab-graph-{screen.snapshot.graph.iteration}.svg"
        saved = await noted(pilot, app, "Saved the graph", "the saved note")
        text = image.read_text()
        assert text.lstrip().startswith("<?xml") and "<svg" in text
        assert "linear" in text and "relu" in text
        assert str(image) in saved


@synchronously
async def test_a_crashing_script_shows_its_traceback_and_the_app_stays(tmp_path, runs):
    app = GradlabApp(script=write(tmp_path, "crash", CRASH), session_factory=runs,
                     pause_at_start=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TracebackScreen), "traceback")
        text = str(app.screen.query_one("#traceback-text").content)
        assert "ValueError: crash: the script's own error" in text
        assert "crash.py" in text and "runpy" not in text
        await pilot.press("escape")
        screen = debugger(app)
        assert app.is_running and screen.snapshot.status == "failed"
        await pilot.press("n")  # nothing left to step: said, not raised
        await noted(pilot, app, "nothing left to step", "the note that nothing is left")


@synchronously
async def test_quit_stops_the_script(tmp_path, runs):
    app = GradlabApp(script=write(tmp_path, "long", LONG), session_factory=runs)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = debugger(app)
        await paused_after(pilot, screen, None, "the pause at the start")
        await pilot.press("q")
        assert isinstance(app.screen, QuitScreen)
        await pilot.press("escape")  # cancel: still debugging
        assert app.screen is screen and app.is_running
        await pilot.press("q")
        await pilot.click("#stop")
    run = screen.session.run
    assert run.wait(10) and run.status == "stopped"
    assert app.return_value == AppResult()


@synchronously
async def test_quit_lets_the_script_run_on(tmp_path, runs, capsys):
    app = GradlabApp(script=write(tmp_path, "long", LONG), session_factory=runs)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = debugger(app)
        await paused_after(pilot, screen, None, "the pause at the start")
        await pilot.press("q")
        await pilot.click("#run_on")
    assert app.return_value.run_on is screen.session
    run = screen.session.run
    screen.session.detach("continue")  # what the command line does once it took over
    assert run.wait(20) and run.status == "finished"
    # Once the app has gone, what the script prints goes straight to the terminal.
    assert "long: done 299" in run.output + capsys.readouterr().out


@synchronously
async def test_quit_without_a_running_script_exits_at_once(tmp_path, runs):
    app = GradlabApp(script=write(tmp_path, "crash", CRASH), session_factory=runs,
                     pause_at_start=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TracebackScreen), "traceback")
        await pilot.press("escape", "q")
        await wait_until(pilot, lambda: not app.is_running, "the app to exit")


@synchronously
async def test_help_theme_and_palette(tmp_path, runs):
    app = GradlabApp(session_factory=runs)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.theme == "textual-dark"
        await pilot.press("t")
        assert app.theme == "textual-light"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)
        app.open_debugger(write(tmp_path, "tiny", TINY))
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Step: next backward (b)" in titles and "Break on NaN/Inf (N)" in titles
