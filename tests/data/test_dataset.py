"""Datasets: TensorDataset, Subset, ConcatDataset, ChainDataset and random_split."""

from __future__ import annotations

import pytest

import gradlab
from gradlab.utils.data import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from tests.oracle import needs_torch, torch


class Range(Dataset):
    def __init__(self, start: int, stop: int) -> None:
        self.items = list(range(start, stop))

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class Stream(IterableDataset):
    def __init__(self, items) -> None:
        self.items = items

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


def test_tensor_dataset_rows():
    x = gradlab.arange(12).reshape(4, 3)
    y = gradlab.tensor([0, 1, 0, 1])
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    xi, yi = ds[2]
    assert xi.tolist() == [6, 7, 8] and yi.item() == 0
    assert ds[1:3][0].tolist() == [[3, 4, 5], [6, 7, 8]]  # slices pass through


def test_tensor_dataset_errors_teach():
    with pytest.raises(ValueError, match=r"same size in dim 0.*tensor 0 has shape \(4, 3\) "
                                         r"\(4 rows\) and tensor 1 has shape \(3,\) \(3 rows\)"):
        TensorDataset(gradlab.zeros(4, 3), gradlab.zeros(3))
    with pytest.raises(TypeError, match="argument 1 is a list, not a tensor.*as_tensor"):
        TensorDataset(gradlab.zeros(2), [1, 2])
    with pytest.raises(ValueError, match="at least one tensor"):
        TensorDataset()
    with pytest.raises(ValueError, match="tensor 0 is 0-d"):
        TensorDataset(gradlab.tensor(1.0))


def test_base_classes_say_what_to_implement():
    with pytest.raises(NotImplementedError, match="must implement it"):
        Dataset()[0]
    with pytest.raises(NotImplementedError, match="doesn't define __iter__"):
        iter(IterableDataset())


def test_subset_and_getitems():
    ds = Subset(Range(10, 20), [9, 0, 5])
    assert len(ds) == 3
    assert [ds[i] for i in range(3)] == [19, 10, 15]
    assert ds.__getitems__([2, 0]) == [15, 19]


def test_concat_dataset_indices():
    ds = Range(0, 3) + Range(10, 12) + Range(20, 24)
    assert isinstance(ds, ConcatDataset)
    inner = ConcatDataset([Range(0, 3), Range(10, 12), Range(20, 24)])
    assert inner.cumulative_sizes == [3, 5, 9]
    assert len(inner) == 9
    assert [inner[i] for i in range(9)] == [0, 1, 2, 10, 11, 20, 21, 22, 23]
    assert [inner[-i] for i in range(1, 10)] == [23, 22, 21, 20, 11, 10, 2, 1, 0]
    assert [ds[i] for i in range(len(ds))] == [inner[i] for i in range(9)]


def test_concat_dataset_errors():
    ds = ConcatDataset([Range(0, 3)])
    with pytest.raises(ValueError, match="index -4 is out of range for a dataset of length 3"):
        ds[-4]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        ds[3]
    with pytest.raises(ValueError, match="should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(TypeError, match="does not support IterableDataset.*ChainDataset"):
        ConcatDataset([Stream([1])])


def test_chain_dataset():
    ds = Stream([1, 2]) + Stream([3])
    assert isinstance(ds, ChainDataset)
    assert list(ds) == [1, 2, 3] and len(ds) == 3
    with pytest.raises(TypeError, match="only chains IterableDatasets.*ConcatDataset"):
        list(ChainDataset([Range(0, 2)]))


def test_random_split_integer_lengths_are_disjoint_and_reproducible():
    ds = Range(100, 130)
    parts = random_split(ds, [10, 15, 5], generator=gradlab.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [10, 15, 5]
    items = [p[i] for p in parts for i in range(len(p))]
    assert sorted(items) == list(range(100, 130))  # disjoint and complete
    assert items != list(range(100, 130))  # and shuffled
    again = random_split(ds, [10, 15, 5], generator=gradlab.Generator().manual_seed(1))
    assert [p.indices for p in again] == [p.indices for p in parts]
    other = random_split(ds, [10, 15, 5], generator=gradlab.Generator().manual_seed(2))
    assert [p.indices for p in other] != [p.indices for p in parts]


def test_random_split_default_generator_follows_manual_seed():
    gradlab.manual_seed(5)
    a = [p.indices for p in random_split(Range(0, 20), [0.5, 0.5])]
    gradlab.manual_seed(5)
    b = [p.indices for p in random_split(Range(0, 20), [0.5, 0.5])]
    assert a == b


@pytest.mark.parametrize("n, fractions, sizes", [
    (10, [0.33, 0.33, 0.34], [4, 3, 3]),
    (7, [0.5, 0.25, 0.25], [4, 2, 1]),
    (5, [0.2, 0.8], [1, 4]),
])
def test_random_split_fraction_rounding(n, fractions, sizes):
    parts = random_split(Range(0, n), fractions)
    assert [len(p) for p in parts] == sizes
    assert sorted(i for p in parts for i in p.indices) == list(range(n))


@needs_torch
@pytest.mark.parametrize("n, fractions", [(10, [0.33, 0.33, 0.34]), (7, [0.5, 0.25, 0.25]),
                                          (101, [0.1, 0.2, 0.3, 0.4]), (3, [0.6, 0.4])])
def test_random_split_sizes_match_torch(n, fractions):
    ours = [len(p) for p in random_split(Range(0, n), fractions)]
    theirs = [len(p) for p in torch.utils.data.random_split(range(n), fractions)]
    assert ours == theirs


def test_random_split_errors():
    with pytest.raises(ValueError, match=r"sum to 9, but the dataset has 10 samples"):
        random_split(Range(0, 10), [4, 5])
    with pytest.raises(ValueError, match="fraction at index 0 is 1.5, not between 0 and 1"):
        random_split(Range(0, 10), [1.5, -0.5])
    with pytest.warns(UserWarning, match="split at index 1 is 0"):
        random_split(Range(0, 2), [1.0, 0.0])


def test_stack_dataset_tuples_dicts_and_the_loader():
    from gradlab.utils.data import DataLoader, StackDataset

    images, labels = gradlab.arange(12.0).reshape(6, 2), gradlab.arange(6)
    pairs = StackDataset(TensorDataset(images), labels)
    assert len(pairs) == 6 and pairs[2][1].item() == 2
    named = StackDataset(x=images, y=labels)
    batch = next(iter(DataLoader(named, batch_size=4)))
    assert set(batch) == {"x", "y"} and tuple(batch["x"].shape) == (4, 2)
    with pytest.raises(ValueError, match="not both"):
        StackDataset(images, y=labels)
    with pytest.raises(ValueError, match="size mismatch"):
        StackDataset(images, labels[:5])
