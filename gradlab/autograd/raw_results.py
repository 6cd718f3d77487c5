"""What a raw forward returned, made fit to be tensor data.

A built-in op's forward returns NumPy (or CuPy) results as NumPy makes them;
two of NumPy's habits differ from what a tensor needs, and the dispatcher
fixes them here: a 0-d result comes back as a NumPy *scalar* (a tensor holds
an array), and a result computed from a transposed input keeps its order
(PyTorch's ops return contiguous results, so ``softmax(x.t(), 0).view(-1)``
must work). Whatever forward saved, or marked non-differentiable, refers to
the results by identity, so the node is pointed at the replacements.
"""

from __future__ import annotations

import numpy as np

__all__ = ["in_c_order", "arrays_not_scalars", "device_of"]


def in_c_order(array, node):
    """``array`` copied to C order (contiguous). Views of inputs never come here (they stay
    views), nor do in-place ops' results (they write where they must)."""
    if type(array) is np.ndarray:
        copy = np.ascontiguousarray(array)
    else:  # CuPy copies onto the current device: make it the array's
        dev = device_of(array)
        with dev.backend.use_device(dev.index):
            copy = dev.backend.xp.ascontiguousarray(array)
    _point_at(node, {id(array): copy})
    return copy


def arrays_not_scalars(result, node):
    """NumPy's 0-d results as 0-d arrays (a tuple of results item by item)."""
    items = result if type(result) is tuple else (result,)
    if not any(isinstance(r, np.generic) for r in items):
        return result
    converted = tuple(np.asarray(r) if isinstance(r, np.generic) else r for r in items)
    _point_at(node, {id(old): new for old, new in zip(items, converted) if old is not new})
    return converted if type(result) is tuple else converted[0]


def _point_at(node, swap: dict) -> None:
    """Make what ``node``'s forward saved or marked refer to the replacements
    (``swap``: id of a result -> what replaces it)."""
    if node is None:
        return
    if node._saved:
        node._saved = tuple(swap.get(id(item), item) for item in node._saved)
    if node._non_differentiable is not None:
        node._non_differentiable = tuple(id(swap[i]) if i in swap else i
                                         for i in node._non_differentiable)


def device_of(array):
    """The device holding a raw array."""
    from ..backends import backend_for_array

    return backend_for_array(array)[0]
