"""Lesson 17: recurrent networks and backprop through time (the reference solution)."""

import math

import gradlab
from gradlab import nn


def init_params(input_size, hidden_size, dtype=gradlab.float32):
    """(W_x, W_h, b) of one RNN cell, uniform in ±1/√hidden as nn.RNN starts them."""
    bound = 1.0 / math.sqrt(hidden_size)

    def uniform(*shape):
        values = (gradlab.rand(*shape, dtype=dtype) * 2 - 1) * bound
        return nn.Parameter(values)

    return uniform(hidden_size, input_size), uniform(hidden_size, hidden_size), uniform(hidden_size)


def rnn_cell(x_t, h, params):
    """One step: h_t = tanh(W_x x_t + W_h h_{t-1} + b), for a batch of rows x_t (N, I), h (N, H)."""
    w_x, w_h, b = params
    return gradlab.tanh(x_t @ w_x.T + h @ w_h.T + b)


def rnn_forward(x, h0, params):
    """Run the cell over x (T, N, I) from h0 (N, H): (every h_t stacked (T, N, H), the last h)."""
    h = h0
    outputs = []
    for t in range(x.shape[0]):
        h = rnn_cell(x[t], h, params)    # same weights every step; the graph grows a cell
        outputs.append(h)
    return gradlab.stack(outputs), h


def clip_grad_norm(parameters, max_norm):
    """Scale all gradients together so their total 2-norm is at most max_norm.

    Returns the total norm before clipping (what nn.utils.clip_grad_norm_ returns).
    """
    grads = [p.grad for p in parameters if p.grad is not None]   # a generator is read once
    total = math.sqrt(sum(float((g * g).sum()) for g in grads))
    scale = max_norm / (total + 1e-6)
    if scale < 1:
        with gradlab.no_grad():
            for g in grads:
                g.mul_(scale)            # in place: the optimizer reads p.grad
    return total


def rnn_forward_truncated(x, h0, params, k):
    """rnn_forward, but the hidden state is detached before steps k, 2k, 3k, ...

    Same values; the gradient of anything at step t flows back at most to the
    start of t's chunk of k steps.
    """
    h = h0
    outputs = []
    for t in range(x.shape[0]):
        if t > 0 and t % k == 0:
            h = h.detach()               # cut the graph: backward stops here
        h = rnn_cell(x[t], h, params)
        outputs.append(h)
    return gradlab.stack(outputs), h


if __name__ == "__main__":
    # Learn to predict the next value of a wave, reading it in chunks of 20 steps
    # (truncated BPTT by hand): the hidden state carries over, its graph does not.
    gradlab.manual_seed(0)
    steps, batch, chunk = 200, 8, 20
    time = gradlab.arange(steps + 1) * 0.15
    phase = gradlab.rand(1, batch) * 6.28
    wave = (gradlab.sin(time[:, None] + phase) + 0.5 * gradlab.sin(2.3 * time[:, None] + phase))
    inputs, targets = wave[:-1, :, None], wave[1:, :, None]            # (T, N, 1) each
    params = init_params(1, 16)
    readout = nn.Linear(16, 1)
    everything = list(params) + list(readout.parameters())
    optimizer = gradlab.optim.Adam(everything, lr=0.02)
    for epoch in range(3):
        h = gradlab.zeros(batch, 16)
        for start in range(0, steps, chunk):
            outputs, h = rnn_forward(inputs[start:start + chunk], h, params)
            loss = nn.functional.mse_loss(readout(outputs), targets[start:start + chunk])
            optimizer.zero_grad()
            loss.backward()
            norm = clip_grad_norm(everything, max_norm=1.0)
            optimizer.step()
            h = h.detach()               # the next chunk starts from h's value, not its graph
        print(f"epoch {epoch}: last chunk's loss {loss.item():.4f}, gradient norm {norm:.3f}")
