"""Samplers: orders, statistics and reproducibility from gradlab's generators."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.utils.data import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from tests.oracle import needs_torch, torch


def gen(seed: int) -> gradlab.Generator:
    return gradlab.Generator().manual_seed(seed)


def test_sequential_sampler():
    s = SequentialSampler(range(5))
    assert list(s) == [0, 1, 2, 3, 4] and len(s) == 5
    with pytest.raises(NotImplementedError, match="must define __iter__"):
        iter(Sampler())


def test_random_sampler_is_a_permutation_reproducible_with_a_generator():
    s = RandomSampler(range(50), generator=gen(3))
    first, second = list(s), list(s)
    assert sorted(first) == list(range(50)) and first != list(range(50))
    assert first != second  # the generator moves on: a new order each epoch
    assert list(RandomSampler(range(50), generator=gen(3))) == first
    assert len(s) == 50


def test_random_sampler_without_generator_follows_manual_seed():
    gradlab.manual_seed(11)
    a = list(RandomSampler(range(30)))
    gradlab.manual_seed(11)
    b = list(RandomSampler(range(30)))
    gradlab.manual_seed(12)
    c = list(RandomSampler(range(30)))
    assert a == b != c


def test_random_sampler_num_samples_beyond_length_repeats_permutations():
    order = list(RandomSampler(range(4), num_samples=10, generator=gen(0)))
    assert len(order) == 10
    assert sorted(order[:4]) == sorted(order[4:8]) == [0, 1, 2, 3]
    assert len(set(order[8:])) == 2


def test_random_sampler_with_replacement_is_uniform():
    n, draws = 5, 20000
    order = list(RandomSampler(range(n), replacement=True, num_samples=draws, generator=gen(1)))
    assert len(order) == draws
    counts = np.bincount(order, minlength=n)
    chi2 = ((counts - draws / n) ** 2 / (draws / n)).sum()
    assert chi2 < 20.5  # the 0.9996 quantile of chi-square with 4 degrees of freedom


def test_random_sampler_errors():
    with pytest.raises(TypeError, match="replacement should be a boolean value.*replacement=1"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer.*=0"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="empty dataset"):
        RandomSampler([])


def test_subset_random_sampler():
    indices = [10, 20, 30, 40]
    s = SubsetRandomSampler(indices, generator=gen(2))
    order = list(s)
    assert sorted(order) == indices and len(s) == 4
    assert list(SubsetRandomSampler(indices, generator=gen(2))) == order


def test_weighted_random_sampler_frequencies_follow_weights():
    weights = [1.0, 3.0, 0.0, 6.0]
    draws = 20000
    order = list(WeightedRandomSampler(weights, draws, generator=gen(4)))
    freq = np.bincount(order, minlength=4) / draws
    assert freq[2] == 0
    np.testing.assert_allclose(freq, [0.1, 0.3, 0.0, 0.6], atol=0.015)
    assert list(WeightedRandomSampler(weights, 50, generator=gen(4))) == order[:50]


def test_weighted_random_sampler_without_replacement_and_tensor_weights():
    w = gradlab.tensor([0.1, 0.2, 0.3, 0.4])
    order = list(WeightedRandomSampler(w, 4, replacement=False, generator=gen(0)))
    assert sorted(order) == [0, 1, 2, 3]


def test_weighted_random_sampler_errors():
    with pytest.raises(ValueError, match="weights should be a 1d sequence.*shape \\(2, 2\\)"):
        WeightedRandomSampler([[1, 2], [3, 4]], 2)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="replacement should be a boolean"):
        WeightedRandomSampler([1.0], 1, replacement="yes")
    with pytest.raises(ValueError, match="non-negative and not all zero"):
        WeightedRandomSampler([1.0, -1.0], 1)
    with pytest.raises(ValueError, match="can't draw 3 samples without replacement from 2"):
        WeightedRandomSampler([1.0, 0.0, 2.0], 3, replacement=False)


@pytest.mark.parametrize("n, batch_size, drop_last", [(10, 3, False), (10, 3, True),
                                                      (9, 3, False), (2, 5, True),
                                                      (2, 5, False)])
def test_batch_sampler(n, batch_size, drop_last):
    s = BatchSampler(SequentialSampler(range(n)), batch_size, drop_last)
    batches = list(s)
    assert len(batches) == len(s)
    flat = [i for b in batches for i in b]
    assert flat == list(range(len(flat)))
    assert all(len(b) == batch_size for b in batches[:-1])
    if drop_last:
        assert len(flat) == n - n % batch_size
    if torch is not None:
        theirs = torch.utils.data.BatchSampler(range(n), batch_size, drop_last)
        assert batches == list(theirs) and len(s) == len(theirs)


def test_batch_sampler_errors():
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but "
                                         "got batch_size=0"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="batch_size=True"):
        BatchSampler(range(3), True, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(3), 2, None)


@needs_torch
def test_sampler_lengths_match_torch():
    for ours, theirs in [
        (RandomSampler(range(7), num_samples=12), torch.utils.data.RandomSampler(
            range(7), num_samples=12)),
        (SequentialSampler(range(7)), torch.utils.data.SequentialSampler(range(7))),
        (WeightedRandomSampler([1, 2], 9), torch.utils.data.WeightedRandomSampler([1, 2], 9)),
    ]:
        assert len(ours) == len(theirs) == len(list(ours)) == len(list(theirs))


# --- DistributedSampler ------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (9, 3, False),
                                                  (2, 4, False), (7, 2, True)])
def test_distributed_sampler_shares_match_torch(n, replicas, drop_last):
    """Sizes, padding and the stride over ranks as PyTorch's (without shuffling, the order
    is the same too; shuffled orders differ, the two libraries' generators differ)."""
    data = list(range(n))
    for rank in range(replicas):
        ours = DistributedSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = torch.utils.data.DistributedSampler(data, replicas, rank, shuffle=False,
                                                     drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_distributed_sampler_shuffles_alike_on_every_rank_and_anew_each_epoch():
    data = list(range(23))
    ranks = [DistributedSampler(data, 4, r, seed=7) for r in range(4)]
    first = [list(s) for s in ranks]
    together = sorted(i for share in first for i in share)
    assert len(together) == 24 and set(together) == set(data)  # one index repeated to pad
    assert first == [list(s) for s in ranks]  # the same epoch: the same shares
    for s in ranks:
        s.set_epoch(1)
    again = [list(s) for s in ranks]
    assert again != first
    assert set(i for share in again for i in share) == set(data)


def test_distributed_sampler_errors():
    with pytest.raises(RuntimeError, match="num_replicas= and rank="):
        DistributedSampler(list(range(4)))
    with pytest.raises(ValueError, match="Invalid rank 3"):
        DistributedSampler(list(range(4)), num_replicas=3, rank=3)
    with pytest.raises(ValueError, match="positive int"):
        DistributedSampler(list(range(4)), num_replicas=0, rank=0)
