"""Lesson 17's checks: random sequences and weights, against nn.RNN, clip_grad_norm_ and a
reference unrolling."""

import numpy as np

import gradlab
from gradlab import nn
from lessons.expect import check, expect, expect_close, expect_equal, expect_gradcheck


def _tensor(rng, *shape, scale=1.0, requires_grad=False):
    return gradlab.tensor(rng.standard_normal(shape) * scale, dtype=gradlab.float64,
                          requires_grad=requires_grad)


def _problem(rng, *, steps=None):
    """A random sequence x (T, N, I), h0 (N, H) and weights (W_x, W_h, b), all float64."""
    t = int(rng.integers(3, 9)) if steps is None else steps
    n, i, h = int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(2, 6))
    x = _tensor(rng, t, n, i, requires_grad=True)
    h0 = _tensor(rng, n, h, scale=0.5, requires_grad=True)
    params = (_tensor(rng, h, i, scale=0.6, requires_grad=True),
              _tensor(rng, h, h, scale=0.6, requires_grad=True),
              _tensor(rng, h, scale=0.3, requires_grad=True))
    return x, h0, params, f"{t} steps, batch {n}, {i} inputs, {h} hidden"


def _reference(x, h0, params, k=None):
    """The unrolled RNN, detached before steps k, 2k, ... if k is given."""
    w_x, w_h, b = params
    h, outputs = h0, []
    for t in range(x.shape[0]):
        if k is not None and t > 0 and t % k == 0:
            h = h.detach()
        h = gradlab.tanh(x[t] @ w_x.T + h @ w_h.T + b)
        outputs.append(h)
    return gradlab.stack(outputs), h


def _pair(result, what):
    ok = isinstance(result, tuple) and len(result) == 2 and \
        all(isinstance(r, gradlab.Tensor) for r in result)
    expect(ok, what, "a pair (outputs, last hidden state) of tensors",
           repr(result)[:80] if not ok else "a pair of tensors")
    return result


def _has_graph(t, what):
    expect(t.requires_grad, f"{what}: joined to the weights by a graph", "requires_grad=True",
           f"requires_grad={t.requires_grad}",
           "build them from gradlab ops on the inputs, without .detach() or NumPy")


def _tanh_nodes(root) -> int:
    """How many tanh nodes backward can reach from ``root``'s grad_fn."""
    seen, stack, count = set(), [root.grad_fn], 0
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        count += node.name().startswith("Tanh")
        stack.extend(fn for fn, _ in node.next_functions if fn is not None)
    return count


def _copy_into(cell_or_rnn, params, suffix=""):
    """Copy (W_x, W_h, b) into an nn.RNN / nn.RNNCell: b as bias_ih, zeros as bias_hh."""
    with gradlab.no_grad():
        getattr(cell_or_rnn, "weight_ih" + suffix).copy_(params[0])
        getattr(cell_or_rnn, "weight_hh" + suffix).copy_(params[1])
        getattr(cell_or_rnn, "bias_ih" + suffix).copy_(params[2])
        getattr(cell_or_rnn, "bias_hh" + suffix).zero_()


@check("rnn_cell")
def rnn_cell(student, rng):
    _, h0, params, _ = _problem(rng)
    n, i = h0.shape[0], params[0].shape[1]
    text = f"batch {n}, {i} inputs, {h0.shape[1]} hidden"
    x_t = _tensor(rng, n, i, requires_grad=True)
    cell = nn.RNNCell(i, h0.shape[1], dtype=gradlab.float64)
    _copy_into(cell, params)
    got = student.rnn_cell(x_t, h0, params)
    expect(isinstance(got, gradlab.Tensor), "rnn_cell returns a tensor", "a gradlab tensor",
           f"a {type(got).__name__}")
    expect_close(got, cell(x_t, h0), f"one step vs nn.RNNCell with the same weights ({text})",
                 rtol=1e-10, atol=1e-10)
    expect_gradcheck(lambda *a: student.rnn_cell(a[0], a[1], a[2:]), (x_t, h0, *params),
                     f"gradcheck of one step w.r.t. x_t, h, W_x, W_h, b ({text})")


