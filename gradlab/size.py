"""``gradlab.Size``: a tensor's shape, PyTorch's ``torch.Size``.

A tuple of ints that prints like PyTorch's and stays a Size through slicing,
``+`` and ``*`` (``x.shape[1:]``, ``(1,) + x.shape``), so shape arithmetic
reads the same in both libraries.
"""

from __future__ import annotations

__all__ = ["Size"]


class Size(tuple):
    """A shape: a tuple that prints like PyTorch's ``torch.Size``; slicing, ``+`` and ``*``
    give a Size too (``x.shape[1:]``, ``(1,) + x.shape``), an index an int."""

    def __repr__(self) -> str:
        return f"gradlab.Size({list(self)})"

    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other):
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        return Size(other + tuple(self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, count):
        return Size(tuple.__mul__(self, count))

    __rmul__ = __mul__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n
