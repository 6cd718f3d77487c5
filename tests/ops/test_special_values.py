"""Values and gradients at NaN and inf, where the op tables' random inputs never go.

Each case runs with lib = gradlab and lib = torch and must agree value for value
(NaN where PyTorch has NaN, +0 where it has +0). Found by sweeping every op table
with NaN, ±inf, ±0 and huge inputs (and NaN/inf output gradients) against PyTorch.
The harness's own NaN/inf-gradient check (tests/oracle.py) covers every table row;
the cases here are the inputs it can't reach: NaN inputs, kinks, masks, in-place views.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.oracle import needs_torch, torch

NAN, INF = float("nan"), float("inf")


def _f(lib):
    return lib.nn.functional


FORWARD = {
    # threshold keeps a NaN (it is not "<= threshold"), as relu does
    "threshold_nan": lambda lib: _f(lib).threshold(lib.tensor([NAN, 1.0, 0.0]), 0.5, -3.0),
    # an uneven adaptive window holding a NaN spoils only the windows that hold it
    "adaptive_avg_pool1d_nan": lambda lib: _f(lib).adaptive_avg_pool1d(
        lib.tensor([[[NAN, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]]), 3),
    "adaptive_avg_pool2d_inf": lambda lib: _f(lib).adaptive_avg_pool2d(
        lib.tensor([[[[INF, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]]]), 2),
    "interpolate_area_nan": lambda lib: _f(lib).interpolate(
        lib.tensor([[[1.0, NAN, 2.0, 3.0, 4.0]]]), size=3, mode="area"),
    # an ignored target's row counts 0 whatever its scores (padding with junk logits)
    "cross_entropy_ignored_nan_row": lambda lib: _f(lib).cross_entropy(
        lib.tensor([[0.0, 1.0, 2.0], [NAN, 0.0, 0.0]]), lib.tensor([1, -100]),
        reduction="none"),
    "cross_entropy_ignored_nan_row_mean": lambda lib: _f(lib).cross_entropy(
        lib.tensor([[0.0, 1.0, 2.0], [NAN, INF, 0.0]]), lib.tensor([1, -100])),
    "cross_entropy_ignored_smoothing": lambda lib: _f(lib).cross_entropy(
        lib.tensor([[0.0, 1.0, 2.0], [NAN, 0.0, 0.0]]), lib.tensor([1, -100]),
        label_smoothing=0.1, reduction="none"),
    "nll_loss_ignored_nan_row": lambda lib: _f(lib).nll_loss(
        lib.tensor([[0.0, -1.0, -2.0], [NAN, 0.0, 0.0]]), lib.tensor([1, -100]),
        reduction="none"),
    # NaNs are equal to each other for mode, and the most common value here
    "mode_nan": lambda lib: lib.tensor([[NAN, NAN, 1.0, 2.0]]).mode(-1)[0],  # (the index
    # among equal values is implementation-defined, in PyTorch too)
    "mvlgamma_nan": lambda lib: lib.mvlgamma(lib.tensor([NAN, 3.0]), 2),
    "sign_nan": lambda lib: lib.tensor([NAN, -2.0, 0.0, 3.0]).sign(),
}


def _arrays(result):
    items = result if isinstance(result, tuple) else (result,)
    return [np.asarray(r.tolist()) for r in items]


@needs_torch
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", FORWARD)
def test_forward_at_special_values_matches_torch(name):
    for ours, theirs in zip(*(_arrays(FORWARD[name](lib)) for lib in (gradlab, torch))):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=0)  # NaN where it has NaN
        zero = theirs == 0
        np.testing.assert_array_equal(np.signbit(ours[zero]), np.signbit(theirs[zero]))


def test_ignored_rows_count_zero_even_with_nan_scores():
    """The mean over the kept rows stays finite: padded positions can't poison a loss."""
    scores = gradlab.tensor([[0.0, 1.0, 2.0], [NAN, INF, -INF]], requires_grad=True)
    loss = gradlab.nn.functional.cross_entropy(scores, gradlab.tensor([2, -100]))
    assert np.isfinite(loss.item())
    loss.backward()
    assert scores.grad[1].tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("bad", [INF, -INF, NAN])
