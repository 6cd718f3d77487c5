"""Recurrent layers: RNN, LSTM, GRU, and their single-step ``Cell`` forms.

A recurrent layer applies one *cell* at every time step, carrying a hidden
state ``h`` (and for the LSTM a cell state ``c``) from step to step::

    RNN   h' = tanh(W_ih x + b_ih + W_hh h + b_hh)          (or relu)
    GRU   r = σ(W_ir x + b_ir + W_hr h + b_hr)
          z = σ(W_iz x + b_iz + W_hz h + b_hz)
          n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
          h' = (1 − z) ⊙ n + z ⊙ h
    LSTM  i, f, g, o = σ(·), σ(·), tanh(·), σ(·) of W_i* x + b_i* + W_h* h + b_h*
          c' = f ⊙ c + i ⊙ g,   h' = o ⊙ tanh(c')          (then h' = W_hr h' with proj_size)

The gates of one cell are stacked in one weight (PyTorch's layout and
state_dict names: ``weight_ih_l0`` is ``[W_ii; W_if; W_ig; W_io]`` for the
LSTM), so a step is two matmuls. The input half ``W_ih x + b_ih`` does not
depend on ``h``, so a layer computes it for all time steps in one matmul
before the loop; only ``W_hh h`` runs step by step. Backward needs nothing
special: autograd unrolls the loop (backpropagation through time).
A layer also takes a :class:`~gradlab.nn.utils.rnn.PackedSequence` (sequences
of different lengths): step t then runs on the rows still running.
"""

from __future__ import annotations

import math

from ... import ops
from ...ops.dense import linear
from ...ops.dropout_family import dropout as _dropout
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# --- one time step of each cell; ``gi`` is W_ih x + b_ih, already computed ----------------------

def _rnn_step(gi, h, w_hh, b_hh, activation):
    return activation(gi + linear(h, w_hh, b_hh))


def _gru_step(gi, h, w_hh, b_hh):
    gh = linear(h, w_hh, b_hh)
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return n + z * (h - n)  # (1 − z) n + z h, one op fewer


def _lstm_step(gi, h, c, w_hh, b_hh, w_hr):
    gates = gi + linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:
        h = linear(h, w_hr)
    return h, c


def _activation(nonlinearity: str, who: str):
    if nonlinearity == "tanh":
        return ops.tanh
    if nonlinearity == "relu":
        return ops.relu
    raise ValueError(f"{who}: unknown nonlinearity {nonlinearity!r}; use 'tanh' or 'relu'")


# --- cells ----------------------------------------------------------------------------------

class RNNCellBase(Module):
    """What the three cells share: the stacked gate weights and their initialisation."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        _check_sizes(type(self).__name__, input_size, hidden_size)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(ops.empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(ops.empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(ops.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(ops.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias from U(−1/√hidden, 1/√hidden), as PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, hx, n_states: int):
        """Check ``input`` ((batch, input_size) or (input_size,)); default states to zeros."""
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: expected input of shape (batch, {self.input_size}) or "
                             f"({self.input_size},), got {tuple(input.shape)}")
        if input.shape[-1] != self.input_size:
            raise ValueError(f"{name}: input has {input.shape[-1]} features but the cell was "
                             f"made with input_size={self.input_size} "
                             f"(input {tuple(input.shape)})")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
        states = hx if isinstance(hx, tuple) else (hx,) * n_states
        expected = (input.shape[0], self.hidden_size)
        out = []
        for s in states:
            if s is None:
                s = ops.zeros(*expected, dtype=input.dtype, device=input.device)
            else:
                if not batched:
                    s = s.unsqueeze(0)
                if tuple(s.shape) != expected:
                    raise ValueError(f"{name}: hidden state must have shape {expected} to "
                                     f"match input {tuple(input.shape)}, got "
                                     f"{tuple(s.shape) if batched else tuple(s.shape[1:])}")
            out.append(s)
        return input, out, batched


class RNNCell(RNNCellBase):
    """One step of the Elman RNN: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        act = _activation(nonlinearity, "RNNCell")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity
        self._act = act

    def forward(self, input, hx=None):
        input, (h,), batched = self._prepare(input, hx, 1)
        h = _rnn_step(linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh,
                      self.bias_hh, self._act)
        return h if batched else h.squeeze(0)


