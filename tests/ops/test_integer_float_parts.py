"""gcd, lcm, bit shifts (integer_math) and copysign, nextafter, ldexp, frexp (float_parts):
forward vs NumPy, gradients where PyTorch has them, values and dtypes vs PyTorch."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays, mutually_broadcastable_shapes

import gradlab
from tests.oracle import OpCase, away_from_zero, needs_torch, standard_op_tests, torch

BIN_VARIANTS = (((), ()), ((0, 3), (3,)), ((3, 4), ()), ((2, 1, 4), (3, 1)))


def _ints(low, high, dtype=np.int64):
    """Random integer inputs in [low, high) of ``dtype``, whatever float dtype the check
    asks for (the ops here are defined on integers)."""
    def make(rng, _float_dtype, shapes):
        return [rng.integers(low, high, s).astype(dtype) for s in shapes]
    return make


def _value_and_shift(dtype, bits):
    """Values of ``dtype`` and shift amounts that include < 0 and >= bits (out of range)."""
    info = np.iinfo(dtype)

    def make(rng, _float_dtype, shapes):
        values = rng.integers(info.min, int(info.max) + 1, shapes[0], dtype=np.int64)
        amounts = rng.integers(-3 if info.min < 0 else 0, bits + 4, shapes[1])
        return [values.astype(dtype), amounts.astype(dtype)]
    return make


def _float_and_int(rng, dtype, shapes, low=-5):
    return [rng.uniform(-2, 2, shapes[0]).astype(dtype), rng.integers(low, 6, shapes[1])]


def _float_and_natural(rng, dtype, shapes):
    """Exponents >= 0: for a negative integer exponent PyTorch 2.13's ldexp backward gives 0
    (it takes 2^other in integer arithmetic); gradlab gives 2^other (a test below)."""
    return _float_and_int(rng, dtype, shapes, low=0)


def _no_powers_of_two(rng, dtype, shapes):
    """frexp's mantissa jumps at ±2^k: keep the inputs inside (2^k, 2^(k+1)) by a margin."""
    (x,) = away_from_zero(rng, dtype, shapes, high=30.0)
    k = np.floor(np.log2(np.abs(x)))
    scaled = np.clip(np.abs(x) / 2 ** k, 1.1, 1.9)
    return [(np.sign(x) * scaled * 2 ** k).astype(dtype)]


