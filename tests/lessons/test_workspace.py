"""lessons.workspace: the student's working copies, never overwritten, reset with a backup."""

from __future__ import annotations

import os

import pytest

from lessons import workspace
from lessons.catalog import read_lesson
from lessons.workspace import (
    ensure_working_copy,
    reset_working_copy,
    working_copy,
    workspace_dir,
    write_atomically,
)
from tests.lessons.fakes import write_lesson


@pytest.fixture
def lesson(tmp_path):
    return read_lesson(write_lesson(tmp_path / "lessons", "03_fake"))


def test_the_workspace_is_gradlab_lessons_dir(tmp_path, lesson):
    assert workspace_dir() == tmp_path / "workspace"
    assert working_copy(lesson) == tmp_path / "workspace" / "03_fake.py"
    assert not working_copy(lesson).exists()  # asking for the path makes nothing


@pytest.mark.parametrize("unset", [True, False])
def test_the_workspace_defaults_to_the_home(tmp_path, monkeypatch, unset):
    if unset:
        monkeypatch.delenv("GRADLAB_LESSONS_DIR")
    else:
        monkeypatch.setenv("GRADLAB_LESSONS_DIR", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert workspace_dir() == tmp_path / "home" / "gradlab-lessons"


def test_a_tilde_in_the_workspace_is_the_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GRADLAB_LESSONS_DIR", "~/my-lessons")
    assert workspace_dir() == tmp_path / "home" / "my-lessons"


def test_the_first_working_copy_is_the_starter(lesson):
    path = ensure_working_copy(lesson)
    assert path == working_copy(lesson)
    assert path.read_bytes() == lesson.starter.read_bytes()
    assert sorted(os.listdir(path.parent)) == ["03_fake.py"]  # no temporary files left


def test_a_working_copy_is_never_overwritten(lesson):
    path = ensure_working_copy(lesson)
    path.write_text("# my own work\n")
    assert ensure_working_copy(lesson) == path
    assert path.read_text() == "# my own work\n"
    lesson.starter.write_text("# a newer starter\n")
    ensure_working_copy(lesson)
    assert path.read_text() == "# my own work\n"


def test_reset_backs_up_then_restores_the_starter(lesson, tmp_path):
    path = ensure_working_copy(lesson)
    path.write_text("# my own work\n")
    backup = reset_working_copy(lesson)
    assert path.read_bytes() == lesson.starter.read_bytes()
    assert backup.parent == tmp_path / "workspace" / "backups"
    assert backup.name.startswith("03_fake.") and backup.suffix == ".py"
    assert backup.read_text() == "# my own work\n"


def test_reset_without_a_copy_makes_one(lesson):
    assert reset_working_copy(lesson) is None
    assert working_copy(lesson).read_bytes() == lesson.starter.read_bytes()
    assert not (working_copy(lesson).parent / "backups").exists()


def test_two_resets_in_one_second_keep_both_copies(lesson, monkeypatch):
    monkeypatch.setattr(workspace.time, "strftime", lambda fmt: "20300101-120000")
    path = ensure_working_copy(lesson)
    backups = []
    for k in range(3):
        path.write_text(f"# attempt {k}\n")
        backups.append(reset_working_copy(lesson))
    assert [b.name for b in backups] == ["03_fake.20300101-120000.py",
                                         "03_fake.20300101-120000-1.py",
                                         "03_fake.20300101-120000-2.py"]
    assert [b.read_text() for b in backups] == [f"# attempt {k}\n" for k in range(3)]


def test_two_quick_resets_really_in_a_row(lesson):
    path = ensure_working_copy(lesson)
    path.write_text("# first\n")
    first = reset_working_copy(lesson)
    path.write_text("# second\n")
    second = reset_working_copy(lesson)
    assert first != second
    assert (first.read_text(), second.read_text()) == ("# first\n", "# second\n")


def test_write_atomically(tmp_path):
    path = tmp_path / "deep" / "er" / "file.txt"
    write_atomically(path, b"one")
    write_atomically(path, b"two")
    assert path.read_bytes() == b"two"
    assert os.listdir(path.parent) == ["file.txt"]


def test_a_failed_atomic_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "file.txt"
    write_atomically(path, b"old")

    def crash(src, dst):
        raise OSError("disk full")

    with monkeypatch.context() as patched, pytest.raises(OSError, match="disk full"):
        patched.setattr(workspace.os, "replace", crash)
        write_atomically(path, b"new")
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["file.txt"]


def test_a_working_copy_gets_the_usual_file_permissions(tmp_path):
    import os

    from lessons.workspace import write_atomically

    old = os.umask(0o022)
    try:
        target = tmp_path / "copy.py"
        write_atomically(target, b"x = 1\n")
    finally:
        os.umask(old)
    assert target.stat().st_mode & 0o777 == 0o644
