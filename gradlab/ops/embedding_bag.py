"""embedding_bag: the rows of each bag of ids, looked up and reduced to one vector per bag.

``F.embedding_bag(input, weight, offsets, mode=...)`` is ``embedding``
followed by a sum, mean or max over each bag, without the (num_ids, dim)
intermediate ever leaving the op. The bags are either the rows of a 2-D
``input`` (B bags of N ids) or runs of a 1-D ``input`` that start at
``offsets`` (bag b is ``input[offsets[b]:offsets[b + 1]]``, the last one runs
to the end of ``input``). A bag may be empty: its vector is zeros.

Derivatives, with bag(j) the bag of id j and r = input[j]::

    sum:   dweight[r] += grad[bag(j)] · psw[j]      dpsw[j] = <grad[bag(j)], weight[r]>
    mean:  dweight[r] += grad[bag(j)] / |bag(j)|
    max:   dweight[r, d] += grad[b, d]   for the r that won feature d of bag b

(psw: ``per_sample_weights``, 1 when not given.) ``padding_idx`` ids are left
out of their bag (they are not counted by 'mean' and get no gradient);
``scale_grad_by_freq`` divides row r's gradient by how often r occurs in
``input``. The backward is written with the lookup ops of :mod:`.lookup`
(``grad[bag]`` is a lookup into grad, a table's gradient is their scatter),
so it is differentiable again.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import check_float, widened, xp_for
from .lookup import Embedding, EmbeddingBackward, _renorm_

# PyTorch's torch.embedding_bag has another signature (and returns four tensors): F only.
__all__: list[str] = []
FUNCTIONAL = ["embedding_bag"]
TENSOR_METHODS: list = []

MODES = ("sum", "mean", "max")


class _Bags:
    """Which ids go to which bag, worked out once per call (raw integer arrays).

    ``rows``: the kept ids (padding ones dropped), in input order; ``bag``: the bag of
    each; ``kept``: their positions in the flat input (None when nothing was dropped);
    ``counts``: ids per bag; ``starts``: where each non-empty bag begins in ``rows``;
    ``filled``: the non-empty bags.
    """

    def __init__(self, ids, starts, num_bags, padding_idx, mode, scale_grad_by_freq) -> None:
        xp = xp_for(ids)
        self.num_ids, self.num_bags = ids.shape[0], num_bags
        self.mode, self.scale = mode, scale_grad_by_freq
        # Bag of each id: the last bag starting at or before it (empty bags are skipped).
        bag = xp.searchsorted(starts, xp.arange(ids.shape[0]), side="right") - 1
        self.kept = None
        if padding_idx is not None:
            keep = ids != padding_idx
            if not bool(keep.all()):
                self.kept = xp.nonzero(keep)[0]
                ids, bag = ids[self.kept], bag[self.kept]
        self.rows, self.bag = ids, bag
        self.counts = xp.bincount(bag, minlength=num_bags) if bag.size else \
            xp.zeros(num_bags, dtype=np.int64)
        self.filled = xp.nonzero(self.counts)[0]
        self.starts = (xp.cumsum(self.counts) - self.counts)[self.filled]
        self.winners = None  # 'max': the row that won each (bag, feature), set by forward

    def per_id(self, values):
        """A per-bag array spread to one entry per kept id."""
        return values[self.bag]


def _segment_max(xp, rows, bags: _Bags):
    """Per bag and feature, the position (in ``rows``) of the value 'max' keeps.

    PyTorch walks each bag in order and replaces the running maximum only by a strictly
    greater value: ties go to the first id, and a NaN in first place stays (no value is
    greater than it) while a later NaN is passed over (it is greater than nothing). So:
    the first position holding the largest non-NaN value, or the first id where it is NaN.
    """
    starts = bags.starts
    best = xp.fmax.reduceat(rows, starts, axis=0)  # fmax skips NaN unless all are NaN
    first = rows[starts]
    nan_first = xp.isnan(first)
    local = xp.searchsorted(starts, xp.arange(rows.shape[0]), side="right") - 1
    hit = rows == best[local]
    hit[starts] |= nan_first
    position = xp.where(hit, xp.arange(rows.shape[0])[:, None], rows.shape[0])
    return xp.minimum.reduceat(position, starts, axis=0)


class EmbeddingBag(Function):
    """out[b] = reduce over the ids j of bag b of psw[j] · weight[input[j]]  (reduce: sum,
    mean or max per feature); empty bags give zeros.

    backward: see the module docstring; each term is a lookup or a scatter of rows.
    jvp: sum and mean are linear in weight and in psw (the op applied to each tangent,
    summed); max reads the tangent at the winning rows.
    """

    raw = True
    name = "embedding_bag"

    @staticmethod
    def forward(ctx, weight, per_sample_weights, bags: _Bags):
        xp = xp_for(weight)
        out = xp.zeros((bags.num_bags, weight.shape[1]), dtype=weight.dtype)
        ctx.bags = bags
        if per_sample_weights is not None:
            ctx.save_for_backward(weight, per_sample_weights)
        if not bags.filled.size:
            return out
        rows = xp.take(weight, bags.rows, axis=0)
        if bags.mode == "max":
            winner = _segment_max(xp, rows, bags)
            out[bags.filled] = xp.take_along_axis(rows, winner, axis=0)
            ctx.winners = bags.rows[winner]
            return out
        if per_sample_weights is not None:
            psw = per_sample_weights.reshape(-1)
            rows = rows * (psw if bags.kept is None else psw[bags.kept])[:, None]
        sums = xp.add.reduceat(widened(rows), bags.starts, axis=0)
        if bags.mode == "mean":
            sums /= bags.counts[bags.filled][:, None]
        out[bags.filled] = sums
        return out

    @staticmethod
    def backward(ctx, grad):
        bags = ctx.bags
        if bags.mode == "max":
            return _max_weight_grad(grad, bags, ctx.input_shapes[0], ctx), None, None
        weight, psw = ctx.saved_tensors or (None, None)
        dweight = dpsw = None
        per_id = Embedding.apply(grad, bags.bag, None, False)  # grad[bag(j)]
        if ctx.needs_input_grad[0]:
            scaled = per_id
            if bags.mode == "mean":
                sizes = bags.per_id(bags.counts).astype(grad._data.dtype)
                scaled = per_id / _constant(sizes[:, None])
            if psw is not None:
                scaled = scaled * _kept(psw.reshape(-1), bags).unsqueeze(1)
            num_weights = ctx.input_shapes[0][0]
            dweight = EmbeddingBackward.apply(scaled, bags.rows, num_weights, None, bags.scale)
        if psw is not None and ctx.needs_input_grad[1]:
            picked = Embedding.apply(weight, bags.rows, None, False)  # weight[input[j]]
            dpsw = (per_id * picked).sum(1)
            if bags.kept is not None:  # padding ids get exactly 0
                dpsw = EmbeddingBackward.apply(dpsw.unsqueeze(1), bags.kept, bags.num_ids,
                                               None, False).squeeze(1)
            dpsw = dpsw.reshape(ctx.input_shapes[1])
        return dweight, dpsw, None

    @classmethod
    def jvp(cls, ctx, weight_tangent, psw_tangent, _):
        weight, psw, bags = ctx.primals
        if bags.mode == "max":
            if weight_tangent is None:
                return None
            return _gather_winners(weight_tangent, bags, ctx)
        total = None
        if weight_tangent is not None:
            total = cls.apply(weight_tangent, psw, bags)
        if psw_tangent is not None:
            term = cls.apply(weight, psw_tangent, bags)
            total = term if total is None else total + term
        return total


def _constant(array) -> Tensor:
    return Tensor._make(array, None, None, 0, False)


def _kept(flat: Tensor, bags: _Bags) -> Tensor:
    """The entries of a per-id tensor that belong to kept (non-padding) ids."""
    if bags.kept is None:
        return flat
    return Embedding.apply(flat.unsqueeze(1), bags.kept, None, False).squeeze(1)


def _winner_cells(bags: _Bags, ctx, dim: int):
    """Flat (row * dim + feature) cells of the winners, and the flat (bag * dim + feature)
    cells of the output they fill (only non-empty bags have winners)."""
    xp = xp_for(ctx.winners)
    features = xp.arange(dim)
    table_cells = (ctx.winners * dim + features).reshape(-1)
    out_cells = (bags.filled[:, None] * dim + features).reshape(-1)
    return table_cells, out_cells


def _max_weight_grad(grad: Tensor, bags: _Bags, weight_shape, ctx):
    """Each output gradient goes to the one table cell that won it."""
    num_weights, dim = weight_shape
    if not bags.filled.size:
        return grad.new_zeros((num_weights, dim))
    table_cells, out_cells = _winner_cells(bags, ctx, dim)
    won = Embedding.apply(grad.reshape(-1, 1), out_cells, None, False)
    return EmbeddingBackward.apply(won, table_cells, num_weights * dim, None,
                                   False).reshape(num_weights, dim)


def _gather_winners(tangent: Tensor, bags: _Bags, ctx) -> Tensor:
    """The tangent of 'max': the weight tangent read at the winning cells, 0 for empty bags."""
    dim = tangent.shape[1]
    if not bags.filled.size:
        return tangent.new_zeros((bags.num_bags, dim))
    table_cells, out_cells = _winner_cells(bags, ctx, dim)
    read = Embedding.apply(tangent.reshape(-1, 1), table_cells, None, False)
    return EmbeddingBackward.apply(read, out_cells, bags.num_bags * dim, None,
                                   False).reshape(bags.num_bags, dim)


def _int_tensor(value, what: str):
    if not isinstance(value, Tensor) or value.dtype not in (_dt.int64, _dt.int32):
        got = value.dtype if isinstance(value, Tensor) else type(value).__name__
        raise RuntimeError(f"embedding_bag: {what} must be an int64 (or int32) tensor, got "
                           f"{got}. Fix: gradlab.tensor(ids) or ids.long()")
    return value


def _bag_starts(input: Tensor, offsets, include_last_offset: bool, xp):
    """The flat ids and where each bag starts in them, from a 2-D input or 1-D + offsets."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                f"embedding_bag: if input is 2D, then offsets has to be None, as input is "
                f"treated as a mini-batch of fixed length bags (here {input.shape[0]} bags of "
                f"{input.shape[1]} ids). Fix: drop offsets, or pass a 1-D input")
        num_bags, length = input.shape
        return input._data.reshape(-1), xp.arange(num_bags) * length
    if input.ndim != 1:
        raise ValueError(f"embedding_bag: input has to be 1D or 2D Tensor, but got Tensor of "
                         f"dimension {input.ndim} (shape {tuple(input.shape)})")
    if offsets is None:
        raise ValueError("embedding_bag: offsets has to be a 1D Tensor but got None: a 1-D "
                         "input needs the position where each bag starts (e.g. offsets="
                         "gradlab.tensor([0, 3]) for bags input[0:3] and input[3:])")
    _int_tensor(offsets, "offsets")
    if offsets.ndim != 1:
        raise ValueError(f"embedding_bag: offsets has to be a 1D Tensor, got shape "
                         f"{tuple(offsets.shape)}")
    starts = offsets.to(input.device)._data
    if include_last_offset:
        if starts.shape[0] == 0:
            raise ValueError("embedding_bag: with include_last_offset=True, offsets needs at "
                             "least one entry (its last one is the input's length)")
        starts = starts[:-1]  # as PyTorch, the last bag runs to the end of input
    ids = input._data
    if starts.shape[0]:
        first, last = int(starts[0]), int(starts[-1])
        if first != 0:
            raise RuntimeError(f"embedding_bag: offsets[0] has to be 0, i.e., the first bag "
                               f"has to start at position 0 of input. However, got {first}")
        if last > ids.shape[0]:
            raise RuntimeError(f"embedding_bag: offsets[-1] can not be greater than input's "
                               f"length {ids.shape[0]} but got offsets[-1] of {last}")
        if starts.shape[0] > 1 and bool((starts[1:] < starts[:-1]).any()):
            raise RuntimeError(f"embedding_bag: offsets must not decrease (bag b is input["
                               f"offsets[b]:offsets[b + 1]]), got {starts.tolist()[:10]}")
    return ids, starts.astype(np.int64, copy=False)


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """One vector per bag of ids: the sum, mean or max of their rows of ``weight``.

    ``input`` (B, N) holds B bags of N ids; a 1-D ``input`` is cut into bags at
    ``offsets`` (``include_last_offset=True``: offsets has B + 1 entries, CSR
    style). Result: (B, embedding_dim); an empty bag (or one of only
    ``padding_idx`` ids) gives zeros. ``per_sample_weights`` (input's shape)
    scales each id's row, for mode='sum' only. ``max_norm`` renormalizes the
    looked-up rows of ``weight`` in place first, as ``embedding`` does.
    """
    _int_tensor(input, "input")
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != \
            tuple(input.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not "
            f"None, then it must have the same shape as the input ({tuple(input.shape)})")
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        dims = weight.ndim if isinstance(weight, Tensor) else type(weight).__name__
        raise ValueError(f"embedding_bag: weight has to be a 2D Tensor (num_embeddings, "
                         f"embedding_dim), but got Tensor of dimension {dims}")
    check_float("embedding_bag", weight)
    xp = xp_for(weight._data)
    ids, starts = _bag_starts(input.to(weight.device), offsets, include_last_offset, xp)
    if mode not in MODES:
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("embedding_bag: max mode does not support scaling the gradient by "
                         "the frequency (scale_grad_by_freq=True)")
    if mode == "max" and sparse:
        raise ValueError("embedding_bag: max mode does not support sparse weights")
    if sparse:
        raise NotImplementedError(
            "embedding_bag: sparse=True asks for a sparse gradient, and gradlab has no sparse "
            "tensors. Fix: sparse=False (the gradient is a dense (num_embeddings, "
            "embedding_dim) tensor)")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"embedding_bag: padding_idx must be within the number of "
                               f"embeddings, {-num} through {num - 1}, but got {padding_idx}")
        padding_idx %= num
    if ids.size:
        low, high = int(ids.min()), int(ids.max())
        if low < 0 or high >= num:
            raise RuntimeError(
                f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be "
                f"{low if low < 0 else high}: a table of {num} rows (weight shape "
                f"{tuple(weight.shape)}) has ids 0 to {num - 1}. Fix: make num_embeddings "
                f"larger than the largest id")
    if max_norm is not None:
        _renorm_(weight, ids, float(max_norm), float(norm_type))
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(
                f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                f"supported for mode='sum' (got mode='{mode}'). Fix: mode='sum', and divide "
                f"by the bag's total weight yourself for a weighted mean")
        if per_sample_weights.dtype is not weight.dtype:
            raise RuntimeError(
                f"embedding_bag: per_sample_weights ({per_sample_weights.dtype}) must have the "
                f"dtype of weight ({weight.dtype}). Fix: per_sample_weights.to(weight.dtype)")
        per_sample_weights = per_sample_weights.to(weight.device)
    bags = _Bags(ids.astype(np.int64, copy=False), starts, starts.shape[0], padding_idx, mode,
                 bool(scale_grad_by_freq))
    return EmbeddingBag.apply(weight, per_sample_weights, bags)
