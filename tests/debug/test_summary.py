"""summarize(): statistics, histogram and heatmap of a tensor, checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab import events
from gradlab.debug import summary as summary_module
from gradlab.debug.snapshot import TensorSummary
from gradlab.debug.summary import summarize


@pytest.fixture(autouse=True, params=["host", "device"])
def path(request, monkeypatch):
    """Every test runs on both code paths: NumPy's fast one and the device one (CuPy's)."""
    monkeypatch.setattr(summary_module, "HOST_FAST_PATH", request.param == "host")
    return request.param


def finite_stats(a: np.ndarray) -> dict:
    f = a[np.isfinite(a)].astype(np.float64)
    return {"min": f.min(), "max": f.max(), "mean": f.mean(), "std": f.std(ddof=1),
            "norm": np.sqrt((f * f).sum()), "n": f.size}


def with_specials(shape, dtype=np.float32):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape).astype(dtype) * 3
    flat = a.reshape(-1)
    flat[[1, 7, 8]] = np.nan
    flat[[3]] = np.inf
    flat[[5]] = -np.inf
    return a


@pytest.mark.parametrize("shape", [(40,), (12, 9), (3, 4, 5)])
def test_statistics_of_finite_values_match_numpy(shape):
    a = with_specials(shape)
    s = summarize(a)
    ref = finite_stats(a)
    assert (s.shape, s.dtype, s.device, s.numel) == (shape, "float32", "cpu", a.size)
    assert (s.nan, s.inf) == (3, 2) and not s.finite
    for key in ("min", "max", "mean", "std", "norm"):
        assert getattr(s, key) == pytest.approx(ref[key], rel=1e-9, abs=1e-12), key


def test_histogram_counts_every_finite_value_like_numpy():
    a = with_specials((30, 7))
    s = summarize(a, bins=10)
    edges, counts = s.histogram
    f = a[np.isfinite(a)].astype(np.float64)
    ref_counts, ref_edges = np.histogram(f, bins=10, range=(f.min(), f.max()))
    assert len(edges) == 11 and len(counts) == 10
    np.testing.assert_allclose(edges, ref_edges)
    assert list(counts) == ref_counts.tolist()
    assert sum(counts) == f.size == a.size - 5


def test_histogram_of_a_constant_is_one_full_bin():
    s = summarize(np.full((4, 4), 2.5))
    edges, counts = s.histogram
    assert sum(counts) == 16 and max(counts) == 16
    assert edges[0] < 2.5 < edges[-1]
    assert s.std == 0.0 and s.min == s.max == 2.5


def block_means(m: np.ndarray, rows: int, cols: int) -> np.ndarray:
    rb = (np.arange(rows + 1) * m.shape[0]) // rows
    cb = (np.arange(cols + 1) * m.shape[1]) // cols
    return np.array([[m[rb[i]:rb[i + 1], cb[j]:cb[j + 1]].mean() for j in range(cols)]
                     for i in range(rows)])


def test_heatmap_is_block_means_of_the_matrix():
    m = np.random.default_rng(2).standard_normal((50, 37))
    s = summarize(m, heat=(8, 16))
    heat = np.array(s.heatmap)
    assert heat.shape == (8, 16)
    np.testing.assert_allclose(heat, block_means(m, 8, 16), rtol=1e-9, atol=1e-12)


def test_heatmap_views_vectors_as_a_row_and_flattens_leading_dims():
    v = summarize(np.arange(5.0))
    assert v.heatmap == ((0.0, 1.0, 2.0, 3.0, 4.0),)
    t = np.arange(2 * 3 * 4, dtype=np.float64).reshape(2, 3, 4)
    s = summarize(t, heat=(4, 4))
    np.testing.assert_allclose(np.array(s.heatmap), block_means(t.reshape(6, 4), 4, 4))
    assert np.array(summarize(np.ones((100, 3, 2))).heatmap).shape == (8, 2)


def test_heatmap_leaves_out_non_finite_values():
    m = np.array([[1.0, np.nan], [3.0, np.inf]])
    s = summarize(m, heat=(1, 2))
    assert s.heatmap[0][0] == pytest.approx(2.0)
    assert np.isnan(s.heatmap[0][1])  # a cell with no finite value


def test_empty_tensor_has_no_statistics():
    s = summarize(gradlab.zeros(0, 3))
    assert (s.shape, s.numel, s.dtype) == ((0, 3), 0, "float32")
    assert s.min is s.max is s.mean is s.std is s.norm is s.histogram is s.heatmap is None
    assert s.finite


def test_zero_dim_and_single_element():
    s = summarize(gradlab.tensor(-2.5))
    assert (s.shape, s.numel, s.min, s.max, s.mean, s.norm) == ((), 1, -2.5, -2.5, -2.5, 2.5)
    assert s.std is None  # one value has no sample std
    assert s.heatmap == ((-2.5,),) and s.values == "-2.5"


def test_integer_and_bool_tensors():
    t = gradlab.arange(12).reshape(3, 4)
    s = summarize(t)
    ref = np.arange(12)
    assert s.dtype == "int64" and (s.nan, s.inf) == (0, 0)
    assert (s.min, s.max, s.mean) == (0.0, 11.0, 5.5)
    assert s.std == pytest.approx(ref.std(ddof=1)) and s.norm == pytest.approx(np.sqrt(506))
    assert sum(s.histogram[1]) == 12
    b = summarize(np.array([True, False, True, True]))
    assert (b.dtype, b.min, b.max, b.mean) == ("bool", 0.0, 1.0, 0.75)


def test_all_nan_counts_and_no_statistics():
    s = summarize(np.full(4, np.nan, dtype=np.float32))
    assert (s.nan, s.inf) == (4, 0)
    assert s.min is None and s.mean is None and s.histogram is None
    s = summarize(np.array([np.inf, -np.inf]))
    assert (s.nan, s.inf) == (0, 2) and s.max is None


def test_gradlab_tensor_dtype_device_and_values_text():
    t = gradlab.tensor([[1.0, 2.0], [3.0, 4.5]], dtype=gradlab.float64)
    s = summarize(t)
    assert isinstance(s, TensorSummary)
    assert (s.dtype, s.device, s.shape) == ("float64", "cpu", (2, 2))
    assert "4.5" in s.values and "1." in s.values
    assert summarize(gradlab.ones(17)).values is None  # more than values_up_to
    assert summarize(gradlab.ones(17), values_up_to=20).values is not None


def test_summarize_emits_no_events():
    t = gradlab.randn(6, 5)
    seen = []
    with events.subscribe(seen.append):
        summarize(t)
        summarize(t._data)
    assert seen == []


def test_raw_numpy_and_tensor_give_the_same_numbers():
    t = gradlab.randn(7, 3)
    a, b = summarize(t), summarize(t._data)
    assert (a.min, a.max, a.mean, a.std, a.norm, a.histogram, a.heatmap) == \
        (b.min, b.max, b.mean, b.std, b.norm, b.histogram, b.heatmap)


def test_module_exports():
    assert summary_module.__all__ == ["summarize"]


def test_both_paths_give_the_same_summary(monkeypatch):
    a = with_specials((9, 20), np.float64)
    monkeypatch.setattr(summary_module, "HOST_FAST_PATH", True)
    host = summarize(a, heat=(4, 6))
    monkeypatch.setattr(summary_module, "HOST_FAST_PATH", False)
    device = summarize(a, heat=(4, 6))
    assert host.histogram == device.histogram and (host.nan, host.inf) == (device.nan, device.inf)
    for key in ("min", "max", "mean", "std", "norm"):
        assert getattr(host, key) == pytest.approx(getattr(device, key), rel=1e-12)
    np.testing.assert_allclose(host.heatmap, device.heatmap, rtol=1e-12)
