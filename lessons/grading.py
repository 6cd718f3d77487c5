"""Run a lesson's checks on a student's file and say, per task, what passed.

Each task's check gets the student's module and its own random generator,
seeded from one seed per run: inputs change from run to run (an answer can't
be hard-coded) yet a failure can be replayed with ``gradlab check N --seed S``.

A task ends in one of five ways:

    passed   every expectation held
    failed   an expectation did not (the report shows expected vs got)
    todo     the student's code raised NotImplementedError: a TODO not done yet
    error    the student's code raised something else (the report shows where)
    skipped  the check cannot run here (it needs a GPU)
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import subprocess
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .catalog import Lesson
from .expect import CheckFailed, Comparison, Skipped, recording, stop_recording
from .loading import load_module

__all__ = ["TaskResult", "Report", "run_checks", "run_checks_isolated", "SYMBOLS"]

SYMBOLS = {"passed": "✓", "failed": "✗", "todo": "…", "error": "!", "skipped": "-"}
_OUTPUT_LIMIT = 2000  # characters of a task's printed output kept in the report


@dataclass(frozen=True)
class TaskResult:
    """How one task went: status, a message in words, the comparisons made."""

    name: str
    title: str
    status: str
    message: str = ""
    comparisons: tuple[Comparison, ...] = ()
    output: str = ""
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def symbol(self) -> str:
        return SYMBOLS[self.status]

    def shown(self, verbose: bool = False) -> tuple[tuple[Comparison, ...], int]:
        """The comparisons worth showing, and how many that held are left out: a failure
        shows what failed, a pass its last comparison, a TODO or an error none (what
        held before them would only distract); ``verbose`` shows all."""
        if verbose:
            return self.comparisons, 0
        if self.status == "failed":
            failed = tuple(c for c in self.comparisons if not c.ok)
            return failed, len(self.comparisons) - len(failed)
        if self.status == "passed":
            return self.comparisons[-1:], 0
        return (), 0


@dataclass(frozen=True)
class Report:
    """The checks of one lesson on one file."""

    lesson: int
    title: str
    file: str
    seed: int
    results: tuple[TaskResult, ...] = ()
    load_error: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when no task failed and every task that could run here passed."""
        ran = [r for r in self.results if r.status != "skipped"]
        return bool(ran) and all(r.passed for r in ran) and not self.load_error

    @property
    def counts(self) -> dict[str, int]:
        found = {status: 0 for status in SYMBOLS}
        for result in self.results:
            found[result.status] += 1
        return found

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Report:
        raw = json.loads(text)
        results = tuple(
            TaskResult(**{**r, "comparisons": tuple(Comparison(**c) for c in r["comparisons"])})
            for r in raw.pop("results"))
        return cls(**raw, results=results)

    def format(self, *, verbose: bool = False) -> str:
        """The report as text: one line per task, then what was expected and what came."""
        lines = [f"Lesson {self.lesson}: {self.title}", f"checking {self.file} (seed {self.seed})"]
        if self.load_error:
            lines += ["", "Your file did not load:", _indent(self.load_error)]
        for result in self.results:
            lines.append(f"{result.symbol} {result.title} [{result.name}]: {result.status}")
            shown, held = result.shown(verbose)
            if held:
                lines.append(f"    ({held} check{'s' if held > 1 else ''} held before this one)")
            for c in shown:
                mark = "✓" if c.ok else "✗"
                lines.append(f"    {mark} {c.what}")
                lines.append(f"        expected {c.expected}")
                lines.append(f"        got      {c.got}")
            if result.message and not result.passed:
                lines.append(_indent(result.message, 4))
            if result.output and not result.passed:
                lines += ["    it printed:", _indent(result.output.rstrip(), 6)]
        counts = self.counts
        summary = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
        verdict = "all tasks pass" if self.passed else "not yet"
        lines += ["", f"{verdict}: {summary or 'no tasks ran'}"]
        return "\n".join(lines)


def _indent(text: str, by: int = 2) -> str:
    return "\n".join(" " * by + line for line in text.splitlines())


def _where(error: BaseException, student_file: str) -> str:
    """The error and the lines of the student's file it went through (gradlab's own
    frames left out: the student's code is what to look at)."""
    frames = traceback.extract_tb(error.__traceback__)
    mine = [f for f in frames if os.path.realpath(f.filename) == student_file]
    lines: list[str] = []
    repeats = 0
    for f in mine:  # a runaway recursion: one line and a count, as Python itself prints
        line = f"line {f.lineno}, in {f.name}: {f.line}"
        if lines and line == lines[-1]:
            repeats += 1
            continue
        if repeats:
            lines.append(f"  (the line above repeated {repeats} more times)")
            repeats = 0
        lines.append(line)
    if repeats:
        lines.append(f"  (the line above repeated {repeats} more times)")
    lines.append("".join(traceback.format_exception_only(type(error), error)).strip())
    return "\n".join(lines)


