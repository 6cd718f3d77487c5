"""Lesson 11's pictures: memory by category over two training steps and an evaluation,
what an evaluation loop holds when it keeps loss tensors, peak memory of a recurrent
net with and without cutting the graph, and the backward graph with what it saved."""

from pathlib import Path

import gradlab
import gradlab.nn.functional as F
from gradlab import events, nn, viz


def _setup():
    gradlab.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    X, Y = gradlab.randn(256, 784), gradlab.randn(256, 10)
    return model, X, Y


def _chunks(cell, xs, h, chunk):
    for start in range(0, xs.shape[0], chunk):
        for t in range(start, min(start + chunk, xs.shape[0])):
            h = cell(xs[t], h)
        h.pow(2).mean().backward()
        h = h.detach()
    return h


def _peak(fn, *args) -> int:
    before = gradlab.memory_allocated()
    gradlab.reset_peak_memory_stats()
    fn(*args)
    return gradlab.max_memory_allocated() - before


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import plot_memory, save_figure

    # 1. Two training steps, then an evaluation under no_grad: the Memory panel's story.
    model, X, Y = _setup()
    optimizer = gradlab.optim.SGD(model.parameters(), lr=0.1)
    initial = {k[:-6]: v for k, v in gradlab.memory_stats().items()
               if k[:-6] in ("parameter", "gradient", "activation", "optimizer", "other")}
    recorded = []
    with events.subscribe(recorded.append):
        for _ in range(2):
            optimizer.zero_grad()
            loss = F.mse_loss(model(X), Y)
            loss.backward()
            optimizer.step()
        del loss
        with gradlab.no_grad():
            model(X)
    fig = plot_memory(recorded, initial=initial,
                      title="two training steps, then model(X) under no_grad")
    timeline = save_figure(fig, folder / "memory_timeline.png", dpi=90)

    # 2. An evaluation loop over 20 batches that keeps each loss: tensor vs float.
    model, X, Y = _setup()
    start = gradlab.memory_allocated()
    kept_tensors, kept_floats, kept_no_grad = [0], [0], [0]
    tensors, floats = [], []
    for _ in range(20):
        tensors.append(F.mse_loss(model(X), Y))
        kept_tensors.append(gradlab.memory_allocated() - start)
    del tensors
    start = gradlab.memory_allocated()
    for _ in range(20):
        floats.append(F.mse_loss(model(X), Y).item())
        kept_floats.append(gradlab.memory_allocated() - start)
    for _ in range(20):
        with gradlab.no_grad():
            floats.append(F.mse_loss(model(X), Y).item())
        kept_no_grad.append(gradlab.memory_allocated() - start)
    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    mib = 2**20
    ax.plot([b / mib for b in kept_tensors], marker="o", markersize=3,
            label="losses.append(loss)  (graph kept)")
    ax.plot([b / mib for b in kept_floats], marker="s", markersize=3,
            label="losses.append(loss.item())")
    ax.plot([b / mib for b in kept_no_grad], "--", label="under no_grad, .item()")
    ax.set_xlabel("batches evaluated")
    ax.set_ylabel("memory still held (MiB)")
    ax.set_xticks(range(0, 21, 5))
    ax.legend()
    growth = save_figure(fig, folder / "eval_growth.png", dpi=100)

    # 3. Peak memory of a recurrent cell over a sequence: chunks of 10 vs one graph.
    gradlab.manual_seed(0)
    cell, h0 = nn.RNNCell(32, 128), gradlab.zeros(16, 128)
    _chunks(cell, gradlab.randn(2, 16, 32), h0, 2)  # the gradients exist from here on
    lengths, chunked, whole = [25, 50, 100, 200, 300, 400], [], []
    for steps in lengths:
        xs = gradlab.randn(steps, 16, 32)
        chunked.append(_peak(_chunks, cell, xs, h0, 10) / mib)
        whole.append(_peak(_chunks, cell, xs, h0, steps) / mib)
    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    ax.plot(lengths, whole, marker="o", markersize=4, label="one graph over the whole sequence")
    ax.plot(lengths, chunked, marker="s", markersize=4, label="h.detach() every 10 steps")
    ax.set_xlabel("sequence length (steps of RNNCell(32, 128), batch 16)")
    ax.set_ylabel("peak memory during the run (MiB)")
    ax.set_ylim(0, None)
    ax.legend()
    bptt = save_figure(fig, folder / "chunk_peak.png", dpi=100)

    # 4. What the graph of a small model saved for backward.
    gradlab.manual_seed(0)
    small = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    loss = F.mse_loss(small(gradlab.randn(5, 4)), gradlab.randn(5, 2))
    graph = viz.render(loss, folder / "saved_tensors.svg", view="backward", model=small)
    return [Path(timeline), Path(growth), Path(bptt), Path(graph)]
