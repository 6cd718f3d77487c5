"""F.scaled_dot_product_attention: values and gradients vs NumPy and PyTorch, masks, causal,
grouped-query attention, dropout, double backward, and every error it raises."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
import gradlab.nn.functional as F
import tests.oracle as oracle
from gradlab.autograd import gradcheck, gradgradcheck
from gradlab.ops.attention import ScaledDotProductAttention
from tests.oracle import OpCase, cases_by_id, check_jvp, needs_torch, standard_op_tests, torch

if torch is not None:
    torch.set_num_threads(1)

_rng = np.random.default_rng(7)
BOOL_MASK = _rng.random((3, 5)) > 0.4  # True = may attend
BOOL_MASK[1] = False  # query 1 may attend to nothing: zero output and gradients
BOOL_MASK[0, 0] = True


def numpy_attention(np, q, k, v, mask=None, causal=False, scale=None):
    """The reference: softmax(q kᵀ · scale + mask) v, a fully masked row giving 0."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    m = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(m), m, 0))
    total = e.sum(-1, keepdims=True)
    return (e / np.where(total == 0, 1, total)) @ v


def sdpa(lib, *args, **kw):
    return lib.nn.functional.scaled_dot_product_attention(*args, **kw)


def _gqa_numpy(np, q, k, v, mask=None):
    groups = q.shape[-3] // k.shape[-3]
    return numpy_attention(np, q, np.repeat(k, groups, -3), np.repeat(v, groups, -3), mask)


QKV = ((2, 3, 4), (2, 5, 4), (2, 5, 6))  # batch 2, L=3 queries, S=5 keys, E=4, Ev=6
CASES = [
    OpCase("sdpa", lambda lib, q, k, v: sdpa(lib, q, k, v), QKV,
           numpy=lambda np, q, k, v: numpy_attention(np, q, k, v),
           variants=(((3, 4), (5, 4), (5, 6)), ((2, 1, 3, 4), (1, 4, 5, 4), (5, 6)))),
    OpCase("sdpa_scale", lambda lib, q, k, v: sdpa(lib, q, k, v, scale=0.3), QKV,
           numpy=lambda np, q, k, v: numpy_attention(np, q, k, v, scale=0.3)),
    OpCase("sdpa_causal", lambda lib, q, k, v: sdpa(lib, q, k, v, is_causal=True), QKV,
           numpy=lambda np, q, k, v: numpy_attention(np, q, k, v, causal=True),
           variants=(((2, 5, 4), (2, 3, 4), (2, 3, 6)),)),  # L > S: top-left aligned
    OpCase("sdpa_bool_mask",
           lambda lib, q, k, v: sdpa(lib, q, k, v, attn_mask=lib.tensor(BOOL_MASK,
                                                                         device=q.device)),
           QKV, numpy=lambda np, q, k, v: numpy_attention(np, q, k, v, BOOL_MASK)),
    OpCase("sdpa_float_mask", lambda lib, q, k, v, m: sdpa(lib, q, k, v, attn_mask=m),
           QKV + ((3, 5),), numpy=lambda np, q, k, v, m: numpy_attention(np, q, k, v, m),
           variants=(QKV + ((2, 1, 5),),)),
    OpCase("sdpa_gqa", lambda lib, q, k, v: sdpa(lib, q, k, v, enable_gqa=True),
           ((2, 4, 2, 3), (2, 2, 3, 3), (2, 2, 3, 2)), numpy=_gqa_numpy,
           variants=(((3, 2, 3), (1, 3, 3), (1, 3, 2)),)),
    OpCase("sdpa_gqa_mask", lambda lib, q, k, v, m: sdpa(lib, q, k, v, attn_mask=m,
                                                         enable_gqa=True),
           ((1, 4, 2, 3), (1, 2, 3, 3), (1, 2, 3, 2), (4, 2, 3)), numpy=_gqa_numpy,
           variants=(((1, 4, 2, 3), (1, 2, 3, 3), (1, 2, 3, 2), (1, 2, 3)),)),
    OpCase("sdpa_empty_keys", lambda lib, q, k, v: sdpa(lib, q, k, v),
           ((2, 3, 4), (2, 0, 4), (2, 0, 6)),
           numpy=lambda np, q, k, v: np.zeros((2, 3, 6)), strided=False),
]
globals().update(standard_op_tests(CASES))


