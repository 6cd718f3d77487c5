"""Recurrent layers and cells: shapes, PyTorch's numbers and gradients, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab import nn
from gradlab.autograd import gradcheck
from tests.oracle import needs_torch, torch

LAYERS = {
    "rnn-tanh": lambda lib, **kw: lib.nn.RNN(3, 4, **kw),
    "rnn-relu": lambda lib, **kw: lib.nn.RNN(3, 4, nonlinearity="relu", **kw),
    "gru": lambda lib, **kw: lib.nn.GRU(3, 4, **kw),
    "lstm": lambda lib, **kw: lib.nn.LSTM(3, 4, **kw),
}
OPTIONS = [
    {},
    {"num_layers": 2},
    {"bidirectional": True},
    {"num_layers": 2, "bidirectional": True, "batch_first": True},
    {"bias": False},
]


def _twin(kind, **kw):
    """A gradlab layer and a PyTorch layer with the same weights (float64)."""
    theirs = LAYERS[kind](torch, **kw).double()
    ours = LAYERS[kind](gradlab, **kw).double()
    ours.load_state_dict({k: gradlab.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def _states(kind, layers, batch, size, rng, batched=True):
    shape = (layers, batch, size) if batched else (layers, size)
    h = rng.standard_normal(shape)
    return (h, rng.standard_normal(shape)) if kind == "lstm" else (h,)


def _as(lib, arrays, grad=True):
    return tuple(lib.tensor(a, requires_grad=grad) for a in arrays)


@needs_torch
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "default")
@pytest.mark.parametrize("kind", list(LAYERS))
def test_layer_matches_torch(kind, options):
    ours, theirs = _twin(kind, **options)
    rng = np.random.default_rng(0)
    seq, batch = 5, 2
    x = rng.standard_normal((batch, seq, 3) if options.get("batch_first") else (seq, batch, 3))
    layers = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    states = _states(kind, layers, batch, 4, rng)
    results = []
    for lib, layer in ((gradlab, ours), (torch, theirs)):
        xs, hs = _as(lib, (x,)), _as(lib, states)
        out, final = layer(xs[0], hs if kind == "lstm" else hs[0])
        finals = final if kind == "lstm" else (final,)
        loss = (out ** 2).sum() + sum((f * f.cos()).sum() for f in finals)
        loss.backward()
        grads = [t.grad for t in xs + hs] + [p.grad for p in layer.parameters()]
        results.append(([out, *finals], grads))
    for a, b in zip(results[0][0] + results[0][1], results[1][0] + results[1][1]):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9,
                                   atol=1e-11)


@needs_torch
@pytest.mark.parametrize("kind", list(LAYERS))
def test_unbatched_input_and_default_states_match_torch(kind):
    ours, theirs = _twin(kind)
    x = np.random.default_rng(1).standard_normal((6, 3))
    out_g, final_g = ours(gradlab.tensor(x))
    out_t, final_t = theirs(torch.tensor(x))
    assert tuple(out_g.shape) == tuple(out_t.shape) == (6, 4)
    np.testing.assert_allclose(out_g.detach().numpy(), out_t.detach().numpy(), rtol=1e-10)
    finals_g = final_g if kind == "lstm" else (final_g,)
    finals_t = final_t if kind == "lstm" else (final_t,)
    for a, b in zip(finals_g, finals_t):
        assert tuple(a.shape) == (1, 4)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10)


@needs_torch
def test_lstm_projection_matches_torch():
    theirs = torch.nn.LSTM(3, 5, num_layers=2, proj_size=2).double()
    ours = nn.LSTM(3, 5, num_layers=2, proj_size=2).double()
    ours.load_state_dict({k: gradlab.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(2).standard_normal((4, 2, 3))
    (out_g, (h_g, c_g)), (out_t, (h_t, c_t)) = ours(gradlab.tensor(x)), theirs(torch.tensor(x))
    assert tuple(h_g.shape) == (2, 2, 2) and tuple(c_g.shape) == (2, 2, 5)
    for a, b in ((out_g, out_t), (h_g, h_t), (c_g, c_t)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10)


CELLS = {
    "rnn": lambda lib: lib.nn.RNNCell(3, 4),
    "rnn-relu-nobias": lambda lib: lib.nn.RNNCell(3, 4, bias=False, nonlinearity="relu"),
    "gru": lambda lib: lib.nn.GRUCell(3, 4),
    "lstm": lambda lib: lib.nn.LSTMCell(3, 4),
}


@needs_torch
@pytest.mark.parametrize("kind", list(CELLS))
@pytest.mark.parametrize("batched", [True, False])
def test_cell_matches_torch(kind, batched):
    theirs = CELLS[kind](torch).double()
    ours = CELLS[kind](gradlab).double()
    ours.load_state_dict({k: gradlab.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3) if batched else (3,))
    states = [rng.standard_normal((2, 4) if batched else (4,))
              for _ in range(2 if kind == "lstm" else 1)]
    results = []
    for lib, cell in ((gradlab, ours), (torch, theirs)):
        xs, hs = _as(lib, (x,)), _as(lib, states)
        out = cell(xs[0], hs if kind == "lstm" else hs[0])
        outs = out if kind == "lstm" else (out,)
        sum((o * o.sin()).sum() for o in outs).backward()
        results.append([*outs, *(t.grad for t in xs + hs),
                        *(p.grad for p in cell.parameters())])
    for a, b in zip(*results):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9,
                                   atol=1e-12)


@pytest.mark.parametrize("kind", list(LAYERS))
def test_gradients_pass_gradcheck(kind):
    layer = LAYERS[kind](gradlab, num_layers=2, bidirectional=True).double()
    rng = np.random.default_rng(4)
    x = gradlab.tensor(rng.standard_normal((3, 2, 3)), requires_grad=True)
    h = _as(gradlab, _states(kind, 4, 2, 4, rng))

    def run(x, *h):
        out, final = layer(x, tuple(h) if kind == "lstm" else h[0])
        return out, *(final if kind == "lstm" else (final,))

    assert gradcheck(run, (x, *h))


def test_state_dict_names_and_shapes_follow_pytorch():
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    shapes = {k: tuple(v.shape) for k, v in lstm.state_dict().items()}
    assert shapes["weight_ih_l0"] == (16, 3)
    assert shapes["weight_hh_l0"] == (16, 2)
    assert shapes["weight_hr_l0_reverse"] == (2, 4)
    assert shapes["weight_ih_l1"] == (16, 4)  # both directions' projected outputs
    assert shapes["bias_hh_l1_reverse"] == (16,)
    assert len(shapes) == 2 * 2 * 5
    assert len(lstm.all_weights) == 4 and len(lstm.all_weights[0]) == 5


def test_init_is_uniform_within_one_over_sqrt_hidden():
    gradlab.manual_seed(0)
    gru = nn.GRU(10, 100)
    bound = 1 / 100 ** 0.5
    for p in gru.parameters():
        values = p.detach().numpy()
        assert values.min() >= -bound and values.max() <= bound
        assert values.std() > 0.8 * bound / 3 ** 0.5  # U(-b, b) has std b/√3


def test_batch_first_only_moves_the_batch_dim():
    gradlab.manual_seed(1)
    rnn = nn.RNN(3, 4, batch_first=True).double()
    x = gradlab.randn(2, 5, 3, dtype=gradlab.float64)
    out_first, h_first = rnn(x)
    rnn.batch_first = False
    out_seq, h_seq = rnn(x.transpose(0, 1))
    assert tuple(out_first.shape) == (2, 5, 4)
    np.testing.assert_allclose(out_first.detach().numpy(),
                               out_seq.transpose(0, 1).detach().numpy())
    np.testing.assert_allclose(h_first.detach().numpy(), h_seq.detach().numpy())


def test_dropout_between_layers_only_while_training():
    gradlab.manual_seed(2)
    gru = nn.GRU(3, 4, num_layers=2, dropout=0.5).double()
    x = gradlab.randn(5, 2, 3, dtype=gradlab.float64)
    gru.eval()
    plain = gru(x)[0].detach().numpy()
    np.testing.assert_array_equal(gru(x)[0].detach().numpy(), plain)
    gru.train()
    gradlab.manual_seed(3)
    first = gru(x)[0].detach().numpy()
    gradlab.manual_seed(3)
    np.testing.assert_array_equal(gru(x)[0].detach().numpy(), first)  # reproducible
    assert not np.allclose(first, plain)


@needs_torch
def test_repr_matches_torch():
    for make in (lambda lib: lib.nn.RNN(10, 20, num_layers=2, nonlinearity="relu",
                                        batch_first=True, dropout=0.5, bidirectional=True),
                 lambda lib: lib.nn.LSTM(3, 4, proj_size=2, bias=False),
                 lambda lib: lib.nn.GRU(3, 4),
                 lambda lib: lib.nn.RNNCell(3, 4, bias=False, nonlinearity="relu"),
                 lambda lib: lib.nn.LSTMCell(3, 4)):
        assert repr(make(gradlab)) == repr(make(torch))


def test_module_path_reaches_the_ops():
    from gradlab import events

    model = nn.Sequential(nn.LSTM(3, 4))
    seen = set()
    with events.subscribe(lambda e: seen.add(e.module) if isinstance(e, events.OpForward)
                          else None):
        model(gradlab.randn(2, 1, 3))
    assert seen == {"0"}  # every op ran inside the LSTM, child "0" of the Sequential


@pytest.mark.parametrize("make, call, match", [
    (lambda: nn.LSTM(3, 4), lambda m: m(gradlab.randn(5, 2, 7)),
     r"LSTM: input has 7 features but the layer was made with input_size=3"),
    (lambda: nn.GRU(3, 4), lambda m: m(gradlab.randn(5, 3)[None, None]),
     r"GRU: expected input of shape \(seq, batch, features\)"),
    (lambda: nn.RNN(3, 4, num_layers=2), lambda m: m(gradlab.randn(5, 2, 3),
                                                     gradlab.zeros(1, 2, 4)),
     r"RNN: h_0 must have shape \(2, 2, 4\) \(num_layers, batch, hidden_size\), got \(1, 2, 4\)"),
    (lambda: nn.LSTM(3, 4), lambda m: m(gradlab.randn(5, 2, 3), gradlab.zeros(1, 2, 4)),
     r"LSTM: hx must be a pair \(h_0, c_0\)"),
    (lambda: nn.RNN(3, 4, batch_first=True), lambda m: m(gradlab.randn(2, 0, 3)),
     r"RNN: the input sequence is empty \(0 steps\)"),
    (lambda: nn.LSTMCell(3, 4), lambda m: m(gradlab.randn(2, 3), (gradlab.zeros(3, 4),) * 2),
     r"LSTMCell: hidden state must have shape \(2, 4\)"),
    (lambda: nn.GRUCell(3, 4), lambda m: m(gradlab.randn(2, 5)),
     r"GRUCell: input has 5 features but the cell was made with input_size=3"),
])
def test_errors_say_what_to_fix(make, call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call(make())


@pytest.mark.parametrize("make, match", [
    (lambda: nn.RNN(3, 4, nonlinearity="sigmoid"), r"RNN: unknown nonlinearity 'sigmoid'"),
    (lambda: nn.LSTM(0, 4), r"LSTM: input_size must be a positive integer, got 0"),
    (lambda: nn.GRU(3, 4, num_layers=0), r"GRU: num_layers must be a positive integer"),
    (lambda: nn.GRU(3, 4, dropout=1.5), r"GRU: dropout must be a number in \[0, 1\]"),
    (lambda: nn.LSTM(3, 4, proj_size=4),
     r"LSTM: proj_size must be 0, or \(LSTM only\) between 1 and hidden_size - 1 = 3"),
])
def test_bad_arguments_are_refused(make, match):
    with pytest.raises(ValueError, match=match):
        make()