def _run_task(task, fn, student, student_file: str, seed: int, index: int) -> TaskResult:
    import gradlab

    rng = np.random.default_rng([seed, index])
    gradlab.manual_seed(seed + index)
    found, token = recording()
    printed = io.StringIO()
    start = time.perf_counter()
    status, message = "passed", ""
    try:
        with contextlib.redirect_stdout(printed):
            fn(student, rng)
    except CheckFailed as failure:
        status, message = "failed", failure.detail
        if not found or found[-1].ok:  # raised directly by the check, not by an expect_*
            found.append(Comparison(failure.what, failure.expected, failure.got, False))
    except Skipped as skipped:
        status, message = "skipped", str(skipped)
    except NotImplementedError as todo:
        status = "todo"
        message = f"not written yet: {todo}" if str(todo) else "not written yet"
    except (Exception, SystemExit) as error:  # the student's code went wrong: show where,
        # go on (an exit() in it must not end the run as if all was well)
        status, message = "error", _where(error, student_file)
    finally:
        stop_recording(token)
    output = printed.getvalue()
    if len(output) > _OUTPUT_LIMIT:
        output = output[:_OUTPUT_LIMIT] + "\n... (more output cut)"
    return TaskResult(task.name, task.title, status, message, tuple(found), output,
                      round(time.perf_counter() - start, 4))


def check_functions(lesson: Lesson) -> dict:
    """The lesson's @check functions by task name; every task must have exactly one."""
    module = load_module(lesson.checks_file, "gradlab_lesson_checks")
    found: dict = {}
    for value in vars(module).values():
        task = getattr(value, "lesson_task", None)
        if task is None or not callable(value):
            continue
        if task in found:
            raise ValueError(f"{lesson.checks_file}: two @check functions for task {task!r}")
        found[task] = value
    names = [t.name for t in lesson.tasks]
    missing = [n for n in names if n not in found]
    unknown = [n for n in found if n not in names]
    if missing or unknown:
        raise ValueError(f"{lesson.checks_file}: tasks without a @check: {missing}; @check "
                         f"for tasks lesson.toml does not list: {unknown}")
    return found


def run_checks(lesson: Lesson, file: str | os.PathLike, *, seed: int | None = None) -> Report:
    """Check ``file`` against every task of ``lesson``, in this process."""
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    path = os.path.realpath(file)
    checks = check_functions(lesson)
    base = Report(lesson.number, lesson.title, str(file), seed)
    if not os.path.isfile(path):
        return Report(**{**asdict(base), "load_error": f"no such file: {file}"})
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            student = load_module(path, "gradlab_student")
    except BaseException as error:  # a syntax error, or code that fails at import
        if isinstance(error, KeyboardInterrupt):
            raise
        return Report(lesson.number, lesson.title, str(file), seed,
                      tuple(TaskResult(t.name, t.title, "error", "your file did not load")
                            for t in lesson.tasks), load_error=_where(error, path))
    results = tuple(_run_task(task, checks[task.name], student, path, seed, k)
                    for k, task in enumerate(lesson.tasks))
    return Report(lesson.number, lesson.title, str(file), seed, results)


def run_checks_isolated(lesson: Lesson, file: str | os.PathLike, *, seed: int | None = None,
                        timeout: float = 120.0) -> Report:
    """:func:`run_checks` in a fresh Python process: a student's endless loop or crash
    cannot hang or take down the caller (the app), and each run starts clean."""
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    command = [sys.executable, "-m", "lessons", "check", str(lesson.number), "--file",
               os.fspath(file), "--seed", str(seed), "--json",
               "--root", os.fspath(lesson.folder.parent)]  # this lesson, wherever it lives
    env = {**os.environ, "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1")}
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env=env, check=False)
    except subprocess.TimeoutExpired:
        return Report(lesson.number, lesson.title, str(file), seed,
                      tuple(TaskResult(t.name, t.title, "error", f"the checks took longer than "
                                       f"{timeout:g} s: is there an endless loop?")
                            for t in lesson.tasks))
    try:
        line = [x for x in done.stdout.splitlines() if x.startswith("{")][-1]
        return Report.from_json(line)
    except (IndexError, ValueError, TypeError, KeyError):
        reason = (done.stderr or done.stdout).strip()[-2000:] or f"exit code {done.returncode}"
        return Report(lesson.number, lesson.title, str(file), seed,
                      tuple(TaskResult(t.name, t.title, "error", "the checks crashed")
                            for t in lesson.tasks), load_error=reason)
