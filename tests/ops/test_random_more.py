"""Random fills (cauchy_, log_normal_, geometric_, random_) and per-element draws (bernoulli,
poisson, binomial): seeded reproducibility, and distributions checked on large fixed-seed
samples with bounds many standard errors wide (so they cannot flake)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
from tests.oracle import needs_torch, torch

N = 200_000  # draws per distribution check: a standard error of ~0.2% of the spread

DRAWS = {
    "cauchy_": lambda **kw: gradlab.empty(50).cauchy_(1.0, 2.0, **kw),
    "log_normal_": lambda **kw: gradlab.empty(50, dtype=gradlab.float64).log_normal_(**kw),
    "geometric_": lambda **kw: gradlab.empty(50, dtype=gradlab.int64).geometric_(0.3, **kw),
    "random_": lambda **kw: gradlab.empty(50, dtype=gradlab.int32).random_(**kw),
    "random_to": lambda **kw: gradlab.empty(50).random_(1000, **kw),
    "random_from_to": lambda **kw: gradlab.empty(50, dtype=gradlab.int16).random_(-9, 99, **kw),
    "bernoulli": lambda **kw: gradlab.bernoulli(gradlab.full((50,), 0.5), **kw),
    "bernoulli_p": lambda **kw: gradlab.bernoulli(gradlab.empty(50), 0.3, **kw),
    "Tensor.bernoulli": lambda **kw: gradlab.full((50,), 0.5).bernoulli(**kw),
    "poisson": lambda **kw: gradlab.poisson(gradlab.full((50,), 3.0), **kw),
    "binomial": lambda **kw: gradlab.binomial(gradlab.full((50,), 10.0),
                                              gradlab.tensor(0.4), **kw),
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_same_seed_same_numbers_and_generators_are_independent(name):
    draw = DRAWS[name]
    gradlab.manual_seed(11)
    first, second = draw().tolist(), draw().tolist()
    gradlab.manual_seed(11)
    assert draw().tolist() == first and first != second
    gradlab.manual_seed(11)
    private = draw(generator=gradlab.Generator().manual_seed(5)).tolist()
    assert draw().tolist() == first  # the private stream left the global one alone
    assert draw(generator=gradlab.Generator().manual_seed(5)).tolist() == private


# --- the continuous fills --------------------------------------------------------------------


def test_cauchy_median_and_quartiles():
    gradlab.manual_seed(0)
    x = gradlab.empty(N, dtype=gradlab.float64).cauchy_(1.5, 2.0).numpy()
    q1, median, q3 = np.quantile(x, [0.25, 0.5, 0.75])
    # the sample median's standard error is pi * sigma / (2 sqrt(N)) = 0.007: bounds of ~9 se
    assert abs(median - 1.5) < 0.06 and abs(q1 - (1.5 - 2.0)) < 0.08 and \
        abs(q3 - (1.5 + 2.0)) < 0.08


def test_log_normal_has_a_normal_log():
    gradlab.manual_seed(0)
    x = gradlab.empty(N, dtype=gradlab.float64).log_normal_(0.5, 0.75).numpy()
    assert x.min() > 0
    logs = np.log(x)
    assert abs(logs.mean() - 0.5) < 0.015 and abs(logs.std() - 0.75) < 0.012  # ~9 se


@pytest.mark.parametrize("dtype", ["float32", "int64", "int16"])
def test_geometric_counts_trials_to_the_first_success(dtype):
    gradlab.manual_seed(0)
    p = 0.3
    x = gradlab.empty(N, dtype=getattr(gradlab, dtype)).geometric_(p).numpy().astype(np.float64)
    assert x.min() == 1 and np.all(x == np.round(x))
    mean_se = math.sqrt((1 - p) / p**2 / N)
    assert abs(x.mean() - 1 / p) < 9 * mean_se
    assert abs((x == 1).mean() - p) < 9 * math.sqrt(p * (1 - p) / N)  # P(1) = p
    assert abs((x == 2).mean() - (1 - p) * p) < 0.01


@pytest.mark.parametrize("dtype, high", [("int8", 127), ("uint8", 255), ("bool", 1),
                                         ("float16", 2**11), ("bfloat16", 2**8)])
def test_random_fills_the_dtypes_exact_range(dtype, high):
    gradlab.manual_seed(0)
    x = gradlab.empty(N, dtype=getattr(gradlab, dtype)).random_().numpy().astype(np.int64)
    assert x.min() == 0 and x.max() == high  # both ends reachable, nothing beyond
    counts = np.bincount(x)
    expected = N / (high + 1)
    assert np.all(np.abs(counts - expected) < 9 * math.sqrt(expected) + 1)  # uniform


def test_random_wide_dtypes_stay_representable():
    gradlab.manual_seed(0)
    f = gradlab.empty(N).random_().numpy()
    assert f.max() <= 2**24 and f.max() > 2**24 * 0.99 and np.all(f == np.round(f))
    d = gradlab.empty(1000, dtype=gradlab.float64).random_().numpy()
    assert d.max() <= 2**53 and d.max() > 2**52
    big = gradlab.empty(1000, dtype=gradlab.int64).random_().numpy()
    assert big.min() >= 0 and big.max() > 2**62


@pytest.mark.parametrize("args, values", [((3,), range(3)), ((-5, 3), range(-5, 3)),
                                          ((120, None), range(120, 128)), ((0, 1), [0])])
def test_random_ranges(args, values):
    x = gradlab.empty(20_000, dtype=gradlab.int8).random_(*args)
    assert sorted(set(x.tolist())) == list(values)


@needs_torch
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float32", "bool"])
def test_random_keeps_dtype_and_range_like_torch(dtype):
    ours = gradlab.empty(5000, dtype=getattr(gradlab, dtype)).random_(0, 2)
    theirs = torch.empty(5000, dtype=getattr(torch, dtype)).random_(0, 2)
    assert ours.dtype.name == str(theirs.dtype)[6:]
    assert sorted(set(ours.tolist())) == sorted(set(theirs.tolist()))


@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.empty(3).cauchy_(0, 0), RuntimeError,
     r"cauchy_ expects sigma > 0.0, but found sigma=0"),
    (lambda: gradlab.empty(3).log_normal_(1, -1), RuntimeError,
     r"log_normal_ expects std > 0.0, but found std=-1"),
    (lambda: gradlab.empty(3).geometric_(1), RuntimeError,
     r"geometric_ expects p to be in \(0, 1\), but got p=1"),
    (lambda: gradlab.empty(3, dtype=gradlab.int64).cauchy_(), RuntimeError, "cauchy_"),
    (lambda: gradlab.empty(3, dtype=gradlab.int64).log_normal_(), RuntimeError, "log_normal_"),
    (lambda: gradlab.empty(3, dtype=gradlab.int8).random_(5, 5), RuntimeError,
     r"random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    (lambda: gradlab.empty(3, dtype=gradlab.int8).random_(-200, 3), RuntimeError,
     r"random_: from is out of bounds for gradlab.int8, which holds -128..127.*Fix"),
    (lambda: gradlab.empty(3, dtype=gradlab.uint8).random_(0, 300), RuntimeError,
     r"random_: to - 1 is out of bounds for gradlab.uint8"),
    (lambda: gradlab.empty(3, dtype=gradlab.int8).random_(0.5, 3), RuntimeError,
     r"random_: 'from' must be a whole number, got 0.5"),
    (lambda: gradlab.ones(3, requires_grad=True).random_(), RuntimeError, "random_"),
])
def test_fill_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_random_beyond_a_floats_exact_integers_warns_as_torch_does():
    with pytest.warns(UserWarning, match=r"random_: to - 1 is out of bounds \[-\(2\^24\), "
                                         r"2\^24\]"):
        gradlab.empty(3).random_(0, 2**25)


def test_fills_are_in_place_and_bump_the_version():
    x = gradlab.empty(4)
    v = x._version
    assert x.cauchy_() is x and x.log_normal_() is x and x.geometric_(0.5) is x
    assert x.random_() is x and x._version == v + 4


# --- bernoulli, poisson, binomial ------------------------------------------------------------


def test_bernoulli_frequencies_follow_the_probabilities():
    gradlab.manual_seed(0)
    p = gradlab.tensor([0.0, 0.1, 0.5, 0.9, 1.0], dtype=gradlab.float64)
    draws = gradlab.bernoulli(p.expand(N // 5, 5)).numpy()
    assert draws.dtype == np.float64 and set(np.unique(draws)) <= {0.0, 1.0}
    se = np.sqrt(p.numpy() * (1 - p.numpy()) / (N // 5))
    assert np.all(np.abs(draws.mean(0) - p.numpy()) <= 9 * se + 1e-12)
    const = gradlab.bernoulli(gradlab.empty(N, dtype=gradlab.int64), 0.25)
    assert const.dtype is gradlab.int64 and abs(const.float().mean().item() - 0.25) < 0.01


@pytest.mark.parametrize("rate", [0.0, 0.5, 4.0, 100.0])
def test_poisson_mean_and_variance_are_the_rate(rate):
    gradlab.manual_seed(0)
    x = gradlab.poisson(gradlab.full((N,), rate, dtype=gradlab.float64)).numpy()
    assert np.all(x == np.round(x)) and x.min() >= 0
    assert abs(x.mean() - rate) <= 9 * math.sqrt(rate / N)
    assert abs(x.var() - rate) <= 9 * math.sqrt((2 * rate**2 + rate) / N)


def test_binomial_mean_variance_and_broadcasting():
    gradlab.manual_seed(0)
    count = gradlab.tensor([[10.0], [50.0]])
    prob = gradlab.tensor([0.2, 0.7, 1.0])
    x = gradlab.binomial(count.expand(2, 3).repeat(N // 20, 1), prob).numpy()
    assert x.shape == (N // 10, 3) and x.dtype == np.float32
    n = np.tile([[10.0], [50.0]], (N // 20, 1)) * np.ones(3)
    p = np.array([0.2, 0.7, 1.0])
    for row in (0, 1):
        sel, mean = x[row::2], n[row] * p
        se = np.sqrt(n[row] * p * (1 - p) / len(sel))
        assert np.all(np.abs(sel.mean(0) - mean) <= 9 * se + 1e-12)
    assert np.all(x[:, 2] == n[:, 2])  # prob 1: every trial succeeds


def test_binomial_and_poisson_of_a_single_value_are_0_d():
    """NumPy returns a plain int for one draw; the op still gives a 0-d tensor."""
    gradlab.manual_seed(0)
    one = gradlab.binomial(gradlab.tensor(3.0), gradlab.tensor(0.5))
    rate = gradlab.poisson(gradlab.tensor(3.0, dtype=gradlab.float64))
    assert one.shape == () and one.dtype is gradlab.float32 and 0 <= one.item() <= 3
    assert rate.shape == () and rate.dtype is gradlab.float64 and rate.item() >= 0


@needs_torch
@pytest.mark.parametrize("name", ["bernoulli", "poisson"])
def test_draws_give_their_parameter_a_zero_gradient_as_torch_does(name):
    results = []
    for lib in (gradlab, torch):
        param = lib.full((4,), 0.5, dtype=lib.float64, requires_grad=True)
        out = getattr(lib, name)(param)
        (out * 3).sum().backward()
        results.append((out.requires_grad, param.grad.tolist(), str(out.dtype).split(".")[1]))
    assert results[0] == results[1] == (True, [0.0] * 4, "float64")


def test_binomial_and_constant_bernoulli_are_not_differentiable():
    count = gradlab.full((3,), 5.0, requires_grad=True)
    assert not gradlab.binomial(count, gradlab.full((3,), 0.5)).requires_grad
    assert not gradlab.bernoulli(count, 0.5).requires_grad


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_draws_keep_the_input_dtype_like_torch(dtype):
    for name, args in (("bernoulli", (0.5,)), ("poisson", (2.0,))):
        ours = getattr(gradlab, name)(gradlab.full((3,), args[0], dtype=getattr(gradlab, dtype)))
        theirs = getattr(torch, name)(torch.full((3,), args[0], dtype=getattr(torch, dtype)))
        assert ours.dtype.name == str(theirs.dtype)[6:]


@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.bernoulli(gradlab.tensor([1.5])), RuntimeError,
     r"bernoulli: expects all probabilities in \[0, 1\].*sigmoid"),
    (lambda: gradlab.bernoulli(gradlab.tensor([1, 0])), RuntimeError,
     "bernoulli: input \\(the probabilities\\) must be a floating point tensor.*float\\(\\)"),
    (lambda: gradlab.bernoulli(gradlab.ones(2), 2.0), RuntimeError,
     r"bernoulli: expects p to be a number in \[0, 1\], got 2.0"),
    (lambda: gradlab.poisson(gradlab.tensor([-1.0])), RuntimeError,
     "poisson: invalid Poisson rate, expected every rate to be non-negative"),
    (lambda: gradlab.poisson(gradlab.tensor([float("nan")])), RuntimeError, "invalid Poisson"),
    (lambda: gradlab.poisson(gradlab.tensor([1])), RuntimeError,
     "poisson: input \\(the rates\\) must be a floating point tensor"),
    (lambda: gradlab.binomial(gradlab.tensor([10]), gradlab.tensor([0.5])), RuntimeError,
     "binomial: count must be a floating point tensor"),
    (lambda: gradlab.binomial(gradlab.tensor([10.0]), gradlab.tensor([0.5], dtype="float64")),
     RuntimeError, r"binomial: count \(gradlab.float32\) and prob \(gradlab.float64\) must have "
                   r"the same dtype"),
    (lambda: gradlab.binomial(gradlab.tensor([2.5]), gradlab.tensor([0.5])), RuntimeError,
     "binomial: count must hold whole numbers >= 0"),
    (lambda: gradlab.binomial(gradlab.tensor([2.0]), gradlab.tensor([1.5])), RuntimeError,
     r"binomial: prob must hold probabilities in \[0, 1\]"),
    (lambda: gradlab.poisson([1.0]), TypeError, "poisson: expected input .* as a Tensor"),
])
def test_draw_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- normal's variants (sampling.py): shapes, dtypes and moments as PyTorch's ---------------


@needs_torch
@pytest.mark.parametrize("make", [
    lambda lib: lib.normal(lib.zeros(2, 3), 1.0),
    lambda lib: lib.normal(0.0, lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.normal(lib.zeros(2, 3), lib.ones(3)),
    lambda lib: lib.normal(0.0, 1.0, (4,), dtype=lib.float64),
    lambda lib: lib.normal(lib.zeros(2, dtype=lib.float16), 1.0),
], ids=["tensor-float", "float-tensor", "tensor-tensor", "size", "half"])
def test_normal_variants_shape_and_dtype_match_torch(make):
    ours, theirs = make(gradlab), make(torch)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype)[6:]


def test_normal_with_tensor_mean_and_std_has_those_moments():
    gradlab.manual_seed(0)
    mean = gradlab.tensor([-3.0, 0.0, 5.0], dtype=gradlab.float64)
    std = gradlab.tensor([0.5, 1.0, 4.0], dtype=gradlab.float64)
    x = gradlab.normal(mean.expand(N // 3, 3), std).numpy()
    se = std.numpy() / math.sqrt(N // 3)
    assert np.all(np.abs(x.mean(0) - mean.numpy()) < 9 * se)
    assert np.all(np.abs(x.std(0) - std.numpy()) < 9 * se)


@needs_torch
@pytest.mark.parametrize("args", ["tensor-tensor", "tensor-float", "float-tensor"])
def test_normal_of_tensors_is_in_the_graph_with_zero_gradients_like_torch(args):
    """PyTorch's normal(mean, std) records NormalBackward and sends exactly 0 to both (a
    draw, not a reparameterisation); backward through it must work, not raise."""
    grads = []
    for lib in (gradlab, torch):
        mean = lib.tensor([1.0, -2.0], requires_grad=True)
        std = lib.tensor([0.5, 2.0], requires_grad=True)
        a, b = {"tensor-tensor": (mean, std), "tensor-float": (mean, 1.0),
                "float-tensor": (0.0, std)}[args]
        y = lib.normal(a, b)
        assert type(y.grad_fn).__name__.startswith("NormalBackward")
        (y * y).sum().backward()
        grads.append([None if t.grad is None else t.grad.tolist() for t in (mean, std)])
    assert grads[0] == grads[1]
    assert any(g == [0.0, 0.0] for g in grads[0])


def test_normal_refuses_a_negative_std_tensor():
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        gradlab.normal(gradlab.zeros(2), gradlab.tensor([1.0, -1.0]))
