"""lessons.expect: what checks.py files use. Every expectation records expected vs got."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.autograd import Function
from lessons.expect import (
    CheckFailed,
    Comparison,
    Skipped,
    as_array,
    check,
    expect,
    expect_close,
    expect_equal,
    expect_gradcheck,
    expect_tensor,
    recording,
    show,
    skip,
    stop_recording,
)


@pytest.fixture
def recorded():
    """The comparisons the expect_* calls of a test make, as lessons.grading sees them."""
    found, token = recording()
    yield found
    stop_recording(token)


def f64(values, requires_grad=False):
    return gradlab.tensor(values, dtype=gradlab.float64, requires_grad=requires_grad)


# --- check and skip ------------------------------------------------------------------------
def test_check_marks_a_function_with_its_task():
    @check("slope")
    def slope(student, rng):
        return "ran"

    assert slope.lesson_task == "slope"
    assert slope(None, None) == "ran"


@pytest.mark.parametrize("bad", ["two words", "", "3d", 3, None])
def test_check_needs_a_task_name(bad):
    with pytest.raises(TypeError, match="@check needs the task's name from lesson.toml"):
        check(bad)


def test_skip_ends_a_check_with_its_reason():
    with pytest.raises(Skipped, match="needs a CUDA GPU"):
        skip("needs a CUDA GPU")


# --- expect and expect_tensor --------------------------------------------------------------
def test_expect_records_passes_and_failures(recorded):
    expect(1 + 1 == 2, "one plus one", "2", "2")
    with pytest.raises(CheckFailed) as failure:
        expect(False, "returns a pair", "a pair", "a list", "return a tuple")
    assert recorded == [Comparison("one plus one", "2", "2", True),
                        Comparison("returns a pair", "a pair", "a list", False)]
    error = failure.value
    assert isinstance(error, AssertionError)
    assert (error.what, error.expected, error.got, error.detail) == (
        "returns a pair", "a pair", "a list", "return a tuple")
    assert str(error) == "returns a pair: expected a pair, got a list (return a tuple)"


def test_expect_defaults_and_truthiness(recorded):
    with pytest.raises(CheckFailed, match="^it holds: expected true, got false$"):
        expect(0, "it holds")
    expect([1], "a non-empty list is true")
    assert [c.ok for c in recorded] == [False, True]


def test_expectations_outside_a_recording_are_not_kept():
    expect(True, "nobody records this")
    with pytest.raises(CheckFailed):
        expect_close(1.0, 2.0, "nor this")
    found, token = recording()
    stop_recording(token)
    assert found == []


def test_expect_tensor(recorded):
    expect_tensor(f64([1.0]), "the loss is a tensor")
    with pytest.raises(CheckFailed, match="expected a gradlab tensor, got a ndarray") as failure:
        expect_tensor(np.ones(2), "the loss is a tensor")
    assert "build the result from gradlab operations" in failure.value.detail
    with pytest.raises(CheckFailed, match="got a float"):
        expect_tensor(1.5, "the loss is a tensor")
    assert [c.ok for c in recorded] == [True, False, False]


# --- expect_close --------------------------------------------------------------------------
@pytest.mark.parametrize(("got", "expected"), [
    (1.0, 1.0),
    (1.0 + 1e-9, 1.0),
    (3, 3.0),
    (np.float32(0.1), 0.1),
    ([1.0, 2.0], np.array([1.0, 2.0])),
    (np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3) * (1 + 1e-7)),
    (np.array([np.nan, 1.0]), [np.nan, 1.0]),
    (np.array(2.0), 2.0),
])
def test_expect_close_passes(recorded, got, expected):
    expect_close(got, expected, "values")
    assert len(recorded) == 1 and recorded[0].ok
    assert recorded[0].expected == show(expected) and recorded[0].got == show(got)


def test_expect_close_takes_gradlab_tensors(recorded):
    x = f64([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    expect_close(x.grad, 2 * np.arange(1.0, 4.0), "gradient of sum(x²)")
    expect_close(y, 14.0, "sum of squares, a 0-d tensor with a graph")
    expect_close(gradlab.tensor([0.1, 0.2]), f64([0.1, 0.2]), "float32 against float64")
    expect_close(np.array([1.0, 2.0]), gradlab.tensor([1.0, 2.0]), "expected may be a tensor")
    expect_close([f64([1.0, 2.0]), f64([3.0, 4.0])], [[1, 2], [3, 4]], "a list of tensors")
    assert all(c.ok for c in recorded) and len(recorded) == 5
    assert recorded[0].got == "[2. 4. 6.]"
    with pytest.raises(CheckFailed):
        expect_close(x.grad, np.arange(1.0, 4.0), "gradient of sum(x²), wrong")


def test_expect_close_compares_complex_numbers_in_the_plane(recorded):
    """Not by their real parts: 1+5j and 1-5j are far apart."""
    expect_close(gradlab.tensor([1 + 2j, 3j]), [1 + 2j, 3j], "complex values")
    expect_close(2.0, 2 + 0j, "a real and a complex number")
    with pytest.raises(CheckFailed) as failure:
        expect_close(1 + 5j, 1 - 5j, "a conjugate is not the number")
    assert failure.value.detail.startswith("off by 10")
    with pytest.raises(CheckFailed, match="index"):
        expect_close(np.array([1 + 1j, 2]), [1 + 1j, 2j], "values")


def test_expect_close_numbers_that_differ_show_enough_digits(recorded):
    with pytest.raises(CheckFailed) as failure:
        expect_close(1.0000001, 1.0, "nearly one", rtol=1e-9, atol=0)
    assert recorded == [Comparison("nearly one", "1", "1.0000001", False)]
    assert failure.value.detail == "off by 1e-07, allowed 1e-09"


def test_expect_close_arrays_that_differ_say_where(recorded):
    with pytest.raises(CheckFailed) as failure:
        expect_close(np.array([[1.0, 2.0], [3.0, 4.0]]), [[1.0, 2.0], [3.5, 4.5]], "a matrix")
    assert failure.value.detail == ("2 of 4 values differ; first at index (1, 0): expected 3.5, "
                                    "got 3 (off by 0.5, allowed 3.5e-05)")
    assert recorded[-1].ok is False and recorded[-1].expected == "[[1. 2. ] [3.5 4.5]]"


def test_expect_close_tolerances_are_used():
    expect_close(1.05, 1.0, "within 10%", rtol=0.1)
    expect_close(1e-3, 0.0, "within atol", atol=1e-2)
    with pytest.raises(CheckFailed):
        expect_close(1.05, 1.0, "within 1%", rtol=0.01)
    with pytest.raises(CheckFailed):
        expect_close(np.nan, 1.0, "nan is not a number")


@pytest.mark.parametrize(("got", "expected", "want_shape", "got_shape"), [
    (np.zeros(3), np.zeros((1, 3)), "shape (1, 3)", "shape (3,)"),
    (np.zeros(1), 0.0, "shape ()", "shape (1,)"),
    (np.zeros((2, 3)), np.zeros((3, 2)), "shape (3, 2)", "shape (2, 3)"),
    (gradlab.zeros(4), np.zeros((2, 2)), "shape (2, 2)", "shape (4,)"),
])
def test_expect_close_shapes_must_agree(recorded, got, expected, want_shape, got_shape):
    with pytest.raises(CheckFailed, match="the shapes differ"):
        expect_close(got, expected, "shapes")
    assert recorded == [Comparison("shapes", want_shape, got_shape, False)]


def test_expect_close_none_means_a_missing_return(recorded):
    with pytest.raises(CheckFailed, match="did the function forget to return"):
        expect_close(None, [1.0, 2.0], "the slope")
    assert recorded == [Comparison("the slope", "[1. 2.]", "None", False)]


@pytest.mark.parametrize("got", ["abc", {"a": 1}, object()])
def test_expect_close_not_a_number(recorded, got):
    with pytest.raises(CheckFailed, match="not a number"):
        expect_close(got, 1.0, "a number")
    assert recorded[0].ok is False and recorded[0].expected == "1"


# --- expect_equal --------------------------------------------------------------------------
def test_expect_equal_passes(recorded):
    expect_equal(3, 3, "a count")
    expect_equal("relu", "relu", "a name")
    expect_equal(gradlab.zeros(2, 3).shape, (2, 3), "a shape")
    expect_equal(np.array([2, 3]), (2, 3), "an array against a tuple")
    expect_equal(gradlab.tensor([1, 2]), [1, 2], "a tensor against a list")
    expect_equal(np.array([5]), 5, "one element")
    assert all(c.ok for c in recorded) and len(recorded) == 6
    assert recorded[1] == Comparison("a name", "'relu'", "'relu'", True)
    assert recorded[2] == Comparison("a shape", "[2 3]", "[2 3]", True)


@pytest.mark.parametrize(("got", "expected"), [
    (4, 3),
    ("Relu", "relu"),
    (np.array([2, 4]), (2, 3)),
    (np.zeros(2), np.zeros(3)),
    (np.zeros((2, 1)), np.zeros((1, 2))),
    (gradlab.tensor([1, 2]), [1, 3]),
    (np.array([1, 2]), "12"),
])
def test_expect_equal_fails_without_crashing(recorded, got, expected):
    with pytest.raises(CheckFailed):
        expect_equal(got, expected, "equal")
    assert recorded == [Comparison("equal", show(expected), show(got), False)]


def test_expect_equal_says_when_only_the_type_differs():
    with pytest.raises(CheckFailed) as failure:
        expect_equal([2, 3], (2, 3), "the shape")
    assert failure.value.detail == "a list is not a tuple"
    with pytest.raises(CheckFailed) as failure:
        expect_equal(["a", "b"], ["a", "c"], "the names")
    assert failure.value.detail == ""
    assert str(failure.value) == "the names: expected ['a', 'c'], got ['a', 'b']"


# --- expect_gradcheck ----------------------------------------------------------------------
class Cube(Function):
    """x³, with the right backward: 3x²."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x