class GRUCell(RNNCellBase):
    """One step of the gated recurrent unit (see the module docstring for its gates)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, (h,), batched = self._prepare(input, hx, 1)
        h = _gru_step(linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh,
                      self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of the LSTM; ``hx`` is the pair ``(h, c)``, and so is the result."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        if hx is not None and not (isinstance(hx, tuple) and len(hx) == 2):
            raise TypeError("LSTMCell: hx must be a pair (h, c) of tensors, or None for zeros")
        input, (h, c), batched = self._prepare(input, hx, 2)
        h, c = _lstm_step(linear(input, self.weight_ih, self.bias_ih), h, c, self.weight_hh,
                          self.bias_hh, None)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


# --- layers ---------------------------------------------------------------------------------

class RNNBase(Module):
    """A stack of recurrent layers, each run over the whole sequence, optionally both ways.

    Input is (seq, batch, input_size), or (batch, seq, input_size) with
    ``batch_first=True``, or (seq, input_size) unbatched. The result is the
    last layer's hidden state at every step, (seq, batch, D·H) with D = 2 if
    bidirectional, and the final state of every layer and direction,
    (num_layers·D, batch, H). Dropout, if any, applies to the outputs of
    every layer but the last, while training.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(mode, mode)
        _check_sizes(name, input_size, hidden_size)
        if not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(f"{name}: num_layers must be a positive integer, got {num_layers!r}")
        if not (isinstance(dropout, (int, float)) and 0 <= dropout <= 1) or \
                isinstance(dropout, bool):
            raise ValueError(f"{name}: dropout must be a number in [0, 1] (the probability of "
                             f"zeroing an element), got {dropout!r}")
        if proj_size < 0 or (proj_size and mode != "LSTM") or proj_size >= hidden_size > 0:
            raise ValueError(f"{name}: proj_size must be 0, or (LSTM only) between 1 and "
                             f"hidden_size - 1 = {hidden_size - 1}, got {proj_size}")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gates = _GATES[mode] * hidden_size
        out_size = proj_size or hidden_size
        kw = {"device": device, "dtype": dtype}
        directions = 2 if bidirectional else 1
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else out_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                setattr(self, "weight_ih" + suffix,
                        Parameter(ops.empty(gates, layer_input, **kw)))
                setattr(self, "weight_hh" + suffix, Parameter(ops.empty(gates, out_size, **kw)))
                if bias:
                    setattr(self, "bias_ih" + suffix, Parameter(ops.empty(gates, **kw)))
                    setattr(self, "bias_hh" + suffix, Parameter(ops.empty(gates, **kw)))
                if proj_size:
                    setattr(self, "weight_hr" + suffix,
                            Parameter(ops.empty(proj_size, hidden_size, **kw)))
        self.reset_parameters()

    reset_parameters = RNNCellBase.reset_parameters

    def flatten_parameters(self) -> None:
        """Accepted for PyTorch compatibility: gradlab's weights need no re-packing."""

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _layer_weights(self, layer: int, direction: int):
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        return (getattr(self, "weight_ih" + suffix), getattr(self, "weight_hh" + suffix),
                getattr(self, "bias_ih" + suffix, None), getattr(self, "bias_hh" + suffix, None),
                getattr(self, "weight_hr" + suffix, None))

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters of each layer and direction, as PyTorch lists them."""
        directions = 2 if self.bidirectional else 1
        return [[w for w in self._layer_weights(layer, d) if w is not None]
                for layer in range(self.num_layers) for d in range(directions)]

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        name = type(self).__name__
        layout = "(batch, seq, features)" if self.batch_first else "(seq, batch, features)"
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: expected input of shape {layout}, or (seq, features) "
                             f"unbatched, got {tuple(input.shape)}")
        self._check_features(input)
        if input.shape[0 if input.ndim == 2 or not self.batch_first else 1] == 0:
            raise ValueError(f"{name}: the input sequence is empty (0 steps): "
                             f"{tuple(input.shape)} read as {layout}")
        batched = input.ndim == 3
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        steps, batch = input.shape[:2]
        states = self._initial_states(input, batch, hx, batched)
        output, final_states = self._run_layers(input, [batch] * steps, states)
        if not batched:
            output = output.squeeze(1)
            final_states = tuple(s.squeeze(1) for s in final_states)
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, (final_states if self.mode == "LSTM" else final_states[0])

    def _forward_packed(self, input, hx):
        """A PackedSequence in, a PackedSequence out; hx and the final states in batch order."""
        data = input.data
        if data.ndim != 2:
            raise ValueError(f"{type(self).__name__}: a PackedSequence's data must be "
                             f"(steps, features), got {tuple(data.shape)}")
        self._check_features(data)
        sizes = [int(n) for n in input.batch_sizes.tolist()]
        order, unorder = input.sorted_indices, input.unsorted_indices
        if hx is not None and order is not None:  # states given in batch order: sort them too
            hx = tuple(s.index_select(1, order) for s in hx) if isinstance(hx, tuple) else \
                hx.index_select(1, order)
        states = self._initial_states(data, sizes[0], hx, True)
        output, final_states = self._run_layers(data, sizes, states)
        if unorder is not None:
            final_states = tuple(s.index_select(1, unorder) for s in final_states)
        output = PackedSequence(output, input.batch_sizes, order, unorder)
        return output, (final_states if self.mode == "LSTM" else final_states[0])

    def _check_features(self, input) -> None:
        if input.shape[-1] != self.input_size:
            raise ValueError(f"{type(self).__name__}: input has {input.shape[-1]} features but "
                             f"the layer was made with input_size={self.input_size} "
                             f"(input {tuple(input.shape)})")

    def _run_layers(self, input, sizes, states):
        """Every layer and direction over ``input``: (T, B, F) padded, or (Σ sizes, F) packed."""
        directions = 2 if self.bidirectional else 1
        packed = input.ndim == 2
        finals = []  # per layer and direction: (h,) or (h, c)
        layer_input = input
        for layer in range(self.num_layers):
            outputs = []
            for d in range(directions):
                k = layer * directions + d
                weights = self._layer_weights(layer, d)
                gi = linear(layer_input, weights[0], weights[2])  # W_ih x + b_ih, all steps
                gi_steps = gi.split(sizes, 0) if packed else gi.unbind(0)
                out, final = self._run_direction(gi_steps, sizes, tuple(s[k] for s in states),
                                                 weights, reverse=d == 1)
                outputs.append(ops.cat(out, 0) if packed else ops.stack(out, 0))
                finals.append(final)
            layer_input = outputs[0] if directions == 1 else ops.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = _dropout(layer_input, self.dropout, True)
        return layer_input, tuple(ops.stack(list(parts), 0) for parts in zip(*finals))

    def _initial_states(self, input, batch: int, hx, batched: bool):
        """The (h,) or (h, c) start states, (layers·D, batch, size) each; zeros if not given."""
        name = type(self).__name__
        layers = self.num_layers * (2 if self.bidirectional else 1)
        sizes = [self.proj_size or self.hidden_size]
        if self.mode == "LSTM":
            sizes.append(self.hidden_size)
            if hx is not None and not (isinstance(hx, tuple) and len(hx) == 2):
                raise TypeError(f"{name}: hx must be a pair (h_0, c_0), or None for zeros")
        given = hx if isinstance(hx, tuple) else (hx,) * len(sizes)
        states = []
        for size, s, label in zip(sizes, given, ("h_0", "c_0")):
            expected = (layers, batch, size)
            if s is None:
                s = ops.zeros(*expected, dtype=input.dtype, device=input.device)
            else:
                if not batched:
                    s = s.unsqueeze(1)
                if tuple(s.shape) != expected:
                    what = "proj_size" if label == "h_0" and self.proj_size else "hidden_size"
                    dims = f"num_layers{' * 2' if self.bidirectional else ''}, " + \
                        ("batch, " if batched else "") + what
                    shown = expected if batched else (layers, size)
                    got = tuple(s.shape) if batched else tuple(s.shape[::2])
                    raise ValueError(f"{name}: {label} must have shape {shown} ({dims}), "
                                     f"got {got}")
            states.append(s)
        return states

    def _run_direction(self, gi_steps, sizes, start, weights, reverse: bool):
        """One layer in one direction: the state after every step, and each row's final state.

        Step t runs on the first ``sizes[t]`` rows (a packed batch is sorted
        longest first, so the rows still running are the first ones). Going
        forward, a row that stops keeps its last state as its final one;
        going backward, a row joins at its own last step, from its start state.
        """
        _, w_hh, _, b_hh, w_hr = weights
        order = range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))
        outputs = [None] * len(sizes)
        state, running, stopped = start, sizes[order[0]], []
        if running < start[0].shape[0]:
            state = tuple(s[:running] for s in start)
        for t in order:
            n = sizes[t]
            if n > running:  # backward: rows whose sequences end here join
                state = tuple(ops.cat([s, s0[running:n]], 0) for s, s0 in zip(state, start))
            elif n < running:  # forward: rows whose sequences ended stop here
                stopped.append(tuple(s[n:] for s in state))
                state = tuple(s[:n] for s in state)
            running = n
            state = self._cell(gi_steps[t], state, w_hh, b_hh, w_hr)
            outputs[t] = state[0]
        if stopped:  # the last rows stopped first: put the pieces back in row order
            state = tuple(ops.cat(list(parts), 0) for parts in zip(state, *reversed(stopped)))
        return outputs, state

    def _cell(self, gi, state, w_hh, b_hh, w_hr):
        if self.mode == "LSTM":
            return _lstm_step(gi, *state, w_hh, b_hh, w_hr)
        if self.mode == "GRU":
            return (_gru_step(gi, state[0], w_hh, b_hh),)
        return (_rnn_step(gi, state[0], w_hh, b_hh, self._act),)


class RNN(RNNBase):
    """Elman RNN layers: ``h_t = tanh(W_ih x_t + b_ih + W_hh h_(t−1) + b_hh)`` (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None) -> None:
        act = _activation(nonlinearity, "RNN")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity
        self._act = act


class LSTM(RNNBase):
    """Long short-term memory layers; the state is the pair (h, c)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit layers."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device=None, dtype=None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, device=device, dtype=dtype)


def _check_sizes(name: str, input_size, hidden_size) -> None:
    for label, value in (("input_size", input_size), ("hidden_size", hidden_size)):
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"{name}: {label} must be a positive integer, got {value!r}")
