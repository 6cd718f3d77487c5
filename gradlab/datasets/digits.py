"""8x8 handwritten digits, shipped with gradlab: a real image dataset that needs no download.

1,797 grey-level images of the digits 0-9, each 8x8 with values 0..16 (the
count of "on" pixels in a 4x4 block of a 32x32 bitmap). This is the test set
of the UCI "Optical Recognition of Handwritten Digits" data, in the copy
distributed with scikit-learn; ``assets/digits/README.md`` gives its source
and licence. It is small enough to train a CNN on in seconds on a CPU.
"""

from __future__ import annotations

import gzip
import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..ops.creation import from_numpy
from ..tensor import Tensor
from ..utils.data.dataset import Dataset

__all__ = ["load_digits", "Digits"]

FILE_NAME = "digits.csv.gz"
N_IMAGES = 1797
DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "assets" / "digits"
TEST_EVERY = 5  # the test split: every 5th image of each digit, in file order (20%)


@lru_cache(maxsize=4)
def _read(root: Path) -> tuple[np.ndarray, np.ndarray]:
    """``(pixels uint8 (N, 8, 8), labels int64 (N,))`` from the CSV (one image per row)."""
    path = root / FILE_NAME
    if not path.is_file():
        raise FileNotFoundError(
            f"digits: {path} is missing. It ships in gradlab's repository under "
            "assets/digits/ and is found through the source tree, so gradlab must be "
            "installed from a checkout (pip install -e .). Fix: restore the file "
            "(git checkout -- assets/digits), or pass root= a folder that holds "
            f"{FILE_NAME} (scikit-learn's sklearn/datasets/data/{FILE_NAME} is the same file).")
    with gzip.open(path, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.int64, ndmin=2)
    if table.shape != (N_IMAGES, 65) or table.min() < 0 or table[:, :64].max() > 16 \
            or table[:, 64].max() > 9:
        raise ValueError(f"digits: {path} is not the expected data: want {N_IMAGES} rows of "
                         f"64 pixels in 0..16 and a label in 0..9, got a table of shape "
                         f"{table.shape}. Fix: restore the file (git checkout -- assets/digits)")
    return table[:, :64].astype(np.uint8).reshape(-1, 8, 8), table[:, 64].copy()


def _root(root) -> Path:
    return DEFAULT_ROOT if root is None else Path(root).expanduser().resolve()


def load_digits(root: str | os.PathLike | None = None) -> tuple[Tensor, Tensor]:
    """All 1,797 digits: float32 images ``(1797, 1, 8, 8)`` in [0, 1], int64 labels ``(1797,)``.

    The images have a channel dimension so they go straight into ``nn.Conv2d(1, ...)``;
    ``images.flatten(1)`` gives the 64 features for an MLP. Each call returns
    new tensors (change them freely). ``root`` overrides the folder holding
    ``digits.csv.gz``.
    """
    pixels, labels = _read(_root(root))
    images = pixels[:, None].astype(np.float32) / np.float32(16)
    return from_numpy(images), from_numpy(labels.copy())


def split_indices(labels: np.ndarray, train: bool) -> np.ndarray:
    """The fixed, stratified 80/20 split: the test set is every 5th image of each digit.

    Deterministic (no random numbers, so no dependence on seeds or NumPy
    versions) and stratified: each digit is 20% (rounded) of its own images
    in the test set.
    """
    rank = np.empty(len(labels), dtype=np.int64)  # position of each image among its digit's
    for digit in np.unique(labels):
        where = np.flatnonzero(labels == digit)
        rank[where] = np.arange(len(where))
    in_test = rank % TEST_EVERY == TEST_EVERY - 1
    return np.flatnonzero(~in_test if train else in_test)


class Digits(Dataset):
    """The 8x8 digits as a Dataset with a fixed, stratified 80/20 train/test split.

    ``train=True`` gives 1,442 images, ``train=False`` the other 355 (every
    5th image of each digit, in file order; see :func:`split_indices`). Each
    item is ``(image, label)``: a float32 tensor ``(1, 8, 8)`` in [0, 1] and
    an int, passed through ``transform`` / ``target_transform`` when given.
    ``data`` (float32 ``(N, 1, 8, 8)``) and ``targets`` (int64 ``(N,)``) hold
    the whole split as tensors.
    """

    classes = [str(d) for d in range(10)]

    def __init__(self, train: bool = True, transform=None, target_transform=None,
                 root: str | os.PathLike | None = None) -> None:
        self.train = bool(train)
        self.transform, self.target_transform = transform, target_transform
        self.root = _root(root)
        pixels, labels = _read(self.root)
        keep = split_indices(labels, self.train)
        self._images = pixels[keep, None].astype(np.float32) / np.float32(16)
        self._labels = labels[keep]
        self.data, self.targets = from_numpy(self._images), from_numpy(self._labels)

    def __len__(self) -> int:
        return len(self._labels)

    def __getitem__(self, index: int):
        image = from_numpy(self._images[index].copy())  # a copy: the dataset stays intact
        label = int(self._labels[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label

    def __repr__(self) -> str:
        return (f"Dataset Digits\n    Number of datapoints: {len(self)}\n"
                f"    Split: {'Train' if self.train else 'Test'}")
