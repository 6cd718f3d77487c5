"""Padding layers, Threshold, Softmax2d, CosineSimilarity and PairwiseDistance: the same
reprs, attributes, values, gradients and error types as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab import nn
from tests.oracle import check_module_against_torch, needs_torch, torch

PADS = {1: (1, 2), 2: (1, 2, 3, 0), 3: (2, 1, 0, 3, 1, 1)}
FAMILIES = {"Reflection": "reflect", "Replication": "edge", "Circular": "wrap"}  # -> np.pad mode

# (class name, constructor args, constructor kwargs, input shapes)
LAYERS = []
for n in (1, 2, 3):
    batched, unbatched = [(2, 3) + (4, 5, 6)[:n]], [(3,) + (5, 4, 6)[:n]]
    LAYERS += [
        (f"ZeroPad{n}d", (2,), {}, batched), (f"ZeroPad{n}d", (PADS[n],), {}, unbatched),
        (f"ZeroPad{n}d", ((-1,) + PADS[n][1:],), {}, [(4,) * (n + 1)]),  # negative crops
        (f"ConstantPad{n}d", (1, 3.5), {}, batched),
        (f"ConstantPad{n}d", (), {"padding": PADS[n], "value": -2}, unbatched),
    ]
    for family in FAMILIES:
        LAYERS += [(f"{family}Pad{n}d", (1,), {}, batched),
                   (f"{family}Pad{n}d", (PADS[n],), {}, unbatched)]
LAYERS += [
    ("Threshold", (0.1, 20), {}, [(2, 3, 4)]),
    ("Threshold", (-0.5,), {"value": 1.5, "inplace": True}, [(5, 6)]),
    ("Softmax2d", (), {}, [(2, 3, 4, 5)]), ("Softmax2d", (), {}, [(3, 4, 5)]),
    ("CosineSimilarity", (), {}, [(4, 5), (4, 5)]),
    ("CosineSimilarity", (0, 1e-6), {}, [(4, 5), (1, 5)]),
    ("PairwiseDistance", (), {}, [(4, 5), (4, 5)]),
    ("PairwiseDistance", (1.0, 1e-3, True), {}, [(3, 4, 5), (4, 5)]),
    ("PairwiseDistance", (), {"p": 3.0}, [(6,), (6,)]),
]
IDS = [f"{n}{a}{k}{s}" for n, a, k, s in LAYERS]
NAMES = sorted({name for name, *_ in LAYERS})


def _inputs(shapes):
    """Standard normal values, kept away from Threshold's kinks at 0.1 and -0.5."""
    rng = np.random.default_rng(0)
    out = []
    for shape in shapes:
        x = rng.standard_normal(shape)
        for kink in (0.1, -0.5):
            x[np.abs(x - kink) < 0.05] += 0.1
        out.append(x)
    return out


