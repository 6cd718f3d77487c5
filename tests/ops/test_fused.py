"""addcmul, addcdiv and lerp (gradlab/ops/fused.py): a whole update step as one node each."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import gradlab
from tests.ops.test_arithmetic_unary import BIN, BIN_BCAST, BIN_VARIANTS
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch

TERNARY = ((3, 4), (3, 4), (3, 4))
TERNARY_VARIANTS = (((), (), ()), ((0, 3), (3,), (0, 1)), ((2, 1, 4), (3, 1), (4,)))
NONZERO_DIVISOR = [(-2.0, 2.0), (-2.0, 2.0), (0.5, 2.0)]
WEIGHTS = [(-2.0, 2.0), (-2.0, 2.0), (-0.5, 1.5)]  # both sides of |w| = 0.5


def np_lerp(np, x, end, w):
    return x + w * (end - x)


FUSED = [
    OpCase("addcmul", lambda lib, x, a, b: lib.addcmul(x, a, b, value=0.5), TERNARY,
           numpy=lambda np, x, a, b: x + 0.5 * a * b, variants=TERNARY_VARIANTS),
    OpCase("addcmul_method", lambda lib, x, a, b: x.addcmul(a, b), TERNARY,
           numpy=lambda np, x, a, b: x + a * b),
    OpCase("addcdiv", lambda lib, x, a, b: lib.addcdiv(x, a, b, value=-2), TERNARY,
           numpy=lambda np, x, a, b: x - 2 * a / b, domain=NONZERO_DIVISOR,
           variants=TERNARY_VARIANTS),
    OpCase("addcdiv_method", lambda lib, x, a, b: x.addcdiv(a, b), TERNARY,
           numpy=lambda np, x, a, b: x + a / b, domain=NONZERO_DIVISOR),
    OpCase("lerp_small_weight", lambda lib, x, e: lib.lerp(x, e, 0.3), BIN,
           numpy=lambda np, x, e: np_lerp(np, x, e, 0.3), variants=BIN_VARIANTS),
    OpCase("lerp_large_weight", lambda lib, x, e: x.lerp(e, 0.8), BIN,
           numpy=lambda np, x, e: np_lerp(np, x, e, 0.8), variants=(BIN_BCAST,)),
    OpCase("lerp_tensor_weight", lambda lib, x, e, w: lib.lerp(x, e, w), TERNARY,
           numpy=np_lerp, domain=WEIGHTS, variants=TERNARY_VARIANTS),
    OpCase("lerp_tensor_weight_method", lambda lib, x, e, w: x.lerp(e, w),
           ((3, 1), (4,), (3, 4)), numpy=np_lerp, domain=WEIGHTS),
]

globals().update(standard_op_tests(FUSED, prefix="fused_"))


@needs_torch
@settings(max_examples=30, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3),
       op=st.sampled_from(["addcmul", "addcdiv", "lerp"]))
def test_fused_ops_broadcast_like_torch(shapes, op):
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 2, s) for s in shapes.input_shapes]
    ours = [gradlab.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    kw = {} if op == "lerp" else {"value": 0.7}
    out_g, out_t = getattr(gradlab, op)(*ours, **kw), getattr(torch, op)(*theirs, **kw)
    assert tuple(out_g.shape) == tuple(out_t.shape) == shapes.result_shape
    cot = rng.standard_normal(shapes.result_shape)
    out_g.backward(gradlab.tensor(cot))
    out_t.backward(torch.tensor(cot))
    np.testing.assert_allclose(out_g.detach().numpy(), out_t.detach().numpy(), rtol=1e-12)
    for g, t in zip(ours, theirs):
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_fused_ops_are_one_node_named_like_torch():
    x, a, b = (gradlab.randn(3, requires_grad=True) for _ in range(3))
    assert gradlab.addcmul(x, a, b).grad_fn.name() == "AddcmulBackward0"
    assert x.addcdiv(a, b).grad_fn.name() == "AddcdivBackward0"
    y = x.lerp(a, 0.5)
    assert y.grad_fn.name() == "LerpBackward0" and y.grad_fn.op == "lerp"
    edges = [edge for edge in y.grad_fn.next_functions if edge is not None]  # not the weight
    assert [node for node, _ in edges] == [x._accumulator, a._accumulator]


def test_lerp_reaches_end_exactly_at_weight_one():
    """From the nearer end, weight 1 gives end itself, not input + (end - input) rounded."""
    rng = np.random.default_rng(3)
    x = gradlab.tensor(rng.uniform(-1e4, 1e4, 1000).astype(np.float32))
    end = gradlab.tensor(rng.uniform(-1e-3, 1e-3, 1000).astype(np.float32))
    assert x.lerp(end, 1.0).tolist() == end.tolist()
    assert x.lerp(end, gradlab.ones(1000)).tolist() == end.tolist()
    assert x.lerp(end, 0.0).tolist() == x.tolist()


FUSED_DTYPES = [
    (lambda lib: lib.addcmul(lib.tensor([1, 2]), lib.tensor([2.0, 3.0]), lib.tensor([4, 5]))),
    (lambda lib: lib.addcmul(lib.ones(2), lib.ones(2, dtype=lib.float64), lib.ones(2))),
    (lambda lib: lib.addcmul(lib.tensor([1, 2]), lib.tensor([3, 4]), lib.tensor([5, 6]),
                             value=3)),
    (lambda lib: lib.addcdiv(lib.tensor([1, 2]), lib.tensor([3.0, 4.0]), lib.tensor([5, 6]))),
    (lambda lib: lib.addcdiv(lib.ones(2, dtype=lib.float16), lib.ones(2, dtype=lib.float16),
                             lib.full((2,), 3.0, dtype=lib.float16), value=0.5)),
    (lambda lib: lib.addcmul(lib.ones(2, dtype=lib.bfloat16), lib.ones(2, dtype=lib.bfloat16),
                             lib.ones(2, dtype=lib.bfloat16), value=0.25)),
    (lambda lib: lib.lerp(lib.ones(2, dtype=lib.float16), lib.zeros(2, dtype=lib.float16), 0.3)),
    (lambda lib: lib.addcmul(lib.ones(3), lib.ones(3), lib.ones(3), value=lib.tensor(2.0))),
]


@needs_torch
@pytest.mark.parametrize("call", FUSED_DTYPES, ids=range(len(FUSED_DTYPES)))
def test_fused_ops_promote_and_compute_like_torch(call):
    ours, theirs = call(gradlab), call(torch)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=1e-3)


@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.addcmul(gradlab.ones(2), 2.0, gradlab.ones(2)), TypeError,
     r"addcmul: tensor1 must be a Tensor, got float.*value="),
    (lambda: gradlab.addcdiv([1.0], gradlab.ones(2), gradlab.ones(2)), TypeError,
     r"addcdiv: input must be a Tensor, got list"),
    (lambda: gradlab.addcmul(gradlab.tensor([1]), gradlab.tensor([2]), gradlab.tensor([3]),
                             value=0.5), RuntimeError,
     r"addcmul: for integer tensors \(gradlab.int64\) value must be an integer, got 0.5.*float"),
    (lambda: gradlab.addcdiv(gradlab.ones(2), gradlab.tensor([1]), gradlab.tensor([2])),
     RuntimeError, r"addcdiv: tensor1 \(gradlab.int64\) and tensor2 \(gradlab.int64\) are both "
                   r"integers.*Fix"),
    (lambda: gradlab.addcmul(gradlab.ones(2), gradlab.ones(2), gradlab.ones(2), value="2"),
     TypeError, r"addcmul: value must be a number, got str"),
    (lambda: gradlab.addcmul(gradlab.ones(2), gradlab.ones(2), gradlab.ones(2),
                             value=gradlab.ones(2)), RuntimeError,
     r"addcmul: value must be a number or a one-element tensor, got shape \(2,\)"),
    (lambda: gradlab.addcmul(gradlab.ones(2), gradlab.ones(3), gradlab.ones(2)), RuntimeError,
     r"addcmul: shapes \(2,\) and \(3,\) and \(2,\) can't be broadcast"),
    (lambda: gradlab.lerp(gradlab.ones(2), 1.0, 0.5), TypeError,
     r"lerp: end must be a Tensor, got float.*full_like"),
    (lambda: gradlab.lerp(gradlab.tensor([1, 2]), gradlab.tensor([3, 4]), 0.5), RuntimeError,
     r"lerp: interpolates floating point values, got a gradlab.int64 input.*float\(\)"),
    (lambda: gradlab.lerp(gradlab.ones(2), gradlab.ones(2).double(), 0.5), RuntimeError,
     r"lerp: expected dtype gradlab.float32 for end \(input's dtype\) but got gradlab.float64.*"
     r"end.to\(input.dtype\)"),
    (lambda: gradlab.lerp(gradlab.ones(2), gradlab.ones(2), gradlab.ones(2).double()),
     RuntimeError, r"lerp: expected dtype gradlab.float32 for weight"),
    (lambda: gradlab.lerp(gradlab.ones(2), gradlab.ones(2), None), TypeError,
     r"lerp: weight must be a number, got NoneType"),
])
def test_fused_op_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()
