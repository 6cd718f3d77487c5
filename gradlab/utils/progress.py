"""A progress bar for training loops: tqdm, with defaults chosen for steps and epochs.

``progress(loader, desc="epoch 1")`` is a ``tqdm`` bar (so ``set_postfix``,
``update``, ``close`` and ``with`` all work as documented by tqdm) with these
defaults, each chosen on purpose:

* ``dynamic_ncols=True``: the bar follows the terminal's width when it is
  resized instead of wrapping into a mess of lines.
* ``smoothing=0.1``: the speed and ETA are an exponential moving average.
  tqdm's 0.3 makes the ETA jump with every slow step (the first batch, a
  validation pass, a checkpoint); 0.1 averages over roughly the last ten
  updates, which suits steps of similar length with occasional outliers.
* ``disable=None`` means *auto*: the bar is off when it would write to
  something that isn't a terminal (a log file, CI output), where carriage-
  return updates become thousands of garbage lines; it stays on in Jupyter,
  whose output isn't a terminal but shows the updates fine. Passing ``file=``
  counts as asking for the bar, so it is drawn there. ``disable=False`` forces
  it on, ``disable=True`` off.
* ``set_postfix(loss=loss)`` accepts one-element tensors and shows their value
  (``loss=0.693``), not ``tensor(0.6931)``. Reading the value waits for the
  GPU, so for speed call it every few steps, not on every one.
"""

from __future__ import annotations

import sys

from tqdm import tqdm

__all__ = ["progress", "trange", "ProgressBar"]


class ProgressBar(tqdm):
    """tqdm whose ``set_postfix`` shows one-element tensors as numbers."""

    def set_postfix(self, ordered_dict=None, refresh: bool = True, **kwargs) -> None:
        if ordered_dict is not None:
            ordered_dict = {k: _plain(v) for k, v in dict(ordered_dict).items()}
        super().set_postfix(ordered_dict, refresh=refresh,
                            **{k: _plain(v) for k, v in kwargs.items()})


def _plain(value):
    """A one-element tensor (e.g. a loss) as a Python number; anything else unchanged."""
    item = getattr(value, "item", None)
    numel = getattr(value, "numel", None)
    if callable(item) and callable(numel) and not isinstance(value, (int, float)):
        try:
            if numel() == 1:
                return item()
        except Exception:  # not tensor-like after all: show it as tqdm would
            return value
    return value


def _auto_disable(file) -> bool:
    """True when the bar would go to a non-terminal nobody asked for (logs, CI)."""
    if file is not None:
        return False
    if "ipykernel" in sys.modules:  # Jupyter: not a tty, but renders the bar
        return False
    stream = sys.stderr
    try:
        return not stream.isatty()
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return True


def progress(iterable=None, desc: str | None = None, total: float | None = None,
             unit: str = "it", leave: bool = True, file=None, disable: bool | None = None,
             **kwargs) -> ProgressBar:
    """Wrap ``iterable`` in a progress bar (or make a manual one when it is None).

    ``total`` defaults to ``len(iterable)`` where there is one. Any other
    tqdm argument (``position``, ``ncols``, ``miniters``, ``postfix``...) is
    passed through and overrides the defaults described in the module docstring.
    """
    if disable is None:
        disable = _auto_disable(file)
    kwargs.setdefault("dynamic_ncols", True)
    kwargs.setdefault("smoothing", 0.1)
    return ProgressBar(iterable, desc=desc, total=total, unit=unit, leave=leave, file=file,
                       disable=disable, **kwargs)


def trange(*args, **kwargs) -> ProgressBar:
    """``progress(range(*args), **kwargs)``: a bar over a range, e.g. ``trange(epochs)``."""
    return progress(range(*args), **kwargs)
