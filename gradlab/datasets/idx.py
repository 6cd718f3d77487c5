"""MNIST-style datasets from local IDX files (gradlab never downloads).

The IDX format (Yann LeCun's, used by MNIST and Fashion-MNIST) is a tiny
header and then raw big-endian numbers:

    bytes 0-1   0x00 0x00
    byte  2     element type: 0x08 ubyte, 0x09 sbyte, 0x0B int16, 0x0C int32,
                0x0D float32, 0x0E float64
    byte  3     number of dimensions d
    then        d sizes, each a big-endian uint32
    then        the values, row-major (last index fastest), big-endian

So MNIST's training images start ``00 00 08 03 | 60000 | 28 | 28``.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

import numpy as np

from ..ops.creation import from_numpy
from ..utils.data.dataset import Dataset

__all__ = ["read_idx", "MNIST", "FashionMNIST"]

IDX_TYPES = {
    0x08: np.dtype(np.uint8), 0x09: np.dtype(np.int8), 0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8"),
}
_TYPE_NAMES = {0x08: "ubyte", 0x09: "sbyte", 0x0B: "int16", 0x0C: "int32", 0x0D: "float32",
               0x0E: "float64"}


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped when it is gzip data (by content, whatever its name)."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise ValueError(f"read_idx: {path} is a damaged or truncated gzip file ({e}); "
                             "download it again") from None
    return data


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """The array stored in an IDX file (gzipped or not), as a native-endian NumPy array.

    NumPy, in the file's own element type; ``gradlab.from_numpy`` makes it a
    tensor without copying (MNIST's uint8 images stay uint8).
    """
    path = Path(path)
    data = _read_bytes(path)
    expected = "an IDX file starting 00 00 <type 08/09/0B/0C/0D/0E> <number of dims>"
    if len(data) < 4:
        raise ValueError(f"read_idx: {path} is too short ({len(data)} bytes) to be an IDX "
                         f"file; expected {expected}")
    if data[0] != 0 or data[1] != 0 or data[2] not in IDX_TYPES:
        raise ValueError(f"read_idx: {path} is not an IDX file: it starts with "
                         f"{data[:4].hex(' ')}, expected {expected}")
    code, ndim = data[2], data[3]
    header = 4 + 4 * ndim
    if len(data) < header:
        raise ValueError(f"read_idx: {path} is truncated: its header declares {ndim} "
                         f"dimensions ({header} header bytes) but the file has {len(data)} bytes")
    shape = tuple(int(s) for s in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dtype = IDX_TYPES[code]
    need = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    have = len(data) - header
    if have != need:
        size = " x ".join(map(str, shape)) or "scalar"
        problem = "is truncated" if have < need else f"has {have - need} bytes too many"
        raise ValueError(
            f"read_idx: {path} {problem}: its header says {size} {_TYPE_NAMES[code]} values "
            f"({need} bytes of data), the file holds {have}. Fix: download it again.")
    array = np.frombuffer(data, dtype=dtype, offset=header).reshape(shape)
    return array.astype(dtype.newbyteorder("="))  # a native, writable copy


class MNIST(Dataset):
    """MNIST handwritten digits (28x28, 60,000 train / 10,000 test) read from a local folder.

    Looks in ``root`` and in ``root/<ClassName>/raw`` (torchvision's layout)
    for the four IDX files, gzipped or not. Each item is ``(image, label)``:
    ``image`` a float32 tensor ``(1, 28, 28)`` scaled to [0, 1] (what
    torchvision gives with ``transforms.ToTensor()``), ``label`` an int; the
    transforms, when given, are applied to each. As in torchvision, ``data``
    is the raw uint8 tensor ``(N, 28, 28)`` and ``targets`` an int64 tensor
    ``(N,)``; items are read from them, so ``ds.data = ds.data[:1000]`` (with
    the matching targets) makes a smaller dataset. gradlab never downloads
    (``download=True`` explains where to get the files).
    """

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/",
               "http://yann.lecun.com/exdb/mnist/"]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five",
               "6 - six", "7 - seven", "8 - eight", "9 - nine"]
    files = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
             False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}

    def __init__(self, root: str | os.PathLike, train: bool = True, transform=None,
                 target_transform=None, download: bool = False) -> None:
        self.root = Path(root).expanduser()
        self.train = bool(train)
        self.transform, self.target_transform = transform, target_transform
        name = type(self).__name__
        if download:
            raise RuntimeError(self._where_to_get(
                f"{name}: gradlab does not download datasets (download=True)."))
        image_file, label_file = (self._find(stem) for stem in self.files[self.train])
        images, labels = read_idx(image_file), read_idx(label_file)
        if images.ndim != 3 or images.dtype != np.uint8:
            raise ValueError(f"{name}: {image_file} should hold uint8 images (N, rows, cols), "
                             f"got {images.dtype} of shape {images.shape}")
        if labels.shape != (len(images),):
            raise ValueError(f"{name}: {label_file} holds labels of shape {labels.shape} but "
                             f"{image_file} has {len(images)} images; the files don't match")
        if len(labels) and not 0 <= labels.min() <= labels.max() < len(self.classes):
            raise ValueError(f"{name}: {label_file} has labels outside 0..{len(self.classes) - 1}")
        self.data = from_numpy(images)  # uint8, as torchvision's: 47 MB, not 188 as float32
        self.targets = from_numpy(labels.astype(np.int64))

    def _find(self, stem: str) -> Path:
        folders = [self.root, self.root / type(self).__name__ / "raw"]
        for folder in folders:
            for candidate in (folder / stem, folder / f"{stem}.gz"):
                if candidate.is_file():
                    return candidate
        wanted = ", ".join(f"{s}(.gz)" for s in self.files[self.train])
        searched = " and ".join(str(f) for f in folders)
        raise FileNotFoundError(self._where_to_get(
            f"{type(self).__name__}: missing {wanted} (the {'train' if self.train else 'test'} "
            f"split); looked in {searched}."))

    def _where_to_get(self, problem: str) -> str:
        every = [s for pair in self.files.values() for s in pair]
        return (f"{problem} Download {', '.join(f'{s}.gz' for s in every)} yourself from "
                f"{' or '.join(self.mirrors)} and put them (gzipped or not) in {self.root}.")

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int):
        pixels = np.asarray(self.data)[index]  # a CPU tensor's array: no copy, no graph
        image = from_numpy(pixels[None].astype(np.float32) / np.float32(255))
        label = int(np.asarray(self.targets)[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label

    def __repr__(self) -> str:
        split = "Train" if self.train else "Test"
        return (f"Dataset {type(self).__name__}\n    Number of datapoints: {len(self)}\n"
                f"    Root location: {self.root}\n    Split: {split}")


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: 28x28 clothing images in MNIST's format and file names."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
               "https://github.com/zalandoresearch/fashion-mnist (folder data/fashion)"]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]
