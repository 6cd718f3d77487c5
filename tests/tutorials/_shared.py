"""What the tutorial programs share (not tutorial code): same start, data, comparisons."""

from __future__ import annotations

import numpy as np

import gradlab

# --- shared helpers (not tutorial code) --------------------------------------------------------


def same_start(torch, model, start):
    """Load ``start`` (name -> NumPy array) into ``model``; return its starting weights.

    This is the one line a tutorial doesn't have: it makes the gradlab run and
    the PyTorch run of a program begin from the same weights.
    """
    if start is not None:
        model.load_state_dict({name: torch.tensor(value) for name, value in start.items()})
    return {name: value.detach().numpy().copy() for name, value in model.state_dict().items()}


def as_numpy(state) -> dict[str, np.ndarray]:
    return {name: value.detach().numpy().copy() for name, value in state.items()}


_DIGITS: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def digits() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The shipped 8x8 digits as NumPy arrays (images float32 (N, 1, 8, 8), labels int64)."""
    if not _DIGITS:
        for split, train in (("train", True), ("test", False)):
            dataset = gradlab.datasets.Digits(train=train)
            _DIGITS[split] = (dataset.data.numpy().copy(), dataset.targets.numpy().copy())
    return _DIGITS


def assert_close_runs(ours: dict, theirs: dict, keys, rtol=1e-4, atol=1e-5) -> None:
    for key in keys:
        np.testing.assert_allclose(np.asarray(ours[key], dtype=np.float64),
                                   np.asarray(theirs[key], dtype=np.float64),
                                   rtol=rtol, atol=atol, err_msg=key)
