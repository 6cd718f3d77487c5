"""The collectives: every rank calls the same one, and each gets the group's answer.

Each collective runs in two steps over the star of sockets
(:mod:`.process_group`): every rank but 0 sends rank 0 what it calls and
its data; rank 0 checks that all called the same thing (the same
collective, number, dtype and shape), computes the answer in rank order,
and sends it back. A rank that called something else, or sent another
shape, makes every rank raise the same :class:`DistributedError` naming
both calls, instead of hanging.

Results are written into the tensors in place (their version goes up, as
for any in-place change), as in ``torch.distributed``.
"""

from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .process_group import DistributedError, Group, _current

__all__ = ["ReduceOp", "all_reduce", "broadcast", "all_gather", "barrier", "Work",
           "all_reduce_array", "all_gather_array", "reduce_in_place"]


class ReduceOp:
    """How ``all_reduce`` combines the ranks' tensors (``ReduceOp.SUM`` ...)."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


_COMBINE = {ReduceOp.SUM: np.add, ReduceOp.AVG: np.add, ReduceOp.PRODUCT: np.multiply,
            ReduceOp.MIN: np.minimum, ReduceOp.MAX: np.maximum}


class Work:
    """What ``async_op=True`` returns. gradlab's collectives finish before returning, so
    ``wait()`` has nothing left to wait for."""

    def wait(self, timeout=None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True


def _finish(async_op: bool):
    return Work() if async_op else None


def _host(t: Tensor) -> np.ndarray:
    return t._device.backend.to_numpy(t._data)


def _write(t: Tensor, array: np.ndarray) -> None:
    """Put ``array`` into ``t``'s memory, as an in-place change."""
    with no_grad():
        t._data[...] = t._device.backend.asarray(array, t._data.dtype, t._device.index)
    t._storage.version += 1


def _check_tensor(op: str, t) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(t).__name__}")


def _exchange(g: Group, call: dict, data: np.ndarray | None, answer) -> np.ndarray | None:
    """Step 1: ranks send ``call`` (and ``data``) to rank 0, which checks them (the same call,
    and arrays of one dtype and shape) and computes ``answer(arrays by rank)``; step 2: it
    sends the result back. Returns it on every rank."""
    g.count += 1
    call = dict(call, number=g.count)
    if g.rank != 0:
        g.send(0, call, data)
        header, result = g.receive(0)
        if "error" in header:
            raise DistributedError(header["error"])
        return result
    arrays = {0: data}
    for peer in range(1, g.world_size):
        header, array = g.receive(peer)
        theirs = {k: v for k, v in header.items() if k not in ("dtype", "shape")}
        mismatch = theirs != call or (data is not None and array is not None and (
            array.dtype != data.dtype or array.shape != data.shape))
        if mismatch:
            _fail(g, f"{call['op']} #{g.count}: rank 0 called {_describe(call, data)} but rank "
                     f"{peer} called {_describe(theirs, array)}; every rank must call the same "
                     "collectives in the same order, with tensors of the same shape and dtype")
        arrays[peer] = array
    result = answer(arrays)
    for peer in range(1, g.world_size):
        g.send(peer, call, result)
    return result


def _describe(call: dict, array) -> str:
    shape = "" if array is None else f" on a {array.dtype} tensor of shape {tuple(array.shape)}"
    extra = ", ".join(f"{k}={v}" for k, v in call.items() if k not in ("op", "number"))
    return f"{call.get('op')}({extra}){shape}"


def _fail(g: Group, message: str) -> None:
    """Tell every other rank what went wrong (so none waits for an answer), then raise."""
    for peer in range(1, g.world_size):
        try:
            g.send(peer, {"error": message})
        except DistributedError:
            pass
    raise DistributedError(message)


def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Combine ``tensor`` across the ranks (sum by default); every rank gets the result."""
    _check_tensor("all_reduce", tensor)
    reduce_in_place(tensor, op)
    return _finish(async_op)


def reduce_in_place(tensor: Tensor, op=ReduceOp.SUM, what: str | None = None) -> None:
    """``all_reduce``'s work, saying what ``tensor`` is (see ``all_reduce_array``)."""
    _write(tensor, all_reduce_array(_host(tensor), op, what))


def all_reduce_array(local: np.ndarray, op=ReduceOp.SUM, what: str | None = None) -> np.ndarray:
    """``all_reduce`` of a NumPy array: the combined array (ops that sync statistics, such as
    SyncBatchNorm, use it on their raw arrays). ``what`` says what the array is ("the
    gradient of fc.weight"): ranks must agree on it too, and a mismatch error names it."""
    if op not in _COMBINE:
        raise ValueError(f"all_reduce: unknown op {op!r}; use gradlab.distributed.ReduceOp.SUM, "
                         "AVG, PRODUCT, MIN or MAX")

    def combine(arrays):
        total = arrays[0].copy()
        for rank in range(1, len(arrays)):
            _COMBINE[op](total, arrays[rank], out=total)
        if op == ReduceOp.AVG:
            total = (total / len(arrays)).astype(total.dtype, copy=False)
        return total

    call = {"op": "all_reduce", "reduce": op}
    if what is not None:
        call["of"] = what
    return _exchange(_current("all_reduce"), call, local, combine)


def broadcast(tensor: Tensor, src: int, group=None, async_op: bool = False):
    """Every rank's ``tensor`` becomes rank ``src``'s."""
    _check_tensor("broadcast", tensor)
    g = _current("broadcast")
    if not 0 <= src < g.world_size:
        raise ValueError(f"broadcast: src={src} is not a rank (world_size {g.world_size})")
    local = _host(tensor)
    sent = local if g.rank == src else None
    result = _exchange(g, {"op": "broadcast", "src": src}, sent, lambda arrays: arrays[src])
    if result.shape != local.shape or result.dtype != local.dtype:
        raise DistributedError(f"broadcast: rank {src} sent a {result.dtype} tensor of shape "
                               f"{tuple(result.shape)}, this rank holds {local.dtype} "
                               f"{tuple(local.shape)}")
    if g.rank != src:
        _write(tensor, result)
    return _finish(async_op)


def all_gather(tensor_list: list, tensor: Tensor, group=None, async_op: bool = False):
    """``tensor_list[r]`` becomes rank r's ``tensor``, on every rank."""
    _check_tensor("all_gather", tensor)
    g = _current("all_gather")
    if len(tensor_list) != g.world_size:
        raise ValueError(f"all_gather: tensor_list needs one tensor per rank ({g.world_size}), "
                         f"got {len(tensor_list)}")
    for out, part in zip(tensor_list, all_gather_array(_host(tensor))):
        _check_tensor("all_gather", out)
        _write(out, part)
    return _finish(async_op)


def all_gather_array(local: np.ndarray) -> np.ndarray:
    """``all_gather`` of a NumPy array: every rank's array, stacked in rank order."""
    return _exchange(_current("all_gather"), {"op": "all_gather"}, local,
                     lambda arrays: np.stack([arrays[r] for r in range(len(arrays))]))


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Wait until every rank has reached this call."""
    _exchange(_current("barrier"), {"op": "barrier"}, None, lambda arrays: None)
    return _finish(async_op)
