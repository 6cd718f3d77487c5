"""Result dtypes and precision as PyTorch's, where NumPy's own rules differ.

float16 and bfloat16: sums accumulate in float32, and results keep the input's dtype.

NumPy adds half floats in their own precision (only a contiguous float16 axis
gets float32 partial sums; bfloat16, from ml_dtypes, never does), so 3,000
bfloat16 ones would sum to 256. And NumPy returns float32 from a bfloat16
matrix product or from bfloat16 times a Python float. PyTorch accumulates in
float32 and rounds back to the input's dtype; these cases check gradlab does
too, against PyTorch when it is installed and against exact answers always.
Mixed dtypes promote as PyTorch's do (the losses at the end).
"""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.oracle import needs_torch, torch

HALF = ["float16", "bfloat16"]


def _f(lib):
    return lib.nn.functional


# name -> fn(lib, dtype): long inputs, where low-precision accumulation goes visibly wrong
ACCUMULATING = {
    "sum": lambda lib, dt: lib.ones(3000, dtype=dt).sum(),
    "sum_strided_axis": lambda lib, dt: lib.ones(3000, 2, dtype=dt).sum(0),
    "mean": lambda lib, dt: lib.ones(3000, 2, dtype=dt).mean(0),
    "var": lambda lib, dt: lib.ones(3000, 2, dtype=dt).var(0),
    "std": lambda lib, dt: lib.full((3000,), 2.0, dtype=dt).std(),
    "norm": lambda lib, dt: lib.full((100,), 300.0, dtype=dt).norm(),  # 300² overflows f16
    "cumsum": lambda lib, dt: lib.ones(3000, dtype=dt).cumsum(0)[-1],
    "logsumexp": lambda lib, dt: lib.zeros(3000, dtype=dt).logsumexp(0),
    "softmax": lambda lib, dt: lib.zeros(3000, dtype=dt).softmax(0).sum(),
    "log_softmax": lambda lib, dt: lib.zeros(3000, dtype=dt).log_softmax(0)[0],
    "mse_loss": lambda lib, dt: _f(lib).mse_loss(lib.ones(3000, dtype=dt),
                                                  lib.zeros(3000, dtype=dt), reduction="sum"),
    "einsum_sum": lambda lib, dt: lib.einsum("ij->", lib.ones(3000, 2, dtype=dt)),
}
EXACT = {"sum": 3000, "sum_strided_axis": 3000, "mean": 1, "var": 0, "std": 0, "norm": 3000,
         "cumsum": 3000, "logsumexp": np.log(3000), "softmax": 1, "log_softmax": -np.log(3000),
         "mse_loss": 3000, "einsum_sum": 6000}


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", ACCUMULATING)
def test_half_floats_accumulate_in_float32(name, dtype):
    dt = getattr(gradlab, dtype)
    out = ACCUMULATING[name](gradlab, dt)
    assert out.dtype is dt
    # within the rounding of the result itself (bfloat16 keeps 8 bits: 3000 -> 3008)
    np.testing.assert_allclose(out.float().numpy(), EXACT[name], rtol=1e-2, atol=1e-2)


# name -> fn(lib, x) on a bfloat16 (or float16) x: the result must keep that dtype
KEEPING = {
    "matmul": lambda lib, x: x @ x.mT,
    "mm": lambda lib, x: lib.mm(x, x.mT),
    "addmm": lambda lib, x: lib.addmm(x[:, :2], x, x.mT[:, :2], alpha=0.5),
    "linear": lambda lib, x: _f(lib).linear(x, x, x[0]),
    "einsum": lambda lib, x: lib.einsum("ij,kj->ik", x, x),
    "tensordot": lambda lib, x: lib.tensordot(x, x, dims=([1], [1])),
    "conv2d": lambda lib, x: _f(lib).conv2d(x.reshape(1, 1, 3, 3), x[:2, :2].reshape(1, 1, 2, 2)),
    "sdpa": lambda lib, x: _f(lib).scaled_dot_product_attention(x[None], x[None], x[None]),
    "leaky_relu": lambda lib, x: _f(lib).leaky_relu(x, 0.1),
    "elu": lambda lib, x: _f(lib).elu(x),
    "selu": lambda lib, x: _f(lib).selu(x),
    "gelu": lambda lib, x: _f(lib).gelu(x),
    "gelu_tanh": lambda lib, x: _f(lib).gelu(x, approximate="tanh"),
    "softplus": lambda lib, x: _f(lib).softplus(x),
    "smooth_l1_loss": lambda lib, x: _f(lib).smooth_l1_loss(x, x * 0.5),
    "huber_loss": lambda lib, x: _f(lib).huber_loss(x, x * 0.5, reduction="none"),
}


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", KEEPING)
def test_results_keep_the_half_float_dtype(name, dtype):
    dt = getattr(gradlab, dtype)
    x = gradlab.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [3.0, -2.0, 1.0]], dtype=dt)
    out = KEEPING[name](gradlab, x)
    assert out.dtype is dt, f"{name}: {out.dtype}"


@needs_torch
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", [*ACCUMULATING, *KEEPING])
def test_half_float_results_match_torch(name, dtype):
    values = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [3.0, -2.0, 1.0]]
    results = []
    for lib in (gradlab, torch):
        dt = getattr(lib, dtype)
        out = ACCUMULATING[name](lib, dt) if name in ACCUMULATING else \
            KEEPING[name](lib, lib.tensor(values, dtype=dt))
        assert str(out.dtype).split(".")[-1] == dtype
        results.append(np.asarray(out.float().tolist()))
    np.testing.assert_allclose(results[0], results[1], rtol=2e-2, atol=2e-2)


