"""nn.utils.rnn (pad, pack, unpack) and RNN/LSTM/GRU on packed sequences, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.autograd import gradcheck, gradgradcheck
from gradlab.nn.utils import rnn
from tests.oracle import needs_torch, torch

LENGTHS = [4, 2, 5, 1]  # unsorted on purpose
SORTED = [5, 4, 2, 1]


def _seqs(lib, lengths, features=3, seed=0, grad=True):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((n, features)) for n in lengths]
    return [lib.tensor(a, requires_grad=grad) for a in arrays], arrays


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, gradlab.Tensor) else t.detach().numpy()


def _pad_np(arrays, batch_first=False, value=0.0, side="right"):
    steps = max(len(a) for a in arrays)
    out = np.full((steps, len(arrays), *arrays[0].shape[1:]), value)
    for b, a in enumerate(arrays):
        start = 0 if side == "right" else steps - len(a)
        out[start:start + len(a), b] = a
    return out.swapaxes(0, 1) if batch_first else out


# --- pad_sequence -------------------------------------------------------------------------------

@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence_places_each_sequence_and_fills_the_rest(batch_first, side):
    seqs, arrays = _seqs(gradlab, LENGTHS)
    out = rnn.pad_sequence(seqs, batch_first=batch_first, padding_value=-7.0, padding_side=side)
    np.testing.assert_array_equal(_np(out), _pad_np(arrays, batch_first, -7.0, side))
    out.backward(gradlab.ones(out.shape))
    for s in seqs:  # each real value was used exactly once
        np.testing.assert_array_equal(s.grad.numpy(), np.ones(s.shape))


def test_known_gap_call_works():
    out = gradlab.nn.utils.rnn.pad_sequence([gradlab.ones(2), gradlab.ones(3)], batch_first=True)
    np.testing.assert_array_equal(out.numpy(), [[1, 1, 0], [1, 1, 1]])


def test_pad_sequence_errors():
    with pytest.raises(ValueError, match="padding_side to be one of left or right"):
        rnn.pad_sequence([gradlab.ones(2)], padding_side="middle")
    with pytest.raises(RuntimeError, match=r"sequence 1 has shape \(2, 4\)"):
        rnn.pad_sequence([gradlab.ones(2, 3), gradlab.ones(2, 4)])
    with pytest.raises(RuntimeError, match="empty list"):
        rnn.pad_sequence([])


def test_pad_sequence_gradgradcheck():
    seqs, _ = _seqs(gradlab, [3, 1, 2], features=2)
    assert gradcheck(lambda *s: rnn.pad_sequence(list(s), padding_value=0.5) ** 2, seqs)
    assert gradgradcheck(lambda *s: rnn.pad_sequence(list(s), batch_first=True) ** 2, seqs)


# --- pack / unpack ------------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths,enforce_sorted", [(SORTED, True), (LENGTHS, False)])
def test_pack_padded_sequence_matches_torch(lengths, enforce_sorted, batch_first):
    rng = np.random.default_rng(1)
    shape = (len(lengths), 6, 3) if batch_first else (6, len(lengths), 3)
    x = rng.standard_normal(shape)
    results = []
    for lib in (gradlab, torch):
        xs = lib.tensor(x, requires_grad=True)
        packed = lib.nn.utils.rnn.pack_padded_sequence(
            xs, lib.tensor(lengths), batch_first=batch_first, enforce_sorted=enforce_sorted)
        padded, out_lengths = lib.nn.utils.rnn.pad_packed_sequence(
            packed, batch_first=batch_first, padding_value=2.5, total_length=7)
        (padded * lib.tensor(np.arange(padded.numel()).reshape(padded.shape) / 10)).sum() \
            .backward()
        indices = [None if i is None else _np(i) for i in packed[2:]]
        results.append((_np(packed.data), _np(packed.batch_sizes), indices, _np(padded),
                        _np(out_lengths), _np(xs.grad)))
    ours, theirs = results
    np.testing.assert_allclose(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])
    for a, b in zip(ours[2], theirs[2]):
        assert (a is None and b is None) or np.array_equal(a, b)
    np.testing.assert_allclose(ours[3], theirs[3])
    np.testing.assert_array_equal(ours[4], theirs[4])
    np.testing.assert_allclose(ours[5], theirs[5])


def test_packed_sequence_fields_and_namedtuple_behaviour():
    seqs, arrays = _seqs(gradlab, LENGTHS)
    packed = rnn.pack_sequence(seqs, enforce_sorted=False)
    data, batch_sizes, sorted_indices, unsorted_indices = packed  # unpacks like a namedtuple
    assert batch_sizes.dtype is gradlab.int64 and batch_sizes.tolist() == [4, 3, 2, 2, 1]
    assert sorted_indices.tolist() == [2, 0, 1, 3] and unsorted_indices.tolist() == [1, 2, 0, 3]
    assert data.shape == (sum(LENGTHS), 3)
    assert packed.float().data.dtype is gradlab.float32
    assert packed.double().data.dtype is gradlab.float64
    for got, want in zip(rnn.unpack_sequence(packed), arrays):
        np.testing.assert_array_equal(_np(got), want)
    padded, lengths = rnn.pad_packed_sequence(packed)
    assert lengths.tolist() == LENGTHS
    for got, want in zip(rnn.unpad_sequence(padded, lengths), arrays):
        np.testing.assert_array_equal(_np(got), want)


def test_pack_errors():
    x = gradlab.ones(5, 3, 2)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        rnn.pack_padded_sequence(x, [2, 5, 1])
    with pytest.raises(RuntimeError, match="greater than 0"):
        rnn.pack_padded_sequence(x, [5, 2, 0])
    with pytest.raises(RuntimeError, match="exceeds the 5 steps"):
        rnn.pack_padded_sequence(x, [6, 2, 1])
    with pytest.raises(ValueError, match="3 lengths for a batch of 5"):
        rnn.pack_padded_sequence(x, [3, 2, 1], batch_first=True)
    with pytest.raises(ValueError, match="lengths must be 1-D"):
        rnn.pack_padded_sequence(x, gradlab.tensor([[3, 2, 1]]))
    with pytest.raises(ValueError, match="at least 2-D"):
        rnn.pack_padded_sequence(gradlab.ones(3), [3])
    packed = rnn.pack_padded_sequence(x, [5, 2, 1])
    with pytest.raises(ValueError, match="total_length=4 and max sequence length being 5"):
        rnn.pad_packed_sequence(packed, total_length=4)
    with pytest.raises(TypeError, match="batch_sizes is required"):
        rnn.PackedSequence(gradlab.ones(3, 2))


# --- recurrent layers on packed sequences -------------------------------------------------------

LAYERS = {
    "lstm": lambda lib, **kw: lib.nn.LSTM(3, 4, **kw),
    "gru": lambda lib, **kw: lib.nn.GRU(3, 4, **kw),
    "rnn": lambda lib, **kw: lib.nn.RNN(3, 4, **kw),
}
OPTIONS = [{}, {"num_layers": 2, "bidirectional": True}, {"bidirectional": True,
                                                          "batch_first": True},
           {"proj_size": 2, "bidirectional": True}]


def _twin(kind, **kw):
    theirs = LAYERS[kind](torch, **kw).double()
    ours = LAYERS[kind](gradlab, **kw).double()
    ours.load_state_dict({k: gradlab.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


@needs_torch
@pytest.mark.parametrize("with_hx", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("kind,options", [
    pytest.param(kind, options, id=f"{kind}-{','.join(options) or 'default'}")
    for kind in LAYERS for options in OPTIONS if kind == "lstm" or "proj_size" not in options])
def test_packed_layer_matches_torch(kind, options, enforce_sorted, with_hx):
    ours, theirs = _twin(kind, **options)
    lengths = SORTED if enforce_sorted else LENGTHS
    batch_first = options.get("batch_first", False)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((len(lengths), 5, 3) if batch_first else (5, len(lengths), 3))
    layers = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    h0 = [rng.standard_normal((layers, len(lengths), options.get("proj_size") or 4)),
          rng.standard_normal((layers, len(lengths), 4))]
    results = []
    for lib, layer in ((gradlab, ours), (torch, theirs)):
        xs = lib.tensor(x, requires_grad=True)
        hs = [lib.tensor(h, requires_grad=True) for h in h0]
        hx = None if not with_hx else (tuple(hs) if kind == "lstm" else hs[0])
        packed = lib.nn.utils.rnn.pack_padded_sequence(
            xs, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
        out, final = layer(packed, hx)
        assert isinstance(out, lib.nn.utils.rnn.PackedSequence)
        padded, _ = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first)
        finals = list(final) if kind == "lstm" else [final]
        weights = np.random.default_rng(3)
        loss = sum((t * lib.tensor(weights.standard_normal(tuple(t.shape)))).sum()
                   for t in [padded, *finals])
        loss.backward()
        grads = [xs.grad] + ([h.grad for h in hs[:len(finals)]] if with_hx else []) + \
            [p.grad for p in layer.parameters()]
        results.append([_np(t) for t in [out.data, padded, *finals, *grads]])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def test_packed_gru_gradcheck():
    layer = gradlab.nn.GRU(2, 3, bidirectional=True).double()
    seqs, _ = _seqs(gradlab, [3, 1, 2], features=2)

    def run(*s):
        out, h = layer(rnn.pack_sequence(list(s), enforce_sorted=False))
        return out.data, h

    assert gradcheck(run, seqs)


def test_packed_input_with_wrong_features_raises():
    layer = gradlab.nn.LSTM(3, 4)
    packed = rnn.pack_sequence([gradlab.ones(2, 5), gradlab.ones(1, 5)])
    with pytest.raises(ValueError, match="5 features but the layer was made with input_size=3"):
        layer(packed)
