"""lessons.progress: what a student has done, in one JSON file that survives damage."""

from __future__ import annotations

import json
import os
import warnings

import pytest

from lessons import progress, workspace
from lessons.catalog import LessonError, read_lesson
from lessons.grading import Report, TaskResult
from tests.lessons.fakes import write_lesson


@pytest.fixture
def lesson(tmp_path):
    """The fake lesson: tasks add (2 hints) and double (3 hints)."""
    return read_lesson(write_lesson(tmp_path / "lessons", "04_fake"))


def _report(lesson, *statuses: str) -> Report:
    return Report(lesson.number, lesson.title, "mine.py", 0,
                  tuple(TaskResult(t.name, t.title, s) for t, s in zip(lesson.tasks, statuses)))


def _saved(tmp_path) -> dict:
    return json.loads((tmp_path / "data" / "progress.json").read_text())


# --- where the file is ---------------------------------------------------------------------
def test_the_file_is_in_gradlab_data_dir(tmp_path):
    assert progress.progress_file() == tmp_path / "data" / "progress.json"


def test_the_file_defaults_to_xdg_data_home(tmp_path, monkeypatch):
    monkeypatch.delenv("GRADLAB_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert progress.progress_file() == tmp_path / "xdg" / "gradlab" / "progress.json"


def test_the_file_defaults_to_local_share(tmp_path, monkeypatch):
    monkeypatch.delenv("GRADLAB_DATA_DIR")
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert progress.progress_file() == tmp_path / "home" / ".local" / "share" / "gradlab" / \
        "progress.json"


@pytest.mark.parametrize("empty", ["", None])
def test_an_empty_data_dir_means_the_default(tmp_path, monkeypatch, empty):
    if empty is None:
        monkeypatch.delenv("GRADLAB_DATA_DIR")
    else:
        monkeypatch.setenv("GRADLAB_DATA_DIR", empty)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert progress.progress_file().parent == tmp_path / "xdg" / "gradlab"


def test_a_tilde_in_the_data_dir_is_the_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GRADLAB_DATA_DIR", "~/gradlab-data")
    assert progress.progress_file() == tmp_path / "home" / "gradlab-data" / "progress.json"


def test_nothing_saved_yet(lesson):
    assert progress.load() == {}
    assert progress.state(lesson, {}) == "new"
    assert progress.passed_tasks(lesson, {}) == 0


# --- recording check runs ------------------------------------------------------------------
def test_a_run_is_recorded(lesson, tmp_path):
    saved = progress.record_report(lesson, _report(lesson, "passed", "failed"))
    entry = saved["04_fake"]
    assert entry["tasks"] == {"add": "passed", "double": "failed"}
    assert entry["completed"] is None and entry["hints"] == {}
    assert isinstance(entry["checked"], str)
    assert progress.load() == saved
    assert _saved(tmp_path) == {"version": 1, "lessons": saved}
    assert progress.state(lesson, saved) == "started"
    assert progress.passed_tasks(lesson, saved) == 1


def test_a_lesson_stays_completed(lesson, monkeypatch):
    monkeypatch.setattr(progress.time, "strftime", lambda fmt: "2030-01-02T03:04:05")
    progress.record_report(lesson, _report(lesson, "todo", "todo"))
    saved = progress.record_report(lesson, _report(lesson, "passed", "passed"))
    assert saved["04_fake"]["completed"] == "2030-01-02T03:04:05"
    assert progress.state(lesson, saved) == "done"
    monkeypatch.setattr(progress.time, "strftime", lambda fmt: "2031-01-01T00:00:00")
    saved = progress.record_report(lesson, _report(lesson, "passed", "error"))
    entry = saved["04_fake"]
    assert entry["completed"] == "2030-01-02T03:04:05"  # the first time it passed
    assert entry["checked"] == "2031-01-01T00:00:00"
    assert entry["tasks"] == {"add": "passed", "double": "error"}
    assert progress.state(lesson, saved) == "done"
    assert progress.passed_tasks(lesson, saved) == 1
    saved = progress.record_report(lesson, _report(lesson, "passed", "passed"))
    assert saved["04_fake"]["completed"] == "2030-01-02T03:04:05"  # passing again keeps it


def test_a_report_that_does_not_pass_does_not_complete(lesson):
    for statuses in [("passed", "todo"), ("skipped", "skipped")]:
        saved = progress.record_report(lesson, _report(lesson, *statuses))
        assert saved["04_fake"]["completed"] is None
    with_load_error = Report(lesson.number, lesson.title, "f", 0, (), load_error="no such file")
    assert progress.record_report(lesson, with_load_error)["04_fake"]["completed"] is None


def test_passed_tasks_counts_only_the_lessons_tasks(lesson):
    saved = {"04_fake": {"tasks": {"add": "passed", "renamed_long_ago": "passed",
                                   "double": "failed"}, "completed": None}}
    assert progress.passed_tasks(lesson, saved) == 1


def test_lessons_are_kept_apart(lesson, tmp_path):
    other = read_lesson(write_lesson(tmp_path / "lessons", "05_other"))
    progress.record_report(lesson, _report(lesson, "passed", "passed"))
    saved = progress.record_report(other, _report(other, "failed", "todo"))
    assert progress.state(lesson, saved) == "done" and progress.state(other, saved) == "started"
    assert sorted(saved) == ["04_fake", "05_other"]


def test_each_change_reads_the_file_again(lesson, tmp_path):
    """The app and `gradlab check` in another terminal must not undo each other."""
    progress.record_report(lesson, _report(lesson, "failed", "failed"))
    data = _saved(tmp_path)
    data["lessons"]["09_elsewhere"] = {"tasks": {"x": "passed"}, "completed": "then"}
    (tmp_path / "data" / "progress.json").write_text(json.dumps(data))
    saved = progress.record_report(lesson, _report(lesson, "passed", "failed"))
    assert saved["09_elsewhere"] == {"tasks": {"x": "passed"}, "completed": "then"}


def test_an_explicit_path(lesson, tmp_path):
    path = tmp_path / "elsewhere" / "p.json"
    progress.record_report(lesson, _report(lesson, "passed", "passed"), path)
    assert progress.reveal_hint(lesson, "add", path) == 1
    assert progress.state(lesson, progress.load(path)) == "done"
    assert not (tmp_path / "data").exists()


# --- hints ---------------------------------------------------------------------------------
def test_hints_are_counted_and_capped(lesson):
    assert [progress.reveal_hint(lesson, "add") for _ in range(4)] == [1, 2, 2, 2]
    assert [progress.reveal_hint(lesson, "double") for _ in range(4)] == [1, 2, 3, 3]
    saved = progress.load()
    assert saved["04_fake"]["hints"] == {"add": 2, "double": 3}
    assert progress.state(lesson, saved) == "started"  # a hint is a start
    assert progress.passed_tasks(lesson, saved) == 0


def test_hints_survive_check_runs(lesson):
    progress.reveal_hint(lesson, "double")
    progress.record_report(lesson, _report(lesson, "passed", "passed"))
    assert progress.reveal_hint(lesson, "double") == 2


def test_a_hint_for_a_task_that_is_not_there(lesson):
    with pytest.raises(LessonError, match="has no task 'triple'"):
        progress.reveal_hint(lesson, "triple")


def test_a_task_without_hints(tmp_path):
    toml = ('title = "T"\nminutes = 10\ngoals = ["g"]\npanels = ["graph"]\n'
            '[[tasks]]\nname = "add"\ntitle = "A"\n[[tasks]]\nname = "double"\ntitle = "D"\n')
    lesson = read_lesson(write_lesson(tmp_path / "lessons", toml=toml))
    assert progress.reveal_hint(lesson, "add") == 0


# --- damage --------------------------------------------------------------------------------
DAMAGED = [
    (b"{not json", "can't read it"),
    (b"\xff\xfe\x00garbage", "can't read it"),
    (b"[1, 2]", "it is not a gradlab progress file"),
    (b'{"version": 1}', "it is not a gradlab progress file"),
    (b'{"version": 1, "lessons": []}', "it is not a gradlab progress file"),
    (b'{"version": 1, "lessons": {"04_fake": null}}', "it is not a gradlab progress file"),
    (b'{"version": 1, "lessons": {"04_fake": {"tasks": ["add"]}}}',
     "it is not a gradlab progress file"),
    (b'{"version": 1, "lessons": {"04_fake": {"hints": 3}}}', "it is not a gradlab progress"),
]


@pytest.mark.parametrize(("content", "why"), DAMAGED)
def test_a_damaged_file_is_set_aside(lesson, tmp_path, content, why):
    path = tmp_path / "data" / "progress.json"
    path.parent.mkdir()
    path.write_bytes(content)
    with pytest.warns(UserWarning, match=why) as caught:
        saved = progress.record_report(lesson, _report(lesson, "passed", "failed"))
    assert "started afresh" in str(caught[0].message)
    assert saved["04_fake"]["tasks"] == {"add": "passed", "double": "failed"}
    (aside,) = path.parent.glob("progress.json.damaged-*")
    assert aside.read_bytes() == content  # nothing lost
    assert f"moved it to {aside}" in str(caught[0].message)
    assert progress.load() == saved  # the new file is whole


def test_damage_twice_in_one_second_keeps_both(lesson, tmp_path, monkeypatch):
    monkeypatch.setattr(progress.time, "strftime", lambda fmt: "20300101-000000")
    path = tmp_path / "data" / "progress.json"
    path.parent.mkdir()
    for content in (b"first damage", b"second damage"):
        path.write_bytes(content)
        with pytest.warns(UserWarning, match="can't read it"):
            assert progress.load() == {}
    kept = sorted(p.name for p in path.parent.iterdir())
    assert kept == ["progress.json.damaged-20300101-000000",
                    "progress.json.damaged-20300101-000000-1"]
    assert {p.read_bytes() for p in path.parent.iterdir()} == {b"first damage",
                                                               b"second damage"}


def test_a_file_that_cannot_be_moved_is_left_alone(lesson, tmp_path, monkeypatch):
    path = tmp_path / "data" / "progress.json"
    path.parent.mkdir()
    path.write_text("{broken")

    def refuse(*args):
        raise PermissionError("read-only")

    monkeypatch.setattr(progress.os, "replace", refuse)
    with pytest.warns(UserWarning, match="left it where it is and started afresh"):
        assert progress.load() == {}
    assert path.read_text() == "{broken"


def test_a_good_file_loads_without_warnings(lesson):
    progress.record_report(lesson, _report(lesson, "passed", "failed"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert progress.load()["04_fake"]["tasks"]["add"] == "passed"


# --- atomic writes -------------------------------------------------------------------------
def test_writes_leave_no_temporary_files(lesson, tmp_path):
    for _ in range(3):
        progress.record_report(lesson, _report(lesson, "passed", "failed"))
        progress.reveal_hint(lesson, "add")
    assert os.listdir(tmp_path / "data") == ["progress.json"]


def test_a_write_that_fails_leaves_the_old_file_whole(lesson, tmp_path, monkeypatch):
    progress.record_report(lesson, _report(lesson, "passed", "failed"))
    before = (tmp_path / "data" / "progress.json").read_bytes()

    def crash(src, dst):
        raise OSError("disk full")

    with monkeypatch.context() as patched, pytest.raises(OSError, match="disk full"):
        patched.setattr(workspace.os, "replace", crash)
        progress.record_report(lesson, _report(lesson, "passed", "passed"))
    assert (tmp_path / "data" / "progress.json").read_bytes() == before
    assert os.listdir(tmp_path / "data") == ["progress.json"]
    assert progress.load()["04_fake"]["tasks"]["double"] == "failed"
