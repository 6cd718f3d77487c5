"""Tensor repr against PyTorch's: a table of cases, random tensors, and examples without torch."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradlab
from tests.oracle import needs_torch, torch

REPR_CASES = [
    "lib.tensor([1.5, 2.25, -3.0])",
    "lib.tensor([[1., 2., 3.], [40., 5., 6.]])",
    "lib.tensor([1, 2, 300])",
    "lib.tensor([[1, 2], [3, -40]])",
    "lib.tensor([True, False])",
    "lib.tensor(3.5)",
    "lib.tensor(-2)",
    "lib.tensor([])",
    "lib.zeros(0, 3)",
    "lib.zeros(2, 0, dtype=lib.float64, requires_grad=True)",
    "lib.arange(2000).float()",
    "lib.arange(2000)",
    "lib.arange(10000).reshape(100, 100)",
    "lib.arange(3000.).reshape(3, 1000)",
    "lib.ones(3, 40)",
    "lib.arange(30).float().reshape(3, 10) * 1.111",
    "lib.ones(2, requires_grad=True)",
    "lib.ones(2, requires_grad=True) * 2",
    "lib.tensor([1.0, 2.0], dtype=lib.float64)",
    "lib.tensor(1.0, dtype=lib.float64, requires_grad=True)",
    "lib.tensor([1.0, 2.5], dtype=lib.float16)",
    "lib.tensor([1.0, 2.0], dtype=lib.bfloat16)",
    "lib.tensor([1, 2], dtype=lib.int32)",
    "lib.tensor([0, 7, 255], dtype=lib.uint8)",
    "lib.tensor([[-128, 5], [127, 0]], dtype=lib.int8)",
    "lib.tensor([-32768, 32767], dtype=lib.int16)",
    "lib.tensor(200, dtype=lib.uint8)",
    "lib.zeros(0, dtype=lib.uint8)",
    "lib.zeros(2, 0, dtype=lib.int8)",
    "lib.arange(3000).reshape(30, 100).to(lib.uint8)",
    "lib.ones(3, 50, dtype=lib.int16)",
    "lib.tensor([1e-5, 1.0, 1e5])",
    "lib.tensor([1e10, 1.0])",
    "lib.tensor([1e-10, 1.0])",
    "lib.tensor([float('nan'), float('inf'), -float('inf'), 1.5])",
    "lib.tensor([float('inf'), 1.0])",
    "lib.tensor([0.1, 0.25])",
    "lib.tensor([[0.1234567, 12.5], [3.0, -4.0]])",
    "lib.tensor([-0.0, 1.0])",
    "lib.tensor([100.5, 2.0])",
    "lib.tensor([[[1.]]])",
    "lib.linspace(0, 1, 13).reshape(13, 1)",
    "lib.tensor([1.0, 2.0]).sum()",
    "(lib.tensor([[1., 2.]], dtype=lib.float64).T * lib.ones(1, 50, dtype=lib.float64,"
    " requires_grad=True))",
]


@needs_torch
@pytest.mark.parametrize("expr", REPR_CASES)
def test_repr_matches_torch(expr):
    ours = repr(eval(expr, {"lib": gradlab}))
    theirs = repr(eval(expr, {"lib": torch})).replace("torch.", "gradlab.")
    assert ours == theirs


@needs_torch
@settings(max_examples=60, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(["float32", "float64", "int64", "bool", "uint8",
                                              "int8", "int16"]))
def test_repr_matches_torch_for_random_tensors(data, dtype):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=12))
    scale = data.draw(st.sampled_from([1e-6, 1e-2, 1.0, 1e3, 1e9]))
    if dtype == "bool":
        elements = st.booleans()
    elif dtype == "int64":
        elements = st.integers(-10 ** 6, 10 ** 6)
    elif dtype in ("uint8", "int8", "int16"):
        info = np.iinfo(dtype)
        elements = st.integers(int(info.min), int(info.max))
    else:
        elements = st.one_of(st.floats(-10, 10, width=32).map(lambda v: v * scale),
                             st.integers(-50, 50).map(float), st.just(0.0))
    values = data.draw(hnp.arrays(np.dtype(dtype), shape, elements=elements))
    ours = repr(gradlab.tensor(values))
    theirs = repr(torch.tensor(values)).replace("torch.", "gradlab.")
    # "gradlab." is 2 characters longer than "torch.", so a suffix near column 80 may
    # wrap in one and not the other: compare with suffixes joined onto one line.
    assert _join_suffixes(ours) == _join_suffixes(theirs)


def _join_suffixes(text: str) -> str:
    return re.sub(r",\n\s+(?=(dtype|requires_grad|grad_fn|size|name)=)", ", ", text)


def test_repr_examples():
    """The same facts without PyTorch: alignment, suffixes, summarising."""
    assert repr(gradlab.tensor([1, 2, 300])) == "tensor([  1,   2, 300])"
    assert repr(gradlab.tensor([-1.5, 2.0])) == "tensor([-1.5000,  2.0000])"
    assert repr(gradlab.tensor([1.0, 2.0], dtype=gradlab.float64)) == \
        "tensor([1., 2.], dtype=gradlab.float64)"
    assert repr(gradlab.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(gradlab.tensor([1e-5, 1.0])) == "tensor([1.0000e-05, 1.0000e+00])"
    x = gradlab.tensor([1.0], requires_grad=True)
    assert repr(x * 2) == "tensor([2.], grad_fn=<MulBackward0>)"
    big = repr(gradlab.arange(2000))
    assert big == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"
    assert repr(gradlab.tensor([], dtype=gradlab.int64)) == "tensor([], dtype=gradlab.int64)"
    # a suffix that would pass column 80 goes on a new line
    wide = gradlab.tensor([1.0, 0.0, 0.0, 1.0, -1.0, 1.0, -2.0, 0.0, -1.0, 0.0],
                          dtype=gradlab.float64)
    assert repr(wide) == ("tensor([ 1.,  0.,  0.,  1., -1.,  1., -2.,  0., -1.,  0.],\n"
                          "       dtype=gradlab.float64)")


def test_repr_follows_the_default_dtype():
    gradlab.set_default_dtype(gradlab.float64)
    try:
        assert repr(gradlab.tensor([1.0, 2.0])) == "tensor([1., 2.])"
        assert repr(gradlab.tensor([1.0], dtype=gradlab.float32)) == \
            "tensor([1.], dtype=gradlab.float32)"
    finally:
        gradlab.set_default_dtype(gradlab.float32)
