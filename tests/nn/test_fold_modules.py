"""nn.Unfold and nn.Fold: the sliding-window layers, their repr, and values vs PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab import nn
from gradlab.ops import sliding_windows
from tests.oracle import needs_torch, torch


@pytest.mark.parametrize("make, text", [
    (lambda lib: lib.nn.Unfold(2), "Unfold(kernel_size=2, dilation=1, padding=0, stride=1)"),
    (lambda lib: lib.nn.Unfold((2, 3), dilation=2, padding=(1, 0), stride=1),
     "Unfold(kernel_size=(2, 3), dilation=2, padding=(1, 0), stride=1)"),
    (lambda lib: lib.nn.Fold((4, 4), 2, stride=2),
     "Fold(output_size=(4, 4), kernel_size=2, dilation=1, padding=0, stride=2)"),
])
def test_repr_and_no_parameters(make, text):
    layer = make(gradlab)
    assert repr(layer) == text
    assert list(layer.parameters()) == [] and layer.state_dict() == {}
    if torch is not None:
        assert repr(make(torch)) == text


def test_layers_call_their_ops():
    x = gradlab.randn(2, 3, 5, 6)
    unfold = nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    cols = unfold(x)
    want = sliding_windows.unfold(x, (2, 3), (1, 2), 1, (2, 1))
    assert cols.shape == (2, 18, 12)
    np.testing.assert_array_equal(cols.numpy(), want.numpy())
    fold = nn.Fold((5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    np.testing.assert_array_equal(fold(cols).numpy(),
                                  sliding_windows.fold(want, (5, 6), (2, 3), (1, 2), 1,
                                                       (2, 1)).numpy())


def test_non_overlapping_unfold_then_fold_is_the_identity():
    """Windows that tile the image (stride = kernel) cover each pixel once."""
    x = gradlab.randn(2, 3, 4, 6, requires_grad=True)
    y = nn.Sequential(nn.Unfold(2, stride=2), nn.Fold((4, 6), 2, stride=2))(x)
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3, 4, 6)))


def test_fold_layer_reports_a_window_count_mismatch():
    with pytest.raises(RuntimeError, match=r"fold: expected L = 9 windows for output_size "
                                           r"\(4, 4\)"):
        nn.Fold((4, 4), 2)(gradlab.zeros(1, 12, 8))


@needs_torch
def test_values_and_gradients_match_pytorch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 5, 5))
    results = []
    for lib in (gradlab, torch):
        t = lib.tensor(x, requires_grad=True)
        cols = lib.nn.Unfold(3, padding=1, stride=2)(t)
        out = lib.nn.Fold((5, 5), 3, padding=1, stride=2)(cols * cols)
        out.backward(lib.tensor(np.arange(50.0).reshape(2, 1, 5, 5).repeat(2, 1)))
        results.append((cols.detach().numpy(), out.detach().numpy(), t.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
