"""The differentiable primitives, one family per module.

Read any of them to see how an op works: its ``Function`` has a ``forward``
on raw arrays and, right below, a ``backward`` written with tensor ops.

===========================  ====================================================================
``arithmetic``               add, sub, mul, div, neg, pow, remainder, broadcast_shapes ...
``fused``                    addcmul, addcdiv, lerp (a whole update step as one node)
``unary``                    exp, log, sqrt, sin, tanh, sigmoid, relu, floor ...
``trigonometry``             asin, atan2, sinh, atanh, deg2rad, hypot, sinc ...
``special_math``             logit, xlogy, logaddexp, fmod, nan_to_num, heaviside ...
``nan_aware``                fmax, fmin (NaN means missing), isposinf, isneginf, isreal
``bessel``                   i0 (+ special.i1): Bessel functions, each the other's derivative
``modified_bessel``          special.i0e, i1e, modified_bessel_k0 ... (scaled I and K)
``special_functions``        special.entr, erfcx, log_ndtr (digits kept in the tails)
``incomplete_gamma``         igamma, igammac (special.gammainc, gammaincc)
``gamma_sampling``           _standard_gamma, _standard_gamma_grad (draws with a gradient)
``hurwitz_zeta``             special.zeta (Euler-Maclaurin)
``bessel_jy``                special.bessel_j0, bessel_y1 ..., spherical_bessel_j0, airy_ai
``orthogonal_polynomials``   special.chebyshev_polynomial_t ..., hermite, laguerre, legendre
``error_function``           erfc, erfinv
``float_parts``              copysign, nextafter, ldexp, frexp (sign, neighbour, power of two)
``integer_math``             gcd, lcm, bitwise_left_shift (<<), bitwise_right_shift (>>)
``gamma_functions``          lgamma, digamma, polygamma, mvlgamma (the derivatives chain)
``unary_backward``           tanh_backward, sigmoid_backward, threshold_backward (for backward)
``selection``                clamp, maximum, minimum, where
``comparison``               eq, lt, logical_and, isnan ... (bool results, no gradient)
``complex_parts``            conj, real, imag, angle, complex, polar, view_as_real ...
``fourier``                  the three FFT ops behind gradlab.fft (fft_c2c, fft_r2c, fft_c2r)
``general_eigen``            linalg.eig, eigvals: complex eigenvalues of any square matrix
``short_time_fourier``       stft, istft: spectrograms (frames, windows, rfft) and back
``reduction``                sum, mean, prod, max, argmax, any ...
``cumulative``               cumsum (a running sum: a scan, not a reduction)
``counting``                 bincount, histc, histogram, isin (no gradient), aminmax
``scans``                    cumprod, cummax, cummin, logcumsumexp (exact with zeros)
``order_statistics``         median, nanmedian, mode, quantile, nanmean, nansum, count_nonzero
``repetition``               repeat_interleave, diff, take, broadcast_tensors, ravel
``statistics``               var, std, var_mean, std_mean, norm
``covariance``               cov, corrcoef, trapezoid, cumulative_trapezoid, renorm (compositions)
``legacy_norms``             dist, frobenius_norm, nuclear_norm (over linalg's norms)
``softmax_family``           softmax, log_softmax, logsumexp
``linalg``                   matmul, bmm, dot, einsum ...
``products``                 tensordot, inner, mv, kron, cross, cdist, cosine_similarity ...
``solvers``                  inverse, det, logdet, slogdet (+ linalg.inv, linalg.solve)
``matrix_functions``         matrix_exp, matrix_power, pinverse, chain_matmul, addr, vdot
``decompositions``           cholesky (+ linalg.eigh, linalg.svd, linalg.qr ...)
``legacy_linalg``            torch.qr, svd (returns V), lu, lu_unpack, lu_solve, cholesky_solve ...
``triangular_solvers``       linalg.solve_triangular, lu_factor(_ex), lu, lu_solve (over lu, tril)
``ldl_decomposition``        linalg.ldl_factor(_ex), ldl_solve (Bunch-Kaufman, LAPACK's format)
``solver_status``            linalg.inv_ex, solve_ex, cholesky_ex (an info tensor, not an error)
``rank_and_condition``       linalg.pinv, matrix_rank, cond (what the singular values say)
``least_squares``            linalg.lstsq (through pinv; drivers gels, gelsy, gelsd, gelss)
``matrix_chain``             linalg.multi_dot (cheapest order), householder_product
``tensor_equations``         linalg.tensorinv, tensorsolve (reshapes around inv and solve)
``shape``                    reshape, view, transpose, permute, expand, squeeze ...
``reordering``               flip, roll, repeat, tile (copies in a new order)
``padding``                  narrow, pad (each is the other's backward)
``triangular``               tril, triu
``diagonals``                diag, diagonal (a view), diag_embed, diagflat, trace, tril_indices
``joining``                  cat, stack, split, chunk, unbind, tensor_split
``stacking``                 column_stack, dstack, hsplit, vsplit, split_with_sizes, argwhere ...
``indexing``                 x[i], x[mask], x[i] = v, index_put, masked_fill, nonzero
``gather_scatter``           gather, scatter, scatter_add, index_select, index_add ...
``scatter_reductions``       scatter_reduce, index_reduce (sum, prod, mean, amax, amin)
``view_scatter``             slice_scatter, select_scatter, diagonal_scatter (a view replaced)
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
``volumetric``               conv3d, conv_transpose3d (depth gathered, then ONE 2-D conv)
``volumetric_pooling``       max_pool3d, avg_pool3d, adaptive_*_pool3d (2-D pools + depth taps)
``unpooling``                max_unpool1d/2d/3d (a scatter), lp_pool1d/2d/3d, *_with_indices
``fractional_pooling``       fractional_max_pool2d/3d (pseudo-random window steps; F only)
``pairwise``                 pdist (all pairs of rows), channel_shuffle (a composition)
``normalization``            batch_norm, layer_norm, group_norm
``instance_normalization``   instance_norm, local_response_norm
``pixel_ops``                pixel_shuffle, pixel_unshuffle, rms_norm (compositions)
``dropout_family``           dropout, dropout2d, alpha_dropout (random zeroing while training)
``lookup``                   embedding (rows of a table picked by index)
``embedding_bag``            embedding_bag (each bag's rows summed, averaged or maxed; F only)
``matrix_building``          block_diag, cartesian_prod, combinations, vander, rot90, atleast_2d ...
``losses``                   bce, kl_div, margin losses ... (mostly nn.functional only)
``regression_losses``        mse_loss, l1_loss, smooth_l1_loss, huber_loss (nn.functional only)
``classification_losses``    cross_entropy, nll_loss, multi_margin_loss (nn.functional only)
``more_losses``              soft_margin_loss, gaussian_nll_loss, triplet_margin_loss ...
``ctc``                      ctc_loss (the alpha-beta recursion over all alignments)
``margin_losses``            multilabel_margin_loss, triplet_margin_with_distance_loss
``gumbel``                   gumbel_softmax (a sample a gradient passes through; F only)
``inplace``                  add_, mul_, zero_, copy_ ... (and how versions work)
``inplace_forms``            cos_, floor_, eq_, floor_divide_, addmm_ ..., //=; ger, greater
``inplace_views``            t_, transpose_, swapaxes_, swapdims_, squeeze_, unsqueeze_
``nn_inplace``               F.elu_, F.leaky_relu_, F.hardtanh_, torch.dropout_ ...
``random_fills``             normal_, uniform_, bernoulli_, cauchy_, random_ ... (methods only)
``discrete_sampling``        bernoulli, poisson, binomial (a draw per element; zero gradient)
``sorting``                  sort, argsort, topk, kthvalue, unique
``resampling``               interpolate (nearest, linear, bilinear ...)
``grid_sampling``            affine_grid, grid_sample (spatial transformers; compositions)
``attention``                scaled_dot_product_attention
``creation``                 tensor, zeros, ones, full, arange, eye ... (no gradient)
``sampling``                 rand, randn, randint, normal, multinomial ... (no gradient)
``progressions``             logspace, range (end included; no gradient)
``filling``                  scalar_tensor, fill (out-of-place; differentiable in the value)
``buffers``                  asarray, frombuffer, empty_strided (shared or hand-laid memory)
``windows``                  hann_window, hamming_window, blackman_window, kaiser_window ...
``introspection``            is_floating_point, is_signed, is_nonzero, storage_offset, typename
``aliases``                  x.where(c, y), sum_to_size, adjoint/H/mH, narrow_copy, unsafe_split ...
``host_methods``             pin_memory, share_memory_ (no-ops), map_, apply_ (Python per element)
``inplace_extras``           fill_diagonal_, addr_, i0_, igamma_, scatter_reduce_, index_reduce_
``strided_views``            as_strided (any view of the storage), as_strided_scatter
``numeric_gradient``         gradient (finite differences of sampled values, like NumPy's)
``multidim_histogram``       histogramdd (points in D dims; no gradient)
``functional_aliases``       torch.batch_norm, embedding, constant_pad_nd ... (ATen's arguments)
===========================  ====================================================================

Modules whose names start with ``_`` hold helpers, not ops: ``_util`` (for
every family), ``_im2col`` (convolution), ``_index_parsing`` (what an index
means), ``_loss_reduction`` (reduction='mean' ... for every loss),
``_class_targets`` (class-index targets of the classification losses),
``_double_double`` (float64 pairs with ~32 digits, for series that cancel),
``_gather_weights`` (weighted taps read and scattered through one flat index:
grid_sample, adaptive max pools), ``_volumetric_windows`` (3-D max/avg pools
over strided windows) and ``_adaptive_windows`` (uneven adaptive windows).

(``softmax_family``, ``gather_scatter``, ``dropout_family`` and ``lookup``
are not named ``softmax``, ``scatter``, ``dropout`` and ``embedding``: a
module named like one of its functions would be hidden by that function
here, since ``gradlab.ops.softmax`` is the function.)
"""

