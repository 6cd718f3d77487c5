"""Batches of sequences of different lengths: padding and packing (``torch.nn.utils.rnn``).

Sentences in a batch have different lengths. ``pad_sequence`` stacks them
into one (T, B, *) tensor, filling the short ones with ``padding_value``.
A recurrent layer run on that tensor would also step through the padding,
so ``pack_padded_sequence`` drops it: a :class:`PackedSequence` keeps only
the real steps, time-major, with ``batch_sizes[t]`` = how many sequences are
still running at step t (the batch is sorted longest first, so those are
always the first rows). An RNN/LSTM/GRU given a PackedSequence runs step t on
the first ``batch_sizes[t]`` rows and returns each sequence's state at its
own last step. ``pad_packed_sequence`` turns the result back into a padded
tensor.

Every conversion is one ``index_select`` of a row table, so gradients flow
through it (its backward adds the gradient back into the picked rows).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ... import dtypes as _dt
from ... import ops
from ...tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence", "invert_permutation"]

_PackedSequenceBase = namedtuple("_PackedSequenceBase",
                                 ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def _long(values, device=None) -> Tensor:
    return ops.tensor(np.asarray(values, dtype=np.int64).reshape(-1), dtype=_dt.int64,
                      device=device)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    p = np.asarray(permutation.tolist(), dtype=np.int64)
    inverse = np.empty_like(p)
    inverse[p] = np.arange(len(p))
    return _long(inverse, permutation.device)


class PackedSequence(_PackedSequenceBase):
    """The real steps of a batch of sequences, time-major: (data, batch_sizes, sorted_indices,
    unsorted_indices).

    ``data`` is (sum of lengths, *): step 0 of every sequence, then step 1 of those
    still running, ...; ``batch_sizes`` (int64, on the CPU) how many at each step;
    ``sorted_indices`` the order (longest first) the batch was put in, or None if
    it already was; ``unsorted_indices`` the order back.
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if batch_sizes is None:
            raise TypeError("PackedSequence: batch_sizes is required; make packed sequences with "
                            "pack_padded_sequence or pack_sequence")
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """``data`` (and the index permutations) moved or cast; batch_sizes stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        indices = [None if t is None else t.to(data.device)
                   for t in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, *indices)

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def cuda(self, device=None) -> PackedSequence:
        return self.to("cuda" if device is None else device)

    def double(self) -> PackedSequence:
        return self.to(_dt.float64)

    def float(self) -> PackedSequence:
        return self.to(_dt.float32)

    def half(self) -> PackedSequence:
        return self.to(_dt.float16)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def _lengths_list(op: str, lengths) -> list[int]:
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1:
            raise ValueError(f"{op}: lengths must be 1-D (one length per sequence), got shape "
                             f"{tuple(lengths.shape)}")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Drop the padding of a padded (T, B, *) batch (B, T, * if ``batch_first``).

    ``lengths`` (a list or a CPU int64 tensor) gives each sequence's real length.
    With ``enforce_sorted=True`` they must already be in decreasing order;
    otherwise the batch is sorted here and ``sorted_indices`` remembers how.
    """
    op = "pack_padded_sequence"
    lengths = _lengths_list(op, lengths)
    if input.ndim < 2:
        raise ValueError(f"{op}: input must be at least 2-D, (T, B, *) or (B, T, *) with "
                         f"batch_first=True, got shape {tuple(input.shape)}")
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else input.shape[:2]
    if len(lengths) != batch:
        raise ValueError(f"{op}: got {len(lengths)} lengths for a batch of {batch} sequences "
                         f"(input {tuple(input.shape)}, batch_first={batch_first})")
    if any(n <= 0 for n in lengths):
        raise RuntimeError(f"{op}: Length of all samples has to be greater than 0, but found an "
                           f"element in 'lengths' that is <= 0 (lengths {lengths})")
    if max(lengths) > steps:
        raise RuntimeError(f"{op}: a length of {max(lengths)} exceeds the {steps} steps of the "
                           f"padded input {tuple(input.shape)} (batch_first={batch_first})")
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError(
                f"{op}: `lengths` array must be sorted in decreasing order when `enforce_sorted` "
                f"is True (got {lengths}). You can pass `enforce_sorted=False` to "
                "pack_padded_sequence and/or pack_sequence to sidestep this requirement")
        order = None
    else:
        order = np.argsort(-np.asarray(lengths), kind="stable")
    sorted_lengths = np.asarray(lengths)[order] if order is not None else np.asarray(lengths)
    batch_sizes = [int((sorted_lengths > t).sum()) for t in range(int(sorted_lengths[0]))]
    # Row (t, b) of the sorted batch sits at t*B + column(b) of the flattened (T*B, *) input.
    columns = np.arange(batch) if order is None else order
    if batch_first:
        rows = [columns[:n] * steps + t for t, n in enumerate(batch_sizes)]
    else:
        rows = [t * batch + columns[:n] for t, n in enumerate(batch_sizes)]
    flat = input.reshape(steps * batch, *input.shape[2:])
    data = ops.index_select(flat, 0, _long(np.concatenate(rows), input.device))
    sorted_indices = None if order is None else _long(order, input.device)
    return PackedSequence(data, _long(batch_sizes), sorted_indices)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None):
    """The padded (T, B, *) tensor (B, T, * if ``batch_first``) and each sequence's length.

    The inverse of :func:`pack_padded_sequence`; sequences come back in their
    original order. ``total_length`` pads to that many steps (for
    DataParallel-style fixed shapes).
    """
    data = sequence.data
    sizes = [int(n) for n in sequence.batch_sizes.tolist()]
    steps, batch = len(sizes), sizes[0]
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"pad_packed_sequence: Expected total_length to be at least the "
                             f"length of the longest sequence in input, but got total_length="
                             f"{total_length} and max sequence length being {steps}")
        steps = total_length
    lengths = np.array([sum(n > b for n in sizes) for b in range(batch)], dtype=np.int64)
    # Where each (t, b) of the output comes from: its packed row, or the padding row at the end.
    source = np.full((steps, batch), data.shape[0], dtype=np.int64)
    offset = 0
    for t, n in enumerate(sizes):
        source[t, :n] = np.arange(offset, offset + n)
        offset += n
    if sequence.unsorted_indices is not None:
        unsort = np.asarray(sequence.unsorted_indices.tolist(), dtype=np.int64)
        source, lengths = source[:, unsort], lengths[unsort]
    if batch_first:
        source = source.T
    padding = ops.full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    table = ops.cat([data, padding], 0)
    out = ops.index_select(table, 0, _long(source, data.device))
    return out.reshape(*source.shape, *data.shape[1:]), _long(lengths)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of shapes (L_i, *) into (max L, B, *) (or (B, max L, *)), padded.

    ``padding_side='left'`` puts the padding before each sequence instead of after.
    """
    op = "pad_sequence"
    if padding_side not in ("left", "right"):
        raise ValueError(f"{op}: Expected padding_side to be one of left or right, but got "
                         f"{padding_side!r}")
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError(f"{op}: received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    for k, s in enumerate(sequences):
        if s.ndim == 0 or tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"{op}: every sequence must have shape (length, *{trailing}) like "
                               f"the first, but sequence {k} has shape {tuple(s.shape)}")
    lengths = [s.shape[0] for s in sequences]
    steps, total = max(lengths), sum(lengths)
    source = np.full((steps, len(sequences)), total, dtype=np.int64)  # `total`: the padding row
    offset = 0
    for b, n in enumerate(lengths):
        start = 0 if padding_side == "right" else steps - n
        source[start:start + n, b] = np.arange(offset, offset + n)
        offset += n
    if batch_first:
        source = source.T
    first = sequences[0]
    padding = ops.full((1, *trailing), padding_value, dtype=first.dtype, device=first.device)
    table = ops.cat([*sequences, padding], 0)
    out = ops.index_select(table, 0, _long(source, first.device))
    return out.reshape(*source.shape, *trailing)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) sequences: ``pack_padded_sequence(pad_sequence(...))``."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The list of sequences, each cut to its length: the inverse of :func:`pad_sequence`."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[b, :n] for b, n in
            enumerate(_lengths_list("unpad_sequence", lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences in a PackedSequence: the inverse of :func:`pack_sequence`."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