class WrongCube(Function):
    """x³, with a wrong backward: 2x² (the exponent forgotten)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x * x


class TodoCube(Function):
    @staticmethod
    def forward(ctx, x):
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("backward")


def test_expect_gradcheck_passes_a_right_backward(recorded):
    x = f64([0.5, -1.0, 2.0], requires_grad=True)
    expect_gradcheck(Cube.apply, (x,), "backward of x³")
    assert recorded == [Comparison("backward of x³", "backward agrees with finite differences",
                                   "it does", True)]


def test_expect_gradcheck_fails_a_wrong_backward(recorded):
    x = f64([0.5, -1.0, 2.0], requires_grad=True)
    with pytest.raises(CheckFailed) as failure:
        expect_gradcheck(WrongCube.apply, (x,), "backward of x³")
    assert recorded == [Comparison("backward of x³", "backward agrees with finite differences",
                                   "they differ", False)]
    assert failure.value.detail.startswith("gradcheck: Jacobian mismatch for output 0 with "
                                           "respect to input 0")
    assert "\n" not in failure.value.detail


def test_expect_gradcheck_passes_options_on():
    x = f64([0.5, -1.0, 2.0], requires_grad=True)
    expect_gradcheck(WrongCube.apply, (x,), "a loose check lets it through", atol=100.0)


def test_expect_gradcheck_lets_a_todo_through():
    """NotImplementedError in the student's backward is a TODO, for grading to see."""
    x = f64([0.5], requires_grad=True)
    with pytest.raises(NotImplementedError, match="backward"):
        expect_gradcheck(TodoCube.apply, (x,), "backward of x³")


