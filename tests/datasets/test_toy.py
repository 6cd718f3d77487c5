"""Toy datasets: shapes, dtypes, balance, reproducibility, and that each is what its name says."""

import math

import numpy as np
import pytest

import gradlab
from gradlab.datasets import (
    make_blobs,
    make_circles,
    make_moons,
    make_sine,
    make_spirals,
    make_xor,
)

CLASSIFIERS = {
    "moons": (make_moons, 2, {}),
    "circles": (make_circles, 2, {}),
    "spirals": (make_spirals, 2, {}),
    "spirals3": (make_spirals, 3, {"n_classes": 3}),
    "blobs": (make_blobs, 3, {}),
    "xor": (make_xor, 2, {}),
}


def _np(t):
    return t.numpy()


@pytest.mark.parametrize("name", CLASSIFIERS)
@pytest.mark.parametrize("n", [7, 100])
def test_classification_shapes_dtypes_and_balance(name, n):
    fn, n_classes, kw = CLASSIFIERS[name]
    X, y = fn(n, generator=gradlab.Generator().manual_seed(0), **kw)
    assert isinstance(X, gradlab.Tensor) and isinstance(y, gradlab.Tensor)
    assert X.shape == (n, 2) and X.dtype is gradlab.float32
    assert y.shape == (n,) and y.dtype is gradlab.int64
    counts = np.bincount(_np(y), minlength=n_classes)
    assert len(counts) == n_classes
    assert counts.max() - counts.min() <= 1 and counts.sum() == n
    assert np.isfinite(_np(X)).all()


def test_sine_shapes_and_dtypes():
    X, y = make_sine(50, generator=gradlab.Generator().manual_seed(0))
    assert X.shape == (50, 1) and y.shape == (50, 1)
    assert X.dtype is gradlab.float32 and y.dtype is gradlab.float32


ALL = {**{k: (v[0], v[2]) for k, v in CLASSIFIERS.items()}, "sine": (make_sine, {})}


@pytest.mark.parametrize("name", ALL)
def test_reproducible_with_generator_and_with_global_seed(name):
    fn, kw = ALL[name]
    noisy = {} if name == "blobs" else {"noise": 0.1}  # blobs are random without noise
    a = fn(40, generator=gradlab.Generator().manual_seed(3), **noisy, **kw)
    b = fn(40, generator=gradlab.Generator().manual_seed(3), **noisy, **kw)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(_np(u), _np(v))
    gradlab.manual_seed(11)
    c = fn(40, **kw)
    gradlab.manual_seed(11)
    d = fn(40, **kw)
    for u, v in zip(c, d):
        np.testing.assert_array_equal(_np(u), _np(v))
    e = fn(40, **kw)  # the global stream moved on: a different draw
    assert any(not np.array_equal(_np(u), _np(v)) for u, v in zip(d, e))


def test_moons_are_two_interleaved_half_circles_of_radius_one():
    X, y = map(_np, make_moons(101, shuffle=False))
    upper, lower = X[y == 0], X[y == 1]
    np.testing.assert_allclose(np.linalg.norm(upper, axis=1), 1, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(lower - [1, 0.5], axis=1), 1, atol=1e-6)
    assert (upper[:, 1] >= -1e-6).all() and (lower[:, 1] <= 0.5 + 1e-6).all()
    # Interleaved: each moon reaches into the other's x-range and the y-ranges overlap.
    assert upper[:, 0].max() > lower[:, 0].min() and lower[:, 1].min() < 0 < upper[:, 1].max()


def test_circles_have_radii_one_and_factor():
    X, y = map(_np, make_circles(60, factor=0.3))
    r = np.linalg.norm(X, axis=1)
    np.testing.assert_allclose(r[y == 0], 1, atol=1e-6)
    np.testing.assert_allclose(r[y == 1], 0.3, atol=1e-6)


def test_spirals_follow_their_arm_equation():
    turns, C = 1.5, 3
    X, y = map(_np, make_spirals(90, n_classes=C, turns=turns))
    r = np.linalg.norm(X, axis=1).astype(np.float64)
    assert r.max() == pytest.approx(1, abs=1e-6) and r.min() > 0
    expected = 2 * math.pi * (turns * r + y / C)
    diff = np.angle(np.exp(1j * (np.arctan2(X[:, 1], X[:, 0]) - expected)))
    np.testing.assert_allclose(diff, 0, atol=1e-4)


