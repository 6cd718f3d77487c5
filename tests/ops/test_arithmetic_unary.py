"""Elementwise ops: forward vs NumPy, gradcheck, values and gradients vs PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import gradlab
import gradlab.autograd.forward_ad as fwAD
from tests.oracle import (
    EMPTY,
    SCALAR,
    OpCase,
    away_from_zero,
    needs_torch,
    standard_op_tests,
    torch,
)

POS = (0.5, 2.5)  # domain for log, sqrt, ...: away from the singularity at 0
BIN = ((3, 4), (3, 4))
BIN_BCAST = ((2, 1, 4), (3, 1))
BIN_VARIANTS = (((), ()), ((0, 3), (3,)), ((3, 4), ()), BIN_BCAST)
UN_VARIANTS = (SCALAR, EMPTY)


UNARY = [
    OpCase("neg", lambda lib, x: -x, ((3, 4),), numpy=lambda np, x: -x,
           variants=UN_VARIANTS),
    OpCase("exp", lambda lib, x: x.exp(), ((3, 4),), numpy=lambda np, x: np.exp(x),
           variants=UN_VARIANTS),
    OpCase("log", lambda lib, x: x.log(), ((3, 4),), numpy=lambda np, x: np.log(x),
           domain=POS, variants=UN_VARIANTS),
    OpCase("log1p", lambda lib, x: lib.log1p(x), ((3, 4),), numpy=lambda np, x: np.log1p(x),
           domain=(-0.5, 2), variants=UN_VARIANTS),
    OpCase("sqrt", lambda lib, x: x.sqrt(), ((3, 4),), numpy=lambda np, x: np.sqrt(x),
           domain=POS, variants=UN_VARIANTS),
    OpCase("rsqrt", lambda lib, x: x.rsqrt(), ((3, 4),), numpy=lambda np, x: 1 / np.sqrt(x),
           domain=POS, variants=UN_VARIANTS),
    OpCase("abs", lambda lib, x: x.abs(), ((3, 4),), numpy=lambda np, x: np.abs(x),
           inputs=away_from_zero, variants=UN_VARIANTS),
    OpCase("sign", lambda lib, x: x.sign(), ((3, 4),), numpy=lambda np, x: np.sign(x),
           inputs=away_from_zero, gradgrad=False),
    OpCase("sin", lambda lib, x: x.sin(), ((3, 4),), numpy=lambda np, x: np.sin(x),
           variants=UN_VARIANTS),
    OpCase("cos", lambda lib, x: x.cos(), ((3, 4),), numpy=lambda np, x: np.cos(x),
           variants=UN_VARIANTS),
    OpCase("tan", lambda lib, x: x.tan(), ((3, 4),), numpy=lambda np, x: np.tan(x),
           domain=(-1.2, 1.2)),
    OpCase("tanh", lambda lib, x: x.tanh(), ((3, 4),), numpy=lambda np, x: np.tanh(x),
           variants=UN_VARIANTS),
    OpCase("sigmoid", lambda lib, x: x.sigmoid(), ((3, 4),),
           numpy=lambda np, x: 1 / (1 + np.exp(-x)), domain=(-30, 30), variants=UN_VARIANTS),
    OpCase("relu", lambda lib, x: x.relu(), ((3, 4),), numpy=lambda np, x: np.maximum(x, 0),
           inputs=away_from_zero, variants=UN_VARIANTS),
    OpCase("expm1", lambda lib, x: x.expm1(), ((3, 4),), numpy=lambda np, x: np.expm1(x)),
    OpCase("log2", lambda lib, x: x.log2(), ((3, 4),), numpy=lambda np, x: np.log2(x),
           domain=POS),
    OpCase("log10", lambda lib, x: x.log10(), ((3, 4),), numpy=lambda np, x: np.log10(x),
           domain=POS),
    OpCase("exp2", lambda lib, x: x.exp2(), ((3, 4),), numpy=lambda np, x: np.exp2(x)),
    OpCase("reciprocal", lambda lib, x: x.reciprocal(), ((3, 4),), numpy=lambda np, x: 1 / x,
           inputs=away_from_zero),
    OpCase("square", lambda lib, x: x.square(), ((3, 4),), numpy=lambda np, x: x * x),
    OpCase("floor", lambda lib, x: x.floor(), ((3, 4),), numpy=lambda np, x: np.floor(x),
           domain=(0.1, 0.9), gradgrad=False),
    OpCase("ceil", lambda lib, x: x.ceil(), ((3, 4),), numpy=lambda np, x: np.ceil(x),
           domain=(0.1, 0.9), gradgrad=False),
    OpCase("round", lambda lib, x: x.round(), ((3, 4),), numpy=lambda np, x: np.round(x),
           domain=(0.1, 0.4), gradgrad=False),
    OpCase("round_decimals", lambda lib, x: x.round(decimals=2), ((3, 4),),
           numpy=lambda np, x: np.round(x * 100) / 100, domain=(0.1, 0.4), gradgrad=False),
    OpCase("round_tens", lambda lib, x: lib.round(x, decimals=-1), ((3, 4),),
           numpy=lambda np, x: np.round(x / 10) * 10, domain=(10, 40), gradgrad=False),
    OpCase("trunc", lambda lib, x: x.trunc(), ((3, 4),), numpy=lambda np, x: np.trunc(x),
           domain=(0.1, 0.9), gradgrad=False),
    OpCase("pow_scalar", lambda lib, x: x ** 3, ((3, 4),), numpy=lambda np, x: x ** 3,
           variants=UN_VARIANTS),
    OpCase("pow_fraction", lambda lib, x: x ** 0.5, ((3, 4),), numpy=lambda np, x: x ** 0.5,
           domain=POS),
    OpCase("pow_negative", lambda lib, x: x.pow(-2), ((3, 4),), numpy=lambda np, x: x ** -2.0,
           domain=POS),
    OpCase("rpow", lambda lib, x: 2 ** x, ((3, 4),), numpy=lambda np, x: 2 ** x),
    OpCase("clamp", lambda lib, x: x.clamp(-0.5, 0.5), ((3, 4),),
           numpy=lambda np, x: np.clip(x, -0.5, 0.5), inputs=away_from_zero, gradgrad=False),
    OpCase("clamp_min", lambda lib, x: x.clamp(min=0.7), ((3, 4),),
           numpy=lambda np, x: np.maximum(x, 0.7), inputs=away_from_zero),
    OpCase("clip_max", lambda lib, x: lib.clip(x, max=-0.7), ((3, 4),),
           numpy=lambda np, x: np.minimum(x, -0.7), inputs=away_from_zero),
    OpCase("clamp_min_method", lambda lib, x: x.clamp_min(0.7), ((3, 4),),
           numpy=lambda np, x: np.maximum(x, 0.7), inputs=away_from_zero),
    OpCase("clamp_max_function", lambda lib, x: lib.clamp_max(x, -0.7), ((3, 4),),
           numpy=lambda np, x: np.minimum(x, -0.7), inputs=away_from_zero),
    OpCase("scalar_rsub", lambda lib, x: 1.5 - x, ((3, 4),), numpy=lambda np, x: 1.5 - x),
    OpCase("rsub_alpha", lambda lib, x: lib.rsub(x, 1.5, alpha=2), ((3, 4),),
           numpy=lambda np, x: 1.5 - 2 * x),
    OpCase("scalar_rdiv", lambda lib, x: 2.0 / x, ((3, 4),), numpy=lambda np, x: 2.0 / x,
           inputs=away_from_zero),
    OpCase("scalar_mul", lambda lib, x: x * 3 + 1, ((3, 4),), numpy=lambda np, x: x * 3 + 1),
]

BINARY = [
    OpCase("rsub_tensors", lambda lib, x, y: lib.rsub(x, y), BIN, numpy=lambda np, x, y: y - x,
           variants=BIN_VARIANTS),
    OpCase("add", lambda lib, x, y: x + y, BIN, numpy=lambda np, x, y: x + y,
           variants=BIN_VARIANTS),
    OpCase("add_alpha", lambda lib, x, y: lib.add(x, y, alpha=2.5), BIN,
           numpy=lambda np, x, y: x + 2.5 * y, variants=(BIN_BCAST,)),
    OpCase("sub", lambda lib, x, y: x - y, BIN, numpy=lambda np, x, y: x - y,
           variants=BIN_VARIANTS),
    OpCase("sub_alpha", lambda lib, x, y: lib.sub(x, y, alpha=0.75), BIN,
           numpy=lambda np, x, y: x - 0.75 * y, variants=(BIN_BCAST,)),
    OpCase("add_alpha_method_in_place", lambda lib, x, y: (x * 1).add_(y, alpha=-1.5), BIN,
           numpy=lambda np, x, y: x - 1.5 * y, variants=()),
    OpCase("mul", lambda lib, x, y: x * y, BIN, numpy=lambda np, x, y: x * y,
           variants=BIN_VARIANTS),
    OpCase("div", lambda lib, x, y: x / y, BIN, numpy=lambda np, x, y: x / y,
           inputs=away_from_zero, variants=BIN_VARIANTS),
    OpCase("pow", lambda lib, x, y: x ** y, BIN, numpy=lambda np, x, y: x ** y,
           domain=[POS, (-2, 2)], variants=(BIN_BCAST,)),
    OpCase("maximum", lambda lib, x, y: lib.maximum(x, y), BIN,
           numpy=lambda np, x, y: np.maximum(x, y), variants=(BIN_BCAST,)),
    OpCase("minimum", lambda lib, x, y: lib.minimum(x, y), BIN,
           numpy=lambda np, x, y: np.minimum(x, y), variants=(BIN_BCAST,)),
    OpCase("remainder", lambda lib, x, y: lib.remainder(x, y), BIN,
           numpy=lambda np, x, y: np.remainder(x, y), domain=[(0.1, 0.9), (1.5, 2.0)],
           gradgrad=False),
    OpCase("where", lambda lib, x, y: lib.where(x > 0, x, y), BIN,
           numpy=lambda np, x, y: np.where(x > 0, x, y), inputs=away_from_zero,
           variants=(BIN_BCAST,)),
    OpCase("where_scalar", lambda lib, x: lib.where(x > 0, x, 0.0), ((3, 4),),
           numpy=lambda np, x: np.where(x > 0, x, 0.0), inputs=away_from_zero),
]

ALL = UNARY + BINARY


globals().update(standard_op_tests(ALL))


# --- broadcasting, property-based -------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3),
       op=st.sampled_from(["add", "sub", "mul", "div", "maximum"]))
def test_broadcast_gradients_sum_back_to_each_input(shapes, op):
    """d(sum(a op b))/da has a's shape and equals the broadcast gradient summed over copies."""
    rng = np.random.default_rng(0)
    a_np = rng.uniform(0.5, 2, shapes.input_shapes[0])
    b_np = rng.uniform(0.5, 2, shapes.input_shapes[1]) + 3  # b > a: maximum picks b
    a = gradlab.tensor(a_np, requires_grad=True)
    b = gradlab.tensor(b_np, requires_grad=True)
    out = getattr(gradlab, op)(a, b)
    assert tuple(out.shape) == shapes.result_shape
    out.sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    # The gradient of the sum w.r.t. one broadcast element counts its copies.
    full = np.broadcast_shapes(a_np.shape, b_np.shape)
    local_a = {"add": 1.0, "sub": 1.0, "mul": np.broadcast_to(b_np, full),
               "div": 1 / np.broadcast_to(b_np, full), "maximum": 0.0}[op]
    expected_a = _sum_to(np.broadcast_to(local_a, full), a_np.shape)
    np.testing.assert_allclose(a.grad.numpy(), expected_a, rtol=1e-12)


