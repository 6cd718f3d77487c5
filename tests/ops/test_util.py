"""The helpers every op family shares (gradlab/ops/_util.py)."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from gradlab.ops import _util


def test_add_at_adds_once_per_occurrence_of_a_repeated_index():
    target = np.zeros(3)
    _util.add_at(target, ([0, 0, 2],), np.array([1.0, 2.0, 4.0]))
    assert target.tolist() == [3.0, 0.0, 4.0]  # target[[0, 0]] += ... would give 2.0 at 0


def test_add_at_falls_back_to_cupyx_scatter_add(monkeypatch):
    """On a CuPy without ufunc.at the raw helper must use cupyx.scatter_add."""
    calls = []
    fake_xp = types.SimpleNamespace(add=types.SimpleNamespace())  # no add.at
    fake_cupyx = types.SimpleNamespace(scatter_add=lambda a, i, v: calls.append((a, i, v)))
    monkeypatch.setattr(_util, "xp_for", lambda a: fake_xp)
    monkeypatch.setitem(sys.modules, "cupyx", fake_cupyx)
    target = np.zeros(3)
    _util.add_at(target, ([0, 0],), np.ones(2))
    assert len(calls) == 1 and calls[0][0] is target
    monkeypatch.undo()
    _util.add_at(target, ([0, 0],), np.ones(2))  # NumPy: add.at, repeats add up
    assert target.tolist() == [2.0, 0.0, 0.0]


def test_array_norm_is_the_float64_2_norm_of_any_raw_array():
    array_norm = _util.array_norm
    a = np.array([[3.0, 4.0], [0.0, 12.0]], dtype=np.float16)
    assert array_norm(a) == 13.0 and type(array_norm(a)) is float
    assert array_norm(np.array([3 + 4j])) == 5.0  # complex values by magnitude
    assert array_norm(np.zeros((0, 3))) == 0.0
    assert array_norm(np.array([1, 2, 2], dtype=np.int64)) == 3.0


@pytest.mark.parametrize("index_shape, value_shape", [((7,), (7, 3, 2)), ((2, 4), (2, 4, 3, 2)),
                                                    ((5,), (2,)), ((6,), ())])
def test_add_at_adds_each_repeat_of_a_row_even_negative_ones(index_shape, value_shape):
    """Whole rows go through flat positions (faster); repeats add, -1 is the last row,
    values broadcast as in ``target[index] += values``."""
    rng = np.random.default_rng(0)
    index = rng.integers(-4, 4, size=index_shape)
    values = rng.standard_normal(value_shape)
    target = rng.standard_normal((4, 3, 2))
    expected = target.copy()
    for pos, row in zip(index.reshape(-1), np.broadcast_to(
            values, index.shape + (3, 2)).reshape(-1, 3, 2)):
        expected[pos] += row
    _util.add_at(target, index, values)
    np.testing.assert_allclose(target, expected, rtol=1e-14)
