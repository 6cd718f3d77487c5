"""The keywords every PyTorch factory takes (layout, pin_memory, memory_format, out),
and the tensor attributes PyTorch code asks about layouts (is_sparse, layout)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import gradlab
from tests.oracle import needs_torch, torch

# (factory, positional arguments): every factory that takes out=
WITH_OUT = [
    ("zeros", (2, 3)), ("ones", (2, 3)), ("empty", (2, 3)), ("full", ((2, 3), 1.5)),
    ("arange", (6,)), ("linspace", (0, 1, 6)), ("logspace", (0, 1, 6)), ("eye", (3,)),
    ("rand", (2, 3)), ("randn", (2, 3)), ("randint", (0, 5, (2, 3))), ("randperm", (6,)),
    ("normal", (0.0, 1.0, (2, 3))),
]
LIKE = ["zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
        "randint_like"]


def _like_args(name, x):
    return {"full_like": (x, 2.0), "randint_like": (x, 5)}.get(name, (x,))


@pytest.mark.parametrize("name, args", WITH_OUT, ids=[n for n, _ in WITH_OUT])
def test_factories_take_layout_pin_memory_and_out(name, args):
    factory = getattr(gradlab, name)
    plain = factory(*args, layout=gradlab.strided, pin_memory=True)
    assert plain.layout is gradlab.strided
    out = gradlab.zeros(tuple(plain.shape), dtype=plain.dtype) - 7
    result = factory(*args, out=out)
    assert result is out and out._version > 0  # written in place
    if name in ("zeros", "ones", "full", "arange", "linspace", "logspace", "eye"):
        np.testing.assert_array_equal(out.numpy(), plain.numpy())
    params = inspect.signature(factory).parameters
    assert {"out", "layout", "pin_memory"} <= set(params)  # help() shows them


@pytest.mark.parametrize("name", LIKE)
def test_like_factories_take_layout_pin_memory_and_memory_format(name):
    x = gradlab.ones(2, 3, 4, 5).contiguous(memory_format=gradlab.channels_last)
    factory = getattr(gradlab, name)
    kept = factory(*_like_args(name, x))  # preserve_format, the default: x's layout
    assert kept.is_contiguous(memory_format=gradlab.channels_last)
    dense = factory(*_like_args(name, x), memory_format=gradlab.contiguous_format,
                    layout=gradlab.strided, pin_memory=False)
    assert dense.is_contiguous() and tuple(dense.shape) == (2, 3, 4, 5)


def test_out_takes_its_dtype_and_device_unless_told_otherwise():
    out = gradlab.empty(3, dtype=gradlab.float64)
    assert gradlab.zeros(3, out=out).dtype is gradlab.float64
    counts = gradlab.empty(4, dtype=gradlab.int64)
    assert gradlab.arange(4, out=counts).tolist() == [0, 1, 2, 3]


def test_empty_in_channels_last_and_a_leaf_stays_a_leaf():
    x = gradlab.empty(2, 3, 4, 5, memory_format=gradlab.channels_last, requires_grad=True)
    assert x.is_contiguous(memory_format=gradlab.channels_last)
    assert x.is_leaf and x.requires_grad


def test_factory_keyword_errors_teach():
    with pytest.raises(NotImplementedError, match=r"zeros: layout=gradlab.sparse_coo asks "
                                                  r"for a sparse tensor.*only dense"):
        gradlab.zeros(2, layout=gradlab.sparse_coo)
    with pytest.raises(TypeError, match="ones: layout must be gradlab.strided"):
        gradlab.ones(2, layout="strided")
    with pytest.raises(RuntimeError, match=r"zeros: out has shape \(3,\) but the result has "
                                           r"shape \(2,\); gradlab doesn't resize"):
        gradlab.zeros(2, out=gradlab.empty(3))
    with pytest.raises(RuntimeError, match=r"rand: functions with out=.*don't support "
                                           r"automatic differentiation"):
        gradlab.rand(2, out=gradlab.empty(2, requires_grad=True))
    with pytest.raises(TypeError, match="zeros_like: memory_format must be one of"):
        gradlab.zeros_like(gradlab.ones(2), memory_format="channels_last")


def test_every_tensor_is_dense_and_says_so():
    x = gradlab.ones(2, 2)
    assert x.layout is gradlab.strided and x.layout == gradlab.strided
    assert x.layout != gradlab.sparse_coo
    for flag in ("is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_nested",
                 "is_mkldnn"):
        assert getattr(x, flag) is False
    assert repr(gradlab.sparse_csr) == "gradlab.sparse_csr"


@needs_torch
def test_layout_names_are_torchs():
    for name in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
                 "sparse_bsc"):
        assert repr(getattr(gradlab, name)) == repr(getattr(torch, name)).replace("torch",
                                                                                  "gradlab")