def _sum_to(g, shape):
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape)


@needs_torch
@settings(max_examples=40, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3),
       op=st.sampled_from(["add", "sub", "mul", "div", "pow", "maximum", "minimum"]))
def test_broadcast_matches_torch(shapes, op):
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 2, s) for s in shapes.input_shapes]
    ours = [gradlab.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_g = getattr(gradlab, op)(*ours)
    out_t = getattr(torch, op)(*theirs)
    cot = rng.standard_normal(out_t.shape)
    out_g.backward(gradlab.tensor(cot))
    out_t.backward(torch.tensor(cot))
    np.testing.assert_allclose(out_g.detach().numpy(), out_t.detach().numpy(), rtol=1e-12)
    for g, t in zip(ours, theirs):
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


# --- dtypes and promotion ----------------------------------------------------------------------

PROMOTION = [
    # (lhs, rhs) -> what PyTorch gives
    (("int32", (3,)), 2.5),
    (("int64", (3,)), ("float16", (3,))),
    (("float32", (3,)), ("float64", ())),
    (("int32", (3,)), ("int64", ())),
    (("bool", (3,)), 1),
    (("bool", (3,)), ("int32", (3,))),
    (("float16", (3,)), ("bfloat16", (3,))),
    (("float16", (3,)), 2.5),
    (("int32", (3,)), ("float64", ())),
    (("float32", (3,)), ("int64", (3,))),
]


def _operand(lib, spec):
    if not isinstance(spec, tuple):
        return spec
    dtype, shape = spec
    return lib.ones(shape, dtype=getattr(lib, dtype))


@needs_torch
@pytest.mark.parametrize("lhs,rhs", PROMOTION, ids=str)
@pytest.mark.parametrize("op", ["add", "mul", "sub", "div"])
def test_type_promotion_matches_torch(lhs, rhs, op):
    if op == "sub" and "bool" in str(lhs):
        # PyTorch refuses to subtract bools, and so does gradlab, pointing at logical_not.
        with pytest.raises(RuntimeError, match="bool"):
            torch.sub(_operand(torch, lhs), _operand(torch, rhs))
        with pytest.raises(RuntimeError, match="logical_not"):
            gradlab.sub(_operand(gradlab, lhs), _operand(gradlab, rhs))
        return
    ours = getattr(gradlab, op)(_operand(gradlab, lhs), _operand(gradlab, rhs))
    theirs = getattr(torch, op)(_operand(torch, lhs), _operand(torch, rhs))
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")


def test_true_division_of_integers_gives_float32():
    out = gradlab.tensor([1, 2, 3]) / gradlab.tensor([2, 2, 2])
    assert out.dtype is gradlab.float32
    np.testing.assert_allclose(out.numpy(), [0.5, 1.0, 1.5])


def test_comparisons_give_bool_and_no_graph():
    x = gradlab.tensor([1.0, -2.0, 3.0], requires_grad=True)
    for result, expected in [(x > 0, [True, False, True]), (x == 3, [False, False, True]),
                             (x <= -2, [False, True, False]), (x != 1, [False, True, True])]:
        assert result.dtype is gradlab.bool
        assert result.grad_fn is None and not result.requires_grad
        assert result.tolist() == expected
    assert ((x > 0) & (x < 2)).tolist() == [True, False, False]
    assert ((x > 0) | (x < -1)).tolist() == [True, True, True]
    assert (~(x > 0)).tolist() == [False, True, False]


def test_isnan_isinf_isfinite():
    x = gradlab.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    assert x.isnan().tolist() == [False, True, False, False]
    assert x.isinf().tolist() == [False, False, True, True]
    assert x.isfinite().tolist() == [True, False, False, False]


def test_integer_tensor_exp_gives_float():
    out = gradlab.tensor([0, 1]).exp()
    assert out.dtype is gradlab.float32
    np.testing.assert_allclose(out.numpy(), [1.0, np.e], rtol=1e-6)


def test_integer_negative_power_raises_with_fix():
    with pytest.raises(RuntimeError, match="negative integer powers.*float"):
        gradlab.tensor([1, 2]) ** -1


def test_clamp_needs_a_bound():
    with pytest.raises(RuntimeError, match="at least one"):
        gradlab.tensor([1.0]).clamp()


def test_clamp_with_tensor_bounds_sends_gradient_to_bounds():
    x = gradlab.tensor([-2.0, 0.0, 2.0], requires_grad=True)
    lo = gradlab.tensor([-1.0, -1.0, -1.0], requires_grad=True)
    hi = gradlab.tensor([1.0, 1.0, 1.0], requires_grad=True)
    x.clamp(lo, hi).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]
    assert lo.grad.tolist() == [1.0, 0.0, 0.0]
    assert hi.grad.tolist() == [0.0, 0.0, 1.0]