def test_is_one_node_whose_inputs_are_q_k_v():
    q, k, v = (gradlab.randn(2, n, 4, requires_grad=True) for n in (3, 5, 5))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.grad_fn.name() == "ScaledDotProductAttentionBackward0"
    leaves = [edge[0].variable for edge in out.grad_fn.next_functions[:3]]
    assert leaves[0] is q and leaves[1] is k and leaves[2] is v


def test_causal_and_mask_together_combine():
    """Both given: a query attends where the mask AND causality allow (PyTorch's reference
    formula; its math kernel refuses the pair, its CPU flash kernel combines them)."""
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal(s) for s in QKV)
    ours = F.scaled_dot_product_attention(*map(gradlab.tensor, (q, k, v)),
                                          attn_mask=gradlab.tensor(BOOL_MASK), is_causal=True)
    want = numpy_attention(np, q, k, v, BOOL_MASK & np.tril(np.ones((3, 5), bool)))
    np.testing.assert_allclose(ours.numpy(), want, atol=1e-12)
    assert not np.allclose(want, numpy_attention(np, q, k, v, BOOL_MASK))


def test_fully_masked_row_is_zero_with_zero_gradients():
    q, k, v = (gradlab.randn(*s, dtype=gradlab.float64, requires_grad=True) for s in QKV)
    mask = gradlab.full((3, 5), -math.inf, dtype=gradlab.float64)
    mask[0] = 0.0
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    out.sum().backward()
    assert np.all(out[:, 1:].detach().numpy() == 0)
    assert np.all(q.grad[:, 1:].numpy() == 0)
    assert np.all(np.isfinite(k.grad.numpy()))


def test_large_scores_stay_finite():
    q = gradlab.full((1, 2, 4), 100.0)
    k = gradlab.tensor([[[100.0] * 4, [-100.0] * 4]])
    v = gradlab.tensor([[[1.0], [2.0]]])
    out = F.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(out.numpy(), [[[1.0], [1.0]]])


def test_float32_stays_float32():
    q, k, v = (gradlab.randn(*s) for s in QKV)
    assert F.scaled_dot_product_attention(q, k, v).dtype is gradlab.float32


# --- dropout ----------------------------------------------------------------------------------

def test_dropout_zeroes_weights_with_probability_p_and_scales_the_rest():
    S, p = 8, 0.3
    q = gradlab.zeros(200, 16, 4)  # uniform weights 1/S; v = identity reads them back
    out = F.scaled_dot_product_attention(q, gradlab.randn(200, S, 4), gradlab.eye(S),
                                         dropout_p=p).numpy()
    kept = out != 0
    assert abs(1 - kept.mean() - p) < 0.02
    np.testing.assert_allclose(out[kept], 1 / (S * (1 - p)), rtol=1e-6)


def test_dropout_repeats_under_manual_seed_and_differs_otherwise():
    q, k, v = (gradlab.randn(*s) for s in QKV)
    gradlab.manual_seed(5)
    first = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    gradlab.manual_seed(5)
    repeat = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    np.testing.assert_array_equal(first, repeat)
    assert not np.array_equal(first, again)


def test_dropout_p_one_gives_zeros_and_p_zero_is_exact():
    q, k, v = (gradlab.randn(*s) for s in QKV)
    assert np.all(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy() == 0)
    np.testing.assert_array_equal(F.scaled_dot_product_attention(q, k, v, dropout_p=0.0).numpy(),
                                  F.scaled_dot_product_attention(q, k, v).numpy())


@pytest.mark.parametrize("gqa", [False, True])
def test_dropout_gradients_and_second_derivatives_check(gqa):
    shapes = ((2, 4, 3, 3), (2, 2, 4, 3), (2, 2, 4, 2)) if gqa else QKV
    inputs = [gradlab.randn(*s, dtype=gradlab.float64, requires_grad=True) for s in shapes]

    def fn(q, k, v):
        gradlab.manual_seed(11)  # the same dropout mask at every evaluation
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.4, enable_gqa=gqa)

    assert gradcheck(fn, inputs, atol=1e-6, rtol=1e-4)
    assert gradgradcheck(fn, inputs, atol=1e-5, rtol=1e-3)


def seeded_sdpa(lib, *args, **kw):
    lib.manual_seed(11)  # the same dropout mask at every evaluation
    return sdpa(lib, *args, **kw)


