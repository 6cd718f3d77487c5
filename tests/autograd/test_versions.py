"""In-place changes and version counters: wrong gradients become errors that teach."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.oracle import needs_torch, torch


def leaf(values):
    return gradlab.tensor(values, requires_grad=True)


def test_in_place_ops_bump_the_version_shared_by_views():
    t = gradlab.zeros(2, 2)
    view = t.reshape(4)
    assert t._version == view._version == 0
    t.add_(1)
    assert t._version == view._version == 1
    view.mul_(3)
    assert t._version == 2 and t.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    t2 = t.clone()
    assert t2._version == 0


def test_changing_a_saved_input_is_caught_at_backward():
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    h = x * 2
    y = h * h  # saves h
    h.mul_(3)
    with pytest.raises(RuntimeError, match=r"modified by an in-place operation: an input of "
                                           r"'mul' \(node \d+\), shape \(2, 3\), was saved at "
                                           r"version 0 and is now at version 1\. Fix: .*clone"):
        y.sum().backward()


def test_changing_a_saved_output_is_caught_at_backward():
    x = leaf([1.0, 2.0])
    y = x.exp()  # saves its output
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"output 0 of 'exp'.*shape \(2,\).*version 0 .* "
                                           r"version 1"):
        y.sum().backward()


def test_changing_through_a_view_is_caught():
    base = leaf([1.0, 2.0, 3.0, 4.0]) * 1
    w = base.reshape(2, 2) * base.reshape(2, 2)  # saves the views
    with gradlab.no_grad():
        base.add_(1)
    with pytest.raises(RuntimeError, match=r"an input of 'mul'.*shape \(2, 2\)"):
        w.sum().backward()


def test_changing_an_unsaved_tensor_is_fine():
    x = leaf([1.0, 2.0])
    a = x * 1
    b = a.exp()  # exp saves its output, not a
    a.mul_(2)
    b.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]), rtol=1e-6)


def test_the_suggested_fix_works():
    x = leaf([1.0, 2.0])
    h = x * 2
    y = h * h
    h = h * 3  # out of place: the saved h is untouched
    y.sum().backward()
    assert x.grad.tolist() == [8.0, 16.0]


def test_in_place_op_gradients_are_right():
    x = leaf([1.0, 2.0])
    a = x * 1
    a.mul_(3)
    a.add_(x)
    assert a.grad_fn.name() == "AddBackward0"
    a.sum().backward()  # a = 3x + x
    assert x.grad.tolist() == [4.0, 4.0]


def test_in_place_op_that_needs_the_old_value():
    x = leaf([1.0, 2.0])
    a = x * 1
    a.mul_(a.detach() + 1)  # a_new = a * (a + 1) with the factor constant
    a.exp_()
    a.sum().backward()
    expected = np.exp(np.array([2.0, 6.0])) * np.array([2.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_in_place_on_a_leaf_that_requires_grad():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"add_: a leaf tensor that requires grad "
                                           r"\(shape \(2,\)\) can't be changed in place.*"
                                           r"no_grad"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="mul_: a leaf tensor"):
        x *= 2
    with gradlab.no_grad():
        x.add_(1)
    assert x.tolist() == [2.0, 3.0] and x.is_leaf and x._version == 1


def test_in_place_on_a_tensor_without_grad_gains_history():
    x = leaf([1.0, 2.0])
    buf = gradlab.zeros(2)
    buf.add_(x * 3)
    assert buf.requires_grad and not buf.is_leaf
    buf.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_in_place_refuses_a_wider_result_type():
    t = gradlab.zeros(2, dtype=gradlab.int64)
    with pytest.raises(RuntimeError, match=r"add_: the result type gradlab.float32 can't be "
                                           r"cast to .*int64.*Fix"):
        t.add_(1.5)
    with pytest.raises(RuntimeError, match="div_: true division of a gradlab.int64"):
        t.div_(2)


def test_zero_fill_and_copy():
    t = gradlab.ones(2, 2)
    assert t.zero_() is t and t.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    t.fill_(3)
    assert t.tolist() == [[3.0, 3.0], [3.0, 3.0]] and t._version == 2
    t.copy_(gradlab.tensor([1, 2]))  # broadcast and cast
    assert t.tolist() == [[1.0, 2.0], [1.0, 2.0]]
    with pytest.raises(RuntimeError, match=r"copy_: source of shape \(3,\) can't be broadcast"):
        t.copy_(gradlab.ones(3))


def test_copy_sends_the_gradient_to_the_source():
    src = leaf([1.0, 2.0])
    dst = gradlab.zeros(3, 2)
    dst.copy_(src * 2)
    dst.sum().backward()
    assert src.grad.tolist() == [6.0, 6.0]


def test_clamp_with_tensor_bounds_in_place():
    x = leaf([1.0, -2.0, 3.0])
    a = x * 1
    a.clamp_(min=gradlab.tensor([0.0, 0.0, 5.0]))
    assert a.tolist() == [1.0, 0.0, 5.0]
    a.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0]


def test_in_place_cannot_change_the_shape():
    t = gradlab.zeros(3)
    with pytest.raises(RuntimeError, match=r"add_: the result has shape \(2, 3\) but the tensor "
                                           r"has shape \(3,\).*out-of-place"):
        t.add_(gradlab.ones(2, 3))
    assert t.tolist() == [0.0, 0.0, 0.0] and t._version == 0


def test_in_place_node_names():
    x = leaf([1.0])
    a = x * 1
    a.mul_(2)
    assert a.grad_fn.op == "mul_" and a.grad_fn.name() == "MulBackward0"


def test_old_values_are_kept_only_when_backward_needs_them():
    x = leaf([1.0] * 250)  # 1000 bytes
    a = x * 1
    before = gradlab.memory_allocated()
    a.add_(1)  # add's backward needs no values: nothing kept
    assert gradlab.memory_allocated() == before
    a.mul_(a.detach())  # mul's backward needs the old a: one copy kept
    assert gradlab.memory_allocated() == before + 1000


def _second_derivative(lib, name, values):
    x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    y = x * 1
    if name == "pow_":
        y.pow_(3)
    elif name == "mul_":
        y.mul_(x)
    elif name == "sqrt_":
        y.abs_()
        y.sqrt_()
    else:
        getattr(y, name)()
    (d1,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    (d2,) = lib.autograd.grad(d1.sum(), x)
    return d2.numpy()


@pytest.mark.parametrize("name", ["exp_", "sigmoid_", "tanh_", "sqrt_", "pow_", "mul_"])
def test_second_derivatives_through_in_place_ops(name):
    values = [0.5, -1.0, 2.0]
    expected = {  # d2/dx2 of f(x), summed over the one-to-one map
        "exp_": np.exp(values),
        "sigmoid_": [(s := 1 / (1 + np.exp(-v))) * (1 - s) * (1 - 2 * s) for v in values],
        "tanh_": [-2 * np.tanh(v) * (1 - np.tanh(v) ** 2) for v in values],
        "sqrt_": [-0.25 * abs(v) ** -1.5 for v in values],
        "pow_": [6 * v for v in values],
        "mul_": [2.0, 2.0, 2.0],
    }[name]
    np.testing.assert_allclose(_second_derivative(gradlab, name, values), expected, rtol=1e-10)


@needs_torch
@pytest.mark.parametrize("name", ["exp_", "sigmoid_", "tanh_", "sqrt_", "pow_", "mul_"])
def test_second_derivatives_through_in_place_ops_match_torch(name):
    values = [0.5, -1.0, 2.0]
    np.testing.assert_allclose(_second_derivative(gradlab, name, values),
                               _second_derivative(torch, name, values), rtol=1e-10)
