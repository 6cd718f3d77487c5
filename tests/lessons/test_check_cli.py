"""lessons.cli (``gradlab lesson`` / ``gradlab check`` / ``python -m lessons``), on the real
lesson 1 copied into a folder of its own (the other lessons are neither needed nor touched)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lessons import catalog, cli, progress
from lessons.catalog import get_lesson
from lessons.grading import Report, TaskResult
from tests.lessons.fakes import copy_lesson_01, student_file, write_lesson

REPO = Path(__file__).resolve().parents[2]
LONG_TITLE = "A lesson whose title is far too long to fit in the list of lessons, so it is cut"


@pytest.fixture
def root(tmp_path, monkeypatch):
    """The lessons folder the CLI sees: a copy of lesson 1 alone."""
    root = tmp_path / "lessons"
    copy_lesson_01(root)
    monkeypatch.setattr(catalog, "LESSONS_DIR", root)
    return root


@pytest.fixture
def lesson(root):
    return get_lesson(1, root)


@pytest.fixture
def copy(tmp_path):
    """Where the student's working copy of lesson 1 is."""
    return tmp_path / "workspace" / "01_derivative_as_slope.py"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _saved() -> dict:
    return progress.load()


# --- gradlab lesson (the list) -------------------------------------------------------------
def test_list_shows_every_lesson_with_progress(root, tmp_path, capsys):
    toml = (f'title = "{LONG_TITLE}"\nminutes = 25\ngoals = ["g"]\npanels = ["graph"]\n'
            'requires = ["cuda"]\n[[tasks]]\nname = "add"\ntitle = "A"\nhints = ["h"]\n'
            '[[tasks]]\nname = "double"\ntitle = "D"\n')
    write_lesson(root, "02_on_the_gpu", toml=toml)
    code, out, err = run(capsys, "list")
    assert code == 0 and err == ""
    header = "    #  lesson" + " " * 52 + "min  tasks"
    first = f"     1  {'A derivative is a slope':<56}   15    0/3"
    second = f"     2  {LONG_TITLE[:55] + '…':<56}   25    0/2  (some checks need cuda)"
    assert out.splitlines() == [
        header, first, second, "",
        f"0 of 2 done. Your files are in {tmp_path / 'workspace'}.",
        "Open one with: gradlab lesson N    check it with: gradlab check N"]

    # Lesson 1 solved in the working copy, a hint opened in lesson 2.
    run(capsys, "lesson", "1", "--where")
    shutil.copy(root / "01_derivative_as_slope" / "solution.py",
                tmp_path / "workspace" / "01_derivative_as_slope.py")
    assert run(capsys, "check", "1")[0] == 0
    progress.reveal_hint(get_lesson(2, root), "add")
    code, listed, _ = run(capsys, "lesson")  # no number: the list too
    lines = listed.splitlines()
    assert code == 0
    assert lines[1] == "  ✓" + first[3:].replace("0/3", "3/3")
    assert lines[2] == "  …" + second[3:]
    assert lines[4].startswith("1 of 2 done.")


def test_list_without_lessons_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(catalog, "LESSONS_DIR", tmp_path / "empty")
    (tmp_path / "empty").mkdir()
    code, out, _ = run(capsys, "list")
    assert code == 0 and "0 of 0 done." in out


def test_a_broken_lesson_in_the_list(root, capsys):
    (write_lesson(root, "02_broken") / "checks.py").unlink()
    code, out, err = run(capsys, "lesson")
    assert code == 2 and out == ""
    assert err.startswith("gradlab lesson: ") and "02_broken: missing checks.py" in err


# --- gradlab lesson N ----------------------------------------------------------------------
def test_lesson_where_makes_the_working_copy(lesson, copy, capsys):
    code, out, _ = run(capsys, "lesson", "1", "--where")
    assert code == 0 and out == f"{copy}\n"
    assert copy.read_bytes() == lesson.starter.read_bytes()
    copy.write_text("# mine\n")
    assert run(capsys, "lesson", "01", "--where")[1] == f"{copy}\n"
    assert copy.read_text() == "# mine\n"


def test_lesson_reset(lesson, copy, capsys):
    code, out, _ = run(capsys, "lesson", "1", "--reset")
    assert code == 0 and out == f"{copy} is the starter again\n"
    copy.write_text("# mine\n")
    code, out, _ = run(capsys, "lesson", "derivative_as_slope", "--reset")
    assert code == 0
    assert out.startswith(f"{copy} is the starter again; your old copy is in ")
    backup = Path(out.strip().rsplit(" ", 1)[1])
    assert backup.parent == copy.parent / "backups" and backup.read_text() == "# mine\n"
    assert copy.read_bytes() == lesson.starter.read_bytes()


