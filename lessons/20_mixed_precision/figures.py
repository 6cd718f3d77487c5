"""Lesson 20's pictures: what float16, bfloat16 and float32 can hold; a float16 running sum
that stalls next to dot products that survive half precision; the graph of one linear layer
under autocast, casts included; and loss scaling: a trained network's gradients against
float16's range, and GradScaler's scale during the lesson's training run."""

from pathlib import Path

import numpy as np

import gradlab
import gradlab.nn.functional as F
from gradlab import nn, viz

FORMATS = (("float32", gradlab.float32, 8, 23, "#4c78a8"),
           ("bfloat16", gradlab.bfloat16, 8, 7, "#54a24b"),
           ("float16", gradlab.float16, 5, 10, "#f58518"))


def _limits(dtype) -> tuple[float, float, float, float]:
    """log2 of (smallest subnormal, smallest normal, max), and eps, from gradlab.finfo."""
    info = gradlab.finfo(dtype)
    return (np.log2(info.smallest_normal * info.eps), np.log2(info.smallest_normal),
            np.log2(info.max), info.eps)


def _formats(fig) -> None:
    """Bit layouts on the left, representable magnitudes on a log2 axis on the right."""
    bits_ax, range_ax = fig.subplots(1, 2, width_ratios=[1.1, 2.2])
    for row, (name, _, exponent, mantissa, color) in enumerate(FORMATS):
        y = 2 - row
        x = 0
        for width, fill in ((1, "#bbbbbb"), (exponent, color), (mantissa, "#e8e8e8")):
            bits_ax.barh(y, width, left=x, height=0.6, color=fill, edgecolor="0.3")
            if width > 1:
                bits_ax.text(x + width / 2, y, str(width), ha="center", va="center", fontsize=8)
            x += width
        bits_ax.text(-1, y, name, ha="right", va="center", fontsize=9)
    bits_ax.set_xlim(-11, 33)
    bits_ax.set_ylim(-0.6, 2.6)
    bits_ax.axis("off")
    bits_ax.set_title("bits: sign (grey), exponent (colour),\nmantissa (pale)", fontsize=9)

    for row, (_, dtype, _, _, color) in enumerate(FORMATS):
        y = 2 - row
        sub, normal, top, eps = _limits(dtype)
        range_ax.barh(y, normal - sub, left=sub, height=0.5, color=color, alpha=0.35)
        range_ax.barh(y, top - normal, left=normal, height=0.5, color=color)
        range_ax.text(top + 2, y, f"max {2.0**top:.3g}\neps {eps:.3g}", va="center",
                      fontsize=7.5)
        range_ax.text(sub - 2, y, f"{2.0**sub:.3g}", va="center", ha="right", fontsize=7.5)
    range_ax.axvline(0, color="0.6", linestyle=":", linewidth=1)
    range_ax.set_yticks([])
    range_ax.set_xlim(-190, 170)
    range_ax.set_ylim(-0.6, 2.6)
    range_ax.set_xlabel("log₂ |x|  (pale: subnormal numbers, fewer bits; 0 below them)")
    range_ax.set_title("magnitudes each format can hold, from the smallest subnormal to max",
                       fontsize=9)


def _sums(fig) -> None:
    """A running sum that stalls in float16, and dot products that survive half inputs."""
    sum_ax, dot_ax = fig.subplots(1, 2)
    n = 10_000
    step16 = np.full(n, 1e-4, dtype=np.float16)
    running16 = np.cumsum(step16)  # NumPy's float16 cumsum keeps a float16 running total
    running32 = np.cumsum(step16.astype(np.float32))
    count = np.arange(1, n + 1)
    sum_ax.plot(count, running32, label="float32 running total", color="#4c78a8")
    sum_ax.plot(count, running16.astype(np.float32), label="float16 running total",
                color="#f58518")
    stall = int(np.argmax(running16 == running16[-1])) + 1
    sum_ax.annotate(f"stuck at {float(running16[-1]):g} after {stall:,} adds:\nspacing there "
                    "is 2⁻¹² ≈ 0.000244,\nhalf of it > 0.0001", (stall, float(running16[-1])),
                    xytext=(3200, 0.55), fontsize=8, arrowprops={"arrowstyle": "->"})
    sum_ax.set_xlabel("values of 0.0001 added, one at a time")
    sum_ax.set_ylabel("running total")
    sum_ax.set_title("adding small numbers to a float16 total", fontsize=10)
    sum_ax.legend(loc="upper left", fontsize=8)

    rng = np.random.default_rng(0)
    sizes = 2 ** np.arange(4, 15)
    half_total, float_total, gradlab_out = [], [], []
    for size in sizes:
        errors = []
        for _ in range(8):  # the mean relative error of 8 random dot products
            a, b = rng.uniform(0, 1, size), rng.uniform(0, 1, size)
            exact = a @ b
            a16, b16 = a.astype(np.float16), b.astype(np.float16)
            total32 = np.sum(a16.astype(np.float32) * b16.astype(np.float32), dtype=np.float32)
            total16 = np.cumsum(a16 * b16)[-1]
            product = gradlab.tensor(a16) @ gradlab.tensor(b16)  # float16 in, float16 out
            errors.append([abs(float(v) - exact) / exact
                           for v in (total16, total32, product.item())])
        half, full, out = np.maximum(np.mean(errors, axis=0), 1e-9)
        half_total.append(half)
        float_total.append(full)
        gradlab_out.append(out)
    dot_ax.loglog(sizes, half_total, "o-", color="#f58518", markersize=4,
                  label="float16 running total")
    dot_ax.loglog(sizes, gradlab_out, "s-", color="#54a24b", markersize=4,
                  label="gradlab float16 matmul: float32\ntotal, result rounded to float16")
    dot_ax.loglog(sizes, float_total, "^-", color="#4c78a8", markersize=4,
                  label="float32 total, before that rounding")
    dot_ax.axhline(2.0**-11, color="gray", linestyle=":", linewidth=1,
                   label="float16's rounding error, 2⁻¹¹")
    dot_ax.set_xlabel("length n of the dot product (float16 inputs in [0, 1])")
    dot_ax.set_ylabel("relative error")
    dot_ax.set_title("dot products: it is the total that must be float32", fontsize=10)
    dot_ax.legend(fontsize=7.5, loc="upper left")


