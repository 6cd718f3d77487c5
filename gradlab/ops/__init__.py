"""The differentiable primitives, one family per module.

Read any of them to see how an op works: its ``Function`` has a ``forward``
on raw arrays and, right below, a ``backward`` written with tensor ops.

===========================  ====================================================================
``arithmetic``               add, sub, mul, div, neg, pow, remainder, broadcast_shapes ...
``fused``                    addcmul, addcdiv, lerp (a whole update step as one node)
``unary``                    exp, log, sqrt, sin, tanh, sigmoid, relu, floor ...
``trigonometry``             asin, atan2, sinh, atanh, deg2rad, hypot, sinc ...
``special_math``             logit, xlogy, logaddexp, fmod, nan_to_num, heaviside ...
``error_function``           erfc, erfinv
``float_parts``              copysign, nextafter, ldexp, frexp (sign, neighbour, power of two)
``integer_math``             gcd, lcm, bitwise_left_shift (<<), bitwise_right_shift (>>)
``gamma_functions``          lgamma, digamma, polygamma, mvlgamma (the derivatives chain)
``unary_backward``           tanh_backward, sigmoid_backward, threshold_backward (for backward)
``selection``                clamp, maximum, minimum, where
``comparison``               eq, lt, logical_and, isnan ... (bool results, no gradient)
``reduction``                sum, mean, prod, max, argmax, any ...
``cumulative``               cumsum (a running sum: a scan, not a reduction)
``counting``                 bincount, histc, histogram, isin (no gradient), aminmax
``scans``                    cumprod, cummax, cummin, logcumsumexp (exact with zeros)
``order_statistics``         median, nanmedian, mode, quantile, nanmean, nansum, count_nonzero
``repetition``               repeat_interleave, diff, take, broadcast_tensors, ravel
``statistics``               var, std, var_mean, std_mean, norm
``covariance``               cov, corrcoef, trapezoid, cumulative_trapezoid, renorm (compositions)
``softmax_family``           softmax, log_softmax, logsumexp
``linalg``                   matmul, bmm, dot, einsum ...
``products``                 tensordot, inner, mv, kron, cross, cdist, cosine_similarity ...
``solvers``                  inverse, det, logdet, slogdet (+ linalg.inv, linalg.solve)
``decompositions``           cholesky (+ linalg.eigh, linalg.svd, linalg.qr ...)
``shape``                    reshape, view, transpose, permute, expand, squeeze ...
``reordering``               flip, roll, repeat, tile (copies in a new order)
``padding``                  narrow, pad (each is the other's backward)
``triangular``               tril, triu
``diagonals``                diag, diagonal (a view), diag_embed, diagflat, trace, tril_indices
``joining``                  cat, stack, split, chunk, unbind, tensor_split
``indexing``                 x[i], x[mask], x[i] = v, index_put, masked_fill, nonzero
``gather_scatter``           gather, scatter, scatter_add, index_select, index_add ...
``index_writes``             index_copy, index_fill, masked_scatter, put (IndexPut under new names)
``activation``               leaky_relu, elu, gelu, silu, softplus, erf ...
``shrink_activations``       softshrink, hardshrink, softsign, softmin, glu, prelu, rrelu ...
``conversion``               to(dtype/device), clone, contiguous
``dense``                    linear (nn.Linear's x·Wᵀ + b as one op)
``convolution``              conv1d, conv2d, conv_transpose2d (im2col + one matmul)
``sliding_windows``          F.unfold (im2col), F.fold (col2im), Tensor.unfold (a strided view)
``pooling``                  max_pool1d/2d (and the window geometry all pools share)
``avg_pooling``              avg_pool1d/2d (backward spreads each gradient evenly)
``adaptive_pooling``         adaptive_avg_pool1d/2d, adaptive_max_pool1d/2d
``normalization``            batch_norm, layer_norm, group_norm
``instance_norm``            instance_norm, local_response_norm (nn.functional only)
``pixel_ops``                pixel_shuffle, pixel_unshuffle, rms_norm (compositions)
``dropout_family``           dropout, dropout2d, alpha_dropout (random zeroing while training)
``lookup``                   embedding (rows of a table picked by index)
``matrix_building``          block_diag, cartesian_prod, combinations, vander, rot90, atleast_2d ...
``losses``                   bce, kl_div, margin losses ... (mostly nn.functional only)
``regression_losses``        mse_loss, l1_loss, smooth_l1_loss, huber_loss (nn.functional only)
``classification_losses``    cross_entropy, nll_loss, multi_margin_loss (nn.functional only)
``more_losses``              soft_margin_loss, gaussian_nll_loss, triplet_margin_loss ...
``inplace``                  add_, mul_, zero_, copy_ ... (and how versions work)
``random_fills``             normal_, uniform_, bernoulli_, exponential_ (methods only)
``sorting``                  sort, argsort, topk, kthvalue, unique
``resampling``               interpolate (nearest, linear, bilinear ...)
``attention``                scaled_dot_product_attention
``creation``                 tensor, zeros, ones, full, arange, eye ... (no gradient)
``sampling``                 rand, randn, randint, normal, multinomial ... (no gradient)
===========================  ====================================================================

Modules whose names start with ``_`` hold helpers, not ops: ``_util`` (for
every family), ``_im2col`` (convolution), ``_index_parsing`` (what an index
means), ``_loss_reduction`` (reduction='mean' ... for every loss) and
``_class_targets`` (class-index targets of the classification losses).

(``softmax_family``, ``gather_scatter``, ``dropout_family`` and ``lookup``
are not named ``softmax``, ``scatter``, ``dropout`` and ``embedding``: a
module named like one of its functions would be hidden by that function
here, since ``gradlab.ops.softmax`` is the function.)
"""