CASES = [
    # --- float_parts ------------------------------------------------------------------------
    OpCase("copysign", lambda lib, a, b: lib.copysign(a, b), ((3, 4), (3, 4)),
           numpy=lambda np, a, b: np.copysign(a, b), inputs=away_from_zero,
           variants=BIN_VARIANTS),
    OpCase("copysign_method_number", lambda lib, a: a.copysign(-1.5), ((3, 4),),
           numpy=lambda np, a: np.copysign(a, -1.5), inputs=away_from_zero),
    OpCase("copysign_ints_to_float", lambda lib, a, b: lib.copysign(a, b), ((3, 4), (4,)),
           numpy=lambda np, a, b: np.copysign(a, b).astype(np.float32),
           inputs=_ints(-5, 5), grad=False),
    OpCase("copysign_int_and_float", lambda lib, a, b: lib.copysign(b, a), ((3, 4), (3, 4)),
           numpy=lambda np, a, b: np.copysign(b, a), inputs=_float_and_int, grad=False),
    OpCase("ldexp", lambda lib, a, b: lib.ldexp(a, b), ((3, 4), (3, 4)),
           numpy=lambda np, a, b: a * np.exp2(b), variants=BIN_VARIANTS),
    OpCase("ldexp_int_exponent", lambda lib, a, b: a.ldexp(b), ((3, 4), (4,)),
           numpy=lambda np, a, b: np.ldexp(a, b), inputs=_float_and_natural),
    OpCase("ldexp_ints_to_float", lambda lib, a, b: lib.ldexp(a, b), ((3, 4), (3, 4)),
           numpy=lambda np, a, b: np.ldexp(a, b).astype(np.float32),
           inputs=_ints(-4, 5), grad=False),
    OpCase("frexp_mantissa", lambda lib, a: lib.frexp(a).mantissa, ((3, 4),),
           numpy=lambda np, a: np.frexp(a)[0], inputs=_no_powers_of_two,
           variants=(((),), ((0, 3),))),
    OpCase("frexp", lambda lib, a: tuple(a.frexp()), ((3, 4),),
           numpy=lambda np, a: np.frexp(a), domain=(-40, 40), grad=False),
    OpCase("nextafter", lambda lib, a, b: lib.nextafter(a, b), ((3, 4), (3, 4)),
           numpy=lambda np, a, b: np.nextafter(a, b), grad=False, variants=BIN_VARIANTS,
           atol=0, rtol=0),
    OpCase("nextafter_method", lambda lib, a, b: a.nextafter(b), ((3, 4), (4,)),
           numpy=lambda np, a, b: np.nextafter(a, b), grad=False, atol=0, rtol=0),
    # --- integer_math -----------------------------------------------------------------------
    OpCase("gcd", lambda lib, a, b: lib.gcd(a, b), ((3, 4), (3, 4)),
           numpy=lambda np, a, b: np.gcd(a, b), inputs=_ints(-60, 60), grad=False,
           variants=BIN_VARIANTS, atol=0, rtol=0),
    OpCase("lcm", lambda lib, a, b: a.lcm(b), ((3, 4), (3, 4)),
           numpy=lambda np, a, b: np.lcm(a, b), inputs=_ints(-60, 60), grad=False,
           variants=BIN_VARIANTS, atol=0, rtol=0),
    OpCase("gcd_int8_int32", lambda lib, a, b: a.gcd(b.int()), ((3, 4), (4,)),
           inputs=_ints(-100, 100, np.int8), grad=False, atol=0, rtol=0),
    OpCase("left_shift", lambda lib, a, b: lib.bitwise_left_shift(a, b), ((3, 4), (3, 4)),
           numpy=lambda np, a, b: np.left_shift(a, b), inputs=_value_and_shift(np.int64, 64),
           grad=False, variants=BIN_VARIANTS, atol=0, rtol=0),
    OpCase("right_shift", lambda lib, a, b: a.bitwise_right_shift(b), ((3, 4), (3, 4)),
           numpy=lambda np, a, b: np.right_shift(a, b), inputs=_value_and_shift(np.int64, 64),
           grad=False, variants=BIN_VARIANTS, atol=0, rtol=0),
    OpCase("lshift_operator_int", lambda lib, a: a << 3, ((3, 4),),
           numpy=lambda np, a: a << 3, inputs=_ints(-1000, 1000), grad=False, atol=0, rtol=0),
    OpCase("rlshift_operator", lambda lib, a: 5 << a, ((3, 4),),
           numpy=lambda np, a: 5 << a, inputs=_ints(0, 40), grad=False, atol=0, rtol=0),
    OpCase("rshift_operator", lambda lib, a, b: a >> b, ((3, 4), (4,)),
           numpy=lambda np, a, b: a >> b, inputs=_ints(-1000, 1000), grad=False, atol=0,
           rtol=0),
    OpCase("rrshift_operator", lambda lib, a: 1000 >> a, ((3, 4),),
           numpy=lambda np, a: 1000 >> a, inputs=_ints(0, 12), grad=False, atol=0, rtol=0),
]

globals().update(standard_op_tests(CASES))

SHIFT_DTYPES = [("int8", 8), ("uint8", 8), ("int16", 16), ("int32", 32), ("int64", 64)]


