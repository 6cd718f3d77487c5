"""What a lesson's ``checks.py`` uses: ``@check`` and the ``expect_*`` helpers.

A check is a function of the student's module and a random generator::

    from lessons.expect import check, expect_close

    @check("slope")
    def slope(student, rng):
        x = rng.uniform(-2, 2)                  # fresh inputs every run:
        got = student.slope(cube, x)            # no answer can be hard-coded
        expect_close(got, 3 * x**2, f"slope of x**3 at x = {x:.3f}", rtol=1e-4)

Every ``expect_*`` call records what was expected and what the student's code
gave, so the report shows both, pass or fail. A failed expectation raises
:class:`CheckFailed`; :func:`skip` ends a check that cannot run here (no GPU).
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["check", "CheckFailed", "Skipped", "Comparison", "expect", "expect_close",
           "expect_equal", "expect_gradcheck", "expect_tensor", "skip", "show", "as_array"]


@dataclass(frozen=True)
class Comparison:
    """One expectation: what was checked, the expected and the student's value, as text."""

    what: str
    expected: str
    got: str
    ok: bool


class CheckFailed(AssertionError):
    """The student's answer is wrong: ``what`` was checked, ``expected`` vs ``got``."""

    def __init__(self, what: str, expected: str = "", got: str = "", detail: str = "") -> None:
        self.what, self.expected, self.got, self.detail = what, expected, got, detail
        super().__init__(f"{what}: expected {expected}, got {got}" +
                         (f" ({detail})" if detail else ""))


class Skipped(Exception):
    """The check cannot run here (for example it needs a CUDA GPU)."""


_comparisons: ContextVar[list[Comparison] | None] = ContextVar("comparisons", default=None)


def recording() -> tuple[list[Comparison], object]:
    """Start recording comparisons for one task (used by lessons.grading)."""
    found: list[Comparison] = []
    return found, _comparisons.set(found)


def stop_recording(token) -> None:
    _comparisons.reset(token)


def _record(what: str, expected: str, got: str, ok: bool) -> None:
    found = _comparisons.get()
    if found is not None:
        found.append(Comparison(what, expected, got, ok))


def check(task: str) -> Callable[[Callable], Callable]:
    """Mark ``fn(student, rng)`` as the check of the task named ``task`` in lesson.toml."""
    if not isinstance(task, str) or not task.isidentifier():
        raise TypeError(f"@check needs the task's name from lesson.toml, got {task!r}")

    def mark(fn: Callable) -> Callable:
        fn.lesson_task = task
        return fn

    return mark


def skip(reason: str) -> None:
    """End this check as skipped, e.g. ``skip("needs a CUDA GPU")``."""
    raise Skipped(reason)


