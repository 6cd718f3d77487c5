"""IDX reading and the MNIST / FashionMNIST datasets, on tiny files written here."""

import gzip
import struct

import numpy as np
import pytest

import gradlab
from gradlab.datasets import MNIST, FashionMNIST, read_idx
from gradlab.utils.data import Dataset

CODES = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C, np.float32: 0x0D,
         np.float64: 0x0E}


def idx_bytes(array: np.ndarray) -> bytes:
    code = CODES[array.dtype.type]
    head = bytes([0, 0, code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return head + array.astype(array.dtype.newbyteorder(">")).tobytes()


def write(path, array, gz=False):
    data = idx_bytes(array)
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.mark.parametrize("dtype", list(CODES))
@pytest.mark.parametrize("gz", [False, True])
def test_read_idx_round_trips_every_type(tmp_path, dtype, gz):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 4, 5)) * 50).astype(dtype)
    out = read_idx(write(tmp_path / "a", a, gz))
    assert out.dtype == np.dtype(dtype) and out.dtype.isnative
    np.testing.assert_array_equal(out, a)
    out[0] = 0  # a writable copy, not a view of the file's bytes


def test_read_idx_header_is_big_endian_and_dims_are_read(tmp_path):
    a = np.arange(2 * 300, dtype=np.int32).reshape(2, 300)  # 300 needs two bytes
    (tmp_path / "x").write_bytes(idx_bytes(a))
    assert read_idx(tmp_path / "x").shape == (2, 300)
    assert idx_bytes(a)[:12] == bytes([0, 0, 0x0C, 2, 0, 0, 0, 2, 0, 0, 1, 44])


def test_gzip_is_detected_by_content_not_name(tmp_path):
    a = np.arange(6, dtype=np.uint8)
    p = tmp_path / "no-suffix"
    p.write_bytes(gzip.compress(idx_bytes(a)))
    np.testing.assert_array_equal(read_idx(p), a)


def test_truncated_file_names_file_and_sizes(tmp_path):
    p = tmp_path / "cut-idx3-ubyte"
    p.write_bytes(idx_bytes(np.zeros((2, 3, 3), np.uint8))[:-5])
    with pytest.raises(ValueError, match=r"cut-idx3-ubyte is truncated.*2 x 3 x 3 ubyte.*"
                                         r"\(18 bytes of data\), the file holds 13"):
        read_idx(p)
    p.write_bytes(bytes([0, 0, 8, 3, 0, 0]))
    with pytest.raises(ValueError, match=r"truncated: its header declares 3 dimensions"):
        read_idx(p)
    p.write_bytes(b"\x00\x00")
    with pytest.raises(ValueError, match="too short"):
        read_idx(p)


def test_extra_bytes_are_an_error(tmp_path):
    p = tmp_path / "long"
    p.write_bytes(idx_bytes(np.zeros(4, np.uint8)) + b"\x01\x02")
    with pytest.raises(ValueError, match="has 2 bytes too many"):
        read_idx(p)


def test_foreign_files_are_refused_with_what_was_expected(tmp_path):
    p = tmp_path / "picture.png"
    p.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(20))
    with pytest.raises(ValueError, match=r"picture\.png is not an IDX file: it starts with "
                                         r"89 50 4e 47, expected .*00 00 <type"):
        read_idx(p)
    p.write_bytes(bytes([0, 0, 0x07, 1, 0, 0, 0, 0]))  # 0x07 is no IDX type
    with pytest.raises(ValueError, match="not an IDX file"):
        read_idx(p)


def test_damaged_gzip_is_explained(tmp_path):
    p = tmp_path / "x.gz"
    p.write_bytes(gzip.compress(idx_bytes(np.zeros(1000, np.uint8)))[:20])
    with pytest.raises(ValueError, match=r"x\.gz is a damaged or truncated gzip file"):
        read_idx(p)


def make_mnist(folder, n_train=5, n_test=3, gz=True, rows=28):
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    made = {}
    for stem, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, (n, rows, rows), dtype=np.uint8)
        labels = (np.arange(n) % 10).astype(np.uint8)
        suffix = ".gz" if gz else ""
        write(folder / f"{stem}-images-idx3-ubyte{suffix}", images, gz)
        write(folder / f"{stem}-labels-idx1-ubyte{suffix}", labels, gz)
        made[stem] = (images, labels)
    return made


