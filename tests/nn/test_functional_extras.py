"""F.relu(inplace=), F.threshold, F.one_hot and Tensor.new_*: PyTorch's calls, PyTorch's results."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.oracle import OpCase, away_from_zero, needs_torch, standard_op_tests, torch

F = gradlab.nn.functional


def _away_from(t):
    """Inputs at least 0.25 from the threshold t (the kink), on both sides."""
    def make(rng, dtype, shapes):
        return [(t + rng.uniform(0.25, 2, s) * rng.choice([-1, 1], s)).astype(dtype)
                for s in shapes]
    return make


CASES = [
    OpCase("threshold", lambda lib, x: lib.nn.functional.threshold(x, 0.5, -3.0), ((3, 4),),
           numpy=lambda np, x: np.where(x > 0.5, x, -3.0), inputs=_away_from(0.5),
           variants=(((),), ((0, 2),))),
    OpCase("torch_threshold", lambda lib, x: lib.threshold(x, -1.0, 2.0), ((5,),),
           numpy=lambda np, x: np.where(x > -1.0, x, 2.0), inputs=_away_from(-1.0)),
    OpCase("relu_inplace_on_a_result",
           lambda lib, x: lib.nn.functional.relu(x * 1.0, inplace=True), ((3, 4),),
           numpy=lambda np, x: np.maximum(x, 0), inputs=away_from_zero),
    OpCase("threshold_inplace_on_a_result",
           lambda lib, x: lib.nn.functional.threshold(x * 2.0, 0.5, 0.0, inplace=True),
           ((3, 4),), numpy=lambda np, x: np.where(2 * x > 0.5, 2 * x, 0.0),
           inputs=_away_from(0.25)),
]

globals().update(standard_op_tests(CASES))


# --- inplace= on the activations ----------------------------------------------------------------

@pytest.mark.parametrize("name, kwargs", [
    ("relu", {}), ("relu6", {}), ("elu", {}), ("selu", {}), ("celu", {}), ("leaky_relu", {}),
    ("hardtanh", {}), ("silu", {}), ("mish", {}), ("hardswish", {}), ("hardsigmoid", {}),
    ("threshold", {"threshold": 0.1, "value": 20.0}),
])
def test_inplace_overwrites_the_input_and_equals_the_out_of_place_result(name, kwargs):
    fn = getattr(F, name)
    x = gradlab.linspace(-4, 8, 13)
    expected = fn(x, **kwargs).numpy()
    y = x.clone()
    out = fn(y, **kwargs, inplace=True)
    assert out is y
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
    assert not np.allclose(y.numpy(), x.numpy())  # the values really changed


def test_relu_inplace_keeps_the_gradient_right():
    x = gradlab.tensor([-1.0, 2.0, 3.0], requires_grad=True)
    h = x * 2
    F.relu(h, inplace=True)
    h.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 2.0, 2.0])
    assert h.grad_fn.name() == "ReluBackward0"


def test_relu_inplace_on_a_leaf_that_requires_grad_explains():
    with pytest.raises(RuntimeError, match=r"relu_: a leaf tensor that requires grad"):
        F.relu(gradlab.ones(2, requires_grad=True), inplace=True)


def test_torch_relu_has_no_inplace_but_f_relu_does():
    with pytest.raises(TypeError, match="inplace"):
        gradlab.relu(gradlab.ones(2), inplace=True)
    assert F.relu is not gradlab.relu
    assert F.relu_(gradlab.tensor([-1.0, 1.0])).tolist() == [0.0, 1.0]


def test_threshold_keeps_integer_dtype():
    out = F.threshold(gradlab.tensor([1, 5, 9]), 4, 0)
    assert out.dtype is gradlab.int64 and out.tolist() == [0, 5, 9]


# --- one_hot -----------------------------------------------------------------------------------

@pytest.mark.parametrize("ids, num_classes", [
    ([0, 2, 1], 3), ([0, 2, 1], -1), ([[1, 0], [3, 3]], 5), (4, 6), ([], 4),
])
def test_one_hot_matches_the_identity_rows(ids, num_classes):
    labels = np.asarray(ids, dtype=np.int64)
    out = F.one_hot(gradlab.tensor(labels), num_classes)
    n = num_classes if num_classes != -1 else labels.max() + 1
    assert out.dtype is gradlab.int64 and not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), np.eye(n, dtype=np.int64)[labels])
    if torch is not None:
        theirs = torch.nn.functional.one_hot(torch.tensor(labels), num_classes)
        np.testing.assert_array_equal(out.numpy(), theirs.numpy())


@pytest.mark.parametrize("call, match", [
    (lambda: F.one_hot(gradlab.tensor([0.0, 1.0])), r"one_hot: expected an int64 tensor .*"
     r"float32. Fix: ids.long\(\)"),
    (lambda: F.one_hot([0, 1]), r"one_hot: expected an int64 tensor of class ids, got list"),
    (lambda: F.one_hot(gradlab.tensor([0, 3]), 3), r"one_hot: class id 3 is out of range for "
     r"num_classes=3 \(ids must be in \[0, 2\]\)"),
    (lambda: F.one_hot(gradlab.tensor([-1, 0]), 3), r"one_hot: class ids must be non-negative"),
    (lambda: F.one_hot(gradlab.tensor([], dtype=gradlab.int64)),
     r"one_hot: can't infer the number of classes from an empty tensor"),
    (lambda: F.one_hot(gradlab.tensor([0]), -2), r"one_hot: num_classes must be a "
     r"non-negative int or -1"),
])
def test_one_hot_errors_teach(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


# --- Tensor.new_* -------------------------------------------------------------------------------

NEW_CALLS = [
    ("new_zeros", lambda x: x.new_zeros(2, 3)),
    ("new_zeros_tuple", lambda x: x.new_zeros((2, 3))),
    ("new_ones", lambda x: x.new_ones(4)),
    ("new_empty_shape", lambda x: x.new_empty((0, 2)).shape),
    ("new_full", lambda x: x.new_full((2,), 7)),
    ("new_tensor", lambda x: x.new_tensor([1, 2])),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
@pytest.mark.parametrize("name, call", NEW_CALLS)
def test_new_methods_take_dtype_and_device_from_self(name, call, dtype):
    x = gradlab.ones(3, dtype=getattr(gradlab, dtype))
    out = call(x)
    if isinstance(out, gradlab.Tensor):
        assert out.dtype is x.dtype and out.device == x.device and not out.requires_grad
    if torch is not None:
        theirs = call(torch.ones(3, dtype=getattr(torch, dtype)))
        if isinstance(out, gradlab.Tensor):
            np.testing.assert_array_equal(out.numpy(), theirs.numpy())
            assert str(out.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        else:
            assert tuple(out) == tuple(theirs)


def test_new_methods_accept_dtype_device_and_requires_grad():
    x = gradlab.ones(2)
    assert x.new_ones(2, dtype=gradlab.int64).dtype is gradlab.int64
    assert x.new_zeros(2, device="cpu").device == "cpu"
    leaf = x.new_full((2, 2), 0.5, requires_grad=True)
    assert leaf.requires_grad and leaf.grad_fn is None and leaf.tolist() == [[0.5, 0.5]] * 2


def test_new_tensor_copies_a_tensor_and_suggests_clone_detach():
    x = gradlab.ones(2)
    src = gradlab.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match=r"new_tensor: to copy a tensor, data.clone\(\).detach"):
        out = x.new_tensor(src)
    src.add_(1)
    assert out.tolist() == [1.0, 2.0]


def test_new_full_needs_a_size_tuple():
    with pytest.raises(TypeError, match=r"new_full: size must be a tuple of ints .* "
                                        r"x.new_full\(\(3,\), 1\)"):
        gradlab.ones(2).new_full(3, 1)


@needs_torch
def test_new_full_uses_selfs_dtype_not_the_fill_values():
    ours = gradlab.ones(2, dtype=gradlab.int64).new_full((2,), 2.7)
    theirs = torch.ones(2, dtype=torch.int64).new_full((2,), 2.7)
    assert ours.tolist() == theirs.tolist() and ours.dtype is gradlab.int64
