"""clone, contiguous and to(dtype): copies and casts, with their gradients and tangents.

The table rows get the standard checks (forward vs NumPy, gradcheck, PyTorch,
forward mode); a cast to a narrower dtype can't be checked by finite
differences in float64, so its tangent is checked directly below.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
import gradlab.autograd.forward_ad as fwAD
from tests.oracle import M, OpCase, needs_torch, standard_op_tests, torch

CASES = [
    OpCase("clone", lambda lib, x: x.clone(), M, numpy=lambda np, x: x.copy(),
           variants=(((),), ((0, 3),))),
    OpCase("contiguous", lambda lib, x: x.t().contiguous(), M, numpy=lambda np, x: x.T.copy()),
    OpCase("to_copy", lambda lib, x: x.to(lib.float64, copy=True) * 1.5, M,
           numpy=lambda np, x: x * 1.5),
]

globals().update(standard_op_tests(CASES))


CASTS = [("float32", "float64"), ("float64", "float32"), ("float64", "float16"),
         ("float32", "bfloat16")]


@pytest.mark.parametrize("source,target", CASTS, ids=[f"{a}_to_{b}" for a, b in CASTS])
def test_a_cast_casts_the_tangent(device, source, target):
    rng = np.random.default_rng(6)
    x = gradlab.tensor(rng.standard_normal((2, 3)), device=device).to(getattr(gradlab, source))
    t = gradlab.tensor(rng.standard_normal((2, 3)), device=device).to(getattr(gradlab, source))
    with fwAD.dual_level():
        y = fwAD.make_dual(x, t).to(getattr(gradlab, target))
        tangent = fwAD.unpack_dual(y).tangent
    assert y.dtype is tangent.dtype is getattr(gradlab, target)
    np.testing.assert_array_equal(tangent.float().cpu().numpy(),
                                  t.to(getattr(gradlab, target)).float().cpu().numpy())


def test_a_cast_to_integers_drops_the_tangent():
    with fwAD.dual_level():
        y = fwAD.make_dual(gradlab.tensor([1.5, -2.5]), gradlab.tensor([1.0, 1.0])).long()
        assert y.tolist() == [1, -2] and fwAD.unpack_dual(y).tangent is None


@needs_torch
def test_cast_tangents_match_torch_func_jvp():
    rng = np.random.default_rng(7)
    x, t = rng.standard_normal(4), rng.standard_normal(4)

    def f(lib, v):
        return (v.to(lib.float32) * 3).double() + v

    with fwAD.dual_level():
        ours = fwAD.unpack_dual(f(gradlab, fwAD.make_dual(gradlab.tensor(x),
                                                          gradlab.tensor(t)))).tangent
    from torch.func import jvp

    _, theirs = jvp(lambda v: f(torch, v), (torch.tensor(x),), (torch.tensor(t),))
    assert ours.dtype is gradlab.float64
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
