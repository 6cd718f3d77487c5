"""Shared by the gradlab.func tests: float64 inputs and comparing pytrees of results."""

from __future__ import annotations

import numpy as np

import gradlab
from gradlab.func._pytree import tree_flatten

F64 = gradlab.float64


def t64(values, requires_grad=False):
    return gradlab.tensor(values, dtype=F64, requires_grad=requires_grad)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.5, 1.5, shape)


def assert_tree_close(got, expected, atol=1e-10):
    """Same structure, same values; ``expected`` may hold gradlab or torch tensors or arrays."""
    got_leaves, got_spec = tree_flatten(got)
    exp_leaves, exp_spec = tree_flatten(expected)
    assert got_spec == exp_spec
    for g, e in zip(got_leaves, exp_leaves):
        e = e.detach().numpy() if hasattr(e, "detach") else np.asarray(e)
        assert tuple(g.shape) == e.shape
        np.testing.assert_allclose(g.detach().numpy(), e, rtol=1e-9, atol=atol)
