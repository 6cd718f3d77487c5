"""Collation: turning a list of samples into one batch.

``default_collate`` transposes the structure: a batch of ``(image, label)``
pairs becomes ``[images, labels]``, with the images stacked along a new first
dim. The rules are PyTorch's, checked in this order on the first sample:

=======================  ==================================================
sample element           batch
=======================  ==================================================
Tensor                   ``stack`` (all must have one shape)
NumPy array / scalar     converted to tensors (keeping the dtype), stacked
float                    float64 tensor (Python floats are doubles)
int / bool               int64 / bool tensor
str / bytes              the list, unchanged
dict (Mapping)           dict of collated fields (same type when possible)
namedtuple               the namedtuple of collated fields
tuple                    a *list* of collated fields (as PyTorch)
list / other Sequence    the same type of collated fields
=======================  ==================================================

Kept dtypes include uint8: a batch of uint8 images is a uint8 tensor, a
quarter the size of float32, which the model converts (``x.float() / 255``).
Only NumPy's uint16/32/64, which gradlab lacks, widen (to int32/int64/int64).

``default_convert`` is what the loader uses when automatic batching is off
(``batch_size=None``): NumPy data becomes tensors, nothing is stacked.
"""

from __future__ import annotations

import collections.abc
import copy

import numpy as np

from ... import dtypes as _dt
from ...ops.creation import as_tensor, tensor
from ...ops.joining import stack
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_NUMPY_SCALARS = (np.bool_, np.number)
_FIX = ("Fix: pad them to one shape (e.g. gradlab.nn.utils.rnn.pad_sequence) or pass "
        "collate_fn= to the DataLoader to batch them your own way.")


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _numeric_array(a: np.ndarray) -> bool:
    """True for arrays a tensor can hold; string and object arrays can't."""
    return a.dtype.kind not in "SaUO"


def default_collate(batch):
    """Combine a list of samples into a batch (see the module docstring for the rules)."""
    return _collate(batch, "sample")


def _collate(batch, where: str):
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(batch, where)
    if isinstance(elem, np.ndarray):
        if not _numeric_array(elem):
            raise TypeError(_type_error(elem, where))
        return _stack([as_tensor(b) for b in batch], where)
    if isinstance(elem, _NUMPY_SCALARS):
        return as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=_dt.float64)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _collate_mapping(batch, where)
    if _is_namedtuple(elem):
        _check_lengths(batch, where)
        return type(elem)(*(_collate(list(s), f"{where}.{name}")
                            for name, s in zip(elem._fields, zip(*batch))))
    if isinstance(elem, collections.abc.Sequence):
        _check_lengths(batch, where)
        fields = [_collate(list(s), f"{where}[{i}]") for i, s in enumerate(zip(*batch))]
        if isinstance(elem, tuple):
            return fields  # PyTorch returns tuples as lists
        try:
            return type(elem)(fields)
        except TypeError:
            return fields
    raise TypeError(_type_error(elem, where))


def _stack(tensors: list, where: str):
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:
            raise RuntimeError(
                f"default_collate: can't stack {where} into a batch: sample 0 has shape "
                f"{tuple(shape)} but sample {i} has shape {tuple(t.shape)}. Samples must have "
                f"the same shape to be stacked. {_FIX}")
    return stack(tensors, 0)


def _collate_mapping(batch, where: str):
    elem = batch[0]
    for i, sample in enumerate(batch):
        if not isinstance(sample, collections.abc.Mapping) or sample.keys() != elem.keys():
            have = list(sample.keys()) if isinstance(sample, collections.abc.Mapping) else \
                type(sample).__name__
            raise RuntimeError(
                f"default_collate: {where} of sample 0 has keys {list(elem.keys())} but sample "
                f"{i} has {have}; every sample needs the same keys. Fix: give every sample "
                "every key, or pass collate_fn= to the DataLoader.")
    fields = {key: _collate([d[key] for d in batch], f"{where}[{key!r}]") for key in elem}
    return _rebuild_mapping(elem, fields)


def _rebuild_mapping(elem, fields: dict):
    """The collated fields in ``elem``'s own mapping type, or a dict if that can't be made."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(fields)
            return clone
        return type(elem)(fields)
    except TypeError:
        return fields


def _check_lengths(batch, where: str) -> None:
    n = len(batch[0])
    for i, sample in enumerate(batch):
        if len(sample) != n:
            raise RuntimeError(
                f"default_collate: each element in the batch should be of equal size, but "
                f"{where} has {n} fields in sample 0 and {len(sample)} in sample {i}. Fix: "
                "make every sample the same structure, or pass collate_fn= to the DataLoader.")


def _type_error(elem, where: str) -> str:
    kind = f"a NumPy array of dtype {elem.dtype}" if isinstance(elem, np.ndarray) else \
        f"a {type(elem).__name__}"
    return (f"default_collate: {where} is {kind}; batches must contain tensors, NumPy arrays, "
            "numbers, dicts or lists. Fix: convert it in the dataset's __getitem__, or pass "
            "collate_fn= to the DataLoader.")


def default_convert(data):
    """NumPy arrays and scalars to tensors, recursively; everything else unchanged.

    Used without automatic batching (``DataLoader(..., batch_size=None)``), where
    each sample already is a batch.
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return as_tensor(data) if _numeric_array(data) else data
    if isinstance(data, _NUMPY_SCALARS):
        return as_tensor(data)
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(v) for k, v in data.items()})
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        converted = [default_convert(d) for d in data]
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    return data
