"""nn.init: fans and gains as PyTorch computes them, and the statistics of each scheme."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
from gradlab import nn
from gradlab.nn import init
from tests.oracle import needs_torch, torch

SHAPES = [(3, 4), (8, 3, 5), (16, 4, 3, 3), (2, 3, 1, 2, 2), (1, 1)]


@needs_torch
@pytest.mark.parametrize("shape", SHAPES)
def test_fans_match_torch(shape):
    assert init._calculate_fan_in_and_fan_out(gradlab.empty(*shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


@needs_torch
@pytest.mark.parametrize(("name", "param"), [
    ("linear", None), ("conv2d", None), ("conv_transpose3d", None), ("sigmoid", None),
    ("tanh", None), ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
    ("leaky_relu", 3), ("selu", None)])
def test_gains_match_torch(name, param):
    assert init.calculate_gain(name, param) == pytest.approx(
        torch.nn.init.calculate_gain(name, param), rel=1e-12)


def test_errors_teach():
    with pytest.raises(ValueError, match=r"fewer than 2 dimensions \(got shape \(5,\)\).*bias"):
        init.xavier_uniform_(gradlab.empty(5))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.kaiming_normal_(gradlab.empty(5))
    with pytest.raises(ValueError, match="Unsupported nonlinearity swish"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="negative_slope yes not a valid number"):
        init.calculate_gain("leaky_relu", "yes")
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(gradlab.empty(3, 3), mode="fan_avg")
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(gradlab.empty(2, 2, 2))
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
        init.dirac_(gradlab.empty(2, 2))
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions"):
        init.orthogonal_(gradlab.empty(3))
    with pytest.raises(ValueError, match=r"interval \[a, b\] = \[1, 0\] is empty"):
        init.trunc_normal_(gradlab.empty(3), a=1, b=0)
    with pytest.raises(TypeError, match="uniform_: expected a Tensor"):
        init.uniform_(np.zeros(3))


def _stats(t):
    v = t.detach().numpy().astype(np.float64)
    return v.mean(), v.std(), v.min(), v.max()


def test_uniform_and_normal_statistics():
    t = gradlab.empty(200, 500)
    assert init.uniform_(t, -2.0, 4.0) is t
    mean, std, lo, hi = _stats(t)
    assert -2.0 <= lo and hi < 4.0
    assert mean == pytest.approx(1.0, abs=0.02) and std == pytest.approx(6 / math.sqrt(12),
                                                                            rel=0.01)
    init.normal_(t, 3.0, 0.5)
    mean, std, _, _ = _stats(t)
    assert mean == pytest.approx(3.0, abs=0.005) and std == pytest.approx(0.5, rel=0.01)


@pytest.mark.parametrize("shape", [(300, 200), (64, 32, 3, 3)])
def test_xavier_and_kaiming_statistics(shape):
    t = gradlab.empty(*shape)
    fan_in, fan_out = init._calculate_fan_in_and_fan_out(t)
    init.xavier_uniform_(t, gain=2.0)
    bound = 2.0 * math.sqrt(6.0 / (fan_in + fan_out))
    mean, std, lo, hi = _stats(t)
    assert -bound <= lo and hi <= bound and std == pytest.approx(bound / math.sqrt(3), rel=0.02)
    init.xavier_normal_(t)
    assert _stats(t)[1] == pytest.approx(math.sqrt(2.0 / (fan_in + fan_out)), rel=0.02)
    init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")
    assert _stats(t)[1] == pytest.approx(math.sqrt(2.0 / fan_out), rel=0.02)
    init.kaiming_uniform_(t, a=0.2)
    gain = math.sqrt(2.0 / (1 + 0.04))
    mean, std, lo, hi = _stats(t)
    assert std == pytest.approx(gain / math.sqrt(fan_in), rel=0.02)
    assert hi <= math.sqrt(3) * gain / math.sqrt(fan_in)
    assert abs(mean) < 0.05 * std


def test_trunc_normal_stays_in_its_interval():
    t = gradlab.empty(100, 100)
    init.trunc_normal_(t, mean=0.5, std=1.0, a=0.0, b=1.0)
    mean, std, lo, hi = _stats(t)
    assert lo >= 0.0 and hi <= 1.0
    # a normal cut symmetrically around its mean keeps that mean
    assert mean == pytest.approx(0.5, abs=0.02) and std < 1.0 / math.sqrt(3) + 0.05
    init.trunc_normal_(t, std=0.02)  # the ViT default: the cut at ±2 changes nothing
    assert _stats(t)[1] == pytest.approx(0.02, rel=0.02)


@pytest.mark.parametrize("shape", [(6, 6), (4, 9), (9, 4), (4, 2, 3)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    t = init.orthogonal_(gradlab.empty(*shape), gain=2.0)
    m = t.detach().numpy().reshape(shape[0], -1).astype(np.float64) / 2.0
    small = min(m.shape)
    gram = m @ m.T if m.shape[0] == small else m.T @ m
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)


def test_constant_eye_dirac():
    t = gradlab.empty(2, 3)
    assert init.constant_(t, 0.5).tolist() == [[0.5] * 3] * 2
    assert init.zeros_(t).tolist() == [[0.0] * 3] * 2
    assert init.ones_(t).tolist() == [[1.0] * 3] * 2
    np.testing.assert_array_equal(init.eye_(t).numpy(), np.eye(2, 3))


@needs_torch
@pytest.mark.parametrize(("shape", "groups"), [((4, 2, 3), 1), ((6, 3, 3, 3), 2),
                                               ((2, 2, 1, 3, 3), 1)])
def test_dirac_matches_torch(shape, groups):
    want = torch.nn.init.dirac_(torch.empty(*shape), groups).numpy()
    np.testing.assert_array_equal(init.dirac_(gradlab.empty(*shape), groups).numpy(), want)


def test_inits_run_without_recording_and_keep_the_parameter():
    p = nn.Parameter(gradlab.empty(3, 3))
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
               init.orthogonal_, init.trunc_normal_, init.zeros_, init.eye_):
        out = fn(p)
        assert out is p and p.grad_fn is None and p.requires_grad, fn.__name__


def test_generator_makes_inits_reproducible():
    a, b = gradlab.empty(4, 4), gradlab.empty(4, 4)
    for fn in (init.uniform_, init.normal_, init.xavier_normal_, init.kaiming_uniform_,
               init.orthogonal_, init.trunc_normal_):
        fn(a, generator=gradlab.Generator().manual_seed(7))
        fn(b, generator=gradlab.Generator().manual_seed(7))
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=fn.__name__)


def test_zero_element_tensor_warns_and_is_left_alone():
    t = gradlab.empty(0, 3)
    with pytest.warns(UserWarning, match="zero-element tensors is a no-op"):
        assert init.kaiming_uniform_(t) is t


def test_other_dtypes():
    t = gradlab.empty(50, 50, dtype=gradlab.float64)
    init.kaiming_uniform_(t)
    assert t.dtype == gradlab.float64
    h = init.normal_(gradlab.empty(10, 10, dtype=gradlab.float16))
    assert h.dtype == gradlab.float16 and np.isfinite(h.numpy()).all()
    o = init.orthogonal_(gradlab.empty(4, 4, dtype=gradlab.float16))
    np.testing.assert_allclose(o.numpy().astype(np.float64) @ o.numpy().T, np.eye(4),
                               atol=5e-3)