def as_array(value: Any) -> np.ndarray:
    """A NumPy array of ``value``: a gradlab tensor (any device), a number or a list."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        return np.asarray(value.detach().cpu().numpy())
    return np.asarray(value)


def show(value: Any) -> str:
    """A short, readable text of a value for the report."""
    if value is None or isinstance(value, (str, bool)):
        return repr(value)
    try:
        array = as_array(value)
    except (TypeError, ValueError, RuntimeError):
        return repr(value)[:200]
    if array.dtype == object or array.dtype.kind in "USV":  # NumPy would turn [1, "a"]
        return repr(value)[:200]                           # into ['1' 'a']
    if array.ndim == 0:
        number = array.item()
        return f"{number:.6g}" if isinstance(number, float) else repr(number)
    text = np.array2string(array, precision=4, threshold=24, edgeitems=3, suppress_small=True)
    text = " ".join(text.split())  # one line: rows stay readable by their brackets
    return f"{text} (shape {tuple(array.shape)})" if array.size > 6 else text


def expect(condition: bool, what: str, expected: str = "true", got: str = "false",
           detail: str = "") -> None:
    """Check any condition; say in words what was expected and what happened."""
    _record(what, expected, got, bool(condition))
    if not condition:
        raise CheckFailed(what, expected, got, detail)


def expect_tensor(value: Any, what: str) -> None:
    """The student must return a gradlab tensor (not a NumPy array or a float)."""
    import gradlab

    ok = isinstance(value, gradlab.Tensor)
    expect(ok, what, "a gradlab tensor", f"a {type(value).__name__}",
           "" if ok else "build the result from gradlab operations so it has a graph")


def expect_close(got: Any, expected: Any, what: str, *, rtol: float = 1e-5,
                 atol: float = 1e-8) -> None:
    """``got`` and ``expected`` agree in shape and, element by element, within tolerance
    (complex numbers by their distance in the plane)."""
    if got is None:
        _record(what, show(expected), "None", False)
        raise CheckFailed(what, show(expected), "None", "did the function forget to return?")
    try:
        have, want = as_array(got), as_array(expected)
        # Compared as complex if either is: a cast to float64 would drop imaginary parts.
        kind = np.complex128 if "c" in (have.dtype.kind, want.dtype.kind) else np.float64
        have, want = have.astype(kind), want.astype(kind)
    except (TypeError, ValueError) as error:
        _record(what, show(expected), show(got), False)
        raise CheckFailed(what, show(expected), show(got), f"not a number: {error}") from None
    if have.shape != want.shape:
        _record(what, f"shape {tuple(want.shape)}", f"shape {tuple(have.shape)}", False)
        raise CheckFailed(what, f"shape {tuple(want.shape)}", f"shape {tuple(have.shape)}",
                          "the shapes differ")
    close = np.isclose(have, want, rtol=rtol, atol=atol, equal_nan=True)
    ok = bool(close.all())
    if ok:
        _record(what, show(expected), show(got), True)
        return
    bad = np.argwhere(~close)
    first = tuple(int(i) for i in bad[0])
    w, h = want[first].item(), have[first].item()
    off = f"off by {abs(h - w):.3g}, allowed {atol + rtol * abs(w):.3g}"
    if have.ndim:
        _record(what, show(expected), show(got), False)
        detail = (f"{len(bad)} of {have.size} values differ; first at index {first}: "
                  f"expected {w:.10g}, got {h:.10g} ({off})")
        raise CheckFailed(what, show(expected), show(got), detail)
    shown_w, shown_h = _distinct(w, h)
    _record(what, shown_w, shown_h, False)
    raise CheckFailed(what, shown_w, shown_h, off)


def _distinct(a: complex, b: complex) -> tuple[str, str]:
    """Two numbers printed with just enough digits to see that they differ."""
    for digits in range(6, 18):
        x, y = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if x != y:
            return x, y
    return repr(a), repr(b)


def expect_equal(got: Any, expected: Any, what: str) -> None:
    """``got == expected`` exactly (for shapes, counts, names, orders)."""
    try:
        ok = bool(got == expected)
    except (ValueError, RuntimeError, TypeError):  # arrays and tensors compare element-wise
        try:
            have, want = as_array(got), as_array(expected)
            ok = have.shape == want.shape and bool(np.array_equal(have, want))
        except (ValueError, RuntimeError, TypeError):
            ok = False
    expected_text, got_text = show(expected), show(got)
    _record(what, expected_text, got_text, ok)
    if not ok:
        detail = ""
        if expected_text == got_text and type(got) is not type(expected):
            detail = f"a {type(got).__name__} is not a {type(expected).__name__}"
        raise CheckFailed(what, expected_text, got_text, detail)


def expect_gradcheck(fn: Callable, inputs: tuple, what: str, **options: Any) -> None:
    """gradlab's own gradcheck: backward's gradients of ``fn(*inputs)`` match finite
    differences (inputs in float64, with ``requires_grad=True`` where checked)."""
    from gradlab.autograd import gradcheck
    from gradlab.autograd.gradcheck import GradcheckError

    try:
        gradcheck(fn, inputs, **options)
    except GradcheckError as error:
        _record(what, "backward agrees with finite differences", "they differ", False)
        raise CheckFailed(what, "backward agrees with finite differences", "they differ",
                          str(error).split("\n")[0]) from None
    _record(what, "backward agrees with finite differences", "it does", True)
