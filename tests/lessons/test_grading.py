"""lessons.grading: a lesson's checks run on a student's file, one status per task (in this
process or in a child process). The Report they give: test_grading_report.py."""

from __future__ import annotations

import pytest

from lessons.catalog import read_lesson
from lessons.expect import Comparison
from lessons.grading import (
    Report,
    TaskResult,
    check_functions,
    run_checks,
    run_checks_isolated,
)
from tests.lessons._every_status import STATUS_STUDENT, _line_of, every_status_lesson
from tests.lessons.fakes import student_file, write_lesson

statuses = pytest.fixture(every_status_lesson, name="statuses")


def test_each_task_ends_in_its_status(statuses, capsys):
    lesson, file = statuses
    report = run_checks(lesson, file, seed=1)
    assert capsys.readouterr().out == ""  # the student's prints are kept, not shown
    by_name = {r.name: r for r in report.results}
    assert [r.name for r in report.results] == ["good", "bad", "todo", "crash", "gpu", "chatty"]
    assert {n: r.status for n, r in by_name.items()} == {
        "good": "passed", "bad": "failed", "todo": "todo", "crash": "error", "gpu": "skipped",
        "chatty": "failed"}
    assert by_name["good"].passed and not by_name["bad"].passed
    assert [r.symbol for r in report.results] == ["✓", "✗", "…", "!", "-", "✗"]
    assert by_name["good"].title == "Good task"
    assert by_name["todo"].message == "not written yet: todo"
    assert by_name["gpu"].message == "needs a CUDA GPU"
    assert report.counts == {"passed": 1, "failed": 2, "todo": 1, "error": 1, "skipped": 1}
    assert not report.passed
    assert (report.lesson, report.title, report.file, report.seed) == (5, "Every status",
                                                                       str(file), 1)
    assert report.load_error == ""
    assert all(r.seconds >= 0 for r in report.results)


def test_comparisons_are_recorded_per_task(statuses):
    lesson, file = statuses
    by_name = {r.name: r for r in run_checks(lesson, file, seed=1).results}
    assert by_name["good"].comparisons == (Comparison("it ran", "yes", "yes", True),
                                          Comparison("good() is one", "1", "1", True))
    assert by_name["bad"].comparisons == (Comparison("bad() is one", "1", "2", False),)
    assert by_name["todo"].comparisons == () and by_name["crash"].comparisons == ()


def test_an_error_points_at_the_students_line(statuses):
    lesson, file = statuses
    crash = run_checks(lesson, file, seed=1).results[3]
    line = _line_of(STATUS_STUDENT, "return y / 0")
    assert crash.message == (f"line {line}, in crash: return y / 0\n"
                             "ZeroDivisionError: division by zero")


def test_what_a_task_printed_is_kept(statuses):
    lesson, file = statuses
    by_name = {r.name: r for r in run_checks(lesson, file, seed=1).results}
    assert by_name["chatty"].output == "hello from chatty\n"
    assert by_name["good"].output == ""


def test_long_output_is_cut(tmp_path):
    lesson = read_lesson(write_lesson(tmp_path / "lessons"))
    file = student_file(tmp_path, '''\
        def add(a, b):
            print("x" * 5000)
            return a + b


        def double(x):
            for k in range(3):
                print(k)
            return 2 * x
        ''')
    results = run_checks(lesson, file, seed=0).results
    assert results[0].output.startswith("x" * 2000)
    assert results[0].output.endswith("\n... (more output cut)")
    assert len(results[0].output) == 2000 + len("\n... (more output cut)")
    assert results[1].output == "0\n1\n2\n"
    assert all(r.passed for r in results)


def test_the_solution_passes_and_the_starter_is_todo(tmp_path):
    lesson = read_lesson(write_lesson(tmp_path / "lessons"))
    solved = run_checks(lesson, lesson.solution, seed=3)
    assert solved.passed and [r.status for r in solved.results] == ["passed", "passed"]
    started = run_checks(lesson, lesson.starter, seed=3)
    assert not started.passed and [r.status for r in started.results] == ["todo", "todo"]
    assert started.results[0].message == "not written yet: add"