def _autocast_graph(folder: Path) -> str:
    """One linear layer and a loss under float16 autocast: the casts are `to` ops."""
    gradlab.manual_seed(0)
    layer = nn.Linear(3, 4)
    x = gradlab.randn(5, 3)
    y = gradlab.tensor([0, 3, 1, 2, 0])
    with viz.trace() as recording, gradlab.autocast("cpu", dtype=gradlab.float16):
        loss = F.cross_entropy(layer(x), y)
    return viz.render(loss, folder / "graph.svg", model=layer, trace=recording)


def _training_run():
    """The lesson's training run (the starter's __main__): the scale before each step,
    whether the step overflowed, and the trained model with a batch."""
    gradlab.manual_seed(0)
    images, labels = gradlab.datasets.load_digits()
    images = images.flatten(1)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = gradlab.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = gradlab.amp.GradScaler("cpu", init_scale=2.0**24, growth_interval=10)
    scales, skipped = [], []
    with np.errstate(invalid="ignore", over="ignore"):
        for _ in range(60):
            rows = gradlab.randint(0, len(labels), (128,))
            optimizer.zero_grad()
            with gradlab.autocast("cpu", dtype=gradlab.float16):
                loss = F.cross_entropy(model(images[rows]), labels[rows])
            scaler.scale(loss).backward()
            scales.append(scaler.get_scale())
            scaler.step(optimizer)
            scaler.update()
            skipped.append(scaler.get_scale() < scales[-1])
    return scales, skipped, model, images[:256], labels[:256]


def _scaling(fig) -> None:
    grads_ax, scale_ax = fig.subplots(1, 2, width_ratios=[1.3, 1])
    scales, skipped, model, x, y = _training_run()
    model.zero_grad()
    F.cross_entropy(model(x), y).backward()  # float32: the true gradients
    grads = np.concatenate([p.grad.numpy().ravel() for p in model.parameters()])
    logs = np.log2(np.abs(grads[grads != 0]))
    lost = float(np.mean(np.abs(grads[grads != 0]) <= 2.0**-25))
    bins = np.arange(-46, 18, 1.0)
    grads_ax.hist(logs, bins=bins, color="#4c78a8", alpha=0.8, label="the float32 gradients")
    grads_ax.hist(logs + 16, bins=bins, histtype="step", color="#e45756", linewidth=1.5,
                  label="× 2¹⁶: loss scaled by 65,536")
    grads_ax.axvspan(-46, -24, color="#f58518", alpha=0.25)
    grads_ax.axvspan(-24, -14, color="#f58518", alpha=0.1)
    grads_ax.axvspan(16, 18, color="#e45756", alpha=0.25)
    top = grads_ax.get_ylim()[1]
    grads_ax.text(-45, top * 0.92, f"0 in float16\n({lost:.1%} of them)", fontsize=8, va="top")
    grads_ax.text(-23.5, top * 0.92, "subnormal:\nfewer bits", fontsize=8, va="top")
    grads_ax.text(15.5, top * 0.5, "inf", fontsize=8, ha="right", color="#e45756")
    grads_ax.set_xlim(-46, 18)
    grads_ax.set_xlabel("log₂ |gradient|  (the trained MLP's weights and biases)")
    grads_ax.set_ylabel("entries")
    grads_ax.set_title("scaling moves every gradient into float16's range", fontsize=10)
    grads_ax.legend(fontsize=8, loc="center left")

    steps = np.arange(1, len(scales) + 1)
    scale_ax.step(steps, np.log2(scales), where="post", color="#4c78a8")
    bad = np.array(skipped)
    scale_ax.scatter(steps[bad], np.log2(scales)[bad], marker="x", color="#e45756", zorder=3,
                     label="inf/NaN gradient: step skipped, scale halved")
    scale_ax.set_xlabel("step")
    scale_ax.set_ylabel("log₂ of the scale")
    scale_ax.set_title("GradScaler(init_scale=2²⁴, growth_interval=10)", fontsize=10)
    scale_ax.legend(fontsize=8, loc="upper right")


def make(folder: Path) -> list[Path]:
    """Draw the pictures into ``folder``; their paths."""
    from matplotlib.figure import Figure

    from gradlab.viz.plots import save_figure

    folder = Path(folder)
    fig = Figure(figsize=(9.6, 2.9), layout="constrained")
    _formats(fig)
    formats = save_figure(fig, folder / "formats.png", dpi=100)

    fig = Figure(figsize=(9.6, 3.6), layout="constrained")
    _sums(fig)
    sums = save_figure(fig, folder / "sums.png", dpi=100)

    graph = _autocast_graph(folder)

    fig = Figure(figsize=(9.6, 3.6), layout="constrained")
    _scaling(fig)
    scaling = save_figure(fig, folder / "scaling.png", dpi=100)
    return [Path(formats), Path(sums), Path(graph), Path(scaling)]
