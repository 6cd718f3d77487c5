"""The whole curriculum, lesson by lesson: what CI guarantees about every lesson.

Every lesson's checks pass on its reference solution and fail, task by task, on
its starter; its inputs are random (two seeds give different checks, so no
answer can be hard-coded); its figures draw; its text points only at figures
that ship; its solution runs as a script (what the app runs under the debugger).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lessons.catalog import PANELS, all_lessons
from lessons.grading import run_checks
from lessons.loading import make_figures

LESSONS = all_lessons()
ROOT = Path(__file__).resolve().parents[2]


def by_lesson(fn):
    return pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.name for lesson in LESSONS])(fn)


def test_the_curriculum_runs_from_derivatives_to_gpus():
    numbers = [lesson.number for lesson in LESSONS]
    assert len(LESSONS) >= 16
    assert numbers == list(range(1, len(LESSONS) + 1)), "lessons are numbered 1, 2, 3 ..."
    assert "derivative" in LESSONS[0].title.lower()
    assert any("cuda" in lesson.requires for lesson in LESSONS)  # devices and backends
    for lesson in LESSONS:
        assert 10 <= lesson.minutes <= 30, f"{lesson.name}: 10-30 minutes"
        assert all(p < lesson.number for p in lesson.prerequisites), \
            f"{lesson.name}: prerequisites come earlier"
        assert set(lesson.panels) <= set(PANELS) and lesson.panels
        for task in lesson.tasks:
            assert len(task.hints) >= 2, f"{lesson.name}/{task.name}: at least two hints"


@by_lesson
def test_the_solution_passes_every_task(lesson):
    for seed in (1, 2):
        report = run_checks(lesson, lesson.solution, seed=seed)
        assert report.passed, report.format()
        assert all(r.comparisons for r in report.results), \
            f"{lesson.name}: every task shows expected vs got\n{report.format()}"


@by_lesson
def test_the_starter_fails_every_task(lesson):
    report = run_checks(lesson, lesson.starter, seed=3)
    assert not report.load_error, report.format()
    assert not any(r.passed for r in report.results), report.format()
    assert {r.status for r in report.results} <= {"todo", "failed", "skipped"}, report.format()


@by_lesson
def test_checks_use_fresh_random_inputs(lesson):
    """Per task, two seeds compare different numbers: an answer can't be hard-coded."""
    one = run_checks(lesson, lesson.solution, seed=11)
    two = run_checks(lesson, lesson.solution, seed=12)
    for a, b in zip(one.results, two.results):
        if a.status == "skipped":
            continue
        seen_a = [(c.what, c.expected) for c in a.comparisons]
        seen_b = [(c.what, c.expected) for c in b.comparisons]
        assert seen_a != seen_b, f"{lesson.name}/{a.name}: the same checks for two seeds"


@by_lesson
def test_figures_draw_and_ship(lesson, tmp_path):
    made = make_figures(lesson, tmp_path)
    assert made, f"{lesson.name}: figures.make drew nothing"
    for path in made:
        assert path.is_file() and path.stat().st_size > 500, path
        assert (lesson.figures_dir / path.name).is_file(), \
            f"{lesson.name}: {path.name} is drawn but not shipped in figures/ (run " \
            f"python -m lessons lesson {lesson.number} --figures {lesson.figures_dir})"
    text = lesson.text()
    linked = re.findall(r"\]\((figures/[^)\s]+)\)", text)
    assert linked, f"{lesson.name}: the text shows none of its figures"
    for href in linked:
        assert (lesson.folder / href).is_file(), f"{lesson.name}: lesson.md links {href}"


@by_lesson
def test_the_solution_runs_as_a_script(lesson):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, str(lesson.solution)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env=env, check=False)
    assert done.returncode == 0, done.stderr[-3000:]


def test_many_lessons_check_backward_with_gradcheck():
    users = [lesson.name for lesson in LESSONS
             if "expect_gradcheck" in lesson.checks_file.read_text()]
    assert len(users) >= 5, users
