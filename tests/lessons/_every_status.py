"""Shared by the grading tests: a lesson whose tasks end in every status, and a student's file."""

from __future__ import annotations

from lessons.catalog import read_lesson
from tests.lessons.fakes import student_file, write_lesson

STATUS_TOML = '''\
title = "Every status"
minutes = 10
goals = ["see every status"]
panels = ["graph"]
''' + "".join(f'[[tasks]]\nname = "{name}"\ntitle = "{name.title()} task"\n'
              for name in ("good", "bad", "todo", "crash", "gpu", "chatty"))

STATUS_CHECKS = '''\
from lessons.expect import check, expect, expect_equal, skip


@check("good")
def good(student, rng):
    expect(True, "it ran", "yes", "yes")
    expect_equal(student.good(), 1, "good() is one")


@check("bad")
def bad(student, rng):
    expect_equal(student.bad(), 1, "bad() is one")


@check("todo")
def todo(student, rng):
    student.todo()


@check("crash")
def crash(student, rng):
    student.crash(1)


@check("gpu")
def gpu(student, rng):
    skip("needs a CUDA GPU")


@check("chatty")
def chatty(student, rng):
    expect_equal(student.chatty(), 1, "chatty() is one")
'''

STATUS_STUDENT = '''\
print("loading the student's file")


def good():
    return 1


def bad():
    return 2


def todo():
    raise NotImplementedError("todo")


def crash(x):
    y = x + 1
    return y / 0


def chatty():
    print("hello from chatty")
    return 2
'''


def _line_of(source: str, text: str) -> int:
    """The 1-based line of ``text`` in ``source``."""
    return next(k for k, line in enumerate(source.splitlines(), 1) if text in line)


def every_status_lesson(tmp_path):
    """(the every-status lesson, the student's file)."""
    lesson = read_lesson(write_lesson(tmp_path / "lessons", "05_statuses", toml=STATUS_TOML,
                                      checks=STATUS_CHECKS, starter=STATUS_STUDENT,
                                      solution=STATUS_STUDENT))
    return lesson, student_file(tmp_path, STATUS_STUDENT)
