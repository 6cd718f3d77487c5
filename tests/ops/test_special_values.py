"""Forward values at NaN and inf, where the op tables' random inputs never go.

Each case runs with lib = gradlab and lib = torch and must agree value for value
(NaN where PyTorch has NaN, +0 where it has +0). Found by sweeping every op table
with NaN, ±inf, ±0 and huge inputs against PyTorch.
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
