"""The shipped 8x8 digits: the file, load_digits, and the Digits dataset's fixed split."""

import gzip
import hashlib
import shutil

import numpy as np
import pytest

import gradlab
from gradlab.datasets import Digits, load_digits
from gradlab.datasets import digits as digits_module
from gradlab.utils.data import Dataset

SHA256 = "09f66e6debdee2cd2b5ae59e0d6abbb73fc2b0e0185d2e1957e9ebb51e23aa22"
CLASS_COUNTS = [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


def test_the_shipped_file_is_scikit_learns_copy_with_its_readme():
    folder = digits_module.DEFAULT_ROOT
    data = (folder / "digits.csv.gz").read_bytes()
    assert hashlib.sha256(data).hexdigest() == SHA256
    readme = (folder / "README.md").read_text()
    for fact in ("Optical Recognition of Handwritten Digits", "CC BY 4.0", "digits.rst",
                 "10.24432/C50P49", SHA256):
        assert fact in readme


def test_load_digits_shapes_dtypes_range_and_counts():
    images, labels = load_digits()
    assert images.shape == (1797, 1, 8, 8) and images.dtype is gradlab.float32
    assert labels.shape == (1797,) and labels.dtype is gradlab.int64
    x = images.numpy()
    assert x.min() == 0 and x.max() == 1
    np.testing.assert_array_equal(np.unique(x * 16), np.arange(17))  # 0..16 scaled by 1/16
    assert np.bincount(labels.numpy()).tolist() == CLASS_COUNTS


def test_load_digits_matches_the_csv_row_for_row():
    with gzip.open(digits_module.DEFAULT_ROOT / "digits.csv.gz", "rt") as f:
        first = [int(v) for v in f.readline().split(",")]
    images, labels = load_digits()
    np.testing.assert_array_equal(images.numpy()[0, 0] * 16, np.reshape(first[:64], (8, 8)))
    assert labels[0].item() == first[64] == 0


def test_load_digits_returns_fresh_tensors():
    a, la = load_digits()
    a.numpy()[:] = 5
    la.numpy()[:] = 7
    b, lb = load_digits()
    assert b.numpy().max() == 1 and lb.numpy()[0] == 0


def test_split_is_80_20_stratified_disjoint_and_fixed():
    train, test = Digits(train=True), Digits(train=False)
    assert isinstance(train, Dataset)
    assert len(train) == 1442 and len(test) == 355 and len(train) + len(test) == 1797
    _, labels = load_digits()
    counts = np.array(CLASS_COUNTS)
    np.testing.assert_array_equal(np.bincount(test.targets.numpy()), counts // 5)
    np.testing.assert_array_equal(np.bincount(train.targets.numpy()), counts - counts // 5)
    tr = digits_module.split_indices(labels.numpy(), True)
    te = digits_module.split_indices(labels.numpy(), False)
    assert not set(tr) & set(te) and len(set(tr) | set(te)) == 1797
    # Fixed: the test set is every 5th image of each digit; image 0 is the first 0, in train.
    zeros = np.flatnonzero(labels.numpy() == 0)
    np.testing.assert_array_equal(te[labels.numpy()[te] == 0], zeros[4::5])
    np.testing.assert_array_equal(Digits(train=False).data.numpy(), test.data.numpy())


def test_items_are_image_tensor_and_int_label():
    ds = Digits(train=False)
    image, label = ds[3]
    assert image.shape == (1, 8, 8) and image.dtype is gradlab.float32
    assert isinstance(label, int) and label == ds.targets[3].item()
    np.testing.assert_array_equal(image.numpy(), ds.data.numpy()[3])
    image.numpy()[:] = -1  # an item is a copy: the dataset is unchanged
    assert ds[3][0].numpy().min() >= 0
    assert ds.data.shape == (355, 1, 8, 8) and ds.classes[label] == str(label)


def test_transforms_are_applied():
    ds = Digits(transform=lambda x: x.flatten(), target_transform=lambda y: y + 100)
    image, label = ds[0]
    assert image.shape == (64,) and label == Digits()[0][1] + 100


def test_repr_names_the_split():
    assert "Split: Test" in repr(Digits(train=False)) and "1442" in repr(Digits())


def test_missing_file_error_says_where_and_how(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"digits\.csv\.gz is missing.*pip install -e"):
        load_digits(root=tmp_path)
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        Digits(root=tmp_path)


def test_other_root_with_a_copy_works_and_a_wrong_file_is_refused(tmp_path):
    shutil.copy(digits_module.DEFAULT_ROOT / "digits.csv.gz", tmp_path)
    images, _ = load_digits(root=tmp_path)
    assert images.shape == (1797, 1, 8, 8)
    bad = tmp_path / "bad"
    bad.mkdir()
    with gzip.open(bad / "digits.csv.gz", "wt") as f:
        f.write("1,2,3\n4,5,6\n")
    with pytest.raises(ValueError, match=r"not the expected data.*shape \(2, 3\)"):
        load_digits(root=bad)
