"""Samplers: the order in which a DataLoader visits a map-style dataset.

A sampler yields indices; a ``BatchSampler`` groups them into lists, one list
per batch. Randomness comes from gradlab's generators: pass ``generator=`` (a
seeded ``gradlab.Generator``) for the same order every run, or leave it out to
draw from the global generator, which ``gradlab.manual_seed`` makes
reproducible too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence, Sized

import numpy as np

from ...ops.sampling import randint, randperm
from ...random import Generator, get_generator
from ...tensor import Tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DistributedSampler"]


def _draw_seed(generator: Generator | None) -> int:
    """A fresh 62-bit seed from ``generator`` (the global CPU one when None)."""
    return int(randint(0, 2 ** 62, (), generator=generator).item())


def _is_positive_int(n) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n > 0


class Sampler:
    """Base class: subclasses define ``__iter__`` (yielding indices) and usually ``__len__``."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass  # PyTorch's base class takes (and ignores) data_source too

    def __iter__(self) -> Iterator:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__, yielding indices")


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random order: a permutation (each index once), or ``replacement=True`` draws.

    ``num_samples`` (default ``len(data_source)``) may exceed the length without
    replacement: then whole permutations are concatenated, the last one cut short.
    """

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: Generator | None = None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError("RandomSampler: replacement should be a boolean value, but got "
                            f"replacement={replacement!r}")
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not _is_positive_int(self.num_samples):
            raise ValueError("RandomSampler: num_samples should be a positive integer value, "
                             f"but got num_samples={self.num_samples!r} (an empty dataset?)")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        # Without a generator, seed a private one from the global stream: one draw per epoch.
        gen = self.generator
        if gen is None:
            gen = Generator().manual_seed(_draw_seed(None))
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(0, n, (32,), generator=gen).tolist()
            yield from randint(0, n, (self.num_samples % 32,), generator=gen).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=gen).tolist()
            yield from randperm(n, generator=gen).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (a new permutation each epoch)."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Index ``i`` drawn with probability ``weights[i] / sum(weights)``.

    The usual cure for class imbalance: weight each sample by
    ``1 / count(its class)`` and every class is drawn equally often.
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        if not _is_positive_int(num_samples):
            raise ValueError("WeightedRandomSampler: num_samples should be a positive integer "
                             f"value, but got num_samples={num_samples!r}")
        if not isinstance(replacement, bool):
            raise ValueError("WeightedRandomSampler: replacement should be a boolean value, "
                             f"but got replacement={replacement!r}")
        w = np.asarray(weights._host() if isinstance(weights, Tensor) else weights,
                       dtype=np.float64)
        if w.ndim != 1:
            raise ValueError("WeightedRandomSampler: weights should be a 1d sequence (one "
                             f"weight per sample) but given weights have shape {w.shape}")
        if (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise ValueError("WeightedRandomSampler: weights must be finite, non-negative and "
                             f"not all zero, got {w[:8].tolist()}{'...' if w.size > 8 else ''}")
        if not replacement and num_samples > np.count_nonzero(w):
            raise ValueError(
                f"WeightedRandomSampler: can't draw {num_samples} samples without replacement "
                f"from {np.count_nonzero(w)} indices of non-zero weight. Fix: "
                "replacement=True, or a smaller num_samples.")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        gen = self.generator if self.generator is not None else get_generator("cpu")
        picks = gen.rng.choice(len(self.weights), size=self.num_samples,
                               replace=self.replacement, p=self.weights / self.weights.sum())
        yield from picks.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of ``batch_size``.

    The last batch is shorter when the length isn't a multiple of ``batch_size``,
    unless ``drop_last=True`` drops it.
    """

    def __init__(self, sampler: Sampler | Sequence[int], batch_size: int,
                 drop_last: bool) -> None:
        if not _is_positive_int(batch_size):
            raise ValueError("BatchSampler: batch_size should be a positive integer value, "
                             f"but got batch_size={batch_size!r}")
        if not isinstance(drop_last, bool):
            raise ValueError("BatchSampler: drop_last should be a boolean value, but got "
                             f"drop_last={drop_last!r}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


class DistributedSampler(Sampler):
    """The share of the dataset that replica ``rank`` of ``num_replicas`` visits each epoch.

    Data-parallel training runs one copy of the model per replica; each must
    see different samples. Every replica draws the same permutation (seeded by
    ``seed + epoch``: call ``set_epoch(epoch)`` at the start of each epoch, or
    every epoch repeats the order), pads it by repeating its start until it
    divides evenly (or, with ``drop_last``, cuts the tail), and takes every
    ``num_replicas``-th index from position ``rank``. Without them, the
    process group's world size and rank are used (``gradlab.distributed``).
    """

    def __init__(self, dataset: Sized, num_replicas: int | None = None,
                 rank: int | None = None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist

            if not dist.is_initialized():
                raise RuntimeError(
                    "DistributedSampler: no num_replicas/rank given and no process group to "
                    "ask. Fix: call gradlab.distributed.init_process_group() first, or pass "
                    "num_replicas= and rank=")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if not _is_positive_int(num_replicas):
            raise ValueError(f"DistributedSampler: num_replicas must be a positive int, got "
                             f"{num_replicas!r}")
        if not isinstance(rank, int) or not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last = shuffle, seed, drop_last
        self.epoch = 0
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = -(-(n - num_replicas) // num_replicas)  # the tail is dropped
        else:
            self.num_samples = -(-n // num_replicas)  # the head is repeated to fill up
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            indices = randperm(n, generator=Generator().manual_seed(self.seed + self.epoch))
            indices = indices.tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        elif indices:
            missing = self.total_size - len(indices)
            indices += (indices * -(-missing // len(indices)))[:missing]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Start epoch ``epoch``: a new shuffle, the same on every replica."""
        self.epoch = epoch