# --- show and as_array ---------------------------------------------------------------------
@pytest.mark.parametrize(("value", "text"), [
    (None, "None"),
    ("relu", "'relu'"),
    (True, "True"),
    (np.bool_(False), "False"),
    (3, "3"),
    (np.int64(3), "3"),
    (2.5, "2.5"),
    (1 / 3, "0.333333"),
    (np.float32(1.5), "1.5"),
    ([1.0, 2.0], "[1. 2.]"),
    ((2, 3), "[2 3]"),
    (np.array([1e-9, 1.0]), "[0. 1.]"),
    (np.arange(7), "[0 1 2 3 4 5 6] (shape (7,))"),
    ([1, "a"], "[1, 'a']"),
    (["a", "b"], "['a', 'b']"),
    ({"a": 1}, "{'a': 1}"),
])
def test_show(value, text):
    assert show(value) == text


def test_show_tensors_like_arrays():
    t = gradlab.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert show(t) == show(t.detach().numpy()) == "[[1. 2.] [3. 4.]]"  # one line
    assert show(f64(0.25)) == "0.25"


def test_show_keeps_big_values_short():
    text = show(np.arange(1000.0).reshape(10, 100))
    assert "..." in text and text.endswith("(shape (10, 100))") and len(text) < 400
    assert len(show(object.__new__(type("Long", (), {"__repr__": lambda self: "x" * 500}))))\
        == 200


def test_as_array():
    t = gradlab.tensor([1.0, 2.0], requires_grad=True)
    assert isinstance(as_array(t), np.ndarray) and as_array(t).tolist() == [1.0, 2.0]
    assert as_array(3).ndim == 0
    assert as_array([[1, 2]]).shape == (1, 2)