def test_blobs_gather_around_their_centres():
    X, y, centres = make_blobs(3000, centers=[[0.0, 0.0], [5.0, 5.0]], cluster_std=[0.5, 1.0],
                               generator=gradlab.Generator().manual_seed(1),
                               return_centers=True)
    X, y, centres = _np(X), _np(y), _np(centres)
    for k, std in enumerate([0.5, 1.0]):
        pts = X[y == k]
        np.testing.assert_allclose(pts.mean(0), centres[k], atol=0.1)
        np.testing.assert_allclose(pts.std(0), std, rtol=0.1)


def test_blobs_random_centres_lie_in_the_box():
    _, _, centres = make_blobs(10, centers=4, center_box=(2.0, 3.0), return_centers=True)
    c = _np(centres)
    assert c.shape == (4, 2) and (c >= 2).all() and (c <= 3).all()


def test_xor_label_is_sign_disagreement():
    X, y = map(_np, make_xor(200))
    assert (np.abs(X) <= 1).all()
    np.testing.assert_array_equal(y, (X[:, 0] * X[:, 1] < 0).astype(np.int64))


def test_sine_targets_are_sin_of_x_and_noise_goes_to_y():
    X, y = map(_np, make_sine(200, x_range=(-1.0, 2.0)))
    assert X.min() >= -1 and X.max() <= 2
    np.testing.assert_allclose(y, np.sin(X), atol=1e-6)
    Xn, yn = map(_np, make_sine(2000, noise=0.2, generator=gradlab.Generator().manual_seed(0)))
    assert np.std(yn - np.sin(Xn)) == pytest.approx(0.2, rel=0.1)


def test_noise_is_a_standard_deviation_on_x():
    X, y = map(_np, make_circles(4000, noise=0.05, factor=0.5,
                                 generator=gradlab.Generator().manual_seed(0)))
    r = np.linalg.norm(X, axis=1)
    assert np.std(r[y == 0] - 1) == pytest.approx(0.05, rel=0.15)


def test_shuffle_mixes_classes_and_no_shuffle_groups_them():
    _, y = make_moons(50, shuffle=False)
    assert (np.diff(_np(y)) >= 0).all()
    _, y = make_moons(50, generator=gradlab.Generator().manual_seed(0))
    assert (np.diff(_np(y)) < 0).any()


@pytest.mark.parametrize("call, match", [
    (lambda: make_moons(1), "n_samples must be at least 2"),
    (lambda: make_moons(10.0), "n_samples must be an int"),
    (lambda: make_moons(10, noise=-1), "noise is a standard deviation"),
    (lambda: make_circles(10, factor=1.0), r"must lie in \(0, 1\)"),
    (lambda: make_spirals(10, n_classes=1), "n_classes must be an int >= 2"),
    (lambda: make_spirals(2, n_classes=3), "at least n_classes"),
    (lambda: make_spirals(10, turns=0), "turns must be > 0"),
    (lambda: make_blobs(10, centers=0), "centers must be >= 1"),
    (lambda: make_blobs(10, centers=[1.0, 2.0]), r"\(k, n_features\)"),
    (lambda: make_blobs(10, centers=3, cluster_std=[1, 2]), "one per centre"),
    (lambda: make_blobs(10, cluster_std=-1), "must be >= 0"),
    (lambda: make_blobs(10, center_box=(1, 1)), "low < high"),
    (lambda: make_xor(3), "at least 4"),
    (lambda: make_sine(10, x_range=(1, 0)), "low < high"),
    (lambda: make_moons(10, generator=np.random.default_rng(0)), "gradlab.Generator"),
])
def test_bad_arguments_explain_themselves(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_cuda_generator_is_refused_with_advice():
    class FakeCuda(gradlab.Generator):
        device = gradlab.device("cuda")

        def __init__(self):
            pass

    with pytest.raises(ValueError, match=r"CPU generator.*\.to\(device\)"):
        make_moons(10, generator=FakeCuda())