def test_maximum_splits_gradient_on_ties_like_torch():
    a = gradlab.tensor([1.0, 2.0], requires_grad=True)
    b = gradlab.tensor([1.0, 3.0], requires_grad=True)
    gradlab.maximum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 0.0]
    assert b.grad.tolist() == [0.5, 1.0]


def test_pow_gradient_at_zero_base_is_finite():
    a = gradlab.tensor([0.0, 2.0], requires_grad=True, dtype=gradlab.float64)
    b = gradlab.tensor([2.0, 3.0], requires_grad=True, dtype=gradlab.float64)
    (a ** b).sum().backward()
    assert np.isfinite(b.grad.numpy()).all()
    np.testing.assert_allclose(b.grad.numpy(), [0.0, 8 * np.log(2)])


def test_shapes_that_do_not_broadcast_name_the_op_and_the_rule():
    with pytest.raises(RuntimeError, match=r"mul: shapes \(2, 3\) and \(4,\) can't be "
                                           r"broadcast.*equal or one of them 1.*Fix"):
        gradlab.ones(2, 3) * gradlab.ones(4)


# --- forward-over-reverse: tangents through the backward formulas --------------------------

# Each loss sends its gradient through one op's backward; the Hessian-vector product
# H·v needs that backward's tangent rule, the fused helpers' (tanh_backward,
# sigmoid_backward, threshold_backward) included, and the tangents of what the op saved
# (its output, for tanh, sigmoid, exp and div).
SECOND_ORDER = {
    "tanh": lambda x: (gradlab.tanh(x) * x).sum(),
    "sigmoid": lambda x: (gradlab.sigmoid(x) * x).sum(),
    "relu": lambda x: (gradlab.relu(x) * x * x).sum(),
    "exp_div_pow": lambda x: (x.exp() / (x ** 2 + 1)).sum(),
    "sqrt_log_sin": lambda x: (x.abs().sqrt() * gradlab.log1p(x * x) * x.sin()).sum(),
}


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_forward_over_reverse_gives_hessian_vector_products(name):
    """d/dε ∇f(x + εv) = H·v: forward mode through a create_graph backward, against a
    central difference of the gradient."""
    loss = SECOND_ORDER[name]
    x = gradlab.tensor([0.3, -0.7, 1.1, 2.0], dtype=gradlab.float64)
    v = gradlab.tensor([1.0, -2.0, 0.5, 0.25], dtype=gradlab.float64)

    def gradient(point):
        point = point.detach().requires_grad_()
        return gradlab.autograd.grad(loss(point), point)[0].numpy()

    with fwAD.dual_level():
        dual = fwAD.make_dual(x.detach().requires_grad_(), v)
        (g,) = gradlab.autograd.grad(loss(dual), dual, create_graph=True)
        hvp = fwAD.unpack_dual(g).tangent
    assert hvp is not None, f"{name}: the gradient carries no tangent"
    eps = 1e-6
    want = (gradient(x + eps * v) - gradient(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hvp.detach().numpy(), want, rtol=1e-6, atol=1e-8)


# --- isclose, allclose, equal --------------------------------------------------------------

SPECIAL = [0.0, 1.0, -1.0, 1.0 + 1e-6, 1.0 + 1e-4, 1e-9, float("nan"), float("inf"),
           -float("inf"), 100.0, 100.001]


@needs_torch
@settings(max_examples=40, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
       seed=st.integers(0, 2**16), equal_nan=st.booleans(),
       rtol=st.sampled_from([0.0, 1e-5, 1e-3]), atol=st.sampled_from([0.0, 1e-8, 1e-2]),
       dtype=st.sampled_from(["float32", "float64"]))
def test_isclose_and_allclose_match_torch(shapes, seed, equal_nan, rtol, atol, dtype):
    rng = np.random.default_rng(seed)
    a, b = (rng.choice(SPECIAL, size=s).astype(dtype) for s in shapes.input_shapes)
    kw = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan}
    ga, gb, ta, tb = gradlab.tensor(a), gradlab.tensor(b), torch.tensor(a), torch.tensor(b)
    ours = gradlab.isclose(ga, gb, **kw).numpy()
    np.testing.assert_array_equal(ours, torch.isclose(ta, tb, **kw).numpy())
    assert ours.dtype == np.bool_
    assert ga.allclose(gb, **kw) is ta.allclose(tb, **kw)


