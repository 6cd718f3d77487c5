"""MultiheadAttention and the Transformer layers: PyTorch's numbers, gradients, parameter
names, reprs and initialisation, and the errors they raise."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
from gradlab import nn
from tests.oracle import needs_torch, torch

if torch is not None:
    torch.set_num_threads(1)

PADDING = [[False, False, False, False, True], [False] * 5, [True, False, False, False, True]]


def _twin(make, train=False):
    """A gradlab and a PyTorch module (float64) with the same weights."""
    theirs = make(torch).double()
    ours = make(gradlab).double()
    ours.load_state_dict({k: gradlab.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    if not train:
        ours.eval()
        theirs.eval()
    return ours, theirs


def _compare(make, shapes, same_input=False, kwargs=lambda lib: {}):
    """Outputs, input gradients and parameter gradients agree with PyTorch's."""
    ours, theirs = _twin(make)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    results = []
    for lib, module in ((gradlab, ours), (torch, theirs)):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = module(*([xs[0]] * 3 if same_input else xs), **kwargs(lib))
        outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o is not None]
        (outs[0] * outs[0].cos()).sum().backward()
        results.append(outs + [x.grad for x in xs] + [p.grad for p in module.parameters()])
    assert len(results[0]) == len(results[1])
    for a, b in zip(*results):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9,
                                   atol=1e-11)
    return results[0]


def _mha(**kw):
    return lambda lib: lib.nn.MultiheadAttention(8, 2, **kw)


def _causal(lib, n=4):
    return lib.nn.Transformer.generate_square_subsequent_mask(n, dtype=lib.float64)


# --- MultiheadAttention ---------------------------------------------------------------------

MHA_CASES = {
    "self": (_mha(), [(4, 3, 8)], True, lambda lib: {}),
    "cross": (_mha(), [(4, 3, 8), (5, 3, 8), (5, 3, 8)], False, lambda lib: {}),
    "kdim-vdim": (_mha(kdim=5, vdim=6), [(4, 3, 8), (5, 3, 5), (5, 3, 6)], False,
                  lambda lib: {}),
    "batch-first-padding-per-head": (
        _mha(batch_first=True), [(3, 4, 8), (3, 5, 8), (3, 5, 8)], False,
        lambda lib: {"key_padding_mask": lib.tensor(PADDING),
                     "average_attn_weights": False}),
    "bool-attn-mask": (_mha(), [(4, 3, 8), (5, 3, 8), (5, 3, 8)], False,
                       lambda lib: {"attn_mask": lib.tensor(np.triu(np.ones((4, 5), bool), 2))}),
    "3d-float-mask-bias-kv-zero-attn": (
        _mha(add_bias_kv=True, add_zero_attn=True), [(4, 3, 8), (5, 3, 8), (5, 3, 8)], False,
        lambda lib: {"key_padding_mask": lib.tensor(PADDING, dtype=lib.float64) * -1e9,
                     "attn_mask": lib.tensor(np.random.default_rng(1).standard_normal((6, 4, 5)))}),
    "no-weights-causal-hint": (_mha(bias=False), [(4, 3, 8)], True,
                               lambda lib: {"attn_mask": _causal(lib), "is_causal": True,
                                            "need_weights": False}),
    "unbatched": (_mha(), [(4, 8), (5, 8), (5, 8)], False,
                  lambda lib: {"key_padding_mask": lib.tensor(PADDING[0]),
                               "attn_mask": lib.zeros(2, 4, 5, dtype=lib.bool)}),
    "unbatched-batch-first": (_mha(batch_first=True), [(4, 8)], True, lambda lib: {}),
}


@needs_torch
@pytest.mark.parametrize("case", list(MHA_CASES))
def test_multihead_attention_matches_torch(case):
    make, shapes, same, kwargs = MHA_CASES[case]
    _compare(make, shapes, same, kwargs)


@needs_torch
def test_weights_are_averaged_over_heads_and_rows_sum_to_one():
    results = _compare(_mha(), [(4, 3, 8), (5, 3, 8), (5, 3, 8)])
    weights = results[1].detach().numpy()
    assert weights.shape == (3, 4, 5)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-12)


def test_need_weights_false_returns_none():
    mha = nn.MultiheadAttention(8, 2)
    x = gradlab.randn(4, 3, 8)
    out, weights = mha(x, x, x, need_weights=False)
    assert weights is None and tuple(out.shape) == (4, 3, 8)


def test_self_attention_is_one_attention_node():
    mha = nn.MultiheadAttention(8, 2)
    x = gradlab.randn(4, 3, 8)
    out, _ = mha(x, x, x)
    names, stack, seen = [], [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name())
        stack.extend(edge[0] for edge in node.next_functions if edge is not None)
    assert names.count("ScaledDotProductAttentionBackward0") == 1