def test_svd_of_non_finite_input_raises_instead_of_hanging(bad):
    """LAPACK's SVD never returns on an inf: the op says so before calling it."""
    a = gradlab.tensor([[bad, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [1.0, 0.0, 1.0]])
    with pytest.raises(RuntimeError, match=r"linalg\.svd: the input matrix \(shape \(4, 3\)\) "
                                           r"holds NaN or inf entries.*isfinite"):
        gradlab.linalg.svd(a, full_matrices=False)
    with pytest.raises(RuntimeError, match=r"linalg\.svdvals: .* holds NaN or inf"):
        gradlab.linalg.svdvals(a)


def test_binary_cross_entropy_refuses_nan_probabilities():
    with pytest.raises(ValueError, match="binary_cross_entropy: all elements of input should "
                                         "be between 0 and 1"):
        gradlab.nn.functional.binary_cross_entropy(gradlab.tensor([NAN, 0.5]),
                                                   gradlab.tensor([0.0, 1.0]))


# --- gradients at NaN and inf ----------------------------------------------------------

RELU_GRAD_SPECIALS = [float("nan"), 1.0, float("inf"), float("nan"), -float("inf")]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_relu_passes_no_gradient_where_off_even_nan_or_inf(dtype):
    """An off ReLU (out <= 0) passes exactly 0, whatever the incoming gradient (PyTorch's
    threshold_backward: where(out > 0, grad, 0)); a product with the mask would give
    NaN there (inf·0). Where on, a NaN or inf gradient passes through unchanged."""
    dt = getattr(gradlab, dtype)
    x = gradlab.tensor([-1.0, 2.0, -3.0, 0.0, 4.0], dtype=dt, requires_grad=True)
    x.relu().backward(gradlab.tensor(RELU_GRAD_SPECIALS, dtype=dt))
    got = x.grad.float().numpy()
    np.testing.assert_array_equal(got, [0.0, 1.0, 0.0, 0.0, -np.inf])
    assert not np.signbit(got[[0, 2, 3]]).any(), "dropped gradients must be +0.0"


# Piecewise ops whose gradient is exactly 0 somewhere: there a NaN or inf coming in must
# give 0 (PyTorch masks with where, or returns zeros), not NaN (what grad * 0 would give).
PIECEWISE = {
    "relu": lambda lib, t: t.relu(),
    "clamp": lambda lib, t: t.clamp(-1, 1),
    "clamp_min": lambda lib, t: t.clamp_min(0),
    "clamp_max": lambda lib, t: t.clamp(max=1),
    "maximum": lambda lib, t: lib.maximum(t, lib.zeros_like(t)),
    "minimum": lambda lib, t: lib.minimum(lib.full_like(t, 0.5), t),
    "where": lambda lib, t: lib.where(t > 0, t, -t),
    "sign": lambda lib, t: t.sign(),
    "floor": lambda lib, t: t.floor(),
    "pow_0": lambda lib, t: t ** 0,
    "norm_0": lambda lib, t: lib.linalg.vector_norm(t, 0) * lib.ones_like(t),
    "hardswish": lambda lib, t: lib.nn.functional.hardswish(t),
    "hardtanh": lambda lib, t: lib.nn.functional.hardtanh(t),
}


@needs_torch
@pytest.mark.parametrize("name", PIECEWISE)
@pytest.mark.parametrize("special", [float("nan"), float("inf")])
def test_nan_and_inf_gradients_stop_where_the_derivative_is_zero_as_in_torch(name, special):
    x = np.array([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 20.0])
    grads = []
    for lib in (gradlab, torch):
        t = lib.tensor(x, requires_grad=True)
        PIECEWISE[name](lib, t).backward(lib.tensor(np.full_like(x, special)))
        grads.append(t.grad)
    if grads[1] is None:  # PyTorch sends no gradient at all (norm 0: a count)
        assert grads[0] is None
    else:
        np.testing.assert_array_equal(grads[0].numpy(), grads[1].numpy())


# Special values the random inputs of the op tables never hit: each case returns the
# gradients of its inputs, run with lib = gradlab and lib = torch, compared exactly.
def _grads(lib, values, f, out_grad=None):
    ts = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]
    out = f(lib, *ts)
    grad = lib.ones_like(out) if out_grad is None else lib.tensor(out_grad, dtype=lib.float64)
    out.backward(grad)
    return [None if t.grad is None else t.grad.numpy() for t in ts]