@needs_torch
def test_isclose_of_integers_and_bools_matches_torch():
    for a, b, kw in (([1, 5], [1, 6], {"atol": 1}), ([10, 5], [11, 6], {"rtol": 0.1, "atol": 0}),
                     ([2**62, 5], [-(2**62), 6], {"rtol": 0.0, "atol": 2}),
                     ([True, False], [True, True], {})):
        ours = gradlab.isclose(gradlab.tensor(a), gradlab.tensor(b), **kw)
        theirs = torch.isclose(torch.tensor(a), torch.tensor(b), **kw)
        assert ours.tolist() == theirs.tolist() and ours.dtype is gradlab.bool


def test_isclose_is_relative_to_other_and_gives_no_graph():
    x = gradlab.tensor([100.0, 1.0], requires_grad=True)
    close = x.isclose(gradlab.tensor([100.5, 1.5]), rtol=0.01, atol=0.0)
    assert close.tolist() == [True, False] and close.grad_fn is None
    assert gradlab.allclose(x, x + 1e-9) is True
    assert gradlab.allclose(gradlab.ones(2, 3), gradlab.ones(3))  # broadcasting
    assert not gradlab.allclose(gradlab.tensor([float("nan")]), gradlab.tensor([float("nan")]))
    assert gradlab.allclose(gradlab.tensor([float("nan")]), gradlab.tensor([float("nan")]),
                            equal_nan=True)


