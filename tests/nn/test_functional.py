"""``gradlab.nn.functional`` exposes the ops under PyTorch's functional names."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
import gradlab.nn.functional as F
from gradlab.ops import activation
from tests.oracle import needs_torch, torch


def test_every_functional_activation_is_exported():
    missing = [n for n in activation.FUNCTIONAL if not hasattr(F, n)]
    assert missing == []
    assert set(F.__all__) >= set(activation.FUNCTIONAL) | {"relu", "softmax", "pad"}


@needs_torch
@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh", "leaky_relu", "elu", "gelu",
                                  "silu", "softplus", "logsigmoid", "mish", "hardswish"])
def test_functional_matches_torch(name):
    x = np.linspace(-3, 3, 13)
    ours = getattr(F, name)(gradlab.tensor(x))
    theirs = getattr(torch.nn.functional, name)(torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_softmax_and_pad_through_functional():
    x = gradlab.tensor([[1.0, 2.0, 3.0]])
    np.testing.assert_allclose(F.softmax(x, dim=1).sum(1).numpy(), [1.0], rtol=1e-6)
    assert F.pad(x, (1, 2)).shape == (1, 6)