@needs_torch
@pytest.mark.parametrize("dtype, bits", SHIFT_DTYPES)
@pytest.mark.parametrize("op", ["bitwise_left_shift", "bitwise_right_shift"])
def test_shifts_match_torch_in_every_integer_dtype_and_out_of_range(op, dtype, bits):
    """Amounts < 0 and >= bits are undefined in C: the result must still be PyTorch's."""
    a, b = _value_and_shift(getattr(np, dtype), bits)(np.random.default_rng(3), None,
                                                      [(64,), (64,)])
    assert ((b < 0) | (b >= bits)).any()  # the out-of-range amounts are really there
    got = getattr(gradlab, op)(gradlab.tensor(a), gradlab.tensor(b))
    want = getattr(torch, op)(torch.from_numpy(a), torch.from_numpy(b))
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@needs_torch
@pytest.mark.parametrize("amount", [1, 7, 8, 9, 257, -1, 129])
def test_python_int_amount_wraps_into_the_dtype_as_torch(amount):
    a = np.array([1, 3, 200, 255], dtype=np.uint8)
    for op in ("__lshift__", "__rshift__"):
        got = getattr(gradlab.tensor(a), op)(amount)
        want = getattr(torch.from_numpy(a), op)(amount)
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=f"{op} {amount}")
        assert got.dtype is gradlab.uint8


@settings(max_examples=30, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
       data=st.data())
def test_gcd_lcm_divide_and_are_multiples_for_any_broadcast(shapes, data):
    """gcd(a, b) divides a and b; lcm(a, b) is a multiple of both; gcd · lcm = |a · b|."""
    (sa, sb), out_shape = shapes.input_shapes, shapes.result_shape
    ints = st.integers(-1000, 1000)
    a = data.draw(arrays(np.int64, sa, elements=ints))
    b = data.draw(arrays(np.int64, sb, elements=ints))
    g = gradlab.gcd(gradlab.tensor(a), gradlab.tensor(b)).numpy()
    m = gradlab.lcm(gradlab.tensor(a), gradlab.tensor(b)).numpy()
    assert g.shape == m.shape == tuple(out_shape)
    assert (g >= 0).all() and (m >= 0).all()
    a, b = np.broadcast_to(a, out_shape), np.broadcast_to(b, out_shape)
    nonzero = g != 0
    assert (a[nonzero] % g[nonzero] == 0).all() and (b[nonzero] % g[nonzero] == 0).all()
    np.testing.assert_array_equal(g[~nonzero], 0)  # only gcd(0, 0) is 0
    np.testing.assert_array_equal(g * m, np.abs(a * b))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 2^-e of a subnormal overflows (its slope)
@settings(max_examples=30, deadline=None)
@given(x=arrays(np.float64, st.integers(0, 6),
                elements=st.floats(allow_nan=False, allow_infinity=False, width=64)))
def test_ldexp_undoes_frexp_exactly(x):
    """x = mantissa · 2^exponent, with |mantissa| in [0.5, 1) (0 for x = 0)."""
    mantissa, exponent = gradlab.frexp(gradlab.tensor(x))
    back = gradlab.ldexp(mantissa, exponent)
    np.testing.assert_array_equal(back.numpy(), x)
    m = np.abs(mantissa.numpy())
    assert ((m == 0) == (x == 0)).all() and ((m[x != 0] >= 0.5) & (m[x != 0] < 1)).all()


def test_ldexp_gradient_for_negative_integer_exponents_is_two_to_the_exponent():
    x = gradlab.tensor([1.0, 3.0, -1.0, 1.0], dtype=gradlab.float64, requires_grad=True)
    exponent = gradlab.tensor([-2, -1, 0, 3])
    out = gradlab.ldexp(x, exponent)
    assert out.dtype is gradlab.float64
    np.testing.assert_array_equal(out.detach().numpy(), [0.25, 1.5, -1.0, 8.0])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.25, 0.5, 1.0, 8.0])
    assert gradlab.autograd.gradcheck(lambda t: gradlab.ldexp(t, exponent), [x])


