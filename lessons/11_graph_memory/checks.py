"""Lesson 11's checks: random models and data; values against gradlab itself, and the
bytes gradlab counts (memory_allocated, max_memory_allocated) against what a graph
would have kept."""

import copy
import gc

import gradlab
import gradlab.nn.functional as F
from gradlab import nn
from lessons.expect import check, expect, expect_close, expect_equal, expect_tensor


def _mlp(rng):
    """A random 3-layer MLP and its sizes."""
    n_in, hidden, n_out = (int(v) for v in rng.integers([8, 24, 2], [24, 64, 6]))
    model = nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, hidden),
                          nn.ReLU(), nn.Linear(hidden, n_out))
    return model, n_in, n_out


def _measure(fn, *args):
    """Run fn(*args); (bytes still held after it, the peak above the start during it,
    its result). Garbage collection is held off meanwhile, so that no unrelated
    garbage is freed in the middle of a measurement."""
    gc.collect()
    gc.disable()
    try:
        before = gradlab.memory_allocated()
        gradlab.reset_peak_memory_stats()
        result = fn(*args)
        held = gradlab.memory_allocated() - before
    finally:
        gc.enable()
    return held, gradlab.max_memory_allocated() - before, result


def _nbytes(t):
    return t.nelement() * t.element_size()


@check("evaluate")
def evaluate(student, rng):
    model, n_in, n_out = _mlp(rng)
    X = gradlab.tensor(rng.normal(size=(int(rng.integers(40, 120)), n_in)), dtype=gradlab.float32)
    with gradlab.no_grad():
        expected = model(X)
    _, reference_peak, _ = _measure(_reference_evaluate, model, X)
    held, peak, out = _measure(student.evaluate, model, X)
    expect_tensor(out, "evaluate returns a tensor")
    expect_close(out, expected, f"evaluate(model, X) for a batch of {X.shape[0]}", rtol=1e-5,
                 atol=1e-6)
    expect(not out.requires_grad and out.grad_fn is None,
           "the output has no graph behind it", "requires_grad=False, grad_fn=None",
           f"requires_grad={out.requires_grad}, grad_fn={out.grad_fn}",
           "run the model inside `with gradlab.no_grad():`")
    expect_equal(held, _nbytes(out), "bytes still held after evaluate: only the output's")
    expect(peak <= reference_peak, "peak memory during evaluate: no graph built at all",
           f"at most {reference_peak} bytes (as under no_grad)", f"{peak} bytes",
           "detaching the output afterwards frees the graph, but it was built and held "
           "meanwhile: use no_grad around the forward instead")
    enabled = gradlab.is_grad_enabled()
    gradlab.set_grad_enabled(True)  # whatever happened, the other checks need it on
    expect(enabled, "gradient recording is back on after evaluate",
           "is_grad_enabled() == True", f"is_grad_enabled() == {enabled}",
           "use `with gradlab.no_grad():` so the mode comes back by itself")


def _reference_evaluate(model, X):
    with gradlab.no_grad():
        return model(X)


def _reference_training(model, X, y, X_val, y_val, steps, lr):
    optimizer = gradlab.optim.SGD(model.parameters(), lr=lr)
    train, val = [], []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(model(X), y)
        loss.backward()
        optimizer.step()
        train.append(loss.item())
        with gradlab.no_grad():
            val.append(F.mse_loss(model(X_val), y_val).item())
    return train, val


@check("train_with_log")
def train_with_log(student, rng):
    model, n_in, n_out = _mlp(rng)
    n, n_val = int(rng.integers(40, 100)), int(rng.integers(20, 60))
    data = [gradlab.tensor(rng.normal(size=shape), dtype=gradlab.float32)
            for shape in ((n, n_in), (n, n_out), (n_val, n_in), (n_val, n_out))]
    lr, steps = float(rng.uniform(0.02, 0.1)), int(rng.integers(4, 7))
    train, val = _reference_training(copy.deepcopy(model), *data, steps, lr)
    got = student.train_with_log(copy.deepcopy(model), *data, steps, lr)
    expect(isinstance(got, tuple) and len(got) == 2, "train_with_log returns (train, val)",
           "a pair of lists", repr(got)[:80])
    got_train, got_val = got
    for name, values in (("train", got_train), ("validation", got_val)):
        kinds = sorted({type(v).__name__ for v in values})
        expect(isinstance(values, list) and all(type(v) is float for v in values),
               f"the {name} losses are Python floats", "list of float",
               f"{type(values).__name__} of {', '.join(kinds) or 'nothing'}",
               "call .item() on a loss before you keep it")
    expect_close(got_train, train, f"train losses over {steps} SGD steps, lr = {lr:.3f}",
                 rtol=1e-4, atol=1e-6)
    expect_close(got_val, val, "validation losses after each step", rtol=1e-4, atol=1e-6)
    held = {}
    for k in (2, 8):
        held[k], _, _ = _measure(student.train_with_log, copy.deepcopy(model), *data, k, lr)
    expect_equal(held[8], held[2],
                 "bytes held after training 8 steps, the same as after 2 (logs don't grow)")


