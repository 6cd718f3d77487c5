"""Fixtures for the tutorial programs."""

from __future__ import annotations

import pytest

from tests.oracle import torch


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """PyTorch's thread pool fights the other tests for 2 cores: one thread is 5-20x faster."""
    if torch is None:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