def test_frexp_is_a_named_tuple_that_pickles():
    result = gradlab.frexp(gradlab.tensor([3.0, -0.25]))
    mantissa, exponent = result
    assert mantissa is result.mantissa and exponent is result.exponent
    assert type(result).__name__ == "frexp" and exponent.dtype is gradlab.int32
    np.testing.assert_array_equal(exponent.numpy(), [2, -1])
    again = pickle.loads(pickle.dumps(result))
    np.testing.assert_array_equal(again.mantissa.numpy(), [0.75, -0.5])


@needs_torch
def test_copysign_gradient_at_zero_and_signed_zero_match_torch():
    """d/da copysign(a, b) is 0 where a = ±0 (PyTorch's choice), ±1 elsewhere, and b = -0.0
    counts as negative."""
    a = np.array([-2.0, 0.0, -0.0, 3.0, 0.0, 4.0])
    b = np.array([1.0, -1.0, 1.0, -2.0, -0.0, -0.0])
    ours = gradlab.tensor(a, requires_grad=True)
    theirs = torch.tensor(a, requires_grad=True)
    out_g, out_t = gradlab.copysign(ours, gradlab.tensor(b)), torch.copysign(theirs,
                                                                            torch.tensor(b))
    np.testing.assert_array_equal(np.signbit(out_g.detach().numpy()),
                                  np.signbit(out_t.detach().numpy()))
    out_g.sum().backward()
    out_t.sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
    np.testing.assert_array_equal(ours.grad.numpy(), [-1, 0, 0, -1, 0, -1])


def test_no_gradient_through_integer_ops_and_nextafter():
    x = gradlab.tensor([1.0, 2.0], requires_grad=True)
    assert not gradlab.nextafter(x, gradlab.tensor([2.0, 0.0])).requires_grad
    assert not gradlab.frexp(x).exponent.requires_grad
    assert gradlab.frexp(x).mantissa.requires_grad


def test_nextafter_steps_by_one_unit_in_the_last_place():
    one = gradlab.tensor([1.0, 1.0], dtype=gradlab.float32)
    step = gradlab.nextafter(one, gradlab.tensor([2.0, 0.0], dtype=gradlab.float32))
    np.testing.assert_array_equal(step.numpy() - 1, [np.finfo(np.float32).eps,
                                                      -np.finfo(np.float32).eps / 2])


F = gradlab.tensor([1.0, 2.0])
I = gradlab.tensor([4, 6])  # noqa: E741


@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.gcd(F, I), RuntimeError,
     r"gcd: needs integer tensors, got input of dtype gradlab.float32 and shape \(2,\)"
     r".*\.long\(\)"),
    (lambda: gradlab.lcm(I, gradlab.tensor([True, False])), RuntimeError,
     r"lcm: needs integer tensors, got other of dtype gradlab.bool"),
    (lambda: gradlab.gcd(I, 2), TypeError, r"gcd: other must be a Tensor, got int.*tensor\(2\)"),
    (lambda: F << 1, RuntimeError,
     r"bitwise_left_shift: needs integer tensors, got input of dtype gradlab.float32.*ldexp"),
    (lambda: I >> 1.5, RuntimeError,
     r"bitwise_right_shift: other must be an integer Tensor or a Python int, got float 1.5"),
    (lambda: gradlab.bitwise_left_shift(1, 2), TypeError,
     r"bitwise_left_shift: expected at least one tensor, got two numbers"),
    (lambda: gradlab.nextafter(I, I), RuntimeError,
     r"nextafter: needs floating point tensors, got gradlab.int64.*\.float\(\)"),
    (lambda: gradlab.nextafter(F, 2.0), TypeError, r"nextafter: other must be a Tensor"),
    (lambda: gradlab.frexp(I), RuntimeError,
     r"frexp: only supports floating point tensors, got gradlab.int64 with shape \(2,\)"),
    (lambda: gradlab.ldexp(F, 3), TypeError, r"ldexp: other must be a Tensor.*tensor\(3\)"),
    (lambda: gradlab.copysign(1.0, F), TypeError, r"copysign: input must be a Tensor"),
])
def test_errors_name_the_op_the_dtype_and_the_fix(call, error, match):
    with pytest.raises(error, match=match):
        call()
