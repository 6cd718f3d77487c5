"""i0 and special.i1: values vs NumPy and PyTorch across both formulas, derivatives chained."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.oracle import EMPTY, SCALAR, OpCase, needs_torch, standard_op_tests, torch

CASES = [
    OpCase("i0", lambda lib, x: lib.i0(x), ((3, 4),), numpy=lambda np, x: np.i0(x),
           domain=(-4, 4), variants=(SCALAR, EMPTY)),
    OpCase("i0_method_wide", lambda lib, x: x.i0(), ((40,),), numpy=lambda np, x: np.i0(x),
           domain=(-40, 40), rtol=1e-10),
    OpCase("special_i0", lambda lib, x: lib.special.i0(x), ((3, 4),),
           numpy=lambda np, x: np.i0(x), domain=(-4, 4)),
    OpCase("special_i1", lambda lib, x: lib.special.i1(x), ((3, 4),), domain=(-4, 4),
           variants=(SCALAR, EMPTY)),
    OpCase("special_i1_wide", lambda lib, x: lib.special.i1(x), ((40,),), domain=(-40, 40),
           rtol=1e-10),
]

globals().update(standard_op_tests(CASES))


@needs_torch
@pytest.mark.parametrize("name", ["i0", "i1"])
def test_values_match_torch_on_a_fine_grid_and_at_the_edges(name):
    """Both formulas and the seam between them (|x| = 20), overflow past 709, NaN and inf."""
    grid = np.concatenate([np.linspace(-60, 60, 4001), np.linspace(19.9, 20.1, 101),
                           [0.0, -0.0, 1e-300, 700.0, 709.0, 710.0, -711.0,
                            np.inf, -np.inf, np.nan]])
    ours = getattr(gradlab.special, name)(gradlab.tensor(grid)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(grid)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=5e-15, atol=0)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))


def test_i1_is_odd_with_slope_one_half_at_zero_and_higher_derivatives_chain():
    x = gradlab.tensor([0.0, 1.5, -1.5], dtype=gradlab.float64, requires_grad=True)
    y = gradlab.special.i1(x)
    assert y[1].item() == pytest.approx(-y[2].item(), rel=1e-15)
    (g,) = gradlab.autograd.grad(y.sum(), x, create_graph=True)
    assert g[0].item() == 0.5
    # I1' = I0 - I1/x at 1.5 from values, and the second derivative of I0 is I1' too
    i0, i1 = np.i0(1.5), y[1].item()
    assert g[1].item() == pytest.approx(i0 - i1 / 1.5, rel=1e-14)
    (gg,) = gradlab.autograd.grad(g.sum(), x)
    assert np.isfinite(gg.numpy()).all() and gg[0].item() == 0.0


def test_integer_and_float32_inputs():
    ints = gradlab.i0(gradlab.tensor([0, 1, 2]))
    assert ints.dtype is gradlab.float32
    np.testing.assert_allclose(ints.numpy(), np.i0([0.0, 1.0, 2.0]), rtol=1e-6)
    x32 = gradlab.tensor([3.0, -25.0], dtype=gradlab.float32)
    assert gradlab.special.i1(x32).dtype is gradlab.float32
    assert gradlab.i0(x32.to(gradlab.bfloat16)).dtype is gradlab.bfloat16


def test_names_in_the_graph_are_pytorchs():
    x = gradlab.ones(2, requires_grad=True)
    assert type(gradlab.i0(x).grad_fn).__name__ == "I0Backward0"
    assert type(gradlab.special.i1(x).grad_fn).__name__ == "SpecialI1Backward0"


def test_errors_name_the_op():
    with pytest.raises(TypeError, match=r"i0: input must be a Tensor, got list.*gradlab.tensor"):
        gradlab.i0([1.0])
    with pytest.raises(TypeError, match=r"special.i1: input must be a Tensor, got float"):
        gradlab.special.i1(1.0)
