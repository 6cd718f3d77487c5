"""Scaled dot-product attention: each query reads a weighted mix of the values.

For queries Q (L × E), keys K (S × E) and values V (S × Ev), with any
leading batch dims (they broadcast)::

    S = Q Kᵀ · scale + mask          scores, (L × S); scale = 1/√E by default
    P = softmax(S) along each row    how much query i attends to key j
    O = P V                          the output, (L × Ev)

One node, with its own derivative (as softmax is one node), so the graph a
student sees says ``scaled_dot_product_attention``. With dO the gradient of
the output::

    dV = Pᵀ dO
    dP = dO Vᵀ
    dS = P ⊙ (dP − rowsum(dP ⊙ P))      (softmax's backward, row by row)
    dQ = dS K · scale,   dK = dSᵀ Q · scale,   d(mask) = dS

and forward mode pushes tangents the other way through the same three steps::

    Ṡ = (Q̇ Kᵀ + Q K̇ᵀ) · scale + ṁask
    Ṗ = P ⊙ (Ṡ − rowsum(P ⊙ Ṡ))
    Ȯ = Ṗ V + P V̇

Masks: a bool mask says which keys a query may attend to (True = take
part), a float mask is added to the scores (−inf forbids), and
``is_causal=True`` lets query i see keys 0..i only. A query that may see no
key at all gets a zero output (and zero gradients), as PyTorch's does.

Dropout zeroes attention weights while computing O (``O = (P ⊙ keep/(1-p)) V``);
F.scaled_dot_product_attention applies it whenever ``dropout_p > 0`` (it has
no ``training`` flag: a module passes 0.0 in eval mode).

Grouped-query attention (``enable_gqa=True``): Q has Hq heads in dim -3 and
K, V have fewer, Hk (Hq a multiple of Hk); each group of Hq/Hk query heads
shares one key/value head. The op reads Q as (…, Hk, Hq/Hk, L, E) and K as
(…, Hk, 1, S, E), so broadcasting shares the heads without copying them.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import autocast_inputs, tangent_sum, unbroadcast, xp_for
from .linalg import host_operands, matrix_product
from .sampling import rand

# PyTorch has no torch.scaled_dot_product_attention: only F.scaled_dot_product_attention.
__all__: list[str] = []
# Re-exported by gradlab.nn.functional.
FUNCTIONAL = ["scaled_dot_product_attention"]
TENSOR_METHODS: list = []


def _grouped(x, groups: int, kind: str):
    """View a (…, H, X, Y) array or tensor for grouped-query attention.

    ``kind="q"``: the queries (or anything with one entry per query head)
    become (…, Hk, G, X, Y), G consecutive heads per key head. ``kind="kv"``:
    keys and values get a size-1 group dim, (…, Hk, 1, X, Y), which
    broadcasts over the G query heads. ``kind="mask"``: like the queries if
    it has a head dim of its own, like the keys if that dim is 1.
    ``groups == 1`` (no GQA) or fewer than 3 dims: unchanged.
    """
    if groups == 1 or x is None or x.ndim < 3:
        return x
    shape = tuple(x.shape)
    if kind == "kv" or (kind == "mask" and shape[-3] == 1):
        return x.reshape(shape[:-2] + (1,) + shape[-2:])
    return x.reshape(shape[:-3] + (shape[-3] // groups, groups) + shape[-2:])


class ScaledDotProductAttention(Function):
    """O = softmax(Q Kᵀ·scale + mask) V as one node; outputs (O, P), P the attention weights.

    F.scaled_dot_product_attention returns O only; MultiheadAttention also
    uses P (its ``need_weights``). Because P is an *output* (not a private
    array), backward can use it in tensor code and stay differentiable, so
    double backward works.
    """

    raw = True
    name = "scaled_dot_product_attention"

    @staticmethod
    def forward(ctx, q, k, v, mask, is_causal, scale, groups, keep, keep_scale):
        xp = xp_for(q)
        ctx.materialize_grads = False  # P's gradient is None when nobody used P
        ctx.scale, ctx.groups, ctx.keep_scale = scale, groups, keep_scale
        qg, kg, vg = (_grouped(x, groups, kind) for x, kind in ((q, "q"), (k, "kv"), (v, "kv")))
        # (NumPy half floats: the scores and their softmax in float32, see host_operands)
        scores = xp.matmul(*host_operands(qg, xp.swapaxes(kg, -1, -2))) * scale
        L, S = scores.shape[-2:]
        if is_causal:  # query i sees keys 0..i (top-left aligned when L != S)
            scores = xp.where(xp.tril(xp.ones((L, S), dtype=bool)), scores, -math.inf)
        if mask is not None:
            mg = _grouped(mask, groups, "mask")
            scores = xp.where(mg, scores, -math.inf) if mask.dtype == bool else scores + mg
        if S == 0:  # nothing to attend to: zero weights, zero output
            p = xp.zeros(scores.shape, dtype=q.dtype)
        else:
            row_max = scores.max(axis=-1, keepdims=True)
            # A row with every key masked is all -inf: shift by 0, and its sum stays 0.
            row_max = xp.where(xp.isfinite(row_max), row_max, 0)
            e = xp.exp(scores - row_max)
            total = e.sum(axis=-1, keepdims=True)
            p = e / xp.where(total == 0, 1, total)
        p = p.astype(q.dtype, copy=False)
        applied = p if keep is None else p * _grouped(keep, groups, "q") * keep_scale
        out = matrix_product(applied, vg)
        if groups > 1:  # back from (…, Hk, G, ·, ·) to (…, Hq, ·, ·)
            out = out.reshape(out.shape[:-4] + (-1,) + out.shape[-2:])
            p = p.reshape(p.shape[:-4] + (-1,) + p.shape[-2:])
        ctx.save_for_backward(q, k, v, mask, keep, p)
        return out, p

    @staticmethod
    def backward(ctx, grad_out, grad_p):
        q, k, v, mask, keep, p = ctx.saved_tensors
        g, scale = ctx.groups, ctx.scale
        qg, kg, vg, pg = (_grouped(x, g, kind) for x, kind in
                          ((q, "q"), (k, "kv"), (v, "kv"), (p, "q")))
        keep = _grouped(keep, g, "q")
        applied = pg if keep is None else pg * keep * ctx.keep_scale
        dq = dk = dv = dmask = None
        shapes = ctx.input_shapes
        if grad_out is not None:
            grad_out = _grouped(grad_out, g, "q")
            if shapes[2] is not None:
                dv = applied.mT @ grad_out  # dV = Pᵀ dO
            d_applied = grad_out @ vg.mT  # dP = dO Vᵀ
            dp = d_applied if keep is None else d_applied * keep * ctx.keep_scale
            if grad_p is not None:
                dp = dp + _grouped(grad_p, g, "q")
        elif grad_p is not None:
            dp = _grouped(grad_p, g, "q")
        else:
            return None, None, None, None, None, None, None, None, None
        ds = pg * (dp - (dp * pg).sum(-1, keepdim=True))  # softmax backward, row by row
        if shapes[0] is not None:
            dq = (ds @ kg) * scale
        if shapes[1] is not None:
            dk = (ds.mT @ qg) * scale
        if shapes[3] is not None:
            dmask = ds
        return (_ungroup(dq, q, g, "q"), _ungroup(dk, k, g, "kv"),
                _ungroup(dv, v, g, "kv"), _ungroup(dmask, mask, g, "mask"),
                None, None, None, None, None)

    @staticmethod
    def jvp(ctx, tq, tk, tv, tmask, *_):
        """jvp: Ṡ = (Q̇ Kᵀ + Q K̇ᵀ)·scale + ṁask, Ṗ = P ⊙ (Ṡ − rowsum(P ⊙ Ṡ)),
        Ȯ = Ṗ' V + P' V̇ with P' = P ⊙ keep/(1-p) (Ṗ' likewise); on the grouped views."""
        q, k, v, _, _, _, g, keep, keep_scale = ctx.primals
        out, p = ctx.results
        qg, kg, vg, pg = (_grouped(x, g, kind) for x, kind in
                          ((q, "q"), (k, "kv"), (v, "kv"), (p, "q")))
        tq, tk, tv = _grouped(tq, g, "q"), _grouped(tk, g, "kv"), _grouped(tv, g, "kv")
        keep = _grouped(keep, g, "q")
        scores_dot = tangent_sum(tuple(pg.shape),
                                 None if tq is None else (tq @ kg.mT) * ctx.scale,
                                 None if tk is None else (qg @ tk.mT) * ctx.scale,
                                 _grouped(tmask, g, "mask"))
        p_dot = None
        if scores_dot is not None:  # softmax's jvp, row by row (0 where P is 0: masked keys)
            p_dot = pg * (scores_dot - (scores_dot * pg).sum(-1, keepdim=True))
        applied, applied_dot = pg, p_dot
        if keep is not None:
            applied = pg * keep * keep_scale
            applied_dot = None if p_dot is None else p_dot * keep * keep_scale
        out_grouped = np.broadcast_shapes(tuple(applied.shape[:-2]), tuple(vg.shape[:-2])) + (
            applied.shape[-2], vg.shape[-1])
        out_dot = tangent_sum(out_grouped, None if applied_dot is None else applied_dot @ vg,
                              None if tv is None else applied @ tv)
        return (None if out_dot is None else out_dot.reshape(tuple(out.shape)),
                None if p_dot is None else p_dot.reshape(tuple(p.shape)))


def _ungroup(grad, like, groups: int, kind: str):
    """The gradient of a grouped view, summed over broadcast dims and shaped like ``like``."""
    if grad is None:
        return None
    grouped_shape = tuple(_grouped(like, groups, kind).shape)
    return unbroadcast(grad, grouped_shape).reshape(tuple(like.shape))


def _check_inputs(query, key, value, attn_mask, dropout_p, enable_gqa) -> int:
    """Raise PyTorch's errors (said so they teach); return the GQA group size."""
    op = "scaled_dot_product_attention"
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(
            f"{op}: expected query, key, and value to all be at least 2 dimensional, but got "
            f"query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim}. Fix: "
            f"shape them (..., L, E), (..., S, E) and (..., S, Ev); unsqueeze(0) a single "
            f"vector")
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(
            f"{op}: expected query, key, and value to have the same dtype, but got "
            f"query.dtype: {query.dtype} key.dtype: {key.dtype} and value.dtype: "
            f"{value.dtype}. Fix: convert them, e.g. key.to(query.dtype)")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected floating point query, key and value, got "
                           f"{query.dtype}. Fix: .float() them")
    if attn_mask is not None and attn_mask.dtype is not _dt.bool and \
            attn_mask.dtype is not query.dtype:
        raise RuntimeError(
            f"{op}: expected attn_mask dtype to be bool or to match query dtype, but got "
            f"attn_mask.dtype: {attn_mask.dtype} and query.dtype: {query.dtype}. Fix: a bool "
            f"mask (True = may attend) or a float mask of query's dtype (added to the scores)")
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got "
                         f"{dropout_p}")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(
            f"{op}: query and key must have the same embedding size (last dim) to be "
            f"multiplied, got query {tuple(query.shape)} and key {tuple(key.shape)}")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            f"{op}: key and value must have the same sequence length (dim -2), got key "
            f"{tuple(key.shape)} and value {tuple(value.shape)}: each key has one value")
    groups = 1
    if enable_gqa and min(query.ndim, key.ndim, value.ndim) >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hk != hv or hq % hk:
            raise RuntimeError(
                f"{op}: with enable_gqa=True the number of query heads (dim -3) must be a "
                f"multiple of the key/value heads, and key and value must have the same number "
                f"of heads; got query {hq}, key {hk}, value {hv} heads")
        groups = hq // hk
    batch_q, batch_k, batch_v = (tuple(t.shape[:-2]) for t in (query, key, value))
    if groups > 1:  # the query heads are matched to key heads by grouping, not broadcasting
        batch_q = batch_q[:-1] + (batch_k[-1],)
    try:
        batch = np.broadcast_shapes(batch_q, batch_k, batch_v)
    except ValueError:
        hint = " (different head counts in dim -3? pass enable_gqa=True for grouped-query " \
               "attention)" if min(query.ndim, key.ndim) >= 3 and \
               query.shape[-3] != key.shape[-3] else ""
        raise RuntimeError(
            f"{op}: the batch dims of query {tuple(query.shape)}, key {tuple(key.shape)} and "
            f"value {tuple(value.shape)} don't broadcast together{hint}") from None
    if groups > 1:
        batch = batch[:-1] + (query.shape[-3],)
    scores = batch + (query.shape[-2], key.shape[-2])
    if attn_mask is not None:
        try:
            fits = np.broadcast_shapes(tuple(attn_mask.shape), scores) == scores
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(
                f"{op}: attn_mask of shape {tuple(attn_mask.shape)} can't be broadcast to the "
                f"attention scores' shape {scores} (..., L, S) = (..., queries, keys). Fix: "
                f"give it shape (L, S) = {scores[-2:]}, or add batch/head dims")
    return groups


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(Q Kᵀ · scale + mask) V for query (…, L, E), key (…, S, E), value (…, S, Ev).

    ``attn_mask``: bool (True = may attend) or float (added to the scores);
    ``is_causal``: query i sees keys 0..i (combined with ``attn_mask`` if both
    are given); ``scale`` defaults to 1/√E; ``dropout_p`` drops attention
    weights (always, whatever the mode: pass 0.0 when evaluating).
    """
    query, key, value = autocast_inputs("scaled_dot_product_attention", query, key, value)
    groups = _check_inputs(query, key, value, attn_mask, dropout_p, enable_gqa)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    keep, keep_scale = attention_dropout_mask(query, key, groups, dropout_p)
    out, _ = ScaledDotProductAttention.apply(query, key, value, attn_mask, bool(is_causal),
                                             scale, groups, keep, keep_scale)
    return out


def attention_dropout_mask(query: Tensor, key: Tensor, groups: int, dropout_p: float):
    """Which attention weights dropout keeps, drawn from gradlab's generator: (keep, 1/(1-p)).

    ``keep`` is a bool tensor of the weights' shape (…, Hq, L, S), or None
    when ``dropout_p`` is 0. With p = 1 everything is dropped (scale 0, not inf).
    """
    if dropout_p == 0.0:
        return None, 1.0
    if groups == 1:
        batch = np.broadcast_shapes(tuple(query.shape[:-2]), tuple(key.shape[:-2]))
    else:
        batch = np.broadcast_shapes(tuple(query.shape[:-3]), tuple(key.shape[:-3])) + (
            query.shape[-3],)
    keep = rand(batch + (query.shape[-2], key.shape[-2]), device=query.device) >= dropout_p
    return keep, (0.0 if dropout_p == 1.0 else 1.0 / (1.0 - dropout_p))
