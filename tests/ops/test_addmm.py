"""addmm, addmv, baddbmm, addbmm: β·input + α·(product) as one node, checked against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.oracle import OpCase, standard_op_tests


def _addmm_np(np, b, m1, m2, beta=1, alpha=1):
    return beta * b + alpha * (m1 @ m2)


CASES = [
    OpCase("addmm", lambda lib, b, m1, m2: lib.addmm(b, m1, m2), ((3, 2), (3, 4), (4, 2)),
           numpy=_addmm_np,
           variants=(((2,), (3, 4), (4, 2)), ((), (3, 4), (4, 2)), ((3, 2), (3, 0), (0, 2)))),
    OpCase("addmm_beta_alpha",
           lambda lib, b, m1, m2: lib.addmm(b, m1, m2, beta=0.5, alpha=-2.0),
           ((1, 2), (3, 4), (4, 2)),
           numpy=lambda np, b, m1, m2: _addmm_np(np, b, m1, m2, 0.5, -2.0)),
    OpCase("addmm_beta0", lambda lib, b, m1, m2: lib.addmm(b, m1, m2, beta=0),
           ((3, 2), (3, 4), (4, 2)), numpy=lambda np, b, m1, m2: m1 @ m2),
    OpCase("addmm_method_linear", lambda lib, b, x, w: b.addmm(x, w.t()),
           ((2,), (5, 3), (2, 3)), numpy=lambda np, b, x, w: b + x @ w.T),
    OpCase("addmv", lambda lib, b, m, v: lib.addmv(b, m, v, alpha=3), ((3,), (3, 4), (4,)),
           numpy=lambda np, b, m, v: b + 3 * (m @ v), variants=(((), (3, 4), (4,)),)),
    OpCase("baddbmm", lambda lib, b, x, y: lib.baddbmm(b, x, y, beta=2.0),
           ((2, 3, 5), (2, 3, 4), (2, 4, 5)),
           numpy=lambda np, b, x, y: 2 * b + x @ y, variants=(((5,), (2, 3, 4), (2, 4, 5)),)),
    OpCase("addbmm", lambda lib, b, x, y: lib.addbmm(b, x, y, alpha=0.5),
           ((3, 5), (2, 3, 4), (2, 4, 5)),
           numpy=lambda np, b, x, y: b + 0.5 * (x @ y).sum(0)),
]

globals().update(standard_op_tests(CASES))


def test_addmm_is_one_node_named_like_pytorch():
    b, m1, m2 = (gradlab.ones(*s, requires_grad=True) for s in ((2,), (3, 2), (2, 2)))
    assert gradlab.addmm(b, m1, m2).grad_fn.name() == "AddmmBackward0"
    assert gradlab.addmv(b.new_ones(3), m1, b).grad_fn.name() == "AddmvBackward0"
    batch = m2.unsqueeze(0)
    assert gradlab.baddbmm(m2, batch, batch).grad_fn.name() == "BaddbmmBackward0"


def test_beta_zero_ignores_nan_in_input():
    out = gradlab.addmm(gradlab.full((2, 2), float("nan")), gradlab.eye(2), gradlab.eye(2),
                        beta=0)
    np.testing.assert_array_equal(out.numpy(), np.eye(2))


def test_integer_addmm_keeps_integers():
    m = gradlab.tensor([[1, 2], [3, 4]])
    out = gradlab.addmm(m, m, m, beta=2, alpha=3)
    np.testing.assert_array_equal(out.numpy(), 2 * m.numpy() + 3 * (m.numpy() @ m.numpy()))
    assert out.dtype is gradlab.int64


@pytest.mark.parametrize("call, match", [
    (lambda: gradlab.addmm(gradlab.ones(2), gradlab.ones(3, 2), gradlab.ones(3, 2)),
     r"addmm: shapes \(3, 2\) and \(3, 2\) can't be multiplied \(2 != 3\); did you mean"),
    (lambda: gradlab.addmm(gradlab.ones(2), gradlab.ones(3), gradlab.ones(3, 2)),
     r"addmm: expected two matrices"),
    (lambda: gradlab.addmm(gradlab.ones(4), gradlab.ones(3, 2), gradlab.ones(2, 2)),
     r"addmm: input of shape \(4,\) can't be broadcast to the product's shape \(3, 2\)"),
    (lambda: gradlab.addmm(gradlab.ones(2), gradlab.ones(3, 2).double(), gradlab.ones(2, 2)),
     r"addmm: input, and both factors must have the same dtype"),
    (lambda: gradlab.addmm(gradlab.ones(2, dtype=gradlab.int64),
                           gradlab.ones(3, 2, dtype=gradlab.int64),
                           gradlab.ones(2, 2, dtype=gradlab.int64), alpha=0.5),
     r"addmm: for integer tensors beta and alpha must be integers"),
    (lambda: gradlab.addmv(gradlab.ones(3), gradlab.ones(3, 2), gradlab.ones(2, 2)),
     r"addmv: expected a matrix \(n, m\) and a vector \(m,\)"),
    (lambda: gradlab.baddbmm(gradlab.ones(1), gradlab.ones(2, 3, 4), gradlab.ones(3, 4, 5)),
     r"baddbmm: .*or batch 2 != 3"),
    (lambda: gradlab.addbmm(gradlab.ones(1), gradlab.ones(3, 4), gradlab.ones(3, 4, 5)),
     r"addbmm: expected two batches of matrices"),
    (lambda: gradlab.addbmm(gradlab.ones(1), gradlab.ones(2, 3, 4), gradlab.ones(2, 5, 5)),
     r"addbmm: shapes \(2, 3, 4\) and \(2, 5, 5\) can't be multiplied batch by batch"),
    (lambda: gradlab.addmm([1.0], gradlab.ones(3, 2), gradlab.ones(2, 2)),
     r"addmm: the input argument must be a Tensor, got list"),
])
def test_errors_name_the_op_and_shapes(call, match):
    with pytest.raises((RuntimeError, TypeError), match=match):
        call()


@pytest.mark.parametrize("op,shapes", [("addmm", [(3, 3)] * 3), ("addmv", [(3,), (3, 3), (3,)]),
                                       ("baddbmm", [(1, 3, 3)] * 3)])
def test_a_scaled_input_keeps_bfloat16(op, shapes):
    """beta * input on a bfloat16 array came out float32 (NumPy promotes a Python float with
    ml_dtypes' bfloat16), so the result was float32."""
    args = [gradlab.ones(s).to(gradlab.bfloat16) for s in shapes]
    assert getattr(gradlab, op)(*args, beta=2.0, alpha=0.5).dtype is gradlab.bfloat16