def test_einsum_sums_integers_and_bools_as_int64():
    assert gradlab.einsum("ij->", gradlab.ones(2, 3, dtype=gradlab.int32)).dtype is gradlab.int64
    assert gradlab.einsum("i->", gradlab.tensor([True, True])).item() == 2
    # no letter summed away: the dtype stays (as PyTorch)
    assert gradlab.einsum("ij->ji", gradlab.ones(1, 2, dtype=gradlab.int32)).dtype \
        is gradlab.int32


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_regression_losses_promote_input_and_target_as_pytorch(name):
    """A float32 prediction against int64 targets is a float32 loss (NumPy alone would
    subtract them in float64)."""
    loss = getattr(gradlab.nn.functional, name)(gradlab.ones(3), gradlab.tensor([0, 1, 2]))
    assert loss.dtype is gradlab.float32


def test_negative_integer_powers_of_integers_truncate_as_pytorch():
    """1/a^k rounded toward 0 (NumPy refuses integers to negative integer powers)."""
    base = gradlab.tensor([2, 1, -1, -1, 3])
    assert (base ** gradlab.tensor([-1, -2, -3, -2, 2])).tolist() == [0, 1, -1, 1, 9]
    assert (2 ** gradlab.tensor([-1, 2])).tolist() == [0, 4]


def test_all_and_any_of_uint8_give_uint8():
    x = gradlab.tensor([1, 0, 2], dtype=gradlab.uint8)
    assert x.all().dtype is gradlab.uint8 and x.any().item() == 1
    assert gradlab.tensor([True]).all().dtype is gradlab.bool


MIXED = {  # name -> fn(lib, float16 x, float32 t): the dtype PyTorch gives
    "kl_div": (lambda lib, x, t: _f(lib).kl_div(x, t, reduction="batchmean"), "float32"),
    "cross_entropy_probabilities": (lambda lib, x, t: _f(lib).cross_entropy(x, t.softmax(1)),
                                    "float32"),
    "rms_norm_float32_weight": (lambda lib, x, t: _f(lib).rms_norm(x, (3,), weight=t[0]),
                                "float16"),
    "batch_norm_float32_affine": (lambda lib, x, t: _f(lib).batch_norm(
        x, t[0] * 0, t[0], t[0], t[0] * 0), "float16"),
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's rms_norm: no fused kernel
@pytest.mark.parametrize("name", MIXED)
def test_mixed_half_and_float32_operands_give_pytorchs_dtype(name):
    fn, want = MIXED[name]
    libs = [gradlab] + ([torch] if torch is not None else [])
    for lib in libs:
        x = lib.full((2, 3), 0.5, dtype=lib.float16)
        t = lib.full((2, 3), 0.25, dtype=lib.float32)
        assert str(fn(lib, x, t).dtype).split(".")[-1] == want, lib.__name__


# --- integers and bools -----------------------------------------------------------------

INTEGER_DIVISIONS = {
    "floor_divide": lambda a, b: a // b,
    "remainder": lambda a, b: a % b,
    "div": lambda a, b: gradlab.div(a, b, rounding_mode="trunc"),
    "fmod": gradlab.fmod,
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the float division by 0, on purpose
@pytest.mark.parametrize("name", INTEGER_DIVISIONS)
def test_integer_division_by_zero_raises_as_in_pytorch(name):
    """NumPy gives 0 silently; PyTorch raises (ZeroDivisionError), and so does gradlab,
    saying what to do. Float division by zero still gives inf or NaN."""
    op = INTEGER_DIVISIONS[name]
    ints = gradlab.tensor([3, -3, 4])
    with pytest.raises(RuntimeError, match=rf"{name}: integer division by zero \(the divisor "
                                           r"is 0\)\. Fix: convert to float"):
        op(ints, 0)
    with pytest.raises(RuntimeError, match=rf"{name}: .*divisor of shape \(3,\) holds a 0"):
        op(ints, gradlab.tensor([1, 0, 2]))
    assert op(ints, gradlab.tensor([2, 2, 3])).dtype is gradlab.int64  # no zero: fine
    assert not np.isfinite(op(ints.float(), 0).numpy()).all()


def test_alpha_scales_after_promotion_and_must_be_an_integer_for_integers():
    """add/sub promote both operands first, then scale: a float64 0-d input makes the
    result float64 (scaling an int64 first by 2.5 would have given float32)."""
    out = gradlab.add(gradlab.tensor(1.0, dtype=gradlab.float64), gradlab.tensor([1, 2]),
                      alpha=2.5)
    assert out.dtype is gradlab.float64 and out.tolist() == [3.5, 6.0]
    assert gradlab.sub(gradlab.tensor([5, 6]), gradlab.tensor([1, 2]), alpha=2).tolist() == [3, 2]
    for op in (gradlab.add, gradlab.sub):
        with pytest.raises(RuntimeError, match=rf"{op.__name__}: for integer tensors "
                                               r"\(gradlab.int64\), alpha must be an integer, "
                                               r"got 2.0 .*x.float\(\)"):
            op(gradlab.tensor([1]), gradlab.tensor([1]), alpha=2.0)


def test_bools_squared_powered_or_clamped_by_numbers_count_as_int64():
    b = gradlab.tensor([True, False])
    for out in (b.square(), b ** 2, b.clamp(0, 1)):
        assert out.dtype is gradlab.int64 and out.tolist() == [1, 0]
    assert (b ** 0.5).dtype is gradlab.float32  # a float power: the default float
