"""Multi-head attention: MultiheadAttention, the layer inside every Transformer.

Multi-head attention projects the inputs to queries, keys and values, splits
them into ``num_heads`` heads of ``head_dim = embed_dim / num_heads`` values,
lets each head attend on its own, and mixes the heads again::

    Q, K, V = query W_qᵀ + b_q,  key W_kᵀ + b_k,  value W_vᵀ + b_v
    head_h  = softmax(Q_h K_hᵀ / √head_dim + mask) V_h      (one attention node)
    out     = concat(head_1, …, head_H) W_oᵀ + b_o           (``out_proj``)

PyTorch's parameter names and state_dict keys: ``in_proj_weight`` holds
W_q, W_k, W_v stacked (3·E, E) unless ``kdim``/``vdim`` differ from
``embed_dim``, then they are ``q_proj_weight``, ``k_proj_weight``,
``v_proj_weight``. Masks follow PyTorch's convention for these modules:
in ``attn_mask`` and ``key_padding_mask`` a bool True means *may not
attend* (the opposite of F.scaled_dot_product_attention's), a float is added.

One deliberate difference: a query that may attend to no key at all (every
key masked) gets zero output and zero weights here; PyTorch's
``need_weights=True`` path gives NaN for it (its ``need_weights=False`` path
gives zeros too).
"""

from __future__ import annotations

import math

from ... import dtypes as _dt
from ...ops import creation
from ...ops.attention import ScaledDotProductAttention, attention_dropout_mask
from ...ops.creation import zeros
from ...ops.dense import linear
from ...ops.joining import cat
from ...ops.padding import pad
from ...tensor import Tensor
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """MultiheadAttention's ``out_proj``: a plain Linear under PyTorch's class name (so the
    repr matches; PyTorch needs the name for its quantization tools)."""


def _canonical_mask(mask: Tensor | None, name: str, dtype) -> Tensor | None:
    """A bool mask (True = may not attend) as a float one to add: 0 or -inf; floats stay."""
    if mask is None:
        return None
    if mask.dtype is not _dt.bool and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported, got "
                             f"{mask.dtype}. Fix: True (or -inf) where attending is not allowed")
    if mask.dtype.is_floating_point:
        return mask
    return zeros(tuple(mask.shape), dtype=dtype, device=mask.device).masked_fill(
        mask, -math.inf)


def _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """PyTorch's shape rules for MultiheadAttention; True for batched (3-D) input."""
    if query.ndim not in (2, 3):
        raise AssertionError(f"MultiheadAttention: query should be unbatched 2D or batched 3D "
                             f"tensor but received {query.ndim}-D query tensor of shape "
                             f"{tuple(query.shape)}")
    batched = query.ndim == 3
    want = query.ndim
    if key.ndim != want or value.ndim != want:
        kind = "batched (3-D)" if batched else "unbatched (2-D)"
        raise AssertionError(f"MultiheadAttention: for {kind} `query`, expected `key` and "
                             f"`value` to be {want}-D but found {key.ndim}-D and "
                             f"{value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != want - 1:
        raise AssertionError(f"MultiheadAttention: for {want}-D query, expected "
                             f"`key_padding_mask` to be None or {want - 1}-D (batch, keys) but "
                             f"found a {key_padding_mask.ndim}-D tensor")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"MultiheadAttention: expected `attn_mask` to be None, 2-D "
                                 f"(L, S) or 3-D (batch·num_heads, L, S) but found a "
                                 f"{attn_mask.ndim}-D tensor")
        if not batched and attn_mask.ndim == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(f"MultiheadAttention: expected `attn_mask` shape to be "
                                     f"{expected} but got {tuple(attn_mask.shape)}")
    return batched


