"""Tensor hooks, node hooks and retain_grad: seeing and changing gradients on the way."""

from __future__ import annotations

import pytest

import gradlab
from tests.oracle import needs_torch, torch


def leaf(values):
    return gradlab.tensor(values, requires_grad=True)


def test_hook_on_a_leaf_sees_and_replaces_the_gradient():
    x = leaf([1.0, 2.0])
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    (x * x).sum().backward()
    assert seen == [[2.0, 4.0]]  # called once, with the summed gradient
    assert x.grad.tolist() == [20.0, 40.0]
    handle.remove()
    x.grad = None
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0] and len(seen) == 1


def test_hook_returning_none_keeps_the_gradient():
    x = leaf([1.0])
    x.register_hook(lambda g: None)
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0]


def test_hook_on_a_non_leaf_changes_what_flows_on():
    x = leaf([1.0, 2.0])
    h = x * 2
    seen = []
    h.register_hook(lambda g: seen.append(g.tolist()) or g * 0 + 1)
    (h * 3).sum().backward()
    assert seen == [[3.0, 3.0]]
    assert x.grad.tolist() == [2.0, 2.0]  # d(h)/dx = 2 times the replaced gradient 1
    assert h.grad is None  # a non-leaf keeps no .grad without retain_grad


def test_hooks_run_in_order_each_seeing_the_last_result():
    x = leaf([1.0])
    x.register_hook(lambda g: g + 1)
    x.register_hook(lambda g: g * 10)
    (x * 1).sum().backward()
    assert x.grad.tolist() == [20.0]


def test_handle_as_context_manager():
    x = leaf([1.0])
    with x.register_hook(lambda g: g * 100):
        pass
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0]


def test_hooks_apply_to_autograd_grad_too():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: g * 2)
    (g,) = gradlab.autograd.grad((x * x).sum(), x)
    assert g.tolist() == [4.0, 8.0] and x.grad is None


def test_hook_on_a_tensor_without_grad():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        gradlab.ones(2).register_hook(lambda g: g)


def test_retain_grad_keeps_a_non_leaf_gradient():
    x = leaf([1.0, 2.0])
    h = x * 2
    h.retain_grad()
    assert h.retains_grad and not x.retains_grad
    (h * h).sum().backward(retain_graph=True)  # h's own node is needed again below
    assert h.grad.tolist() == [4.0, 8.0] and not h.grad.requires_grad
    (h * h).sum().backward()  # accumulates like a leaf's
    assert h.grad.tolist() == [8.0, 16.0]


def test_retain_grad_sees_the_hooked_gradient():
    x = leaf([1.0])
    h = x * 2
    h.retain_grad()
    h.register_hook(lambda g: g * 5)
    (h * 1).sum().backward()
    assert h.grad.tolist() == [5.0] and x.grad.tolist() == [10.0]


def test_retain_grad_on_a_leaf_is_a_no_op_and_needs_requires_grad():
    x = leaf([1.0])
    x.retain_grad()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0]
    with pytest.raises(RuntimeError, match="retain_grad on a tensor that doesn't require grad"):
        gradlab.ones(1).retain_grad()


def test_node_post_hook_sees_both_sides_and_may_replace():
    x = leaf([1.0, 2.0])
    y = x * 3
    calls = []

    def hook(grad_inputs, grad_outputs):
        calls.append((grad_inputs[0].tolist(), grad_outputs[0].tolist()))
        return (grad_inputs[0] * 0, grad_inputs[1])

    handle = y.grad_fn.register_hook(hook)
    y.sum().backward(retain_graph=True)
    assert calls == [([3.0, 3.0], [1.0, 1.0])]
    assert x.grad.tolist() == [0.0, 0.0]
    handle.remove()
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_post_accumulate_grad_hooks_run_after_each_accumulation():
    w = gradlab.ones(3, requires_grad=True)
    seen = []
    handle = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (w * 2).sum().backward()
    (w * 3).sum().backward()
    assert seen == [[2.0] * 3, [5.0] * 3]  # the accumulated .grad, each time
    gradlab.autograd.grad((w * 4).sum(), w)  # nothing accumulates: no call
    handle.remove()
    (w * 1).sum().backward()
    assert len(seen) == 2


def test_post_accumulate_grad_hook_errors():
    w = gradlab.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (w * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        gradlab.ones(2).register_post_accumulate_grad_hook(lambda t: None)
    w.register_post_accumulate_grad_hook(lambda t: t.grad)
    with pytest.raises(RuntimeError, match="must return None"):
        w.sum().backward()


@needs_torch
def test_post_accumulate_grad_hook_sees_what_torch_sees():
    seen = {}
    for lib in (gradlab, torch):
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        got = seen[lib.__name__] = []
        w.register_post_accumulate_grad_hook(lambda t, got=got: got.append(t.grad.tolist()))
        for k in (1.0, 2.0):
            (w * w * k).sum().backward()
    assert seen["gradlab"] == seen["torch"]