@pytest.mark.parametrize("gz", [True, False])
def test_mnist_reads_both_splits(tmp_path, gz):
    made = make_mnist(tmp_path, gz=gz)
    train, test = MNIST(tmp_path), MNIST(tmp_path, train=False)
    assert isinstance(train, Dataset) and len(train) == 5 and len(test) == 3
    image, label = test[2]
    assert image.shape == (1, 28, 28) and image.dtype is gradlab.float32
    np.testing.assert_allclose(image.numpy()[0], made["t10k"][0][2] / 255, rtol=1e-6)
    assert isinstance(label, int) and label == 2
    assert train.data.dtype is gradlab.uint8 and train.data.shape == (5, 28, 28)
    np.testing.assert_array_equal(train.data.numpy(), made["train"][0])
    assert train.targets.dtype is gradlab.int64 and train.targets.tolist() == [0, 1, 2, 3, 4]
    assert "Split: Test" in repr(test) and "Number of datapoints: 3" in repr(test)


def test_data_is_a_uint8_tensor_used_as_torchvision_tutorials_do(tmp_path):
    made = make_mnist(tmp_path, n_train=6)
    ds = MNIST(tmp_path)
    x = ds.data.float() / 255  # the tutorials' normalisation of the whole set at once
    assert x.dtype is gradlab.float32 and float(x.max()) <= 1.0
    np.testing.assert_allclose(x[3].numpy(), made["train"][0][3] / 255, rtol=1e-6)
    assert repr(ds.data[0, 0, :3]).endswith("dtype=gradlab.uint8)")
    ds.data, ds.targets = ds.data[:4], ds.targets[:4]  # subsetting in place, as in torchvision
    assert len(ds) == 4
    image, label = ds[3]
    np.testing.assert_allclose(image.numpy()[0], made["train"][0][3] / 255, rtol=1e-6)
    assert label == 3


def test_torchvision_layout_and_transforms(tmp_path):
    make_mnist(tmp_path / "FashionMNIST" / "raw")
    ds = FashionMNIST(tmp_path, transform=lambda x: x * 2, target_transform=str)
    image, label = ds[1]
    assert float(image.numpy().max()) > 1 and label == "1"
    assert ds.classes[9] == "Ankle boot"


def test_missing_files_list_names_folder_and_urls(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        MNIST(tmp_path, train=False)
    text = str(info.value)
    for needle in ("t10k-images-idx3-ubyte(.gz)", "t10k-labels-idx1-ubyte(.gz)", str(tmp_path),
                   str(tmp_path / "MNIST" / "raw"), "https://ossci-datasets.s3.amazonaws.com/mnist/",
                   "http://yann.lecun.com/exdb/mnist/", "train-images-idx3-ubyte.gz"):
        assert needle in text
    with pytest.raises(FileNotFoundError, match="fashion-mnist"):
        FashionMNIST(tmp_path)


def test_download_is_refused_with_directions(tmp_path):
    with pytest.raises(RuntimeError, match=r"does not download.*yann\.lecun\.com"):
        MNIST(tmp_path, download=True)


def test_mismatched_or_wrong_files_are_explained(tmp_path):
    make_mnist(tmp_path, n_train=5)
    write(tmp_path / "train-labels-idx1-ubyte.gz", np.zeros(4, np.uint8), gz=True)
    with pytest.raises(ValueError, match=r"labels of shape \(4,\) but .* has 5 images"):
        MNIST(tmp_path)
    write(tmp_path / "train-labels-idx1-ubyte.gz", np.full(5, 12, np.uint8), gz=True)
    with pytest.raises(ValueError, match=r"labels outside 0\.\.9"):
        MNIST(tmp_path)
    write(tmp_path / "train-images-idx3-ubyte.gz", np.zeros((5, 4), np.float32), gz=True)
    with pytest.raises(ValueError, match=r"should hold uint8 images"):
        MNIST(tmp_path)