@needs_torch
def test_equal_needs_same_shape_and_values_like_torch():
    cases = [([1, 2], [1.0, 2.0]), ([1.0, 2.0], [[1.0, 2.0]]), ([float("nan")], [float("nan")]),
             ([True, False], [1, 0]), ([[]], [[]]), ([1.0, 2.0], [1.0, 2.5])]
    for a, b in cases:
        ours = gradlab.equal(gradlab.tensor(a), gradlab.tensor(b))
        assert ours is torch.equal(torch.tensor(a), torch.tensor(b)), (a, b)
    assert gradlab.ones(2).equal(gradlab.ones(2)) is True
    assert gradlab.equal(gradlab.ones(0), gradlab.ones(0, 1)) is False


@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.isclose(gradlab.ones(2), 1.0), TypeError,
     r"isclose: other must be a Tensor, got float"),
    (lambda: gradlab.allclose([1.0], gradlab.ones(1)), TypeError,
     r"allclose: input must be a Tensor, got list"),
    (lambda: gradlab.equal(gradlab.ones(2), 1), TypeError, r"equal: other must be a Tensor"),
    (lambda: gradlab.isclose(gradlab.ones(2), gradlab.ones(2).double()), RuntimeError,
     r"input has dtype gradlab.float32 but other has gradlab.float64.*other.to"),
    (lambda: gradlab.allclose(gradlab.tensor([1, 2]), gradlab.ones(2)), RuntimeError,
     r"isclose: input has dtype gradlab.int64"),
    (lambda: gradlab.isclose(gradlab.ones(2), gradlab.ones(2), rtol=-1), RuntimeError,
     r"rtol must be greater than or equal to zero, but got -1"),
    (lambda: gradlab.isclose(gradlab.ones(2), gradlab.ones(2), atol=-1), RuntimeError,
     r"atol must be greater than or equal to zero"),
    (lambda: gradlab.allclose(gradlab.ones(2, 3), gradlab.ones(2)), RuntimeError,
     r"isclose: shapes \(2, 3\) and \(2,\) can't be broadcast"),
])
def test_closeness_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_bitwise_operators_work_bit_by_bit_like_pytorch(dtype):
    a, b = [5, 3, 0, 1], [3, 6, 7, 1]
    x, y = (gradlab.tensor(v, dtype=getattr(gradlab, dtype)) for v in (a, b))
    expected = {"&": [1, 2, 0, 1], "|": [7, 7, 7, 1], "^": [6, 5, 7, 0]}
    if dtype == "bool":
        expected = {"&": [1, 1, 0, 1], "|": [1, 1, 1, 1], "^": [0, 0, 1, 0]}
    for symbol, result in (("&", x & y), ("|", x | y), ("^", x ^ y)):
        assert result.dtype == x.dtype
        assert [int(v) for v in result.tolist()] == expected[symbol], symbol
    assert (3 & x).tolist() == (x & 3).tolist()  # the reflected forms
    if torch is not None:
        tx, ty = (torch.tensor(v, dtype=getattr(torch, dtype)) for v in (a, b))
        for ours, theirs in ((x & y, tx & ty), (x | y, tx | ty), (x ^ y, tx ^ ty),
                             (x ^ 1, tx ^ 1), (2 | x, 2 | tx)):
            assert ours.tolist() == theirs.tolist() and str(ours.dtype)[8:] == str(
                theirs.dtype)[6:]


