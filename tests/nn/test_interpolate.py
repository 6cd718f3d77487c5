"""F.interpolate (every mode, align_corners, scales and sizes) and the Upsample modules."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
import gradlab.nn as nn
import gradlab.nn.functional as F
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch


def _resize(mode, align=None, **kw):
    return lambda lib, x: lib.nn.functional.interpolate(x, mode=mode, align_corners=align, **kw)


IMAGE = ((2, 2, 5, 4),)
SIGNAL = ((2, 3, 6),)
VOLUME = ((1, 2, 3, 2, 2),)
# The op is linear in x, so its second derivative is checked on one resize per mode (x1.7).
RESIZES = [  # (id, kwargs): up, down, non-integer, by size, recomputed scale
    ("x2", {"scale_factor": 2}),
    ("x1.7", {"scale_factor": 1.7}),
    ("down0.6", {"scale_factor": 0.6}),
    ("size", {"size": 7}),
    ("recompute2.5", {"scale_factor": 2.5, "recompute_scale_factor": True}),
]

CASES = []
for rid, kw in RESIZES:
    for mode, shapes in (("nearest", SIGNAL), ("nearest", IMAGE), ("nearest", VOLUME),
                         ("nearest-exact", IMAGE)):
        CASES.append(OpCase(f"{mode}-{len(shapes[0]) - 2}d-{rid}", _resize(mode, **kw), shapes,
                            gradgrad=rid == "x1.7"))
    for mode, shapes in (("linear", SIGNAL), ("bilinear", IMAGE), ("bicubic", IMAGE),
                         ("trilinear", VOLUME)):
        for align in (False, True):
            CASES.append(OpCase(f"{mode}-align{int(align)}-{rid}", _resize(mode, align, **kw),
                                shapes, gradgrad=rid == "x1.7"))
CASES += [
    OpCase("nearest-x2-numpy", _resize("nearest", scale_factor=2), IMAGE,
           numpy=lambda np, x: x.repeat(2, axis=2).repeat(2, axis=3)),
    OpCase("bilinear-per-dim-scales", _resize("bilinear", scale_factor=(0.7, 2.3)), IMAGE),
    OpCase("bicubic-per-dim-sizes", _resize("bicubic", True, size=(2, 9)), IMAGE),
    OpCase("nearest-to-one-pixel", _resize("nearest", size=(1, 1)), IMAGE),
    OpCase("bilinear-from-one-pixel", _resize("bilinear", size=(3, 2)), ((1, 2, 1, 1),)),
    OpCase("area-2d", _resize("area", size=(3, 2)), IMAGE, gradgrad=False),
    OpCase("area-1d", _resize("area", scale_factor=0.5), SIGNAL, gradgrad=False),
]
globals().update(standard_op_tests(CASES))


def test_known_gap_call_works():
    out = F.interpolate(gradlab.ones(1, 1, 2, 2), scale_factor=2)
    np.testing.assert_array_equal(out.numpy(), np.ones((1, 1, 4, 4)))


def test_nearest_upsampling_repeats_pixels():
    x = gradlab.arange(4.0).reshape(1, 1, 2, 2)
    out = F.interpolate(x, scale_factor=2)
    np.testing.assert_array_equal(out.numpy()[0, 0], np.repeat(np.repeat(
        [[0.0, 1], [2, 3]], 2, 0), 2, 1))


def test_bilinear_align_corners_keeps_the_corners():
    x = gradlab.tensor([[[[0.0, 3.0], [6.0, 9.0]]]])
    out = F.interpolate(x, size=(3, 4), mode="bilinear", align_corners=True)
    np.testing.assert_allclose(out.numpy()[0, 0], [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]])


def test_backward_adds_each_output_gradient_to_its_sources():
    x = gradlab.ones(1, 1, 3, 3, requires_grad=True)
    F.interpolate(x, scale_factor=2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((1, 1, 3, 3), 4.0))


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_hessian_vector_product_by_forward_over_reverse(mode):
    """H·v of Σ resize(x)³: the adjoint op in the backward resizes tangents too (linear)."""
    from tests.nn.test_convolution import hvp_two_ways

    x = np.random.default_rng(10).standard_normal((2, 2, 4, 5))
    (hvp,), (want,) = hvp_two_ways(
        lambda t: F.interpolate(t, scale_factor=1.7, mode=mode).pow(3).sum(), [x])
    np.testing.assert_allclose(hvp, want, rtol=1e-5, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("mode,shape", [("nearest", (1, 1, 4)), ("nearest-exact", (1, 1, 4, 4)),
                                        ("linear", (1, 1, 4)), ("bilinear", (1, 1, 4, 4)),
                                        ("bicubic", (1, 1, 4, 4)), ("trilinear", (1, 1, 2, 2, 2)),
                                        ("nearest", (1, 1, 2, 2, 2))])
def test_node_names_match_torch(mode, shape):
    names = []
    for lib in (gradlab, torch):
        x = lib.ones(*shape, requires_grad=True)
        out = lib.nn.functional.interpolate(x, scale_factor=2, mode=mode)
        names.append(type(out.grad_fn).__name__ if lib is torch else
                     repr(out.grad_fn)[1:].split(" ")[0])
    assert names[0] == names[1]


def test_errors():
    x = gradlab.ones(1, 1, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D"):
        F.interpolate(x, scale_factor=2, mode="linear")
    with pytest.raises(NotImplementedError, match=r"got 2D\) .* \(got nearest\)"):
        F.interpolate(gradlab.ones(2, 3), size=3)
    with pytest.raises(NotImplementedError, match=r"\(got lanczos9\)"):
        F.interpolate(x, size=3, mode="lanczos9")
    with pytest.raises(ValueError, match=r"spatial dimensions of \[4, 4\] and output size"):
        F.interpolate(x, size=(2, 2, 2))
    with pytest.raises(ValueError, match="spatial dimensions .* and scale_factor"):
        F.interpolate(x, scale_factor=(2, 2, 2))
    with pytest.raises(RuntimeError, match=r"greater than 0, .*output \(H: 0, W: 0\)"):
        F.interpolate(x, scale_factor=0.1)
    with pytest.raises(NotImplementedError, match="antialias=True is not supported"):
        F.interpolate(x, scale_factor=2, mode="bilinear", antialias=True)
    with pytest.raises(RuntimeError, match="expected a floating point tensor"):
        F.interpolate(gradlab.ones(1, 1, 2, 2, dtype=gradlab.int64), scale_factor=2)
    with pytest.raises(NotImplementedError, match="'area' on 5-D"):
        F.interpolate(gradlab.ones(1, 1, 2, 2, 2), size=1, mode="area")


# --- modules ------------------------------------------------------------------------------------

MODULES = [
    lambda lib: lib.nn.Upsample(scale_factor=2, mode="bilinear"),
    lambda lib: lib.nn.Upsample(size=(3, 5)),
    lambda lib: lib.nn.Upsample(scale_factor=(1.5, 2), mode="bicubic", align_corners=True),
    lambda lib: lib.nn.UpsamplingNearest2d(scale_factor=2),
    lambda lib: lib.nn.UpsamplingBilinear2d(size=3),
]


@needs_torch
@pytest.mark.parametrize("make", MODULES)
def test_modules_match_torch(make):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4))
    ours, theirs = make(gradlab), make(torch)
    assert repr(ours) == repr(theirs)
    np.testing.assert_allclose(ours(gradlab.tensor(x)).numpy(),
                               theirs(torch.tensor(x)).numpy(), rtol=1e-10, atol=1e-12)


def test_upsample_module_stores_its_arguments():
    up = nn.Upsample(scale_factor=2, mode="nearest")
    assert up.scale_factor == 2.0 and up.size is None and up.mode == "nearest"
    assert repr(up) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert list(up.parameters()) == []