# Rows PyTorch can't check: dropout masks come from gradlab's generator (PyTorch draws others),
# and the attention weights P are an output of gradlab's node only (MultiheadAttention's
# need_weights). Their tangents are checked against finite differences of gradlab alone.
GRADLAB_ONLY = [
    OpCase("sdpa_dropout", lambda lib, q, k, v: seeded_sdpa(lib, q, k, v, dropout_p=0.4), QKV),
    OpCase("sdpa_dropout_gqa_float_mask", lambda lib, q, k, v, m: seeded_sdpa(
        lib, q, k, v, attn_mask=m, dropout_p=0.3, enable_gqa=True),
           ((2, 4, 3, 3), (2, 2, 4, 3), (2, 2, 4, 2), (4, 3, 4))),
    OpCase("sdpa_node_outputs_and_weights", lambda lib, q, k, v: ScaledDotProductAttention.apply(
        q, k, v, None, True, 0.5, 1, None, 1.0), ((3, 4), (2, 5, 4), (5, 6))),
]


@cases_by_id(GRADLAB_ONLY)
def test_jvp_of_gradlab_only_rows_matches_finite_differences(case, device, monkeypatch):
    monkeypatch.setattr(oracle, "torch", None)
    check_jvp(case, device)


# --- errors -----------------------------------------------------------------------------------

def _t(*shape, dtype=None):
    return gradlab.zeros(*shape, dtype=dtype)


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((_t(4), _t(5, 4), _t(5, 6)), {}, RuntimeError, "at least 2 dimensional.*query.dim: 1"),
    ((_t(3, 4), _t(5, 4, dtype=gradlab.float64), _t(5, 6)), {}, RuntimeError,
     "same dtype.*key.dtype: gradlab.float64"),
    ((_t(3, 4, dtype=gradlab.int64),) * 3, {}, RuntimeError, "floating point"),
    ((_t(3, 4), _t(5, 4), _t(5, 6)), {"attn_mask": _t(3, 5, dtype=gradlab.float64)},
     RuntimeError, "attn_mask dtype to be bool or to match query dtype"),
    ((_t(3, 4), _t(5, 4), _t(5, 6)), {"attn_mask": _t(3, 5, dtype=gradlab.int64)},
     RuntimeError, "attn_mask dtype"),
    ((_t(3, 4), _t(5, 4), _t(5, 6)), {"dropout_p": 1.5}, ValueError,
     "between 0 and 1, but got 1.5"),
    ((_t(3, 4), _t(5, 3), _t(5, 6)), {}, RuntimeError, "same embedding size"),
    ((_t(3, 4), _t(5, 4), _t(6, 6)), {}, RuntimeError, "same sequence length"),
    ((_t(2, 6, 3, 4), _t(2, 4, 5, 4), _t(2, 4, 5, 6)), {"enable_gqa": True}, RuntimeError,
     "multiple of the key/value heads"),
    ((_t(2, 6, 3, 4), _t(2, 2, 5, 4), _t(2, 3, 5, 6)), {"enable_gqa": True}, RuntimeError,
     "key 2, value 3 heads"),
    ((_t(2, 6, 3, 4), _t(2, 2, 5, 4), _t(2, 2, 5, 6)), {}, RuntimeError,
     "don't broadcast together.*enable_gqa=True"),
    ((_t(3, 3, 4), _t(2, 5, 4), _t(2, 5, 6)), {}, RuntimeError, "don't broadcast together"),
    ((_t(3, 4), _t(5, 4), _t(5, 6)), {"attn_mask": _t(3, 4, dtype=gradlab.bool)},
     RuntimeError, r"attn_mask of shape \(3, 4\) can't be broadcast.*\(3, 5\)"),
    ((_t(3, 4), _t(5, 4), _t(5, 6)), {"attn_mask": _t(2, 3, 5)}, RuntimeError,
     r"attn_mask of shape \(2, 3, 5\)"),
])
def test_errors(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        F.scaled_dot_product_attention(*args, **kwargs)


@needs_torch
def test_torch_rejects_what_we_reject():
    """The error cases above are errors in PyTorch too (a sample of them)."""
    tf = torch.nn.functional
    with pytest.raises(RuntimeError):
        tf.scaled_dot_product_attention(torch.zeros(3, 4), torch.zeros(5, 4),
                                        torch.zeros(5, 6), attn_mask=torch.zeros(3, 5).double())
    with pytest.raises(RuntimeError):
        tf.scaled_dot_product_attention(torch.zeros(2, 6, 3, 4), torch.zeros(2, 2, 5, 4),
                                        torch.zeros(2, 2, 5, 6))
    with pytest.raises(RuntimeError):
        tf.scaled_dot_product_attention(torch.zeros(4), torch.zeros(5, 4), torch.zeros(5, 6))
