"""Toy 2-D datasets: small problems whose answer you can see in a scatter plot.

Each function returns ``(X, y)`` as gradlab tensors on the CPU:

* ``X`` is float32 of shape ``(n_samples, 2)`` (``(n_samples, 1)`` for ``make_sine``);
* ``y`` is int64 of shape ``(n_samples,)`` holding class labels ``0 .. n_classes-1``,
  ready for ``cross_entropy``; ``make_sine`` is a regression set and gives float32
  targets of shape ``(n_samples, 1)``, the shape of ``nn.Linear(1, 1)``'s output, so
  ``mse_loss(model(X), y)`` compares like with like instead of broadcasting
  ``(n, 1)`` against ``(n,)`` into an ``(n, n)`` matrix.

Classes are balanced: ``n_samples`` is shared out as evenly as possible (the
first ``n_samples % n_classes`` classes get one sample more). Randomness comes
from ``generator`` (a CPU :class:`gradlab.Generator`) or, when it is None,
from the global generator, so ``gradlab.manual_seed(0)`` makes every call
repeatable. ``noise`` is the standard deviation of Gaussian noise added to
each coordinate of ``X`` (to ``y`` for ``make_sine``). With ``shuffle=True``
(the default) the rows come in random order, as a DataLoader would want them;
``shuffle=False`` keeps them grouped by class.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..ops.creation import from_numpy
from ..random import Generator, get_generator
from ..tensor import Tensor

__all__ = ["make_moons", "make_circles", "make_spirals", "make_blobs", "make_xor", "make_sine"]


# --- shared helpers ------------------------------------------------------------------------
def _rng(op: str, generator: Generator | None) -> np.random.Generator:
    gen = generator if generator is not None else get_generator("cpu")
    if not isinstance(gen, Generator):
        raise TypeError(f"{op}: generator must be a gradlab.Generator, got "
                        f"{type(gen).__name__}")
    if gen.device.type != "cpu":
        raise ValueError(f"{op}: toy datasets are drawn on the host; pass a CPU generator "
                         f"(gradlab.Generator('cpu')), got one for {gen.device}. Move the "
                         "tensors afterwards with .to(device).")
    return gen.rng


def _check_n(op: str, n_samples: int, at_least: int = 1) -> int:
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)):
        raise TypeError(f"{op}: n_samples must be an int, got {type(n_samples).__name__}")
    if n_samples < at_least:
        raise ValueError(f"{op}: n_samples must be at least {at_least}, got {n_samples}")
    return int(n_samples)


def _check_noise(op: str, noise: float) -> float:
    if not noise >= 0:  # also rejects NaN
        raise ValueError(f"{op}: noise is a standard deviation and must be >= 0, got {noise}")
    return float(noise)


def _split(n_samples: int, n_classes: int) -> list[int]:
    """Class sizes as even as possible: ``_split(7, 3) == [3, 2, 2]``."""
    base, extra = divmod(n_samples, n_classes)
    return [base + (k < extra) for k in range(n_classes)]


def _labels(sizes: list[int]) -> np.ndarray:
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)


def _finish(x: np.ndarray, y: np.ndarray, noise: float, shuffle: bool,
            rng: np.random.Generator, noisy: str = "x") -> tuple[Tensor, Tensor]:
    """Add the noise, shuffle rows, and hand back float32 X and y as tensors."""
    if noise:
        if noisy == "x":
            x = x + rng.normal(0.0, noise, size=x.shape)
        else:
            y = y + rng.normal(0.0, noise, size=y.shape)
    if shuffle:
        order = rng.permutation(len(x))
        x, y = x[order], y[order]
    x = np.ascontiguousarray(x, dtype=np.float32)
    y = np.ascontiguousarray(y, dtype=np.float32 if y.dtype.kind == "f" else np.int64)
    return from_numpy(x), from_numpy(y)


# --- the datasets --------------------------------------------------------------------------
def make_moons(n_samples: int = 100, *, noise: float = 0.0, shuffle: bool = True,
               generator: Generator | None = None) -> tuple[Tensor, Tensor]:
    """Two interleaved half circles of radius 1: not separable by a straight line.

    Class 0 is the upper half circle centred at (0, 0), ``(cos t, sin t)``;
    class 1 is the lower one centred at (1, 0.5), ``(1 - cos t, 0.5 - sin t)``,
    with ``t`` evenly spaced over ``[0, pi]``. Returns X ``(n, 2)`` float32 and
    y ``(n,)`` int64.
    """
    op = "make_moons"
    n_samples, noise = _check_n(op, n_samples, 2), _check_noise(op, noise)
    rng = _rng(op, generator)
    n0, n1 = _split(n_samples, 2)
    t0, t1 = np.linspace(0.0, math.pi, n0), np.linspace(0.0, math.pi, n1)
    upper = np.stack([np.cos(t0), np.sin(t0)], axis=1)
    lower = np.stack([1.0 - np.cos(t1), 0.5 - np.sin(t1)], axis=1)
    return _finish(np.concatenate([upper, lower]), _labels([n0, n1]), noise, shuffle, rng)


def make_circles(n_samples: int = 100, *, noise: float = 0.0, factor: float = 0.8,
                 shuffle: bool = True,
                 generator: Generator | None = None) -> tuple[Tensor, Tensor]:
    """Two concentric circles: class 0 has radius 1, class 1 radius ``factor`` (0 < factor < 1).

    No line separates them, but a feature like ``x0**2 + x1**2`` does: the
    classic case for a hidden layer. Points are evenly spaced in angle.
    Returns X ``(n, 2)`` float32 and y ``(n,)`` int64.
    """
    op = "make_circles"
    n_samples, noise = _check_n(op, n_samples, 2), _check_noise(op, noise)
    if not 0 < factor < 1:
        raise ValueError(f"{op}: factor is the inner circle's radius relative to the outer "
                         f"one and must lie in (0, 1), got {factor}")
    rng = _rng(op, generator)
    sizes = _split(n_samples, 2)
    rings = []
    for radius, n in zip((1.0, float(factor)), sizes):
        t = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
        rings.append(radius * np.stack([np.cos(t), np.sin(t)], axis=1))
    return _finish(np.concatenate(rings), _labels(sizes), noise, shuffle, rng)


def make_spirals(n_samples: int = 100, *, n_classes: int = 2, turns: float = 1.0,
                 noise: float = 0.0, shuffle: bool = True,
                 generator: Generator | None = None) -> tuple[Tensor, Tensor]:
    """``n_classes`` interleaved spiral arms, each winding ``turns`` times around the origin.

    Arm ``k`` is the Archimedean spiral ``r = s``,
    ``angle = 2 pi (turns * s + k / n_classes)`` for ``s`` evenly spaced in
    ``(0, 1]``: the arms are copies of one another rotated by ``2 pi / n_classes``
    and reach radius 1. Returns X ``(n, 2)`` float32 and y ``(n,)`` int64.
    """
    op = "make_spirals"
    n_samples, noise = _check_n(op, n_samples, 1), _check_noise(op, noise)
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) \
            or n_classes < 2:
        raise ValueError(f"{op}: n_classes must be an int >= 2, got {n_classes!r}")
    if n_samples < n_classes:
        raise ValueError(f"{op}: n_samples ({n_samples}) must be at least n_classes "
                         f"({n_classes}) so that every arm has a point")
    if not turns > 0:
        raise ValueError(f"{op}: turns must be > 0, got {turns}")
    rng = _rng(op, generator)
    sizes = _split(n_samples, int(n_classes))
    arms = []
    for k, n in enumerate(sizes):
        s = np.arange(1, n + 1) / n
        angle = 2 * math.pi * (turns * s + k / n_classes)
        arms.append(s[:, None] * np.stack([np.cos(angle), np.sin(angle)], axis=1))
    return _finish(np.concatenate(arms), _labels(sizes), noise, shuffle, rng)


def make_blobs(n_samples: int = 100, *, centers: int | Sequence = 3, cluster_std=1.0,
               n_features: int = 2, center_box: tuple[float, float] = (-10.0, 10.0),
               shuffle: bool = True, generator: Generator | None = None,
               return_centers: bool = False):
    """Gaussian clusters: class ``k`` is drawn from ``Normal(centers[k], cluster_std[k]**2 I)``.

    ``centers`` is a number of clusters (their centres drawn uniformly in
    ``center_box``) or a ``(k, n_features)`` array of centres; ``cluster_std``
    is one standard deviation or one per cluster. Returns X ``(n, n_features)``
    float32 and y ``(n,)`` int64, plus the ``(k, n_features)`` float32 centres
    when ``return_centers=True``.
    """
    op = "make_blobs"
    n_samples = _check_n(op, n_samples, 1)
    rng = _rng(op, generator)
    if isinstance(centers, (int, np.integer)) and not isinstance(centers, bool):
        if centers < 1:
            raise ValueError(f"{op}: centers must be >= 1, got {centers}")
        low, high = center_box
        if not low < high:
            raise ValueError(f"{op}: center_box must be (low, high) with low < high, "
                             f"got {center_box}")
        centre_array = rng.uniform(low, high, size=(int(centers), n_features))
    else:
        centre_array = np.asarray(centers.numpy() if isinstance(centers, Tensor) else centers,
                                  dtype=np.float64)
        if centre_array.ndim != 2 or len(centre_array) == 0:
            raise ValueError(f"{op}: centers must be an int or a (k, n_features) array of "
                             f"centres, got shape {centre_array.shape}")
    k = len(centre_array)
    stds = np.asarray(cluster_std, dtype=np.float64).reshape(-1)
    if stds.size == 1:
        stds = np.repeat(stds, k)
    if stds.size != k:
        raise ValueError(f"{op}: cluster_std must be one number or one per centre ({k}), "
                         f"got {np.size(cluster_std)} values")
    if not np.all(stds >= 0):
        raise ValueError(f"{op}: cluster_std values must be >= 0, got {list(stds)}")
    sizes = _split(n_samples, k)
    labels = _labels(sizes)
    x = centre_array[labels] + rng.standard_normal((n_samples, centre_array.shape[1])) \
        * stds[labels, None]
    X, y = _finish(x, labels, 0.0, shuffle, rng)
    if return_centers:
        return X, y, from_numpy(centre_array.astype(np.float32))
    return X, y


def make_xor(n_samples: int = 100, *, noise: float = 0.0, shuffle: bool = True,
             generator: Generator | None = None) -> tuple[Tensor, Tensor]:
    """Points in the square ``[-1, 1]^2`` labelled 1 where exactly one coordinate is positive.

    The four quadrants get equal shares; quadrants 1 and 3 (x0*x1 > 0) are
    class 0, quadrants 2 and 4 are class 1 — the problem a single linear
    layer provably cannot solve. Labels come from the clean points, so noise
    can push a point across an axis. Returns X ``(n, 2)`` float32, y ``(n,)`` int64.
    """
    op = "make_xor"
    n_samples, noise = _check_n(op, n_samples, 4), _check_noise(op, noise)
    rng = _rng(op, generator)
    # Quadrant signs ordered so that the first two are class 0 and the last two class 1;
    # splitting n into 4 then gives classes that differ by at most one sample.
    signs = np.array([[1, 1], [-1, -1], [-1, 1], [1, -1]], dtype=np.float64)
    quadrant_sizes = _split(n_samples, 4)
    quadrant = np.repeat(np.arange(4), quadrant_sizes)
    # Magnitudes in (0, 1]: a point never sits exactly on an axis, where its label is moot.
    magnitude = 1.0 - rng.random((n_samples, 2))
    x = signs[quadrant] * magnitude
    y = (quadrant >= 2).astype(np.int64)
    return _finish(x, y, noise, shuffle, rng)


def make_sine(n_samples: int = 100, *, noise: float = 0.0,
              x_range: tuple[float, float] = (-math.pi, math.pi), shuffle: bool = True,
              generator: Generator | None = None) -> tuple[Tensor, Tensor]:
    """Regression: ``y = sin(x) + noise`` for ``x`` drawn uniformly from ``x_range``.

    Returns X ``(n, 1)`` float32 and y ``(n, 1)`` float32 (see the module
    docstring for why y is a column). ``noise`` is added to y, not to x.
    """
    op = "make_sine"
    n_samples, noise = _check_n(op, n_samples, 1), _check_noise(op, noise)
    low, high = x_range
    if not low < high:
        raise ValueError(f"{op}: x_range must be (low, high) with low < high, got {x_range}")
    rng = _rng(op, generator)
    x = np.sort(rng.uniform(low, high, size=(n_samples, 1)), axis=0)
    return _finish(x, np.sin(x), noise, shuffle, rng, noisy="y")