def test_an_exit_in_the_students_code_is_an_error(tmp_path):
    """sys.exit() inside a task must not end the run (it once made `check` exit 0)."""
    lesson = read_lesson(write_lesson(tmp_path / "lessons"))
    file = student_file(tmp_path, '''\
        import sys


        def add(a, b):
            sys.exit(0)


        def double(x):
            return 2 * x
        ''')
    report = run_checks(lesson, file, seed=0)
    assert [r.status for r in report.results] == ["error", "passed"]
    assert report.results[0].message == "line 5, in add: sys.exit(0)\nSystemExit: 0"
    assert not report.passed


def test_a_check_may_raise_check_failed_itself(tmp_path):
    checks = '''\
        from lessons.expect import CheckFailed, check, expect


        @check("add")
        def add(student, rng):
            raise CheckFailed("add is symmetric", "equal", "different", "swap a and b")


        @check("double")
        def double(student, rng):
            expect(False, "checked with expect", "a", "b")
        '''
    lesson = read_lesson(write_lesson(tmp_path / "lessons", checks=checks))
    add, double = run_checks(lesson, lesson.solution, seed=0).results
    assert add.status == "failed" and add.message == "swap a and b"
    assert add.comparisons == (Comparison("add is symmetric", "equal", "different", False),)
    assert double.comparisons == (Comparison("checked with expect", "a", "b", False),)


# --- files that do not load ----------------------------------------------------------------
def test_a_syntax_error(statuses, tmp_path):
    lesson, _ = statuses
    file = student_file(tmp_path, "def good():\n    return 1\n\ndef bad(:\n    pass\n", "bad.py")
    report = run_checks(lesson, file, seed=0)
    assert "line 4" in report.load_error and "SyntaxError" in report.load_error
    assert str(file) in report.load_error
    assert [r.status for r in report.results] == ["error"] * 6
    assert {r.message for r in report.results} == {"your file did not load"}
    assert not report.passed
    assert "Your file did not load:" in report.format()


def test_a_crash_at_import(statuses, tmp_path):
    lesson, _ = statuses
    source = "import math\n\nvalue = math.sqrt(-1)\n"
    report = run_checks(lesson, student_file(tmp_path, source, "crash.py"), seed=0)
    assert report.load_error == ("line 3, in <module>: value = math.sqrt(-1)\n"
                                 "ValueError: math domain error")
    assert [r.status for r in report.results] == ["error"] * 6


def test_an_exit_at_import(statuses, tmp_path):
    lesson, _ = statuses
    report = run_checks(lesson, student_file(tmp_path, "raise SystemExit(3)\n", "exit.py"),
                        seed=0)
    assert report.load_error == "line 1, in <module>: raise SystemExit(3)\nSystemExit: 3"
    assert not report.passed


def test_a_missing_file(statuses, tmp_path):
    lesson, _ = statuses
    missing = tmp_path / "nowhere.py"
    report = run_checks(lesson, missing, seed=0)
    assert report.load_error == f"no such file: {missing}"
    assert report.results == () and not report.passed
    assert report.format().endswith("not yet: no tasks ran")


# --- seeds ---------------------------------------------------------------------------------
SEED_TOML = '''\
title = "Random inputs"
minutes = 10
goals = ["g"]
panels = ["graph"]
[[tasks]]
name = "first"
title = "First"
[[tasks]]
name = "second"
title = "Second"
'''

SEED_CHECKS = '''\
import gradlab
from lessons.expect import check, expect


def _draw(rng):
    expect(True, "numpy inputs", "", repr(rng.normal(size=3).tolist()))
    expect(True, "gradlab inputs", "", repr(gradlab.randn(3).tolist()))


@check("first")
def first(student, rng):
    _draw(rng)


@check("second")
def second(student, rng):
    _draw(rng)
'''


def _inputs(report: Report) -> list[list[str]]:
    return [[c.got for c in r.comparisons] for r in report.results]


def test_the_same_seed_gives_the_same_inputs(tmp_path):
    lesson = read_lesson(write_lesson(tmp_path / "lessons", toml=SEED_TOML, checks=SEED_CHECKS))
    one, two = (run_checks(lesson, lesson.solution, seed=42) for _ in range(2))
    assert _inputs(one) == _inputs(two)
    first, second = _inputs(one)
    assert first[0] != second[0] and first[1] != second[1]  # each task its own draws
    other = run_checks(lesson, lesson.solution, seed=43)
    assert all(a != b for a, b in zip(sum(_inputs(one), []), sum(_inputs(other), [])))