from . import (
    activation,
    adaptive_pooling,
    aliases,
    arithmetic,
    attention,
    avg_pooling,
    bessel,
    bessel_jy,
    buffers,
    classification_losses,
    comparison,
    complex_parts,
    conversion,
    convolution,
    counting,
    covariance,
    creation,
    ctc,
    cumulative,
    decompositions,
    dense,
    diagonals,
    discrete_sampling,
    dropout_family,
    embedding_bag,
    error_function,
    filling,
    float_parts,
    fourier,
    fractional_pooling,
    functional_aliases,
    fused,
    gamma_functions,
    gamma_sampling,
    gather_scatter,
    general_eigen,
    grid_sampling,
    gumbel,
    host_methods,
    hurwitz_zeta,
    incomplete_gamma,
    index_writes,
    indexing,
    inplace,
    inplace_extras,
    inplace_forms,
    inplace_views,
    instance_normalization,
    integer_math,
    introspection,
    joining,
    ldl_decomposition,
    least_squares,
    legacy_linalg,
    legacy_norms,
    linalg,
    lookup,
    losses,
    margin_losses,
    matrix_building,
    matrix_chain,
    matrix_functions,
    modified_bessel,
    more_losses,
    multidim_histogram,
    nan_aware,
    nn_inplace,
    normalization,
    numeric_gradient,
    order_statistics,
    orthogonal_polynomials,
    padding,
    pairwise,
    pixel_ops,
    pooling,
    products,
    progressions,
    random_fills,
    rank_and_condition,
    reduction,
    regression_losses,
    reordering,
    repetition,
    resampling,
    sampling,
    scans,
    scatter_reductions,
    selection,
    shape,
    short_time_fourier,
    shrink_activations,
    sliding_windows,
    softmax_family,
    solver_status,
    solvers,
    sorting,
    special_functions,
    special_math,
    stacking,
    statistics,
    strided_views,
    tensor_equations,
    triangular,
    triangular_solvers,
    trigonometry,
    unary,
    unary_backward,
    unpooling,
    view_scatter,
    volumetric,
    volumetric_pooling,
    windows,
)
from .activation import *  # noqa: F403
from .adaptive_pooling import *  # noqa: F403
from .aliases import *  # noqa: F403
from .arithmetic import *  # noqa: F403
from .attention import *  # noqa: F403
from .avg_pooling import *  # noqa: F403
from .bessel import *  # noqa: F403
from .bessel_jy import *  # noqa: F403
from .buffers import *  # noqa: F403
from .classification_losses import *  # noqa: F403
from .comparison import *  # noqa: F403
from .complex_parts import *  # noqa: F403
from .conversion import *  # noqa: F403
from .convolution import *  # noqa: F403
from .counting import *  # noqa: F403
from .covariance import *  # noqa: F403
from .creation import *  # noqa: F403
from .ctc import *  # noqa: F403
from .cumulative import *  # noqa: F403
from .decompositions import *  # noqa: F403
from .dense import *  # noqa: F403
from .diagonals import *  # noqa: F403
from .discrete_sampling import *  # noqa: F403
from .dropout_family import *  # noqa: F403
from .embedding_bag import *  # noqa: F403
from .error_function import *  # noqa: F403
from .filling import *  # noqa: F403
from .float_parts import *  # noqa: F403
from .fractional_pooling import *  # noqa: F403
from .functional_aliases import *  # noqa: F403
from .fused import *  # noqa: F403
from .gamma_functions import *  # noqa: F403
from .gamma_sampling import *  # noqa: F403
from .gather_scatter import *  # noqa: F403
from .grid_sampling import *  # noqa: F403
from .gumbel import *  # noqa: F403
from .host_methods import *  # noqa: F403
from .hurwitz_zeta import *  # noqa: F403
from .incomplete_gamma import *  # noqa: F403
from .index_writes import *  # noqa: F403
from .indexing import *  # noqa: F403
from .inplace import *  # noqa: F403
from .inplace_extras import *  # noqa: F403
from .inplace_forms import *  # noqa: F403
from .inplace_views import *  # noqa: F403
from .instance_normalization import *  # noqa: F403
from .integer_math import *  # noqa: F403
from .introspection import *  # noqa: F403
from .joining import *  # noqa: F403
from .legacy_linalg import *  # noqa: F403
from .legacy_norms import *  # noqa: F403
from .linalg import *  # noqa: F403
from .lookup import *  # noqa: F403
from .losses import *  # noqa: F403
from .margin_losses import *  # noqa: F403
from .matrix_building import *  # noqa: F403
from .matrix_functions import *  # noqa: F403
from .methods import install_methods
from .modified_bessel import *  # noqa: F403
from .more_losses import *  # noqa: F403
from .multidim_histogram import *  # noqa: F403
from .nan_aware import *  # noqa: F403
from .nn_inplace import *  # noqa: F403
from .normalization import *  # noqa: F403
from .numeric_gradient import *  # noqa: F403
from .order_statistics import *  # noqa: F403
from .orthogonal_polynomials import *  # noqa: F403
from .padding import *  # noqa: F403
from .pairwise import *  # noqa: F403
from .pixel_ops import *  # noqa: F403
from .pooling import *  # noqa: F403
from .products import *  # noqa: F403
from .progressions import *  # noqa: F403
from .random_fills import *  # noqa: F403
from .reduction import *  # noqa: F403
from .regression_losses import *  # noqa: F403
from .reordering import *  # noqa: F403
from .repetition import *  # noqa: F403
from .resampling import *  # noqa: F403
from .sampling import *  # noqa: F403
from .scans import *  # noqa: F403
from .scatter_reductions import *  # noqa: F403
from .selection import *  # noqa: F403
from .shape import *  # noqa: F403
from .short_time_fourier import *  # noqa: F403
from .shrink_activations import *  # noqa: F403
from .sliding_windows import *  # noqa: F403
from .softmax_family import *  # noqa: F403
from .solvers import *  # noqa: F403
from .sorting import *  # noqa: F403
from .special_functions import *  # noqa: F403
from .special_math import *  # noqa: F403
from .stacking import *  # noqa: F403
from .statistics import *  # noqa: F403
from .strided_views import *  # noqa: F403
from .triangular import *  # noqa: F403
from .trigonometry import *  # noqa: F403
from .unary import *  # noqa: F403
from .unary_backward import *  # noqa: F403
from .unpooling import *  # noqa: F403
from .view_scatter import *  # noqa: F403
from .volumetric import *  # noqa: F403
from .volumetric_pooling import *  # noqa: F403
from .windows import *  # noqa: F403