@needs_torch
@pytest.mark.parametrize("kw", [{}, {"kdim": 5, "vdim": 6}, {"bias": False},
                                {"add_bias_kv": True}])
def test_parameter_names_shapes_and_repr_match_torch(kw):
    ours, theirs = nn.MultiheadAttention(8, 2, **kw), torch.nn.MultiheadAttention(8, 2, **kw)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert repr(ours) == repr(theirs)
    assert (ours.in_proj_weight is None) == (theirs.in_proj_weight is None)
    assert ours.head_dim == theirs.head_dim == 4


def test_initialisation_is_xavier_uniform_with_zero_biases():
    mha = nn.MultiheadAttention(64, 4)
    w = mha.in_proj_weight.detach().numpy()
    bound = math.sqrt(6 / (64 + 3 * 64))  # fan_in 64, fan_out 192
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.all(mha.in_proj_bias.detach().numpy() == 0)
    assert np.all(mha.out_proj.bias.detach().numpy() == 0)
    assert isinstance(mha.out_proj, nn.Linear)


def test_dropout_acts_in_training_only_and_weights_show_it():
    mha = nn.MultiheadAttention(8, 2, dropout=0.5)
    x = gradlab.randn(6, 2, 8)
    mha.eval()
    out_eval, w_eval = mha(x, x, x)
    again, _ = mha(x, x, x)
    np.testing.assert_array_equal(out_eval.detach().numpy(), again.detach().numpy())
    mha.train()
    out_train, w_train = mha(x, x, x, average_attn_weights=False)
    assert not np.allclose(out_train.detach().numpy(), out_eval.detach().numpy())
    w = w_train.detach().numpy()
    assert 0.3 < (w == 0).mean() < 0.7  # the weights returned are the ones applied
    assert np.allclose(w_eval.detach().numpy().sum(-1), 1, rtol=1e-5)


# --- Transformer layers -------------------------------------------------------------------------

def _encoder_layer(**kw):
    return lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, **kw)


def _decoder_layer(**kw):
    return lambda lib: lib.nn.TransformerDecoderLayer(8, 2, 16, **kw)


LAYER_CASES = {
    "encoder-layer": (_encoder_layer(), [(4, 3, 8)], lambda lib: {}),
    "encoder-layer-norm-first-gelu-batch-first": (
        _encoder_layer(norm_first=True, activation="gelu", batch_first=True), [(3, 4, 8)],
        lambda lib: {"src_mask": _causal(lib), "src_key_padding_mask": lib.tensor(
            [row[:4] for row in PADDING])}),
    "encoder-layer-module-activation-no-bias": (
        lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, activation=lib.nn.GELU(),
                                                   bias=False), [(4, 3, 8)],
        lambda lib: {"src_mask": _causal(lib), "is_causal": True}),
    "encoder": (lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16),
                                                      2, norm=lib.nn.LayerNorm(8),
                                                      enable_nested_tensor=False),
                [(4, 3, 8)], lambda lib: {"mask": _causal(lib)}),
    "decoder-layer": (_decoder_layer(), [(4, 3, 8), (5, 3, 8)],
                      lambda lib: {"tgt_mask": _causal(lib),
                                   "memory_key_padding_mask": lib.tensor(PADDING)}),
    "decoder-norm-first": (lambda lib: lib.nn.TransformerDecoder(
        lib.nn.TransformerDecoderLayer(8, 2, 16, norm_first=True), 2, norm=lib.nn.LayerNorm(8)),
        [(4, 3, 8), (5, 3, 8)], lambda lib: {"tgt_mask": _causal(lib), "tgt_is_causal": True}),
    "transformer": (lambda lib: lib.nn.Transformer(8, 2, 1, 2, 16), [(5, 3, 8), (4, 3, 8)],
                    lambda lib: {"tgt_mask": _causal(lib)}),
    "transformer-batch-first-unbatched": (
        lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16, batch_first=True), [(5, 8), (4, 8)],
        lambda lib: {}),
}


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's nested-tensor notices
@pytest.mark.parametrize("case", list(LAYER_CASES))
def test_transformer_layers_match_torch_in_eval_mode(case):
    make, shapes, kwargs = LAYER_CASES[case]
    _compare(make, shapes, kwargs=kwargs)


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.TransformerEncoderLayer(8, 2),
    lambda lib: lib.nn.TransformerEncoderLayer(8, 2, activation=lib.nn.GELU()),
    lambda lib: lib.nn.TransformerDecoderLayer(8, 2, 16, batch_first=True),
    lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16), 2),
    lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16),
], ids=["encoder-layer", "gelu-module", "decoder-layer", "encoder", "transformer"])
def test_state_dict_keys_and_repr_match_torch(make):
    ours, theirs = make(gradlab), make(torch)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert repr(ours) == repr(theirs)