def test_bitwise_operators_refuse_floats_and_say_why():
    with pytest.raises(TypeError, match=r"bitwise_and: needs integer or bool operands, got "
                                        r"gradlab.float32.*for masks use bool tensors"):
        gradlab.ones(2) & gradlab.ones(2)
    with pytest.raises(TypeError, match=r"bitwise_or: .*got a Python float"):
        gradlab.ones(2, dtype=gradlab.int64) | 1.5


# --- broadcast_shapes: the rule, without tensors ----------------------------------------------

@settings(max_examples=40, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=3, max_dims=4, min_side=0, max_side=3))
def test_broadcast_shapes_agrees_with_numpy_and_torch(shapes):
    got = gradlab.broadcast_shapes(*shapes.input_shapes)
    assert isinstance(got, gradlab.Size)
    assert tuple(got) == np.broadcast_shapes(*shapes.input_shapes) == shapes.result_shape
    if torch is not None:
        assert tuple(got) == tuple(torch.broadcast_shapes(*shapes.input_shapes))


def test_broadcast_shapes_takes_ints_lists_and_sizes():
    assert gradlab.broadcast_shapes() == gradlab.Size([])
    assert gradlab.broadcast_shapes(3, (2, 1)) == (2, 3)
    assert gradlab.broadcast_shapes(gradlab.zeros(2, 1).shape, [3]) == (2, 3)
    assert gradlab.broadcast_shapes((1, 0), (3, 1)) == (3, 0)


@pytest.mark.parametrize("shapes, error, match", [
    (((2, 3), (4, 3)), RuntimeError,
     r"shape 1 = \(4, 3\) can't broadcast with \(2, 3\): dim -2 has size 4 against 2.*"
     r"unsqueeze"),
    (((-1,), (3,)), ValueError, r"shape 0 = \(-1,\) has a negative size"),
    (((2.0,),), TypeError, r"shape 0 = \(2.0,\) has a float size 2.0"),
    ((2.0,), RuntimeError, r"shape 0 should be an int, a tuple of ints.*got 2.0.*t.shape"),
])
def test_broadcast_shapes_errors(shapes, error, match):
    with pytest.raises(error, match=match):
        gradlab.broadcast_shapes(*shapes)


def test_sign_of_integers_and_bools_keeps_their_dtype():
    """PyTorch: sign of an int tensor is -1/0/1 in its dtype; of a bool tensor, itself."""
    ints = gradlab.sign(gradlab.tensor([-2, 0, 3]))
    assert ints.dtype is gradlab.int64 and ints.tolist() == [-1, 0, 1]
    bools = gradlab.sign(gradlab.tensor([True, False]))
    assert bools.dtype is gradlab.bool and bools.tolist() == [True, False]
