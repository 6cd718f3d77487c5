"""gradlab.testing.assert_close: PyTorch's tolerances, rules and failure messages."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
from gradlab.testing import assert_close
from tests.oracle import needs_torch, torch

NAN, INF = math.nan, math.inf

# Each row: make(lib) -> (actual, expected), keyword arguments. Run on gradlab and on PyTorch,
# the outcome (passing, or the error type and message) must be the same.
CASES = {
    "equal": (lambda L: (L.ones(2), L.ones(2)), {}),
    "within_float32_tolerance": (lambda L: (L.tensor([1.0, 2.0]),
                                            L.tensor([1.0, 2.0 + 2e-6])), {}),
    "one_mismatch": (lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 3.0])), {}),
    "matrix_mismatch": (lambda L: (L.tensor([[1.0, 2.0], [3, 4]]),
                                   L.tensor([[1.0, 2.0], [3, 5]])), {}),
    "greatest_among_mismatched": (lambda L: (L.tensor([0.0, 5.0]), L.tensor([1e-9, 4.0])), {}),
    "shape": (lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0, 3.0])), {}),
    "dtype": (lambda L: (L.ones(2), L.ones(2, dtype=L.float64)), {}),
    "dtype_unchecked_close": (lambda L: (L.ones(2), L.ones(2, dtype=L.float64)),
                              {"check_dtype": False}),
    "dtype_unchecked_mismatch": (lambda L: (L.tensor([1.0, 2.0]),
                                            L.tensor([1.0, 2.1], dtype=L.float64)),
                                 {"check_dtype": False}),
    "float16_tolerance": (lambda L: (L.tensor([1.0, 2.0], dtype=L.float16),
                                     L.tensor([1.0, 2.1])), {"check_dtype": False}),
    "float64_tolerance": (lambda L: (L.tensor([1.0], dtype=L.float64),
                                     L.tensor([1.0 + 1e-6], dtype=L.float64)), {}),
    "ints_not_equal": (lambda L: (L.tensor([1, 2]), L.tensor([1, 3])), {}),
    "bools_not_equal": (lambda L: (L.tensor([True]), L.tensor([False])), {}),
    "nan_differs": (lambda L: (L.tensor([1.0, NAN]), L.tensor([1.0, NAN])), {}),
    "nan_equal": (lambda L: (L.tensor([1.0, NAN]), L.tensor([1.0, NAN])), {"equal_nan": True}),
    "inf_equal": (lambda L: (L.tensor([INF, -INF]), L.tensor([INF, -INF])), {}),
    "given_tolerances": (lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.1])),
                         {"rtol": 0.0, "atol": 0.2}),
    "zero_dim": (lambda L: (L.tensor(1.0), L.tensor(2.0)), {}),
    "python_floats": (lambda L: (1.0, 1.1), {}),
    "python_ints": (lambda L: (1, 2), {}),
    "int_vs_float": (lambda L: (1, 1.0), {}),
    "list_item": (lambda L: ([L.tensor(1.0)], [L.tensor(2.0)]), {}),
    "nested_item": (lambda L: ([[L.tensor(1.0)]], [[L.tensor(2.0)]]), {}),
    "dict_item": (lambda L: ({"a": L.tensor(1.0)}, {"a": L.tensor(2.0)}), {}),
    "dict_keys": (lambda L: ({"a": 1}, {"b": 1}), {}),
    "sequence_length": (lambda L: ([1, 2], [1]), {}),
    "numpy_arrays": (lambda L: (np.array([1.0]), np.array([2.0])), {}),
    "tensor_vs_float": (lambda L: (L.tensor(1.0), 1.0), {}),
    "custom_msg": (lambda L: (L.tensor([1, 2]), L.tensor([1, 3])), {"msg": "custom"}),
    "callable_msg": (lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.1])),
                     {"msg": lambda m: "X" + m}),
    "rtol_without_atol": (lambda L: (L.ones(1), L.ones(1)), {"rtol": 0.1}),
    "atol_without_rtol": (lambda L: (L.ones(1), L.ones(1)), {"atol": 0.1}),
}


def _outcome(lib, name):
    make, kwargs = CASES[name]
    try:
        lib.testing.assert_close(*make(lib), **kwargs)
    except (AssertionError, TypeError, ValueError) as error:
        return type(error).__name__, str(error).replace("torch.Tensor", "gradlab.tensor.Tensor")\
            .replace("torch.", "gradlab.")
    return "passed", ""


@needs_torch
@pytest.mark.parametrize("name", list(CASES))
def test_outcome_and_message_match_torch(name):
    assert _outcome(gradlab, name) == _outcome(torch, name)


def test_mismatch_message_says_how_many_and_where():
    with pytest.raises(AssertionError) as info:
        assert_close(gradlab.tensor([[1.0, 2.0], [3.0, 4.0]]),
                     gradlab.tensor([[1.0, 2.0], [3.0, 5.0]]))
    assert str(info.value) == (
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 4 (25.0%)\n"
        "Greatest absolute difference: 1.0 at index (1, 1) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1, 1) "
        "(up to 1.3e-06 allowed)")


def test_scalar_message_and_the_path_of_the_failing_item():
    with pytest.raises(AssertionError) as info:
        assert_close({"w": [gradlab.tensor(1.0)]}, {"w": [gradlab.tensor(2.0)]})
    assert str(info.value) == (
        "Scalars are not close!\n\nExpected 2.0 but got 1.0.\n"
        "Absolute difference: 1.0 (up to 1e-05 allowed)\n"
        "Relative difference: 0.5 (up to 1.3e-06 allowed)\n\n"
        "The failure occurred for item ['w'][0]")


@pytest.mark.parametrize("actual, expected, kwargs", [
    (gradlab.tensor([1.0]), gradlab.tensor([1.0 + 1e-6]), {}),  # inside float32's rtol
    (gradlab.tensor([NAN]), gradlab.tensor([NAN]), {"equal_nan": True}),
    (gradlab.tensor([1.0]), gradlab.tensor([1.5]), {"rtol": 0.0, "atol": 0.5}),
    (gradlab.ones(2), gradlab.ones(2, dtype=gradlab.float64), {"check_dtype": False}),
    ([1, (2.0, 3.0)], [1, (2.0, 3.0)], {}),
])
def test_close_inputs_pass(actual, expected, kwargs):
    assert_close(actual, expected, **kwargs)


@pytest.mark.parametrize("actual, expected, kwargs, error, match", [
    (gradlab.tensor([1.0]), gradlab.tensor([1.0 + 1e-4]), {}, AssertionError,
     r"Tensor-likes are not close!"),
    (gradlab.tensor([NAN]), gradlab.tensor([NAN]), {}, AssertionError,
     r"Greatest absolute difference: nan at index \(0,\)"),
    (gradlab.tensor([1, 2]), gradlab.tensor([1, 3]), {}, AssertionError,
     r"Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 \(50.0%\)\n"
     r"Greatest absolute difference: 1 at index \(1,\)\n"),
    (gradlab.ones(2), gradlab.ones(3), {}, AssertionError,
     r"The values for attribute 'shape' do not match: gradlab.Size\(\[2\]\) != "
     r"gradlab.Size\(\[3\]\)."),
    (gradlab.ones(2), gradlab.ones(2, dtype=gradlab.float64), {}, AssertionError,
     r"The values for attribute 'dtype' do not match: gradlab.float32 != gradlab.float64."),
    (gradlab.ones(1), gradlab.ones(1), {"rtol": 0.1}, ValueError,
     r"Both 'rtol' and 'atol' must be either specified or omitted, but got no atol."),
    (gradlab.ones(1), 1.0, {}, TypeError, r"No comparison pair was able to handle inputs"),
    ([1, 2], [1], {}, AssertionError, r"The length of the sequences mismatch: 2 != 1"),
    ({"a": 1}, {"b": 1}, {}, AssertionError, r"Missing keys in the actual mapping: \['b'\]"),
    (1, 1.0, {}, AssertionError, r"The \(d\)types do not match"),
])
def test_differences_raise(actual, expected, kwargs, error, match):
    with pytest.raises(error, match=match):
        assert_close(actual, expected, **kwargs)


def test_default_tolerances_follow_pytorch():
    table = gradlab.testing.DEFAULT_TOLERANCES
    assert table["float32"] == (1.3e-6, 1e-5) and table["float64"] == (1e-7, 1e-7)
    assert table["float16"] == (1e-3, 1e-5) and table["bfloat16"] == (1.6e-2, 1e-5)