def test_lesson_figures(root, tmp_path, capsys):
    out_dir = tmp_path / "pictures"
    code, out, _ = run(capsys, "lesson", "1", "--figures", str(out_dir))
    assert code == 0
    made = [Path(line) for line in out.splitlines()]
    assert [p.name for p in made] == ["tangent.png", "step_size.png", "graph.svg"]
    assert all(p.parent == out_dir and p.stat().st_size > 0 for p in made)


def test_lesson_without_the_app_says_what_to_do(lesson, copy, capsys):
    code, out, _ = run(capsys, "lesson", "1")
    assert code == 0
    assert out.splitlines() == ["Lesson 1: A derivative is a slope", f"Read {lesson.text_file}",
                                f"Edit {copy}", "Check it with: gradlab check 1"]
    assert copy.read_bytes() == lesson.starter.read_bytes()


def test_lesson_opens_the_app_on_the_working_copy(lesson, copy):
    import argparse

    parser = argparse.ArgumentParser()
    cli.lesson_arguments(parser)
    opened = []
    code = cli.run_lesson(parser.parse_args(["1"]),
                          open_app=lambda lesson, path: opened.append((lesson, path)) or 7)
    assert code == 7 and opened == [(lesson, copy)] and copy.is_file()


@pytest.mark.parametrize("number", ["99", "0", "slope"])
def test_lesson_that_does_not_exist(root, capsys, number):
    code, out, err = run(capsys, "lesson", number, "--where")
    assert code == 2 and out == ""
    assert err == (f"gradlab lesson: there is no lesson '{number}': the lessons are numbered "
                   "1 to 1 (gradlab lesson lists them)\n")


def test_lesson_options_exclude_each_other(root, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["lesson", "1", "--where", "--reset"])
    assert exit_info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


# --- gradlab check N -----------------------------------------------------------------------
def test_check_solution_exits_0_and_saves_nothing(root, tmp_path, capsys):
    code, out, err = run(capsys, "check", "1", "--solution", "--seed", "2")
    assert code == 0 and err == ""
    assert out.startswith("Lesson 1: A derivative is a slope\nchecking ")
    assert "solution.py (seed 2)" in out
    assert out.rstrip().endswith("all tasks pass: 3 passed")
    assert not (tmp_path / "data").exists()
    assert not (tmp_path / "workspace").exists()


def test_check_starter_exits_1_and_saves_nothing(root, tmp_path, capsys):
    code, out, _ = run(capsys, "check", "1", "--starter")
    assert code == 1
    assert out.rstrip().endswith("not yet: 3 todo")
    assert "… Estimate a slope with a central difference [central_difference]: todo" in out
    assert not (tmp_path / "data").exists()


def test_check_the_working_copy_saves_progress(lesson, copy, capsys):
    code, out, _ = run(capsys, "check", "1")
    assert code == 1 and copy.is_file()  # made from the starter on the way
    assert f"checking {copy} " in out
    entry = _saved()["01_derivative_as_slope"]
    assert entry["tasks"] == {"central_difference": "todo", "autograd_slope": "todo",
                              "tangent_line": "todo"}
    assert entry["completed"] is None
    shutil.copy(lesson.solution, copy)
    assert run(capsys, "check", "1")[0] == 0
    assert progress.state(lesson, _saved()) == "done"
    copy.write_bytes(lesson.starter.read_bytes())
    assert run(capsys, "check", "1")[0] == 1
    assert progress.state(lesson, _saved()) == "done"  # once passed, stays done
    assert progress.passed_tasks(lesson, _saved()) == 0


def test_check_a_file(lesson, tmp_path, capsys):
    source = lesson.solution.read_text().replace(
        "return (f(x + h) - f(x - h)) / (2 * h)", "return (f(x + h) - f(x)) / h")
    assert "(f(x + h) - f(x)) / h" in source
    mine = student_file(tmp_path, source, "attempt.py")
    code, out, _ = run(capsys, "check", "1", "--file", str(mine), "--seed", "4")
    assert code == 1
    assert f"checking {mine} (seed 4)" in out
    assert "✗ Estimate a slope with a central difference [central_difference]: failed" in out
    assert "✓ Ask gradlab for the slope [autograd_slope]: passed" in out
    assert out.rstrip().endswith("not yet: 2 passed, 1 failed")


def test_check_a_missing_file(root, tmp_path, capsys):
    code, out, err = run(capsys, "check", "1", "--file", str(tmp_path / "nope.py"))
    assert code == 2 and out == ""
    assert err == f"gradlab check: no such file: {tmp_path / 'nope.py'}\n"


def test_check_an_unknown_lesson(root, capsys):
    code, out, err = run(capsys, "check", "42")
    assert code == 2 and out == ""
    assert err == ("gradlab check: there is no lesson '42': the lessons are numbered 1 to 1 "
                   "(gradlab lesson lists them)\n")


