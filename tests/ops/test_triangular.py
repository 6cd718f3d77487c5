"""tril and triu: forward vs NumPy, gradcheck, values and gradients vs PyTorch, and errors."""

from __future__ import annotations

import pytest

import gradlab
from tests.oracle import (
    EMPTY,
    M,
    OpCase,
    standard_op_tests,
)

CASES = [
    OpCase("tril", lambda lib, x: x.tril(), M, numpy=lambda np, x: np.tril(x),
           variants=(((2, 4, 3),), EMPTY)),
    OpCase("tril_k", lambda lib, x: lib.tril(x, -1), ((4, 4),),
           numpy=lambda np, x: np.tril(x, -1)),
    OpCase("triu", lambda lib, x: x.triu(), M, numpy=lambda np, x: np.triu(x),
           variants=(((2, 4, 3),), EMPTY)),
    OpCase("triu_k", lambda lib, x: lib.triu(x, 2), ((4, 5),),
           numpy=lambda np, x: np.triu(x, 2)),
]


globals().update(standard_op_tests(CASES))


def test_the_zeroed_triangle_gets_no_gradient():
    x = gradlab.ones(3, 3, requires_grad=True)
    x.tril().sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    assert x.triu(1).grad_fn.name() == "TriuBackward0"


# --- errors that teach --------------------------------------------------------------------------

ERRORS = [
    (lambda: gradlab.ones(3).tril(), RuntimeError, r"at least 2 dims.*shape \(3,\)"),
    (lambda: gradlab.ones(3).triu(), RuntimeError, "at least 2 dims"),
]


@pytest.mark.parametrize("make,error,match", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_problem(make, error, match):
    with pytest.raises(error, match=match):
        make()
