"""lessons.grading's Report: when it passes, its counts, its JSON round trip and its text."""

from __future__ import annotations

import json
import textwrap

import pytest

from lessons.catalog import read_lesson
from lessons.expect import Comparison
from lessons.grading import SYMBOLS, Report, TaskResult, run_checks
from tests.lessons._every_status import STATUS_STUDENT, _line_of, every_status_lesson
from tests.lessons.fakes import student_file, write_lesson

statuses = pytest.fixture(every_status_lesson, name="statuses")


def _result(status: str, name: str = "t") -> TaskResult:
    return TaskResult(name, name.title(), status)


@pytest.mark.parametrize(("statuses", "load_error", "passed"), [
    (["passed"], "", True),
    (["passed", "passed"], "", True),
    (["passed", "skipped"], "", True),
    (["skipped"], "", False),          # nothing could run here: not a pass
    ([], "", False),
    (["passed"], "it broke", False),
    (["passed", "failed"], "", False),
    (["passed", "todo"], "", False),
    (["passed", "error"], "", False),
])
def test_report_passed_rules(statuses, load_error, passed):
    report = Report(1, "T", "f.py", 0, tuple(_result(s, f"t{k}") for k, s in enumerate(statuses)),
                    load_error=load_error)
    assert report.passed is passed


def test_report_counts_every_status():
    report = Report(1, "T", "f.py", 0, tuple(_result(s) for s in
                                             ["passed", "failed", "failed", "skipped"]))
    assert report.counts == {"passed": 1, "failed": 2, "todo": 0, "error": 0, "skipped": 1}
    assert list(report.counts) == list(SYMBOLS)


def test_report_json_round_trip(statuses):
    lesson, file = statuses
    report = run_checks(lesson, file, seed=9)
    report = Report(**{**report.__dict__, "extra": {"app": "tui", "n": [1, 2]}})
    text = report.to_json()
    assert "\n" not in text and json.loads(text)["seed"] == 9
    again = Report.from_json(text)
    assert again == report
    assert isinstance(again.results, tuple) and isinstance(again.results[0].comparisons, tuple)
    assert isinstance(again.results[0].comparisons[0], Comparison)
    broken = run_checks(lesson, student_file(file.parent, "x = (\n", "syntax.py"), seed=1)
    assert Report.from_json(broken.to_json()) == broken


def test_format_shows_each_task_and_what_was_expected(statuses):
    lesson, file = statuses
    text = run_checks(lesson, file, seed=1).format()
    line = _line_of(STATUS_STUDENT, "return y / 0")
    assert text == textwrap.dedent(f"""\
        Lesson 5: Every status
        checking {file} (seed 1)
        ✓ Good task [good]: passed
            ✓ good() is one
                expected 1
                got      1
        ✗ Bad task [bad]: failed
            ✗ bad() is one
                expected 1
                got      2
        … Todo task [todo]: todo
            not written yet: todo
        ! Crash task [crash]: error
            line {line}, in crash: return y / 0
            ZeroDivisionError: division by zero
        - Gpu task [gpu]: skipped
            needs a CUDA GPU
        ✗ Chatty task [chatty]: failed
            ✗ chatty() is one
                expected 1
                got      2
            it printed:
              hello from chatty

        not yet: 1 passed, 2 failed, 1 todo, 1 error, 1 skipped""")


def test_format_verbose_shows_every_comparison(statuses):
    lesson, file = statuses
    report = run_checks(lesson, file, seed=1)
    assert "✓ it ran" not in report.format()
    assert "✓ it ran" in report.format(verbose=True)
    assert report.format(verbose=True).count("expected") == report.format().count("expected") + 1


def test_format_of_a_passing_report(tmp_path):
    lesson = read_lesson(write_lesson(tmp_path / "lessons"))
    text = run_checks(lesson, lesson.solution, seed=0).format()
    assert text.splitlines()[-1] == "all tasks pass: 2 passed"
    assert "✓ Add two numbers [add]: passed" in text


def test_what_a_report_shows_of_each_task():
    from lessons.expect import Comparison
    from lessons.grading import TaskResult

    held, wrong = Comparison("a", "1", "1", True), Comparison("b", "2", "3", False)
    failed = TaskResult("t", "T", "failed", comparisons=(held, held, wrong))
    assert failed.shown() == ((wrong,), 2)
    assert failed.shown(verbose=True) == ((held, held, wrong), 0)
    assert TaskResult("t", "T", "passed", comparisons=(held, wrong)).shown() == ((wrong,), 0)
    assert TaskResult("t", "T", "todo", comparisons=(held,)).shown() == ((), 0)
    assert TaskResult("t", "T", "error", comparisons=(held,)).shown() == ((), 0)