class MultiheadAttention(Module):
    """Attention with ``num_heads`` heads over (L, N, E) inputs ((N, L, E) if ``batch_first``).

    ``forward`` returns ``(attn_output, attn_weights)``; the weights are
    averaged over heads (N, L, S) unless ``average_attn_weights=False``
    (N, num_heads, L, S), and None with ``need_weights=False``.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None,
                 dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError(f"embed_dim must be divisible by num_heads: embed_dim="
                                 f"{embed_dim} can't be split into {num_heads} equal heads. "
                                 f"Fix: pick num_heads among the divisors of {embed_dim}")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(creation.empty(3 * embed_dim, embed_dim, **kw))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(creation.empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(creation.empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(creation.empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(creation.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(creation.empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(creation.empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """Xavier-uniform projections, zero biases (PyTorch's initialisation)."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def _project(self, query, key, value):
        """Q, K, V = the three input projections (one matmul for self-attention)."""
        E = self.embed_dim
        b = self.in_proj_bias
        b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
        if not self._qkv_same_embed_dim:
            return (linear(query, self.q_proj_weight, b_q), linear(key, self.k_proj_weight, b_k),
                    linear(value, self.v_proj_weight, b_v))
        if key.shape[-1] != E or value.shape[-1] != E or query.shape[-1] != E:
            raise AssertionError(
                f"MultiheadAttention: was expecting embedding dimension of {E}, but got query "
                f"{tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}. "
                f"Fix: pass kdim=/vdim= for keys and values of other sizes")
        if query is key and key is value:  # self-attention: one matmul, then split
            return linear(query, self.in_proj_weight, b).chunk(3, -1)
        w_q, w_k, w_v = self.in_proj_weight.chunk(3)
        return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, self.num_heads)
        if self.batch_first and batched:  # the rest works on (L, N, E)
            same_kv, same_qk = key is value, query is key
            query = query.transpose(0, 1)
            key = query if same_qk else key.transpose(0, 1)
            value = key if same_kv else value.transpose(0, 1)
        if not batched:
            same_kv, same_qk = key is value, query is key
            query = query.unsqueeze(1)
            key = query if same_qk else key.unsqueeze(1)
            value = key if same_kv else value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        out, weights = self._attend(query, key, value, key_padding_mask, need_weights,
                                    attn_mask, average_attn_weights, is_causal)
        if not batched:
            out = out.squeeze(1)
            weights = None if weights is None else weights.squeeze(0)
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def _attend(self, query, key, value, key_padding_mask, need_weights, attn_mask,
                average_attn_weights, is_causal):
        """Attention on (L, N, E) query and (S, N, ·) key/value; returns (out, weights)."""
        L, N, E = query.shape
        H, hd = self.num_heads, self.head_dim
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"MultiheadAttention: key's sequence and batch dims "
                                 f"{tuple(key.shape[:2])} do not match value's "
                                 f"{tuple(value.shape[:2])}")
        if E != self.embed_dim:
            raise AssertionError(f"MultiheadAttention: was expecting embedding dimension of "
                                 f"{self.embed_dim}, but got {E}")
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                               "the Transformer module method `generate_square_subsequent_mask`"
                               " to create this mask.")
        # is_causal is a hint that attn_mask is the causal mask: used as such when nothing
        # else is merged into the mask (as PyTorch does).
        causal = bool(is_causal) and key_padding_mask is None and not need_weights
        attn_mask = None if causal else _canonical_mask(attn_mask, "attn_mask", query.dtype)
        q, k, v = self._project(query, key, value)
        S = k.shape[0]
        if attn_mask is not None:
            want = (L, S) if attn_mask.ndim == 2 else (N * H, L, S)
            if tuple(attn_mask.shape) != want:
                raise RuntimeError(f"The shape of the {attn_mask.ndim}D attn_mask is "
                                   f"{tuple(attn_mask.shape)}, but should be {want}.")
            if attn_mask.ndim == 3:
                attn_mask = attn_mask.reshape(N, H, L, S)
        if self.bias_k is not None:  # one learned extra key/value for every sequence
            k = cat([k, self.bias_k.expand(1, N, E)])
            v = cat([v, self.bias_v.expand(1, N, E)])
            attn_mask, key_padding_mask = _pad_masks(attn_mask, key_padding_mask)
        # (S, N, E) -> (N, H, S, head_dim): the heads become a batch dim.
        q = q.reshape(L, N, H, hd).permute(1, 2, 0, 3)
        k = k.reshape(k.shape[0], N, H, hd).permute(1, 2, 0, 3)
        v = v.reshape(v.shape[0], N, H, hd).permute(1, 2, 0, 3)
        if self.add_zero_attn:  # one all-zero key/value, something to attend to
            k = cat([k, zeros(N, H, 1, hd, dtype=k.dtype, device=k.device)], 2)
            v = cat([v, zeros(N, H, 1, hd, dtype=v.dtype, device=v.device)], 2)
            attn_mask, key_padding_mask = _pad_masks(attn_mask, key_padding_mask)
        S = k.shape[2]
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (N, S):
                raise AssertionError(f"MultiheadAttention: expecting key_padding_mask shape of "
                                     f"{(N, S)} (batch, keys), but got "
                                     f"{tuple(key_padding_mask.shape)}")
            padding = key_padding_mask.reshape(N, 1, 1, S)
            attn_mask = padding if attn_mask is None else attn_mask + padding
        p = self.dropout if self.training else 0.0
        keep, keep_scale = attention_dropout_mask(q, k, 1, p)
        out, weights = ScaledDotProductAttention.apply(
            q, k, v, attn_mask, causal, 1.0 / math.sqrt(hd), 1, keep, keep_scale)
        out = linear(out.permute(2, 0, 1, 3).reshape(L, N, E), self.out_proj.weight,
                     self.out_proj.bias)
        if not need_weights:
            return out, None
        if keep is not None:  # the weights that were applied: after dropout
            weights = weights * keep * keep_scale
        return out, weights.mean(1) if average_attn_weights else weights


def _pad_masks(attn_mask, key_padding_mask):
    """One more key was appended: let every query attend to it (pad the masks with 0)."""
    return (None if attn_mask is None else pad(attn_mask, (0, 1)),
            None if key_padding_mask is None else pad(key_padding_mask, (0, 1)))
