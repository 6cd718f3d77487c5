"""narrow and pad: forward vs NumPy, gradcheck, values and gradients vs PyTorch, and errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import (
    EMPTY,
    M,
    OpCase,
    needs_torch,
    standard_op_tests,
    torch,
)


def F(lib):
    """``pad`` lives in ``nn.functional`` in PyTorch; gradlab has it at the top level too."""
    return lib.nn.functional if lib is torch else lib


def np_pad(x, pairs, mode="constant", value=0.0):
    """NumPy's pad with PyTorch's pair order (last dim first); negative pads crop."""
    widths = [(0, 0)] * x.ndim
    for i in range(len(pairs) // 2):
        widths[x.ndim - 1 - i] = (pairs[2 * i], pairs[2 * i + 1])
    crop = tuple(slice(max(-b, 0), x.shape[d] - max(-e, 0)) for d, (b, e) in enumerate(widths))
    x = x[crop]
    widths = [(max(b, 0), max(e, 0)) for b, e in widths]
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
               "circular": "wrap"}[mode]
    kw = {"constant_values": value} if mode == "constant" else {}
    return np.pad(x, widths, mode=np_mode, **kw)


T3 = ((2, 3, 4),)


CASES = [
    OpCase("narrow", lambda lib, x: x.narrow(1, 1, 2), T3, numpy=lambda np, x: x[:, 1:3]),
    OpCase("narrow_neg", lambda lib, x: lib.narrow(x, -1, -3, 2), T3,
           numpy=lambda np, x: x[..., 1:3]),
    OpCase("narrow_empty", lambda lib, x: x.narrow(0, 3, 0), M, numpy=lambda np, x: x[3:3]),
    OpCase("pad", lambda lib, x: F(lib).pad(x, (1, 2)), M,
           numpy=lambda np, x: np_pad(x, (1, 2)), variants=(EMPTY, ((4,),))),
    OpCase("pad_2d_value", lambda lib, x: F(lib).pad(x, (0, 1, 2, 0), value=1.5), M,
           numpy=lambda np, x: np_pad(x, (0, 1, 2, 0), value=1.5)),
    OpCase("pad_crop", lambda lib, x: F(lib).pad(x, (-1, 2, 1, -2)), T3,
           numpy=lambda np, x: np_pad(x, (-1, 2, 1, -2))),
    OpCase("pad_crop_all", lambda lib, x: F(lib).pad(x, (-2, -2)), M,
           numpy=lambda np, x: np_pad(x, (-2, -2))),
    OpCase("pad_reflect", lambda lib, x: F(lib).pad(x, (2, 3), mode="reflect"), M,
           numpy=lambda np, x: np_pad(x, (2, 3), "reflect")),
    OpCase("pad_reflect_2d", lambda lib, x: F(lib).pad(x, (1, 2, 2, 1), mode="reflect"),
           T3, numpy=lambda np, x: np_pad(x, (1, 2, 2, 1), "reflect")),
    OpCase("pad_replicate", lambda lib, x: F(lib).pad(x, (2, 1, 0, 2), mode="replicate"), T3,
           numpy=lambda np, x: np_pad(x, (2, 1, 0, 2), "replicate")),
    OpCase("pad_circular", lambda lib, x: F(lib).pad(x, (3, 1), mode="circular"), M,
           numpy=lambda np, x: np_pad(x, (3, 1), "circular")),
    OpCase("pad_circular_crop", lambda lib, x: F(lib).pad(x, (-1, 2), mode="circular"), M,
           numpy=lambda np, x: np_pad(x, (-1, 2), "circular")),
]


globals().update(standard_op_tests(CASES))


# --- each is the other's backward --------------------------------------------------------------

def test_pad_backward_crops_and_zero_fills():
    x = gradlab.arange(6.0).reshape(2, 3).requires_grad_()
    y = gradlab.pad(x, (1, -1))  # one column of zeros in front, last column cropped
    assert y.tolist() == [[0.0, 0.0, 1.0], [0.0, 3.0, 4.0]]
    y.sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]
    assert y.grad_fn.name() == "ConstantPadNdBackward0"


def test_pad_keeps_integer_dtype():
    x = gradlab.tensor([[1, 2]])
    y = gradlab.pad(x, (1, 1), value=7)
    assert y.dtype is gradlab.int64 and y.tolist() == [[7, 1, 2, 7]]


# --- property-based -----------------------------------------------------------------------------

@st.composite
def pads(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    n = draw(st.integers(1, len(shape)))
    pairs = []
    for i in range(n):
        size = shape[len(shape) - 1 - i]
        b = draw(st.integers(-size, 3))
        e = draw(st.integers(-(size + min(b, 0)), 3))  # never crop more than the size
        pairs += [b, e]
    return shape, tuple(pairs)


@needs_torch
@settings(max_examples=40, deadline=None)
@given(case=pads(), value=st.sampled_from([0.0, -1.5]))
def test_constant_pad_matches_torch(case, value):
    shape, pairs = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    ours = gradlab.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    out_g = gradlab.pad(ours, pairs, value=value)
    out_t = torch.nn.functional.pad(theirs, pairs, value=value)
    np.testing.assert_array_equal(out_g.detach().numpy(), out_t.detach().numpy())
    np.testing.assert_array_equal(out_g.detach().numpy(), np_pad(x, pairs, value=value))
    cot = rng.standard_normal(tuple(out_t.shape))
    out_g.backward(gradlab.tensor(cot))
    out_t.backward(torch.tensor(cot))
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


# --- errors that teach --------------------------------------------------------------------------

def _x():
    return gradlab.ones(2, 3)


ERRORS = [
    (lambda: gradlab.tensor(1.0).narrow(0, 0, 1), RuntimeError, "0-d tensor has no dim"),
    (lambda: _x().narrow(1, 4, 0), IndexError, r"start 4 is out of range for dim 1 of size 3"),
    (lambda: _x().narrow(1, 2, 2), RuntimeError, r"start \(2\) \+ length \(2\) exceeds dim 1"),
    (lambda: _x().narrow(1, 0, -1), RuntimeError, "exceeds dim 1"),
    (lambda: gradlab.pad(_x(), (1,)), RuntimeError, "must be even"),
    (lambda: gradlab.pad(_x(), (1, 1) * 3), RuntimeError, "3 pairs of padding .* 2 dims"),
    (lambda: gradlab.pad(_x(), (1, 1), mode="mirror"), NotImplementedError, "mode must be"),
    (lambda: gradlab.pad(_x(), (-2, -2)), RuntimeError, "negative size -1"),
    (lambda: gradlab.pad(_x(), (1, 1), mode="reflect", value=2.0), RuntimeError,
     "takes no value"),
    (lambda: gradlab.pad(_x(), (3, 0), mode="reflect"), RuntimeError,
     "reflect padding of 3 is too large for dim 1 of size 3"),
    (lambda: gradlab.pad(_x(), (0, 4), mode="circular"), RuntimeError, "at most 3"),
    (lambda: gradlab.pad(gradlab.ones(2, 0), (1, 0), mode="replicate"), RuntimeError,
     "too large for dim 1 of size 0"),
]


@pytest.mark.parametrize("make,error,match", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_problem(make, error, match):
    with pytest.raises(error, match=match):
        make()
