"""embedding: rows of a weight matrix picked by index (and one_hot, rows of an identity).

``embedding(input, weight)`` is ``weight[input]``: a table lookup, one row
of ``weight`` (num_embeddings, embedding_dim) per index, so the output has
shape ``input.shape + (embedding_dim,)``. It is how a word id becomes a
vector that training can move.

The derivative sends each output row's gradient back to the row it was
read from; an index used k times collects k gradients, summed::

    dweight[r] = Σ_{i : input[i] = r} grad[i]

``padding_idx`` names a row that gets no gradient (a "padding" token stays
fixed); ``scale_grad_by_freq`` divides row r's gradient by how often r
occurs in the batch; ``max_norm`` rescales, in place and before the lookup,
every looked-up row whose norm exceeds it.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import add_at, xp_for

# torch.embedding takes (weight, indices), F.embedding (input, weight): only the latter here
# (and a function named like this module would also hide it as gradlab.ops.embedding).
__all__: list[str] = []
# Re-exported by gradlab.nn.functional (one_hot too: PyTorch has no torch.one_hot).
FUNCTIONAL = ["embedding", "one_hot"]
TENSOR_METHODS: list = []


def _row_factors(indices, num_weights, padding_idx, scale_grad_by_freq):
    """How much of each looked-up row's gradient reaches the table: 0 for the padding row,
    1/count with scale_grad_by_freq, else 1 (None: all 1)."""
    if padding_idx is None and not scale_grad_by_freq:
        return None
    xp = xp_for(indices)
    flat = indices.reshape(-1)
    factor = xp.ones(flat.shape, dtype="float64")
    if scale_grad_by_freq:
        factor /= xp.bincount(flat, minlength=num_weights)[flat]
    if padding_idx is not None:
        factor[flat == padding_idx] = 0.0
    return factor.reshape(indices.shape + (1,))


class Embedding(Function):
    """out[i] = weight[input[i]].   dweight[r] = Σ over the i with input[i] = r of grad[i].

    jvp: linear in the table, so the tangent is the same lookup in ẇeight: ẏ[i] = ẇ[input[i]].
    """

    raw = True
    name = "embedding"
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
        ctx.indices, ctx.padding_idx, ctx.scale = indices, padding_idx, scale_grad_by_freq
        return xp_for(weight).take(weight, indices, axis=0)

    @staticmethod
    def backward(ctx, grad):
        num_weights = ctx.input_shapes[0][0]
        return (EmbeddingBackward.apply(grad, ctx.indices, num_weights, ctx.padding_idx,
                                        ctx.scale), None, None, None)


class EmbeddingBackward(Function):
    """The table's gradient: each row of grad added to the row it was read from.

    Linear in grad, so its own derivative reads the rows back: d/dgrad[i] =
    gg[input[i]] times the same factor (0 at padding, 1/count if scaled).
    jvp: the same scatter-add of ġrad ("linear").
    """

    raw = True
    name = "embedding_dense_backward"
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
        xp = xp_for(grad)
        dim = grad.shape[-1]
        factor = _row_factors(indices, num_weights, padding_idx, scale_grad_by_freq)
        if factor is not None:
            factor = factor.astype(grad.dtype)
            grad = grad * factor
        out = xp.zeros((num_weights, dim), dtype=grad.dtype)
        add_at(out, indices.reshape(-1), grad.reshape(-1, dim))
        ctx.indices = indices
        ctx.save_for_backward(factor)
        return out

    @staticmethod
    def backward(ctx, gg):
        (factor,) = ctx.saved_tensors
        rows = Embedding.apply(gg, ctx.indices, None, False)
        return rows if factor is None else rows * factor, None, None, None, None


def _renorm_(weight: Tensor, indices, max_norm: float, norm_type: float) -> None:
    """Rescale, in place, each looked-up row whose ``norm_type``-norm exceeds ``max_norm``
    to norm ``max_norm`` (PyTorch's embedding_renorm_; no gradient flows through this)."""
    xp = xp_for(weight._data)
    rows = xp.unique(indices.reshape(-1))
    w = weight._data
    picked = w[rows]
    if norm_type == float("inf"):
        norms = xp.abs(picked).max(axis=1)
    else:
        norms = (xp.abs(picked) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    over = norms > max_norm
    if bool(over.any()):
        scale = (max_norm / (norms[over] + 1e-7)).astype(w.dtype)
        w[rows[over]] = picked[over] * scale[:, None]
        weight._storage.version += 1


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer tensor ``input``: shape input.shape + (dim,).

    ``sparse=True`` is accepted; the gradient is a dense tensor all the same.
    """
    if not isinstance(input, Tensor) or input.dtype not in (_dt.int64, _dt.int32):
        what = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise TypeError(f"embedding: indices must be an int64 (or int32) tensor, got {what}. "
                        f"Fix: gradlab.tensor(ids) or ids.long()")
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        shape = tuple(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
        raise RuntimeError(f"embedding: weight must be a 2D table (num_embeddings, "
                           f"embedding_dim), got {shape}")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise ValueError(f"embedding: padding_idx={padding_idx} must be within "
                             f"num_embeddings={num} (in [{-num}, {num - 1}])")
        padding_idx = padding_idx % num
    ids = input.to(weight.device)
    indices = ids._data
    if indices.size:
        low, high = int(indices.min()), int(indices.max())
        if low < 0 or high >= num:
            bad = low if low < 0 else high
            raise IndexError(f"embedding: index {bad} is out of range for a table of {num} "
                             f"rows (weight shape {tuple(weight.shape)}); indices must be in "
                             f"[0, {num - 1}]. Fix: make num_embeddings larger than the "
                             f"largest id")
    if max_norm is not None:
        _renorm_(weight, indices, float(max_norm), float(norm_type))
    # (ids as a tensor: the op's forward sees its array, and graphs, events and traces see
    # which tensor chose the rows)
    return Embedding.apply(weight, ids, padding_idx, bool(scale_grad_by_freq))


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Class ids to indicator rows: out[..., c] = 1 where tensor[...] == c, else 0.

    It is ``embedding(tensor, eye(num_classes))`` with integer output; it has
    no gradient (its input is integers). The result is int64, as in PyTorch:
    convert with ``.float()`` to use it as a target. ``num_classes=-1`` takes
    the largest id + 1, which changes with the batch, so pass it explicitly.
    """
    if not isinstance(tensor, Tensor) or tensor.dtype is not _dt.int64:
        what = tensor.dtype if isinstance(tensor, Tensor) else type(tensor).__name__
        raise RuntimeError(f"one_hot: expected an int64 tensor of class ids, got {what}. "
                           f"Fix: ids.long()")
    ids = tensor._data
    xp = xp_for(ids)
    if num_classes == -1:
        if ids.size == 0:
            raise RuntimeError("one_hot: can't infer the number of classes from an empty "
                               "tensor; pass num_classes=")
        num_classes = int(ids.max()) + 1
    if not isinstance(num_classes, int) or num_classes < 0:
        raise RuntimeError(f"one_hot: num_classes must be a non-negative int or -1 (infer), "
                           f"got {num_classes!r}")
    if ids.size:
        low, high = int(ids.min()), int(ids.max())
        if low < 0:
            raise RuntimeError(f"one_hot: class ids must be non-negative, got {low}")
        if high >= num_classes:
            raise RuntimeError(f"one_hot: class id {high} is out of range for num_classes="
                               f"{num_classes} (ids must be in [0, {num_classes - 1}]). Fix: "
                               f"num_classes={high + 1}, or check the labels")
    out = (ids[..., None] == xp.arange(num_classes)).astype(ids.dtype)
    from ..storage import Storage

    return Tensor._make(out, Storage(out.nbytes, tensor.device), None, 0, False)