def test_without_a_seed_each_run_draws_one(tmp_path):
    lesson = read_lesson(write_lesson(tmp_path / "lessons", toml=SEED_TOML, checks=SEED_CHECKS))
    seeds = {run_checks(lesson, lesson.solution).seed for _ in range(4)}
    assert len(seeds) > 1 and all(0 <= s < 2**31 for s in seeds)


# --- check functions -----------------------------------------------------------------------
def test_check_functions_by_task(tmp_path):
    lesson = read_lesson(write_lesson(tmp_path / "lessons"))
    found = check_functions(lesson)
    assert sorted(found) == ["add", "double"]
    assert found["add"].lesson_task == "add" and found["add"].__name__ == "add"


@pytest.mark.parametrize(("checks", "match"), [
    ('from lessons.expect import check\n@check("add")\ndef a(s, r): pass\n',
     r"tasks without a @check: \['double'\]; @check for tasks lesson.toml does not list: \[\]"),
    ('from lessons.expect import check\n@check("add")\ndef a(s, r): pass\n@check("double")\n'
     'def d(s, r): pass\n@check("triple")\ndef t(s, r): pass\n',
     r"tasks without a @check: \[\]; @check for tasks lesson.toml does not list: \['triple'\]"),
    ('from lessons.expect import check\n@check("add")\ndef a(s, r): pass\n@check("add")\n'
     'def a2(s, r): pass\n@check("double")\ndef d(s, r): pass\n',
     "two @check functions for task 'add'"),
])
def test_check_functions_must_match_the_tasks(tmp_path, checks, match):
    lesson = read_lesson(write_lesson(tmp_path / "lessons", checks=checks))
    with pytest.raises(ValueError, match=match) as error:
        check_functions(lesson)
    assert str(error.value).startswith(str(lesson.checks_file))
    with pytest.raises(ValueError, match=match):
        run_checks(lesson, lesson.solution, seed=0)


# --- run_checks_isolated -------------------------------------------------------------------
def _without_times(report: Report) -> Report:
    return Report(**{**report.__dict__, "results": tuple(
        TaskResult(**{**r.__dict__, "seconds": 0.0}) for r in report.results)})


def test_isolated_run_gives_the_same_report(statuses):
    lesson, file = statuses
    isolated = run_checks_isolated(lesson, file, seed=5, timeout=60)
    assert _without_times(isolated) == _without_times(run_checks(lesson, file, seed=5))
    assert isolated.lesson == 5 and isolated.seed == 5


def test_isolated_run_survives_an_endless_loop(tmp_path):
    lesson = read_lesson(write_lesson(tmp_path / "lessons"))
    file = student_file(tmp_path, '''\
        def add(a, b):
            while True:
                pass


        def double(x):
            return 2 * x
        ''')
    report = run_checks_isolated(lesson, file, seed=1, timeout=2.5)
    assert [r.status for r in report.results] == ["error", "error"]
    assert report.results[0].message == ("the checks took longer than 2.5 s: is there an "
                                         "endless loop?")
    assert not report.passed and report.seed == 1


def test_isolated_run_survives_a_crash(tmp_path):
    lesson = read_lesson(write_lesson(tmp_path / "lessons"))
    file = student_file(tmp_path, '''\
        import os


        def add(a, b):
            os._exit(3)


        def double(x):
            return 2 * x
        ''')
    report = run_checks_isolated(lesson, file, seed=1, timeout=60)
    assert [r.status for r in report.results] == ["error", "error"]
    assert {r.message for r in report.results} == {"the checks crashed"}
    assert report.load_error == "exit code 3"
    assert not report.passed


def test_isolated_run_reports_a_broken_lesson(tmp_path):
    root = tmp_path / "lessons"
    lesson = read_lesson(write_lesson(root))
    (lesson.folder / "figures.py").unlink()  # broken after it was read
    report = run_checks_isolated(lesson, lesson.solution, seed=1, timeout=60)
    assert "missing figures.py" in report.load_error
    assert {r.message for r in report.results} == {"the checks crashed"}


def test_a_runaway_recursion_is_one_line_and_a_count(tmp_path):
    from lessons.grading import _where

    student = tmp_path / "deep.py"
    student.write_text("def walk(n):\n    return walk(n + 1)\n")
    namespace: dict = {}
    exec(compile(student.read_text(), str(student), "exec"), namespace)
    try:
        namespace["walk"](0)
    except RecursionError as error:
        text = _where(error, str(student.resolve()))
    assert text.count("line 2, in walk") == 1
    assert "repeated" in text and text.endswith("maximum recursion depth exceeded")
