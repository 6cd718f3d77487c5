"""Datasets: what a DataLoader reads from, as in ``torch.utils.data``.

Two kinds, and the loader treats them differently:

* a **map-style** dataset (``Dataset``) has ``__getitem__(i)`` and ``__len__``:
  the loader decides the order (a sampler draws indices) and can hand any index
  to any worker process;
* an **iterable** dataset (``IterableDataset``) has ``__iter__``: it decides its
  own order, the loader just pulls from it. With worker processes each worker
  runs its own copy of the iterator, so the dataset must shard itself with
  ``get_worker_info()`` or every worker yields every sample.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Sequence

from ...random import default_generator
from ...tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "Subset",
           "ConcatDataset",
           "ChainDataset", "random_split"]


class Dataset:
    """A map-style dataset: ``dataset[i]`` is sample ``i``; subclasses define
    ``__getitem__`` and usually ``__len__`` (samplers need it)."""

    def __getitem__(self, index):
        raise NotImplementedError(
            f"{type(self).__name__} is a Dataset but doesn't define __getitem__(self, index), "
            "which returns sample number `index`. Subclasses of Dataset must implement it.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        """``a + b`` is a dataset with a's samples, then b's."""
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define ``__iter__``.

    In worker processes each worker iterates its own copy; shard the stream
    with ``get_worker_info()`` (its ``id`` and ``num_workers``) so that each
    sample is yielded once.
    """

    def __iter__(self):
        raise NotImplementedError(
            f"{type(self).__name__} is an IterableDataset but doesn't define __iter__(self), "
            "which yields its samples.")

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Rows of equally long tensors: sample ``i`` is ``(t[i] for t in tensors)``."""

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset: give at least one tensor, e.g. "
                             "TensorDataset(inputs, targets)")
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: argument {i} is a {type(t).__name__}, not a "
                                "tensor. Fix: convert it with gradlab.as_tensor(...) first.")
            if t.ndim == 0:
                raise ValueError(f"TensorDataset: tensor {i} is 0-d; each tensor needs a first "
                                 "dim with one row per sample.")
        n = tensors[0].shape[0]
        for i, t in enumerate(tensors[1:], 1):
            if t.shape[0] != n:
                raise ValueError(
                    "TensorDataset: every tensor needs the same size in dim 0 (one row per "
                    f"sample), but tensor 0 has shape {tuple(tensors[0].shape)} ({n} rows) and "
                    f"tensor {i} has shape {tuple(t.shape)} ({t.shape[0]} rows). Fix: slice "
                    "them to the same number of samples, or check which dim holds the samples "
                    "(maybe a transpose is missing).")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class StackDataset(Dataset):
    """Several datasets of one length side by side: sample ``i`` is a tuple of their
    samples ``i`` (``StackDataset(images, labels)``) or a dict (``StackDataset(x=..., y=...)``).
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("StackDataset: give the datasets either by position (samples are "
                             "tuples) or by name (samples are dicts), not both")
        if not args and not kwargs:
            raise ValueError("StackDataset: give at least one dataset")
        self.datasets = args if args else kwargs
        sizes = {name: len(d) for name, d in
                 (enumerate(args) if args else kwargs.items())}
        if len(set(sizes.values())) > 1:
            raise ValueError(f"StackDataset: size mismatch between datasets, got lengths "
                             f"{sizes}. Fix: wrap the longer ones in Subset(d, range(n))")
        self._length = next(iter(sizes.values()))

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {name: d[index] for name, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list[int]) -> list:
        """A batch at once (the loader calls this): one sample per index, as __getitem__."""
        return [self[i] for i in indices]

    def __len__(self) -> int:
        return self._length


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        """A batch at once: the loader calls this when it exists (one call per batch)."""
        inner = getattr(self.dataset, "__getitems__", None)
        if callable(inner):
            return inner([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several map-style datasets one after another.

    ``cumulative_sizes[k]`` is the total length of datasets ``0..k``; index ``i``
    belongs to the first dataset whose cumulative size exceeds it (a binary
    search), at position ``i - cumulative_sizes[k - 1]`` inside it.
    """

    @staticmethod
    def cumsum(sequence) -> list[int]:
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset (it has no "
                                "indices). Fix: use ChainDataset to chain streams.")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int):
        n = len(self)
        if idx < 0:
            if -idx > n:
                raise ValueError(f"ConcatDataset: index {idx} is out of range for a dataset of "
                                 f"length {n} (negative indices go down to {-n})")
            idx += n
        if idx >= n:
            raise IndexError(f"ConcatDataset: index {idx} is out of range for a dataset of "
                             f"length {n}")
        k = bisect.bisect_right(self.cumulative_sizes, idx)
        inner = idx if k == 0 else idx - self.cumulative_sizes[k - 1]
        return self.datasets[k][inner]


class ChainDataset(IterableDataset):
    """Several iterable datasets one after another (streams are chained lazily)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError("ChainDataset only chains IterableDatasets, got "
                                f"{type(d).__name__}. Fix: use ConcatDataset for map-style ones.")
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator=default_generator) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random subsets of the given lengths.

    ``lengths`` are sample counts, or fractions that sum to 1. Fractions follow
    PyTorch's rule: each split gets ``floor(n * fraction)`` samples, and the
    remaining samples go one each to the splits in order (round-robin), so
    ``random_split(range(10), [0.33, 0.33, 0.34])`` has sizes 4, 3, 3.
    """
    lengths = list(lengths)
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"random_split: fraction at index {i} is {frac}, not between "
                                 "0 and 1")
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"random_split: length of split at index {i} is 0; this split "
                              "will be empty", stacklevel=2)
        lengths = sizes
    if any(int(s) != s or s < 0 for s in lengths):
        raise ValueError(f"random_split: lengths must be non-negative integers or fractions "
                         f"summing to 1, got {lengths}")
    if sum(lengths) != n:
        raise ValueError(
            f"random_split: the lengths {lengths} sum to {sum(lengths)}, but the dataset has "
            f"{n} samples. Fix: make them add up to {n}, or pass fractions that sum to 1.")
    from ...ops.sampling import randperm

    order = randperm(n, generator=generator).tolist()
    offsets = itertools.accumulate(lengths)
    return [Subset(dataset, order[end - size:end]) for size, end in zip(lengths, offsets)]