SPECIAL_GRADIENTS = {
    # a NaN input: the comparisons in relu/threshold/maximum are false, PyTorch passes
    "relu_nan_input": ([[NAN, 1.0, -1.0]], lambda lib, x: x.relu(), None),
    "threshold_nan_input": ([[NAN, 2.0, 0.5]], lambda lib, x: lib.nn.functional.threshold(
        x, 1.0, 0.0), None),
    "maximum_nan": ([[NAN, 1.0, 2.0], [1.0, NAN, 2.0]], lambda lib, a, b: lib.maximum(a, b), None),
    "minimum_nan": ([[NAN, 1.0, 2.0], [1.0, NAN, 2.0]], lambda lib, a, b: lib.minimum(a, b), None),
    "abs_nan": ([[NAN, -1.0, 0.0]], lambda lib, x: x.abs(), None),
    # a^b with b = 0 is flat in a, even at a = 0 (not 0·a^-1 = 0·inf)
    "pow_tensor_zero_exponent": ([[0.0, 2.0], [0.0, 0.0]], lambda lib, a, b: a ** b, None),
    "pow_exponent_at_zero_base": ([[0.0, 0.0, 0.0], [2.0, 0.0, -1.0]],
                                  lambda lib, a, b: a ** b, None),
    # an in-place change through a view: the base's gradient inside the view is exactly 0
    "inplace_zero_through_view": ([[1.0, 2.0, 3.0]], lambda lib, x: _zero_tail(x * 1),
                                  [NAN, float("inf"), NAN]),
    "multi_margin_inf_grad": ([[[0.0, 0.5, 0.0]]], lambda lib, x: lib.nn.functional.
                              multi_margin_loss(x, lib.tensor([1]), reduction="none"),
                              [float("inf")]),
}


def _zero_tail(y):
    y[1:].zero_()
    return y


@needs_torch
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 0**-1 and the like, on purpose
@pytest.mark.parametrize("name", SPECIAL_GRADIENTS)
def test_gradients_at_special_values_match_torch(name):
    values, f, out_grad = SPECIAL_GRADIENTS[name]
    ours, theirs = (_grads(lib, values, f, out_grad) for lib in (gradlab, torch))
    for g, t in zip(ours, theirs):
        assert (g is None) == (t is None)
        if t is not None:
            np.testing.assert_array_equal(g, t)


def test_sign_of_nan_is_zero_as_in_pytorch():
    x = gradlab.tensor([float("nan"), -2.0, -0.0, 0.0, 3.0])
    assert gradlab.sign(x).tolist() == [0.0, -1.0, 0.0, 0.0, 1.0]
    assert gradlab.sgn(x).tolist() == [0.0, -1.0, 0.0, 0.0, 1.0]
    assert gradlab.sign(gradlab.tensor(float("nan"))).item() == 0.0  # 0-d too


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_where_with_a_zero_picks_values_exactly_as_numpy(dtype):
    """where(cond, x, 0) and where(cond, 0, x) take a bitwise path; -0.0 and a non-float
    fill take NumPy's where. All must agree with NumPy value for value, sign of zero too."""
    dt = getattr(gradlab, dtype)
    values = [-1.5, float("nan"), float("inf"), -0.0, 2.0, -float("inf")]
    x = gradlab.tensor(values, dtype=dt)
    cond = gradlab.tensor([True, False, True, True, False, False])
    xn = x.float().numpy()
    cn = cond.numpy()
    for got, want in [(gradlab.where(cond, x, 0.0), np.where(cn, xn, 0.0)),
                      (gradlab.where(cond, 0, x), np.where(cn, 0.0, xn)),
                      (gradlab.where(cond, x, -0.0), np.where(cn, xn, -0.0)),
                      (gradlab.where(cond, x, 3.0), np.where(cn, xn, 3.0))]:
        assert got.dtype is dt
        got = got.float().numpy()
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@needs_torch
def test_relu_gradient_of_nan_and_inf_matches_torch_with_its_double_backward():
    x = np.array([-1.0, 2.0, -3.0, 0.0, 4.0])
    grad = np.array(RELU_GRAD_SPECIALS)
    results = []
    for lib in (gradlab, torch):
        xt = lib.tensor(x, requires_grad=True)
        g = lib.tensor(grad, requires_grad=True)
        (gx,) = lib.autograd.grad(xt.relu(), xt, g, create_graph=True)
        # threshold_backward is linear in grad: its own backward sends gg through the same mask
        (gg,) = lib.autograd.grad(gx, g, lib.tensor([5.0, 6.0, float("inf"), 7.0, 8.0]))
        results.append((gx.detach().numpy(), gg.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)