from . import (
    activation,
    adaptive_pooling,
    arithmetic,
    attention,
    avg_pooling,
    classification_losses,
    comparison,
    conversion,
    convolution,
    counting,
    covariance,
    creation,
    cumulative,
    decompositions,
    dense,
    diagonals,
    dropout_family,
    error_function,
    float_parts,
    fused,
    gamma_functions,
    gather_scatter,
    index_writes,
    indexing,
    inplace,
    instance_norm,
    integer_math,
    joining,
    linalg,
    lookup,
    losses,
    matrix_building,
    more_losses,
    normalization,
    order_statistics,
    padding,
    pixel_ops,
    pooling,
    products,
    random_fills,
    reduction,
    regression_losses,
    reordering,
    repetition,
    resampling,
    sampling,
    scans,
    selection,
    shape,
    shrink_activations,
    sliding_windows,
    softmax_family,
    solvers,
    sorting,
    special_math,
    statistics,
    triangular,
    trigonometry,
    unary,
    unary_backward,
)
from .activation import *  # noqa: F403
from .adaptive_pooling import *  # noqa: F403
from .arithmetic import *  # noqa: F403
from .attention import *  # noqa: F403
from .avg_pooling import *  # noqa: F403
from .classification_losses import *  # noqa: F403
from .comparison import *  # noqa: F403
from .conversion import *  # noqa: F403
from .convolution import *  # noqa: F403
from .counting import *  # noqa: F403
from .covariance import *  # noqa: F403
from .creation import *  # noqa: F403
from .cumulative import *  # noqa: F403
from .decompositions import *  # noqa: F403
from .dense import *  # noqa: F403
from .diagonals import *  # noqa: F403
from .dropout_family import *  # noqa: F403
from .error_function import *  # noqa: F403
from .float_parts import *  # noqa: F403
from .fused import *  # noqa: F403
from .gamma_functions import *  # noqa: F403
from .gather_scatter import *  # noqa: F403
from .index_writes import *  # noqa: F403
from .indexing import *  # noqa: F403
from .inplace import *  # noqa: F403
from .instance_norm import *  # noqa: F403
from .integer_math import *  # noqa: F403
from .joining import *  # noqa: F403
from .linalg import *  # noqa: F403
from .lookup import *  # noqa: F403
from .losses import *  # noqa: F403
from .matrix_building import *  # noqa: F403
from .methods import install_methods
from .more_losses import *  # noqa: F403
from .normalization import *  # noqa: F403
from .order_statistics import *  # noqa: F403
from .padding import *  # noqa: F403
from .pixel_ops import *  # noqa: F403
from .pooling import *  # noqa: F403
from .products import *  # noqa: F403
from .random_fills import *  # noqa: F403
from .reduction import *  # noqa: F403
from .regression_losses import *  # noqa: F403
from .reordering import *  # noqa: F403
from .repetition import *  # noqa: F403
from .resampling import *  # noqa: F403
from .sampling import *  # noqa: F403
from .scans import *  # noqa: F403
from .selection import *  # noqa: F403
from .shape import *  # noqa: F403
from .shrink_activations import *  # noqa: F403
from .sliding_windows import *  # noqa: F403
from .softmax_family import *  # noqa: F403
from .solvers import *  # noqa: F403
from .sorting import *  # noqa: F403
from .special_math import *  # noqa: F403
from .statistics import *  # noqa: F403
from .triangular import *  # noqa: F403
from .trigonometry import *  # noqa: F403
from .unary import *  # noqa: F403
from .unary_backward import *  # noqa: F403

FAMILIES = (arithmetic, fused, unary, trigonometry, special_math, error_function, gamma_functions,
            unary_backward, float_parts, integer_math,
            selection, comparison, reduction,
            cumulative, counting, scans, order_statistics, repetition, statistics, covariance,
            softmax_family,
            linalg, shape, reordering, padding, triangular, joining,
            indexing, gather_scatter, index_writes,
            activation, conversion, inplace, random_fills, dense,
            convolution, sliding_windows, pooling, avg_pooling, adaptive_pooling, normalization,
            dropout_family, lookup, losses, regression_losses, classification_losses, more_losses,
            sorting,
            resampling, attention, solvers, decompositions, creation, sampling,
            shrink_activations, pixel_ops, diagonals, products, matrix_building,
            instance_norm)
"""The op families; each binds the functions its TENSOR_METHODS names onto Tensor."""

install_methods(FAMILIES)

__all__ = sorted({name for family in FAMILIES for name in family.__all__})
"""What ``from gradlab.ops import *`` (and so ``import gradlab``) exports: the functions,
not the family modules (``gradlab.linalg`` is the torch.linalg-style namespace)."""
