"""Which ops autocast runs in which precision: PyTorch's lists, by gradlab op name.

Autocast sorts ops by how low precision treats them:

* ``LOWER``: matrix products and convolutions. Their cost is multiply-adds
  that half-precision hardware does several times faster, and their
  accumulation happens in float32 inside the kernel, so rounding the
  *inputs* to float16/bfloat16 loses little. Floating inputs (float64
  excepted) are cast to the autocast dtype.
* ``FLOAT32``: ops whose result is badly hurt by a 10-bit (float16) or
  7-bit (bfloat16) mantissa: exponentials and logarithms, long sums,
  softmax, norms and losses. Half-precision inputs are cast up to float32.
* ``WIDEST``: ops that must see one dtype; inputs are cast to the widest
  floating dtype among them.
* ``BANNED``: ops that are unsafe in float16 and raise.

Every other op runs in the dtypes of its inputs, with the usual type
promotion (so ``float16 + float32`` gives float32). The names are
gradlab's op names (``Function.name``, the same as in the graph and the
events); an op built from other ops (``cosine_similarity``, ``kl_div``...)
is covered through the ops it is built from. Taken from PyTorch's
documented lists for CUDA and for CPU (CPU autocast leaves softmax, sums
and exp in the input's dtype; CUDA casts them up).
"""

from __future__ import annotations

__all__ = ["LOWER", "FLOAT32", "WIDEST", "BANNED", "rule"]

_PRODUCTS = frozenset({
    "matmul", "mm", "bmm", "addmm", "baddbmm", "linear", "einsum", "convolution",
    "conv_transpose", "prelu", "scaled_dot_product_attention",
})
_LOSSES = frozenset({
    "cross_entropy", "nll_loss", "mse_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy_with_logits", "ctc_loss",
})

# CPU autocast leaves mv, dot, addmv and addr alone; tensordot ends up lowered there because
# PyTorch builds it from mm. Ops built from others here decide once, by their own name
# (ops._util.autocast_once), so these entries are what PyTorch's results show.
LOWER = {"cuda": _PRODUCTS | {"mv", "addmv", "addr", "addbmm"}, "cpu": _PRODUCTS | {"tensordot"}}

FLOAT32 = {
    "cuda": _LOSSES | frozenset({
        "acos", "asin", "cosh", "sinh", "tan", "erfinv", "exp", "expm1", "log", "log10",
        "log2", "log1p", "rsqrt", "pow", "softplus", "layer_norm", "group_norm", "norm",
        "pdist", "cdist", "logsumexp", "softmax", "log_softmax", "sum", "prod", "cumsum",
        "cumprod",
    }),
    "cpu": _LOSSES | frozenset({
        "binary_cross_entropy", "cdist", "prod", "trace", "linalg_cholesky", "linalg_det",
        "linalg_eigh", "linalg_inv", "linalg_lu_factor_ex", "linalg_qr", "linalg_slogdet",
        "linalg_solve", "linalg_svd", "max_unpool2d", "max_unpool3d",
    }),
}

_SAME_DTYPE = frozenset({"addcdiv", "addcmul", "atan2", "index_put", "scatter_add"})
WIDEST = {
    "cuda": _SAME_DTYPE | {"dot", "bilinear", "tensordot", "cross"},
    "cpu": _SAME_DTYPE,
}

BANNED = {"cuda": frozenset({"binary_cross_entropy"}), "cpu": frozenset()}


def rule(device_type: str, op: str) -> str | None:
    """``"lower"``, ``"float32"``, ``"widest"``, ``"banned"`` or None (run as given)."""
    if op in BANNED[device_type]:
        return "banned"
    if op in LOWER[device_type]:
        return "lower"
    if op in FLOAT32[device_type]:
        return "float32"
    if op in WIDEST[device_type]:
        return "widest"
    return None