@needs_torch
@pytest.mark.parametrize(("name", "args", "kwargs", "shapes"), LAYERS, ids=IDS)
def test_layer_matches_torch(name, args, kwargs, shapes):
    ours = getattr(nn, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == [] and list(ours.parameters()) == []
    check_module_against_torch(ours, theirs, _inputs(shapes))


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_attributes_match_torch(name):
    args = {"Threshold": (0.25, 3.0)}.get(name, (2, 1.5) if "Constant" in name else
                                         (2,) if "Pad" in name else ())
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    for attr in ("padding", "value", "threshold", "inplace", "dim", "eps", "norm", "keepdim"):
        assert getattr(ours, attr, None) == getattr(theirs, attr, None), attr


@needs_torch
@pytest.mark.parametrize("family", ["Reflection", "Replication", "Circular"])
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("ndim", range(0, 7))
def test_wrong_input_rank_raises_torchs_error_type(family, n, ndim):
    name = f"{family}Pad{n}d"
    x = np.ones((3,) * ndim)
    try:
        getattr(torch.nn, name)(1)(torch.tensor(x))
    except (RuntimeError, NotImplementedError, ValueError) as e:
        with pytest.raises(type(e), match=rf"{name}: expected a {n + 1}-D \(C, .*\) or "
                                          rf"{n + 2}-D \(N, C, .*\) input, got {ndim}-D input"):
            getattr(nn, name)(1)(gradlab.tensor(x))
    else:
        assert tuple(getattr(nn, name)(1)(gradlab.tensor(x)).shape) == (3,) * (ndim - n) + \
            (5,) * n


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("family", list(FAMILIES))
def test_copy_padding_matches_numpy_pad(family, n):
    x = np.random.default_rng(2).standard_normal((2, 3) + (4, 5, 6)[:n])
    layer = getattr(nn, f"{family}Pad{n}d")(PADS[n])
    pairs = [(0, 0)] * 2 + [(PADS[n][2 * i], PADS[n][2 * i + 1]) for i in range(n)][::-1]
    np.testing.assert_array_equal(layer(gradlab.tensor(x)).numpy(),
                                  np.pad(x, pairs, mode=FAMILIES[family]))


def test_constant_and_zero_padding_match_numpy_pad_at_any_rank():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(nn.ConstantPad1d((2, 0), 7.0)(gradlab.tensor(x)).numpy(),
                                  np.pad(x, [(0, 0), (0, 0), (2, 0)], constant_values=7.0))
    np.testing.assert_array_equal(nn.ZeroPad3d(1)(gradlab.tensor(x)).numpy(),
                                  np.pad(x, 1))
    np.testing.assert_array_equal(nn.ZeroPad2d([1, 0, 0, 2])(gradlab.tensor(x[0])).numpy(),
                                  np.pad(x[0], [(0, 2), (1, 0)]))


def test_layers_are_exported_with_pytorchs_defaults():
    for name in NAMES:
        assert getattr(gradlab.nn, name) is getattr(gradlab.nn.modules, name)
    assert nn.ZeroPad2d(1).value == 0.0 and nn.ZeroPad1d([1, 2]).padding == (1, 2)
    assert nn.ConstantPad3d(1, 2).padding == (1,) * 6 and nn.ConstantPad3d(1, 2).value == 2
    assert (nn.CosineSimilarity().dim, nn.CosineSimilarity().eps) == (1, 1e-8)
    dist = nn.PairwiseDistance()
    assert (dist.norm, dist.eps, dist.keepdim) == (2.0, 1e-6, False)
    assert nn.Threshold(0.5, 1.0).inplace is False


def test_threshold_values_and_inplace_writes_into_its_input():
    x = gradlab.tensor([-1.0, 0.5, 2.0])
    np.testing.assert_array_equal(nn.Threshold(0.5, -9.0)(x).numpy(), [-9.0, -9.0, 2.0])
    assert nn.Threshold(0.0, 0.0, inplace=True)(x) is x
    np.testing.assert_array_equal(x.numpy(), [0.0, 0.5, 2.0])


def test_softmax2d_sums_to_one_over_channels():
    x = gradlab.tensor(np.random.default_rng(3).standard_normal((2, 3, 4, 5)))
    np.testing.assert_allclose(nn.Softmax2d()(x).sum(1).numpy(), np.ones((2, 4, 5)), rtol=1e-12)


def test_cosine_and_pairwise_distance_values():
    a = gradlab.tensor([[3.0, 4.0], [1.0, 0.0]], dtype=gradlab.float64)
    b = gradlab.tensor([[4.0, 3.0], [0.0, 2.0]], dtype=gradlab.float64)
    np.testing.assert_allclose(nn.CosineSimilarity()(a, b).numpy(), [24 / 25, 0.0], atol=1e-12)
    np.testing.assert_allclose(nn.PairwiseDistance(eps=0.0)(a, b).numpy(),
                               [np.sqrt(2.0), np.sqrt(5.0)], rtol=1e-12)
    assert tuple(nn.PairwiseDistance(1.0, keepdim=True)(a, b).shape) == (2, 1)


def test_padding_argument_errors():
    with pytest.raises(ValueError, match=r"ZeroPad2d: padding must be an int or a tuple of 4 "
                                         r"ints \(left, right, top, bottom\), got \(1, 2, 3\)"):
        nn.ZeroPad2d((1, 2, 3))
    with pytest.raises(ValueError, match=r"ReflectionPad1d: .* tuple of 2 ints \(left, right\), "
                                         r"got \(1.5, 1\)"):
        nn.ReflectionPad1d((1.5, 1))
    with pytest.raises(TypeError, match=r"ConstantPad3d: padding must be an int or a tuple of 6 "
                                        r"ints \(left, right, top, bottom, front, back\)"):
        nn.ConstantPad3d(None, 0.0)


def test_rank_errors_teach_the_fix():
    with pytest.raises(NotImplementedError, match=r"ReflectionPad2d: .* got 2-D input of shape "
                                                  r"\(3, 3\); add a channel dim with "
                                                  r"x.unsqueeze\(0\)"):
        nn.ReflectionPad2d(1)(gradlab.ones(3, 3))
    with pytest.raises(NotImplementedError, match=r"ReplicationPad1d: .* 5-D input .*fold the "
                                                  r"extra leading dims into the batch with "
                                                  r"x.flatten\(0, 2\)"):
        nn.ReplicationPad1d(1)(gradlab.ones(2, 2, 2, 2, 2))
    with pytest.raises(RuntimeError, match=r"ReplicationPad3d: .* got 1-D input .*it pads 3 "
                                           r"dims, so the input needs at least 4"):
        nn.ReplicationPad3d(1)(gradlab.ones(3))
    with pytest.raises(ValueError, match=r"CircularPad2d: expected a 3-D \(C, H, W\) or 4-D "
                                         r"\(N, C, H, W\) input, got 2-D input"):
        nn.CircularPad2d(1)(gradlab.ones(3, 3))
    for ndim in (2, 5):
        with pytest.raises(ValueError, match=rf"Softmax2d: expected a 3-D \(C, H, W\) or 4-D "
                                             rf"\(N, C, H, W\) input, got {ndim}-D input.*use "
                                             rf"nn.Softmax\(dim=...\)"):
            nn.Softmax2d()(gradlab.ones(*(2,) * ndim))


def test_other_errors_come_from_the_ops():
    with pytest.raises(RuntimeError, match=r"pad: 2 pairs of padding for a tensor with 1 dims"):
        nn.ZeroPad2d(1)(gradlab.ones(3))
    with pytest.raises(RuntimeError, match=r"pad: reflect padding of 4 is too large for dim 2 "
                                           r"of size 3"):
        nn.ReflectionPad1d(4)(gradlab.ones(2, 2, 3))
    with pytest.raises(RuntimeError, match=r"cosine_similarity: shapes \(2, 3\) and \(2, 4\)"):
        nn.CosineSimilarity()(gradlab.ones(2, 3), gradlab.ones(2, 4))


def test_layers_compose_in_a_sequential():
    model = nn.Sequential(nn.ReflectionPad2d(1), nn.ZeroPad2d((0, 1, 1, 0)),
                          nn.Threshold(0.0, -1.0), nn.Softmax2d())
    x = gradlab.randn(2, 3, 4, 4, requires_grad=True)
    out = model(x)
    assert tuple(out.shape) == (2, 3, 7, 7)
    (out * gradlab.randn(2, 3, 7, 7)).sum().backward()
    assert x.grad.shape == x.shape and float(x.grad.abs().sum()) > 0