@check("rnn_forward")
def rnn_forward(student, rng):
    x, h0, params, text = _problem(rng)
    t, n, i = x.shape
    hidden = h0.shape[1]
    rnn = nn.RNN(i, hidden, dtype=gradlab.float64)     # batch_first=False: (T, N, I)
    _copy_into(rnn, params, "_l0")
    want, h_n = rnn(x, h0.unsqueeze(0))
    outputs, last = _pair(student.rnn_forward(x, h0, params), "rnn_forward returns "
                          "(outputs, h)")
    expect_close(outputs, want, f"every hidden state vs nn.RNN with the same weights ({text})",
                 rtol=1e-10, atol=1e-10)
    expect_close(last, h_n[0], f"the last hidden state vs nn.RNN's h_n ({text})", rtol=1e-10,
                 atol=1e-10)
    _has_graph(outputs, "the stacked outputs")
    weights = _tensor(rng, *want.shape)
    (want_gh,) = gradlab.autograd.grad((want * weights).sum(), [rnn.weight_hh_l0])
    found = gradlab.autograd.grad((outputs * weights).sum(), [params[1]], allow_unused=True)
    expect_close(found[0], want_gh, f"BPTT: gradient of a weighted sum of all outputs w.r.t. "
                 f"W_h, vs nn.RNN's weight_hh_l0.grad ({text})", rtol=1e-9, atol=1e-10)
    x, h0, params, text = _problem(rng, steps=3)
    expect_gradcheck(lambda *a: student.rnn_forward(a[0], a[1], a[2:])[0], (x, h0, *params),
                     f"gradcheck of the outputs w.r.t. x, h0, W_x, W_h, b ({text})")


@check("clip_grad_norm")
def clip_grad_norm(student, rng):
    for max_norm in (float(rng.uniform(0.2, 1.0)), float(rng.uniform(50, 100))):
        shapes = [(int(rng.integers(1, 5)), int(rng.integers(1, 5))) for _ in range(3)]
        grads = [rng.standard_normal(s) * 2 for s in shapes]
        mine = [nn.Parameter(gradlab.zeros(*s, dtype=gradlab.float64)) for s in shapes]
        ref = [nn.Parameter(gradlab.zeros(*s, dtype=gradlab.float64)) for s in shapes]
        for p, q, g in zip(mine, ref, grads):
            p.grad = gradlab.tensor(g, dtype=gradlab.float64)
            q.grad = gradlab.tensor(g, dtype=gradlab.float64)
        unused = nn.Parameter(gradlab.zeros(2, dtype=gradlab.float64))   # no .grad at all
        want = nn.utils.clip_grad_norm_(ref, max_norm)
        clipped = "clips" if float(want) > max_norm else "leaves alone"
        got = student.clip_grad_norm(iter(mine + [unused]), max_norm)
        expect_close(got, want, f"total norm before clipping of 3 gradients (norm "
                     f"{float(want):.3f}, max_norm {max_norm:.3f}; parameters given as a "
                     "generator, one without .grad)", rtol=1e-9)
        for k, (p, q) in enumerate(zip(mine, ref)):
            expect_close(p.grad, q.grad, f"gradient {k} after clipping vs "
                         f"nn.utils.clip_grad_norm_ (max_norm {max_norm:.3f}: it {clipped})",
                         rtol=1e-6, atol=1e-12)
        expect(unused.grad is None, "a parameter without a gradient keeps .grad = None", "None",
               repr(unused.grad)[:40])


@check("rnn_forward_truncated")
def rnn_forward_truncated(student, rng):
    steps = int(rng.integers(7, 13))
    k = int(rng.integers(2, 5))
    x, h0, params, text = _problem(rng, steps=steps)
    outputs, last = _pair(student.rnn_forward_truncated(x, h0, params, k),
                          "rnn_forward_truncated returns (outputs, h)")
    _has_graph(outputs, "the stacked outputs")
    _has_graph(last, "the last hidden state")
    full, _ = _reference(x, h0, params)
    expect_close(outputs, full, f"values are those of the full RNN: detach changes no value "
                 f"({text}, k = {k})", rtol=1e-10, atol=1e-10)
    start = (steps - 1) // k * k
    expect_equal(_tanh_nodes(last), steps - start,
                 f"tanh nodes reachable from the last h ({steps} steps, k = {k}: its chunk "
                 f"starts at step {start})")
    (full_grad,) = gradlab.autograd.grad(_reference(x, h0, params)[1].sum(), [x])
    (got_grad,) = gradlab.autograd.grad(last.sum(), [x], retain_graph=True,
                                        allow_unused=True)
    got_grad = gradlab.zeros_like(x) if got_grad is None else got_grad
    want = full_grad.detach().numpy().copy()
    want[:start] = 0.0
    norms = np.linalg.norm(got_grad.detach().numpy().reshape(steps, -1), axis=1)
    expect_close(got_grad, want, f"gradient of sum(last h) w.r.t. x_t: zero before step "
                 f"{start}, full BPTT's after (step norms {np.round(norms, 3).tolist()})",
                 rtol=1e-9, atol=1e-12)
    weights = _tensor(rng, *full.shape)
    ref_out, _ = _reference(x, h0, params, k)
    want_grads = gradlab.autograd.grad((ref_out * weights).sum(), list(params))
    got_grads = gradlab.autograd.grad((outputs * weights).sum(), list(params), allow_unused=True)
    for name, g, w in zip(("W_x", "W_h", "b"), got_grads, want_grads):
        expect_close(g, w, f"truncated-BPTT gradient of a weighted sum of all outputs w.r.t. "
                     f"{name} ({text}, k = {k})", rtol=1e-9, atol=1e-12)
