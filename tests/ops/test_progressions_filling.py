"""logspace and the deprecated range (end included); scalar_tensor and the out-of-place fill."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch

# --- fill: differentiable in a 0-d tensor value, zero gradient for the input --------------

FILL = [
    OpCase("fill_tensor_value", lambda lib, x, v: lib.fill(x, v), ((3, 4), ()),
           numpy=lambda np, x, v: np.full(x.shape, v),
           variants=(((), ()), ((0, 3), ()), ((2, 1, 3), ()))),
    # gradgrad=False: the input's gradient is the constant 0, with nothing left to differentiate
    OpCase("fill_number", lambda lib, x: lib.fill(x, 2.5), ((3, 4),),
           numpy=lambda np, x: np.full(x.shape, 2.5), variants=(((),), ((0, 3),)),
           gradgrad=False),
]
globals().update(standard_op_tests(FILL, prefix="fill_"))


@needs_torch
@pytest.mark.parametrize("dtype, value", [("int64", 2.7), ("uint8", -1), ("bool", 2.5),
                                          ("int8", -128), ("float16", float("inf"))])
def test_fill_converts_the_value_as_torch_does(dtype, value):
    ours = gradlab.fill(gradlab.zeros(3, dtype=getattr(gradlab, dtype)), value)
    theirs = torch.fill(torch.zeros(3, dtype=getattr(torch, dtype)), value)
    assert ours.dtype.name == dtype and ours.tolist() == theirs.tolist()


def test_fill_leaves_its_input_alone_and_gives_the_value_its_dtype_gradient():
    x = gradlab.ones(2, 3)
    v = gradlab.tensor(4.0, dtype=gradlab.float64, requires_grad=True)
    y = gradlab.fill(x, v)
    assert x.tolist() == [[1.0] * 3] * 2 and y.tolist() == [[4.0] * 3] * 2
    assert y.dtype is gradlab.float32  # the input's dtype, not the value's
    (y * gradlab.arange(6.0).view(2, 3)).sum().backward()
    assert v.grad.dtype is gradlab.float64 and v.grad.item() == 15.0


@pytest.mark.parametrize("dtype, value", [("int8", 300), ("uint8", -300), ("float16", 1e5),
                                          ("float32", 1e300)])
def test_fill_refuses_values_the_dtype_cannot_hold(dtype, value):
    with pytest.raises(RuntimeError, match=rf"fill: value cannot be converted to type {dtype} "
                                           r"without overflow.*Fix"):
        gradlab.fill(gradlab.zeros(2, dtype=getattr(gradlab, dtype)), value)


def test_fill_errors_teach():
    with pytest.raises(RuntimeError, match=r"fill: only supports 0-dimension value tensor but "
                                           r"got a tensor of shape \(1,\).*value\[0\]"):
        gradlab.fill(gradlab.ones(2), gradlab.ones(1))
    with pytest.raises(TypeError, match="fill: value must be a number or a 0-d tensor, got str"):
        gradlab.fill(gradlab.ones(2), "1")
    with pytest.raises(TypeError, match="fill: expected a Tensor as input, got list"):
        gradlab.fill([1.0], 2.0)


# --- scalar_tensor ---------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("value, dtype", [(3, None), (True, None), (2.5, "int64"),
                                          (-1.5, "float64"), (7, "uint8")])
def test_scalar_tensor_matches_torch(value, dtype, device):
    ours = gradlab.scalar_tensor(value, dtype=dtype and getattr(gradlab, dtype), device=device)
    theirs = torch.scalar_tensor(value, dtype=dtype and getattr(torch, dtype))
    assert ours.shape == () and ours.device == device
    assert ours.dtype.name == str(theirs.dtype)[6:] and ours.item() == theirs.item()


def test_scalar_tensor_requires_grad_and_errors():
    assert gradlab.scalar_tensor(1.0, requires_grad=True).requires_grad
    assert gradlab.scalar_tensor(gradlab.tensor(2)).dtype is gradlab.float32
    with pytest.raises(TypeError, match=r"scalar_tensor: expected a number, got list.*"
                                        r"gradlab.tensor"):
        gradlab.scalar_tensor([1.0])


# --- logspace --------------------------------------------------------------------------------

LOGSPACE = [((0, 3, 4), {}), ((0, 1, 3), {"dtype": "int64"}), ((1, 0, 3), {"base": 2,
            "dtype": "int32"}), ((-2, 2, 5), {"base": 3.0, "dtype": "float64"}),
            ((0, 2, 1), {}), ((0, 2, 0), {}), ((2.5, -1.5, 7), {"base": 0.5}),
            ((0, 10, 11), {"base": 2, "dtype": "int16"}), ((-1, 1, 6), {"dtype": "float16"})]


@needs_torch
@pytest.mark.parametrize("args, kwargs", LOGSPACE)
def test_logspace_matches_torch(args, kwargs, device):
    lib_kw = lambda lib: {k: getattr(lib, v) if k == "dtype" else v  # noqa: E731
                          for k, v in kwargs.items()}
    ours = gradlab.logspace(*args, **lib_kw(gradlab), device=device)
    theirs = torch.logspace(*args, **lib_kw(torch))
    assert ours.dtype.name == str(theirs.dtype)[6:] and ours.device == device
    np.testing.assert_allclose(ours.cpu().numpy().astype(np.float64),
                               theirs.numpy().astype(np.float64), rtol=1e-6)


@settings(max_examples=30, deadline=None)
@given(start=st.floats(-5, 5), end=st.floats(-5, 5), steps=st.integers(2, 40))
def test_logspace_is_base_to_the_linspace(start, end, steps):
    got = gradlab.logspace(start, end, steps, base=2.0, dtype=gradlab.float64).numpy()
    np.testing.assert_allclose(got, 2.0 ** np.linspace(start, end, steps), rtol=1e-12)
    assert got[0] == np.power(2.0, start) and got[-1] == np.power(2.0, end)  # exact ends


def test_logspace_errors_and_tensor_ends():
    assert gradlab.logspace(gradlab.tensor(0.0), gradlab.tensor(2.0), 3).tolist() == \
        [1.0, 10.0, 100.0]
    assert gradlab.logspace(0, 1, 2, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="logspace: number of steps must be non-negative, "
                                           "got -1"):
        gradlab.logspace(0, 3, -1)
    with pytest.raises(TypeError, match="logspace: steps must be an int .* got float"):
        gradlab.logspace(0, 3, 4.0)


# --- range (deprecated; end included) ------------------------------------------------------

RANGES = [((1, 4), {}), ((1, 4, 0.5), {}), ((1, 4), {"dtype": "int64"}), ((0, 1, 0.3), {}),
          ((4, 1, -1), {}), ((0, 0), {}), ((-2.5, 2.5, 1.25), {"dtype": "float64"})]


@needs_torch
@pytest.mark.parametrize("args, kwargs", RANGES)
def test_range_matches_torch_and_warns_as_torch_does(args, kwargs):
    dtype = kwargs.get("dtype")
    with pytest.warns(UserWarning, match=r"gradlab.range is deprecated .* use gradlab.arange"):
        ours = gradlab.range(*args, dtype=dtype and getattr(gradlab, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.range(*args, dtype=dtype and getattr(torch, dtype))
    assert ours.dtype.name == str(theirs.dtype)[6:]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_range_includes_end_unlike_arange():
    with pytest.warns(UserWarning):
        r = gradlab.range(0, 3)
    assert r.tolist() == [0.0, 1.0, 2.0, 3.0] and r.dtype is gradlab.float32
    assert gradlab.arange(0, 3).tolist() == [0, 1, 2]


@pytest.mark.parametrize("args, error, match", [
    ((1, 4, 0), RuntimeError, "range: step must be nonzero"),
    ((4, 1), RuntimeError, r"range: upper bound and lower bound inconsistent with step sign.*"
                           r"Fix: range\(4.0, 1.0, -1.0\)"),
    ((4,), TypeError, "missing 1 required positional arguments: \"end\""),
    ((0, float("inf")), RuntimeError, "range: unsupported range: 0.0 -> inf"),
])
def test_range_errors_teach(args, error, match):
    with pytest.warns(UserWarning), pytest.raises(error, match=match):
        gradlab.range(*args)
