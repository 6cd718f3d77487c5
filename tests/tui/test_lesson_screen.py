"""Pilot tests of the lesson screen: a student's flows through lesson 1 in the app.

Each test gets its own working-copy folder and progress file (environment
variables pointing into tmp_path), so nothing touches the real ~/gradlab-lessons.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("textual")

from lessons import progress  # noqa: E402
from lessons.catalog import get_lesson  # noqa: E402
from lessons.workspace import working_copy  # noqa: E402
from tests.tui.test_app import noted, paused_after, synchronously, wait_until  # noqa: E402
from tui.app import GradlabApp  # noqa: E402
from tui.screens.confirm import ConfirmScreen  # noqa: E402
from tui.screens.home import HomeScreen  # noqa: E402
from tui.screens.lesson import LessonScreen  # noqa: E402
from tui.screens.lessons import LessonListScreen  # noqa: E402
from tui.screens.traceback import TracebackScreen  # noqa: E402
from tui.widgets.tasks import tasks_markup  # noqa: E402

pytestmark = pytest.mark.timeout(90)

LESSON = get_lesson(1)


@pytest.fixture
def student(tmp_path, monkeypatch):
    """A student with no files and no progress yet."""
    monkeypatch.setenv("GRADLAB_LESSONS_DIR", str(tmp_path / "work"))
    monkeypatch.setenv("GRADLAB_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


def lesson_screen(app) -> LessonScreen:
    screen = app.screen
    assert isinstance(screen, LessonScreen), f"expected the lesson screen, got {screen!r}"
    return screen


def tasks_text(screen) -> str:
    return str(screen.query_one("#tasks-text").content)


async def checked(pilot, screen, what: str) -> None:
    await wait_until(pilot, lambda: screen.report is not None and not screen.checking, what,
                     timeout=60)


@pytest.mark.parametrize("size", [(80, 24), (150, 45)])
@synchronously
async def test_lesson_opens_beside_the_debugger_on_the_working_copy(student, runs, size):
    app = GradlabApp(lesson=1, session_factory=runs)
    async with app.run_test(size=size) as pilot:
        screen = lesson_screen(app)
        path = working_copy(LESSON)
        assert path.read_text() == LESSON.starter.read_text()  # made from the starter
        await paused_after(pilot, screen, None, "the student's file paused at its start")
        assert screen.session.run.script == str(path.resolve())
        assert "Lesson 1 · A derivative is a slope" in str(
            screen.query_one("#lesson-title").content)
        # Only the lesson's panels: graph, inspector and log (memory etc. are hidden).
        tabs = screen.query_one("#tabs")
        hidden = {pane.id for pane in tabs.query("TabPane") if not tabs.get_tab(pane.id).display}
        assert {"tab-memory", "tab-optimizer", "tab-training"} <= hidden
        assert "tab-log" not in hidden and tabs.active == "tab-inspector"
        narrow = size[0] < 110
        assert screen.query_one("#debug-pane").display is not narrow
        assert screen.query_one("#lesson-pane").display


@synchronously
async def test_check_hint_and_progress(student, runs):
    app = GradlabApp(lesson=1, session_factory=runs)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = lesson_screen(app)
        await pilot.press("k")
        assert screen.query_one("#lesson-tabs").active == "tab-tasks"
        await checked(pilot, screen, "the checks of the untouched starter")
        assert [r.status for r in screen.report.results] == ["todo"] * 3
        assert "0 of 3 pass" in tasks_text(screen) and "TODO" in tasks_text(screen)
        saved = progress.load()[LESSON.name]
        assert saved["tasks"] == dict.fromkeys(["central_difference", "autograd_slope",
                                                "tangent_line"], "todo")
        # Hints come one at a time, for the first task not passing, and are remembered.
        first = LESSON.tasks[0]
        for n in range(1, len(first.hints) + 1):
            await pilot.press("h")
            assert screen.hints_open[first.name] == n
            assert first.hints[n - 1] in tasks_text(screen).replace("\n", " ")
        assert progress.load()[LESSON.name]["hints"][first.name] == len(first.hints)
        await pilot.press("h")
        last = await noted(pilot, app, "last hint", "the note that no hint is left")
        assert str(LESSON.solution) in last


@synchronously
async def test_a_save_reruns_the_checks_and_the_file(student, runs):
    app = GradlabApp(lesson=1, session_factory=runs)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = lesson_screen(app)
        await paused_after(pilot, screen, None, "the first run paused at its start")
        first_session = screen.session
        working_copy(LESSON).write_text(LESSON.solution.read_text())  # the student saves
        await wait_until(pilot, lambda: screen.report is not None and screen.report.passed,
                         "the checks to pass after the save", timeout=60)
        assert screen.session is not first_session  # the file runs again, from the top
        assert "every task passes" in tasks_text(screen)
        await noted(pilot, app, "Every task of lesson 1 passes", "the well-done note")
        assert progress.state(LESSON, progress.load()) == "done"
        # Watch mode off: another save changes nothing.
        await pilot.press("w")
        session = screen.session
        working_copy(LESSON).write_text(LESSON.starter.read_text())
        await pilot.pause(2.5)
        assert screen.session is session and screen.report.passed


@synchronously
async def test_reset_keeps_the_old_file_in_backups(student, runs):
    app = GradlabApp(lesson=1, session_factory=runs)
    async with app.run_test(size=(150, 45)) as pilot:
        assert lesson_screen(app).watching
        await pilot.press("w")  # no watching: the reset itself restarts the run
        path = working_copy(LESSON)
        path.write_text("# my attempt\n")
        await pilot.press("R")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")  # cancel: nothing changes
        assert path.read_text() == "# my attempt\n"
        await pilot.press("R")
        await pilot.press("y")
        assert path.read_text() == LESSON.starter.read_text()
        backups = list((path.parent / "backups").iterdir())
        assert [b.read_text() for b in backups] == ["# my attempt\n"]
        await noted(pilot, app, str(backups[0]), "the note naming the backup")


@synchronously
async def test_a_todo_in_the_run_is_a_note_not_a_traceback(student, runs):
    app = GradlabApp(lesson=1, session_factory=runs)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = lesson_screen(app)
        await paused_after(pilot, screen, None, "the starter paused at its start")
        await pilot.press("c")  # its __main__ calls central_difference: a TODO
        await wait_until(pilot, lambda: screen.snapshot.status == "failed",
                         "the starter to stop at its TODO")
        note = await noted(pilot, app, "stopped at a TODO", "the note on the TODO")
        assert "central_difference" in note
        await pilot.pause(0.3)  # time enough for a traceback screen, which must not come
        assert not isinstance(app.screen, TracebackScreen)


@synchronously
async def test_narrow_terminal_switches_between_lesson_and_debugger(student, runs):
    app = GradlabApp(lesson=1, session_factory=runs)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = lesson_screen(app)
        await paused_after(pilot, screen, None, "the pause at the start")
        assert not screen.query_one("#debug-pane").display
        await pilot.press("l")
        assert screen.query_one("#debug-pane").display
        assert not screen.query_one("#lesson-pane").display
        await pilot.press("l")
        assert screen.query_one("#lesson-pane").display
        before = screen.snapshot.position.seq
        await pilot.press("n")  # a step shows the debugger
        await paused_after(pilot, screen, before, "one op")
        assert screen.query_one("#debug-pane").display
        await pilot.press("k")  # checking shows the tasks
        assert screen.query_one("#lesson-pane").display
        await checked(pilot, screen, "the checks")


@synchronously
async def test_home_lists_the_lessons_and_opens_the_next_one(student, runs):
    app = GradlabApp(session_factory=runs)
    async with app.run_test(size=(100, 30)) as pilot:
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("l")
        assert isinstance(app.screen, LessonListScreen)
        table = app.screen.query_one("#lesson-table")
        assert table.row_count >= 16
        assert table.get_row_at(0)[1:3] == ["1", LESSON.title]
        await pilot.press("enter")
        screen = lesson_screen(app)
        assert screen.lesson.number == 1


def test_tasks_markup_before_and_after_a_check():
    before = tasks_markup(LESSON, None, {})
    assert "k checks your file" in before
    assert all(task.title in before for task in LESSON.tasks)
    assert "hint 1" not in before
    with_hint = tasks_markup(LESSON, None, {"autograd_slope": 2})
    assert LESSON.tasks[1].hints[1] in with_hint and LESSON.tasks[1].hints[2] not in with_hint
    from lessons.grading import run_checks

    report = run_checks(LESSON, LESSON.solution, seed=5)
    after = tasks_markup(LESSON, report, {})
    assert "every task passes" in after and "seed 5" in after
    assert after.count("expected") == len(LESSON.tasks)  # the last comparison of each


def test_progress_file_is_json_a_person_can_read(student):
    from lessons.grading import run_checks

    progress.record_report(LESSON, run_checks(LESSON, LESSON.starter, seed=1))
    raw = json.loads(progress.progress_file().read_text())
    assert raw["version"] == 1 and raw["lessons"][LESSON.name]["completed"] is None