def test_encoder_layers_are_independent_copies():
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2)
    first, second = encoder.layers[0].linear1.weight, encoder.layers[1].linear1.weight
    assert first is not second
    np.testing.assert_array_equal(first.detach().numpy(), second.detach().numpy())
    assert len(list(encoder.parameters())) == 2 * len(list(encoder.layers[0].parameters()))


def test_transformer_reinitialises_every_matrix_xavier_uniform():
    model = nn.Transformer(16, 2, 1, 1, 32)
    w = model.encoder.layers[0].linear1.weight.detach().numpy()  # (32, 16)
    assert np.abs(w).max() <= math.sqrt(6 / 48)
    assert np.abs(w).max() > 0.9 * math.sqrt(6 / 48)


def test_training_mode_dropout_is_reproducible():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3)
    x = gradlab.randn(4, 3, 8)
    gradlab.manual_seed(1)
    a = layer(x).detach().numpy()
    gradlab.manual_seed(1)
    b = layer(x).detach().numpy()
    np.testing.assert_array_equal(a, b)
    layer.eval()
    assert not np.allclose(a, layer(x).detach().numpy())


@needs_torch
def test_generate_square_subsequent_mask_matches_torch():
    ours = nn.Transformer.generate_square_subsequent_mask(4)
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(4)
    assert ours.dtype is gradlab.float32
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_a_small_transformer_learns_to_copy():
    """End to end: a tiny encoder learns to reproduce its input through attention."""
    gradlab.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    optimizer = gradlab.optim.Adam(layer.parameters(), lr=1e-2)
    x = gradlab.randn(4, 5, 8)
    target = x.flip(1)
    first = None
    for _ in range(60):
        loss = ((layer(x) - target) ** 2).mean()
        first = first if first is not None else loss.item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.5 * first


# --- errors -----------------------------------------------------------------------------------

def test_constructor_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="must be greater than 0.*num_heads=0"):
        nn.MultiheadAttention(8, 0)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


def _x(*shape, dtype=None):
    return gradlab.zeros(*shape, dtype=dtype)


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((_x(3), _x(3), _x(3)), {}, AssertionError, "unbatched 2D or batched 3D.*1-D query"),
    ((_x(4, 3, 8), _x(5, 8), _x(5, 8)), {}, AssertionError,
     "expected `key` and `value` to be 3-D but found 2-D"),
    ((_x(4, 3, 8), _x(5, 3, 8), _x(5, 3, 8)), {"key_padding_mask": _x(3, dtype=gradlab.bool)},
     AssertionError, "`key_padding_mask` to be None or 2-D"),
    ((_x(4, 3, 8), _x(5, 3, 8), _x(5, 3, 8)), {"attn_mask": _x(1, 1, 4, 5)}, AssertionError,
     "`attn_mask` to be None, 2-D"),
    ((_x(4, 8), _x(5, 8), _x(5, 8)), {"attn_mask": _x(3, 4, 5)}, AssertionError,
     r"`attn_mask` shape to be \(2, 4, 5\)"),
    ((_x(4, 3, 6), _x(5, 3, 6), _x(5, 3, 6)), {}, AssertionError,
     "expecting embedding dimension of 8"),
    ((_x(4, 3, 8), _x(5, 3, 8), _x(6, 3, 8)), {}, AssertionError,
     r"key's sequence and batch dims \(5, 3\) do not match value's \(6, 3\)"),
    ((_x(4, 3, 8), _x(5, 3, 8), _x(5, 3, 8)), {"is_causal": True}, RuntimeError,
     "Need attn_mask if specifying the is_causal hint"),
    ((_x(4, 3, 8), _x(5, 3, 8), _x(5, 3, 8)), {"attn_mask": _x(4, 4)}, RuntimeError,
     r"2D attn_mask is \(4, 4\), but should be \(4, 5\)"),
    ((_x(4, 3, 8), _x(5, 3, 8), _x(5, 3, 8)), {"attn_mask": _x(3, 4, 5)}, RuntimeError,
     r"3D attn_mask is \(3, 4, 5\), but should be \(6, 4, 5\)"),
    ((_x(4, 3, 8), _x(5, 3, 8), _x(5, 3, 8)), {"key_padding_mask": _x(3, 4)}, AssertionError,
     r"key_padding_mask shape of \(3, 5\)"),
    ((_x(4, 3, 8), _x(5, 3, 8), _x(5, 3, 8)), {"attn_mask": _x(4, 5, dtype=gradlab.int64)},
     AssertionError, "only bool and floating types of attn_mask"),
])
def test_multihead_attention_errors(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        nn.MultiheadAttention(8, 2)(*args, **kwargs)


def test_transformer_forward_errors():
    model = nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="batch number of src and tgt must be equal"):
        model(_x(5, 3, 8), _x(4, 2, 8))
    with pytest.raises(RuntimeError, match="feature number of src and tgt must be equal to "
                                           "d_model=8"):
        model(_x(5, 3, 8), _x(4, 3, 6))
