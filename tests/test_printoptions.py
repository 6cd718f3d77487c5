"""gradlab.set_printoptions: repr follows precision, threshold, edgeitems, linewidth, profile
and sci_mode exactly as torch.set_printoptions makes PyTorch's repr do."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
from gradlab import _formatting
from tests.oracle import needs_torch, torch


@pytest.fixture(autouse=True)
def _default_options():
    gradlab.set_printoptions(profile="default")
    if torch is not None:
        torch.set_printoptions(profile="default")
    yield
    gradlab.set_printoptions(profile="default")
    if torch is not None:
        torch.set_printoptions(profile="default")


def _values():
    rng = np.random.default_rng(0)
    return {
        "small": np.array([1.123456, -2.5, 3.0]),
        "whole": np.array([1.0, 20.0, -300.0]),
        "spread": np.array([1e-5, 1.0, 12345.678]),
        "long": rng.normal(size=40),
        "matrix": rng.normal(size=(12, 9)) * 10,
        "big": np.arange(2000.0).reshape(40, 50),
        "ints": np.arange(30),
        "cube": rng.normal(size=(3, 8, 8)),
    }


OPTION_SETS = [
    {"precision": 2},
    {"precision": 8},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0},
    {"linewidth": 40},
    {"linewidth": 200, "precision": 1},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "short", "precision": 5},
    {"sci_mode": True},
    {"sci_mode": False},
    {"sci_mode": True, "precision": 1},
]


@needs_torch
@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v
                                                                       in o.items()))
@pytest.mark.parametrize("name", list(_values()))
def test_repr_matches_torch_under_the_same_options(options, name):
    values = _values()[name]
    gradlab.set_printoptions(**options)
    torch.set_printoptions(**options)
    # Both dtypes as the default dtype: no dtype= suffix, whose length differs between
    # "gradlab.float64" and "torch.float64" and so would move the line breaks.
    for dtype in ("float32", "float64"):
        gradlab.set_default_dtype(getattr(gradlab, dtype))
        torch.set_default_dtype(getattr(torch, dtype))
        try:
            arr = values if values.dtype.kind == "i" else values.astype(dtype)
            ours = repr(gradlab.tensor(arr))
            theirs = repr(torch.tensor(arr))
        finally:
            gradlab.set_default_dtype(gradlab.float32)
            torch.set_default_dtype(torch.float32)
        assert ours == theirs, f"\n{ours}\n!=\n{theirs}"


@needs_torch
def test_suffixes_wrap_at_the_set_linewidth():
    gradlab.set_printoptions(linewidth=30)
    torch.set_printoptions(linewidth=30)
    x = np.array([1.5, 2.25, 3.0])
    ours = repr(gradlab.tensor(x, requires_grad=True).double() * 2)
    theirs = repr(torch.tensor(x, requires_grad=True).double() * 2).replace("torch.", "gradlab.")
    assert ours == theirs and "\n" in ours


def test_precision_changes_the_digits():
    x = gradlab.tensor([1.123456])
    gradlab.set_printoptions(precision=2)
    assert repr(x) == "tensor([1.12])"
    gradlab.set_printoptions(profile="default")
    assert repr(x) == "tensor([1.1235])"


def test_threshold_summarises_and_full_shows_everything():
    x = gradlab.arange(10)
    gradlab.set_printoptions(threshold=5)
    assert repr(x) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    gradlab.set_printoptions(profile="full")
    assert repr(gradlab.arange(2000)).count(",") == 1999


def test_sci_mode_forced_and_reset_by_the_next_call():
    x = gradlab.tensor([1.5, 2.0])
    gradlab.set_printoptions(sci_mode=True)
    assert repr(x) == "tensor([1.5000e+00, 2.0000e+00])"
    gradlab.set_printoptions(precision=4)  # sci_mode=None again, as in PyTorch
    assert repr(x) == "tensor([1.5000, 2.0000])"
    gradlab.set_printoptions(sci_mode=False)
    assert repr(gradlab.tensor([1e-9, 1.0])) == "tensor([0.0000, 1.0000])"


def test_options_are_kept_until_changed():
    gradlab.set_printoptions(precision=3, edgeitems=2, linewidth=60)
    gradlab.set_printoptions(threshold=10)
    assert _formatting.get_printoptions() == {"precision": 3, "threshold": 10, "edgeitems": 2,
                                              "linewidth": 60, "sci_mode": None}
    gradlab.set_printoptions(profile="full")
    assert _formatting.get_printoptions()["threshold"] == math.inf
    assert _formatting.get_printoptions()["precision"] == 4


@pytest.mark.parametrize("kwargs, match", [
    ({"profile": "long"}, r"set_printoptions: profile must be one of 'default', 'short', "
     r"'full', got 'long'"),
    ({"precision": -1}, r"set_printoptions: precision must be an integer >= 0, got -1"),
    ({"linewidth": 2.5}, r"set_printoptions: linewidth must be an integer >= 0, got 2.5"),
])
def test_bad_options_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gradlab.set_printoptions(**kwargs)