FAMILIES = (arithmetic, fused, unary, trigonometry, special_math, error_function, gamma_functions,
            unary_backward, float_parts, integer_math,
            selection, comparison, reduction,
            cumulative, counting, scans, order_statistics, repetition, statistics, covariance,
            softmax_family,
            linalg, shape, reordering, padding, triangular, joining,
            indexing, gather_scatter, index_writes,
            activation, conversion, inplace, inplace_forms, inplace_views, nn_inplace,
            random_fills, dense,
            convolution, sliding_windows, pooling, avg_pooling, adaptive_pooling, normalization,
            dropout_family, lookup, losses, regression_losses, classification_losses, more_losses,
            ctc, margin_losses, gumbel, sorting,
            resampling, grid_sampling, attention, solvers, decompositions, creation, sampling,
            discrete_sampling, progressions, filling, buffers, windows, introspection,
            shrink_activations, pixel_ops, diagonals, products, matrix_building,
            scatter_reductions, view_scatter,
            matrix_functions, legacy_linalg, triangular_solvers, ldl_decomposition, solver_status,
            rank_and_condition, least_squares, matrix_chain, tensor_equations,
            nan_aware, bessel, modified_bessel, special_functions, incomplete_gamma,
            gamma_sampling, hurwitz_zeta, bessel_jy, orthogonal_polynomials, legacy_norms,
            stacking, instance_normalization, embedding_bag, unpooling, fractional_pooling,
            pairwise, volumetric, volumetric_pooling, aliases, host_methods, inplace_extras,
            strided_views,
            numeric_gradient, multidim_histogram, functional_aliases, complex_parts, fourier,
            general_eigen, short_time_fourier)
"""The op families; each binds the functions its TENSOR_METHODS names onto Tensor."""

install_methods(FAMILIES)

__all__ = sorted({name for family in FAMILIES for name in family.__all__})
"""What ``from gradlab.ops import *`` (and so ``import gradlab``) exports: the functions,
not the family modules (``gradlab.linalg`` is the torch.linalg-style namespace)."""
