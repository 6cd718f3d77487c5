"""grad_fn names are PyTorch's, overload by overload: what a student compares with a tutorial.

The expected names are PyTorch 2.13's; where PyTorch is installed each row is also
checked against it, so the table cannot drift from the oracle.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.oracle import needs_torch, torch

CASES = {  # name: (expected node name, the same code for either library)
    "mul": ("MulBackward0", lambda L, x: x * x),
    "pow number": ("PowBackward0", lambda L, x: x ** 2),
    "pow tensor": ("PowBackward1", lambda L, x: x.exp() ** x),
    "number pow": ("PowBackward2", lambda L, x: 2 ** x),
    "sum": ("SumBackward0", lambda L, x: x.sum()),
    "sum dim": ("SumBackward1", lambda L, x: x.sum(0)),
    "mean": ("MeanBackward0", lambda L, x: x.mean()),
    "mean dims": ("MeanBackward1", lambda L, x: x.mean((0, 1))),
    "max": ("MaxBackward1", lambda L, x: x.max()),
    "max dim": ("MaxBackward0", lambda L, x: x.max(0)[0]),
    "min": ("MinBackward1", lambda L, x: x.min()),
    "select": ("SelectBackward0", lambda L, x: x[0]),
    "slice": ("SliceBackward0", lambda L, x: x[1:]),
    "full slice": ("SliceBackward0", lambda L, x: x[:]),
    "select after slice": ("SelectBackward0", lambda L, x: x[1:, 0]),
    "slice after select": ("SliceBackward0", lambda L, x: x[0, 1:]),
    "alias": ("AliasBackward0", lambda L, x: x[...]),
    "new axis": ("UnsqueezeBackward0", lambda L, x: x[None]),
    "advanced": ("IndexBackward0", lambda L, x: x[[0, 1]]),
    "mask": ("IndexBackward0", lambda L, x: x[x > 0]),
    "view": ("ViewBackward0", lambda L, x: x.view(-1)),
    "reshape of contiguous": ("ViewBackward0", lambda L, x: x.reshape(9)),
    "flatten": ("ViewBackward0", lambda L, x: x.flatten()),
    "t": ("TBackward0", lambda L, x: x.t()),
    "transpose": ("TransposeBackward0", lambda L, x: x.transpose(0, 1)),
    "squeeze": ("SqueezeBackward0", lambda L, x: x[None].squeeze()),
    "squeeze dim": ("SqueezeBackward1", lambda L, x: x[None].squeeze(0)),
    "squeeze dims": ("SqueezeBackward2", lambda L, x: x[None, None].squeeze((0, 1))),
    "clamp": ("ClampBackward1", lambda L, x: x.clamp(0, 1)),
    "clamp min": ("ClampBackward1", lambda L, x: x.clamp(min=0)),
    "clamp_min": ("ClampMinBackward0", lambda L, x: x.clamp_min(0)),
    "clamp_max": ("ClampMaxBackward0", lambda L, x: L.clamp_max(x, 0.5)),
    "rsub number": ("RsubBackward1", lambda L, x: 1 - x),
    "rsub tensor": ("RsubBackward0", lambda L, x: L.rsub(x, x)),
    "sub": ("SubBackward0", lambda L, x: x - x),
    "dot": ("DotBackward0", lambda L, x: x[0] @ x[1]),
    "mv": ("MvBackward0", lambda L, x: x @ x[0]),
    "mm": ("MmBackward0", lambda L, x: x @ x),
    "mm method": ("MmBackward0", lambda L, x: x.mm(x)),
    "norm": ("LinalgVectorNormBackward0", lambda L, x: x.norm()),
    "vector_norm": ("LinalgVectorNormBackward0", lambda L, x: L.linalg.vector_norm(x, 1)),
    "to dtype": ("ToCopyBackward0", lambda L, x: x.float()),
    "linear": ("AddmmBackward0", lambda L, x: L.nn.functional.linear(x, x, x[0])),
    "linear, no bias": ("MmBackward0", lambda L, x: L.nn.functional.linear(x, x)),
    "linear of a vector": ("ViewBackward0", lambda L, x: L.nn.functional.linear(x[0], x, x[0])),
    "linear of a vector, no bias": ("SqueezeBackward4",
                                    lambda L, x: L.nn.functional.linear(x[0], x)),
    "linear of a batch": ("ViewBackward0",
                          lambda L, x: L.nn.functional.linear(x[None], x, x[0])),
    "linear of a batch, no bias": ("UnsafeViewBackward0",
                                   lambda L, x: L.nn.functional.linear(x[None], x)),
}


def _node_name(lib, fn):
    x = lib.tensor(np.arange(9.0).reshape(3, 3) / 9 - 0.4, requires_grad=True)
    return fn(lib, x).grad_fn.name()


@pytest.mark.parametrize("case", list(CASES))
def test_node_names_are_pytorchs(case):
    expected, fn = CASES[case]
    assert _node_name(gradlab, fn) == expected


@needs_torch
@pytest.mark.parametrize("case", list(CASES))
def test_the_expected_names_are_what_pytorch_shows(case):
    expected, fn = CASES[case]
    assert _node_name(torch, fn) == expected


def test_the_name_is_per_call_and_shows_in_repr():
    x = gradlab.ones(2, 3, requires_grad=True)
    full, over_dim = x.sum(), x.sum(1)
    assert (full.grad_fn.name(), over_dim.grad_fn.name()) == ("SumBackward0", "SumBackward1")
    assert "grad_fn=<SumBackward1>" in repr(over_dim)
    assert repr(over_dim.grad_fn).startswith("<SumBackward1 object at")
    assert full.grad_fn.op == over_dim.grad_fn.op == "sum"  # the op name stays the function's