def _reference_chunks(cell, xs, h, chunk):
    losses = []
    for start in range(0, xs.shape[0], chunk):
        for t in range(start, min(start + chunk, xs.shape[0])):
            h = cell(xs[t], h)
        loss = h.pow(2).mean()
        loss.backward()
        losses.append(loss.item())
        h = h.detach()
    return losses, h


@check("run_in_chunks")
def run_in_chunks(student, rng):
    n_in, hidden, batch = (int(v) for v in rng.integers([3, 16, 4], [8, 40, 12]))
    chunk = int(rng.integers(3, 6))
    steps = chunk * int(rng.integers(6, 9)) + int(rng.integers(0, chunk))
    cell = nn.RNNCell(n_in, hidden)
    xs = gradlab.tensor(rng.normal(size=(steps, batch, n_in)), dtype=gradlab.float32)
    h0 = gradlab.tensor(rng.normal(size=(batch, hidden)) * 0.5, dtype=gradlab.float32)
    mine = copy.deepcopy(cell)
    _, chunked_peak, (losses, h) = _measure(_reference_chunks, mine, xs, h0, chunk)
    # Without cutting: one backward through every step (how big the graph would get).
    full = copy.deepcopy(cell)
    _, full_peak, _ = _measure(_reference_chunks, full, xs, h0, steps)
    theirs = copy.deepcopy(cell)
    _, peak, got = _measure(student.run_in_chunks, theirs, xs, h0, chunk)
    expect(isinstance(got, tuple) and len(got) == 2, "run_in_chunks returns (losses, h)",
           "a pair", repr(got)[:80])
    got_losses, got_h = got
    where = f"{steps} steps in chunks of {chunk}"
    expect(isinstance(got_losses, list) and all(type(v) is float for v in got_losses),
           "the chunk losses are Python floats", "list of float", repr(got_losses)[:80],
           "call .item() on each chunk's loss")
    expect_close(got_losses, losses, f"the loss of each chunk, {where}", rtol=1e-4, atol=1e-6)
    expect_tensor(got_h, "the final hidden state is a tensor")
    expect_close(got_h, h, "the final hidden state", rtol=1e-4, atol=1e-6)
    expect(got_h.grad_fn is None, "the final hidden state is cut from the graph",
           "grad_fn=None", f"grad_fn={got_h.grad_fn}", "return h.detach()")
    for name, p in mine.named_parameters():
        expect_close(dict(theirs.named_parameters())[name].grad, p.grad,
                     f"{name}.grad, summed over the chunks, each chunk's backward stopping "
                     "at its start", rtol=1e-4, atol=1e-6)
    # Midway between one chunk's graph and the whole sequence's: any way of cutting
    # the graph passes, keeping it (retain_graph=True) does not.
    limit = (chunked_peak + full_peak) // 2
    expect(peak < limit, "peak memory stays small: one chunk's graph at a time",
           f"under {limit} bytes (cut into chunks: {chunked_peak}; one graph over all "
           f"steps: {full_peak})",
           f"{peak} bytes", "detach h between chunks instead of keeping the whole graph")


@check("offload_step")
def offload_step(student, rng):
    model, n_in, n_out = _mlp(rng)
    n = int(rng.integers(64, 160))
    X, y = (gradlab.tensor(rng.normal(size=shape), dtype=gradlab.float32)
            for shape in ((n, n_in), (n, n_out)))
    plain = copy.deepcopy(model)
    gc.collect()
    before = gradlab.memory_stats()["activation_bytes"]
    loss = F.mse_loss(plain(X), y)
    plain_held = gradlab.memory_stats()["activation_bytes"] - before
    loss.backward()
    theirs = copy.deepcopy(model)
    gc.collect()
    got = student.offload_step(theirs, X, y)
    expect(isinstance(got, tuple) and len(got) == 2, "offload_step returns (loss, bytes)",
           "a pair", repr(got)[:80])
    got_loss, got_held = got
    expect(type(got_loss) is float, "the loss is a Python float", "float",
           type(got_loss).__name__, "return loss.item()")
    expect_close(got_loss, loss.item(), f"the loss of one step on a batch of {n}",
                 rtol=1e-5, atol=1e-7)
    for name, p in plain.named_parameters():
        expect_close(dict(theirs.named_parameters())[name].grad, p.grad,
                     f"{name}.grad, with the saved tensors unpacked from NumPy copies",
                     rtol=1e-5, atol=1e-7)
    expect(got_held == before, "activation bytes right after the offloaded forward",
           f"{before} (nothing more: a plain graph would hold {plain_held} bytes)",
           f"{got_held}",
           "run the forward and the loss inside `with saved_tensors_hooks(pack, unpack):` "
           "with a pack that returns a NumPy copy, and read memory_stats() right after")
