"""In-place changes through views keep the base's gradient right (CopySlices)."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.oracle import needs_torch, torch


def _run(lib, x_np, w_np):
    x = lib.tensor(x_np, requires_grad=True)
    w = lib.tensor(w_np, requires_grad=True)
    y = x * 2
    v = y.transpose(0, 1)[1]  # a view of a view of y: the second column
    v.mul_(w)
    (y * y).sum().backward()
    return y.detach().numpy().copy(), x.grad.numpy().copy(), w.grad.numpy().copy()


@needs_torch
def test_inplace_through_view_matches_torch():
    rng = np.random.default_rng(0)
    x_np, w_np = rng.standard_normal((3, 2)), rng.standard_normal(3)  # v has 3 values
    for ours, theirs in zip(_run(gradlab, x_np, w_np), _run(torch, x_np, w_np)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_inplace_through_view_changes_base_values_and_gradient():
    x = gradlab.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 1.0
    v = y[1:3]
    v.mul_(10.0)
    assert y.tolist() == [1.0, 20.0, 30.0, 4.0]
    y.sum().backward()
    # d(sum y)/dx = 1 outside the view, 10 inside it
    assert x.grad.tolist() == [1.0, 10.0, 10.0, 1.0]
    assert y.grad_fn.op == "copy_slices"


def test_view_of_leaf_requiring_grad_cannot_change_in_place():
    w = gradlab.ones(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf.*clone"):
        w[:2].mul_(2.0)


def test_view_changed_under_no_grad_keeps_values_only():
    w = gradlab.ones(4, requires_grad=True)
    with gradlab.no_grad():
        w[:2].mul_(2.0)
    assert w.tolist() == [2.0, 2.0, 1.0, 1.0]
    assert w.is_leaf


def test_buffer_filled_through_view_gets_history():
    """A buffer that doesn't require grad gains a history when a view of it is written."""
    w = gradlab.tensor([1.0, 2.0], requires_grad=True)
    buf = gradlab.zeros(4)
    buf[1:3].copy_(w * 3)
    buf.sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


# --- a view's history catches up with in-place changes made through its base or siblings ----

def _stale_views(lib):
    """Each scenario: a view made, then its memory changed in place by someone else."""
    results = []
    c = lib.arange(6.0, dtype=lib.float64).reshape(2, 3)
    # the base changed in place: the view shows it, and its gradient passes through it
    x = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
    y = x * c
    v = y[0]
    y.mul_(2)
    (v * v).sum().backward()
    results.append(x.grad)
    # two views of one base changed in turn: the second starts from the first's change
    x = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
    y = x * c
    v, w = y[0], y[:, 1]
    v.mul_(10)
    w.add_(1)
    (y * c).sum().backward()
    results.append(x.grad)
    # a view of a plain tensor whose base then takes in a value with history
    y = lib.zeros(2, 3, dtype=lib.float64)
    v = y[1]
    x = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
    y.copy_(x * c)
    results.append(lib.tensor(float(v.requires_grad)))
    (v * 2).sum().backward()
    results.append(x.grad)
    # backward from a stale view itself
    x = lib.ones(3, dtype=lib.float64, requires_grad=True)
    y = x * 1
    v = y[1:]
    y.mul_(5)
    v.sum().backward()
    results.append(x.grad)
    return results


@needs_torch
def test_stale_view_histories_match_torch():
    for ours, theirs in zip(_stale_views(gradlab), _stale_views(torch)):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_stale_view_history_without_oracle():
    x = gradlab.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    v = y[0:1]
    y.mul_(3)
    (v * 1).sum().backward()
    assert x.grad.tolist() == [3.0, 0.0]  # through the mul_, as v's value 3·x[0] says


@pytest.mark.parametrize("lib", [gradlab, pytest.param(torch, marks=needs_torch)],
                         ids=["gradlab", "torch"])
def test_a_view_made_under_no_grad_refuses_a_history_its_base_took_since(lib):
    w = lib.ones(2, 3, requires_grad=True)
    with lib.no_grad():
        v = w.t()
        w.add_(1)  # the base changed after the view was made
    # (v.requires_grad: gradlab says False, the view has no history; PyTorch says True
    # with an invalid grad_fn. Both refuse to record with it:)
    with lib.no_grad():
        assert (v * 2).sum().item() == 24.0  # still fine without recording
    with pytest.raises(RuntimeError, match="no_grad"):
        (v * lib.ones(3, 2, requires_grad=True)).sum()


def test_a_view_made_under_no_grad_of_a_plain_base_just_follows_the_values():
    y = gradlab.ones(3)
    v = y[1:]
    y.mul_(2)
    assert (v * gradlab.ones(2, requires_grad=True)).sum().item() == 4.0