def test_check_json_replays_with_a_seed_and_saves_nothing(lesson, tmp_path, capsys):
    reports = []
    for _ in range(2):
        code, out, _ = run(capsys, "check", "1", "--json", "--seed", "11")
        assert code == 1
        (line,) = out.splitlines()
        reports.append(Report.from_json(line))
    one, two = reports
    assert one.seed == two.seed == 11
    assert [(r.name, r.status, r.comparisons) for r in one.results] == \
        [(r.name, r.status, r.comparisons) for r in two.results]
    assert not (tmp_path / "data").exists()  # --json is the app's child run: it saves nothing
    code, out, _ = run(capsys, "check", "1", "--json", "--solution", "--seed", "12")
    solved = Report.from_json(out)
    assert code == 0 and solved.passed and solved.seed == 12
    other = Report.from_json(run(capsys, "check", "1", "--json", "--solution", "--seed", "13")[1])
    assert [r.comparisons for r in other.results] != [r.comparisons for r in solved.results]


def test_check_verbose_shows_every_comparison(root, capsys):
    short = run(capsys, "check", "1", "--solution", "--seed", "3")[1]
    verbose = run(capsys, "check", "1", "--solution", "--seed", "3", "-v")[1]
    report = Report.from_json(run(capsys, "check", "1", "--solution", "--seed", "3", "--json")[1])
    made = sum(len(r.comparisons) for r in report.results)
    assert made > 3
    assert short.count("expected") == 3  # the last comparison of each task
    assert verbose.count("expected") == made
    assert run(capsys, "check", "1", "--solution", "--seed", "3", "--verbose")[1] == verbose


@pytest.mark.parametrize("argv", [["check"], ["check", "1", "--solution", "--starter"],
                                  ["check", "1", "--file", "x.py", "--solution"],
                                  ["check", "1", "--seed", "many"], []])
def test_check_bad_arguments(root, capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_check_says_when_progress_cannot_be_saved(root, tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the data folder should be")
    monkeypatch.setenv("GRADLAB_DATA_DIR", str(blocker))
    with pytest.warns(UserWarning, match="progress file"):
        code, out, err = run(capsys, "check", "1")
    assert code == 1 and "not yet: 3 todo" in out
    assert err.startswith("gradlab check: could not save your progress: ")


def test_check_with_another_root(root, tmp_path, capsys):
    other = tmp_path / "other"
    write_lesson(other, "05_fake")
    code, out, _ = run(capsys, "check", "5", "--root", str(other), "--solution", "--seed", "0")
    assert code == 0 and "Lesson 5: Adding and doubling" in out
    code, _, err = run(capsys, "check", "5", "--solution")  # not in the default folder
    assert code == 2 and "there is no lesson '5'" in err


def test_check_watch_runs_again_on_each_save(lesson, copy, monkeypatch, capsys):
    """--watch checks in a child process each time the file changes, until Ctrl+C."""
    passed = Report(1, lesson.title, str(copy), 0,
                    tuple(TaskResult(t.name, t.title, "passed") for t in lesson.tasks))
    runs, naps = [], []
    monkeypatch.setattr(cli, "run_checks_isolated",
                        lambda lesson, path, seed=None: runs.append((path, seed)) or passed)

    def nap(seconds):
        naps.append(seconds)
        if len(naps) == 2:
            copy.write_text("# saved again\n")
            stat = copy.stat()
            os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        if len(naps) == 4:
            raise KeyboardInterrupt

    monkeypatch.setattr(cli.time, "sleep", nap)
    code, out, _ = run(capsys, "check", "1", "--watch", "--seed", "5")
    assert code == 0
    assert out.startswith(f"Watching {copy}: the checks run again each time you save it")
    assert runs == [(copy, 5), (copy, 5)]  # once at the start, once after the save
    assert out.count("all tasks pass: 3 passed") == 2
    assert progress.state(lesson, _saved()) == "done"


# --- python -m lessons ---------------------------------------------------------------------
def _module(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lessons", *argv], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)


def test_python_m_lessons_check(root):
    solved = _module("check", "1", "--root", str(root), "--solution", "--seed", "1")
    assert solved.returncode == 0, solved.stderr
    assert solved.stdout.rstrip().endswith("all tasks pass: 3 passed")
    started = _module("check", "1", "--root", str(root), "--starter", "--json")
    assert started.returncode == 1
    report = Report.from_json(started.stdout)
    assert [r.status for r in report.results] == ["todo"] * 3


def test_python_m_lessons_errors(root):
    unknown = _module("check", "7", "--root", str(root))
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert "gradlab check: there is no lesson '7'" in unknown.stderr
    bare = _module()
    assert bare.returncode == 2 and "usage: python -m lessons" in bare.stderr


def test_json_output_is_one_line_of_the_report(root, capsys):
    out = run(capsys, "check", "1", "--starter", "--json", "--seed", "1")[1]
    assert out.count("\n") == 1 and json.loads(out)["lesson"] == 1
