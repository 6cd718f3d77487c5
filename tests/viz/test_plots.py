"""gradlab.viz.plots: figure structure, data fidelity, saving, headlessness, teaching errors."""

from __future__ import annotations

import gc
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import matplotlib
import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

import gradlab
import gradlab.viz.plots as P
from gradlab import events, nn
from gradlab.optim import lr_scheduler as L


@pytest.fixture(autouse=True)
def _no_pyplot_state():
    """No plot may leave a pyplot figure open or change the user's rcParams."""
    import matplotlib.pyplot as plt

    before = dict(matplotlib.rcParams)
    yield
    assert plt.get_fignums() == []
    assert dict(matplotlib.rcParams) == before


def legend_texts(ax) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


def lines_by_gid(ax) -> dict:
    return {line.get_gid(): line for line in ax.get_lines()}


def small_model():
    gradlab.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    x = gradlab.randn(16, 4)
    nn.functional.cross_entropy(model(x), gradlab.randint(0, 3, (16,))).backward()
    return model, x


# --------------------------------------------------------------------------- curves

def test_curves_single_series_draws_the_input_exactly():
    values = [2.0, 1.5, 1.1, 0.9]
    fig = P.plot_curves(values)
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    (line,) = ax.get_lines()
    np.testing.assert_array_equal(line.get_ydata(), values)
    np.testing.assert_array_equal(line.get_xdata(), [1, 2, 3, 4])
    assert ax.get_xlabel() == "step" and ax.get_ylabel() == "loss"
    assert ax.get_legend() is None and ax.get_yscale() == "linear"


def test_curves_accept_recorded_loss_tensors():
    losses = [gradlab.tensor(v) for v in (3.0, 2.0, 1.0)]
    (line,) = P.plot_curves({"train": losses}).axes[0].get_lines()
    np.testing.assert_array_equal(line.get_ydata(), [3.0, 2.0, 1.0])


def test_curves_smoothing_keeps_raw_and_draws_debiased_ema():
    fig = P.plot_curves({"train": [1.0, 0.0, 0.0], "val": [4.0, 2.0, 1.0]}, smoothing=0.5,
                        title="loss")
    ax = fig.axes[0]
    lines = lines_by_gid(ax)
    assert len(ax.get_lines()) == 4  # raw + smoothed per series
    assert legend_texts(ax) == ["train", "val"]
    np.testing.assert_array_equal(lines["train:raw"].get_ydata(), [1.0, 0.0, 0.0])
    # by hand: avg = .5*avg + .5*y, norm = .5*norm + .5 -> 1, .25/.75, .125/.875
    np.testing.assert_allclose(lines["train"].get_ydata(), [1.0, 1 / 3, 1 / 7])
    assert ax.get_title() == "loss"


def test_smoothing_spans_the_same_x_for_sparse_series():
    dense = P.smooth([1.0, 0.0], 0.9, x=[0.0, 0.1], unit=0.1)
    sparse = P.smooth([1.0, 0.0], 0.9, x=[0.0, 1.0], unit=0.1)  # ten units apart
    assert dense[1] == pytest.approx(0.09 / 0.19)  # avg .9*.1, norm .9*.1 + .1
    w = 0.9 ** 10
    assert sparse[1] == pytest.approx(w / (w * (1 - 0.9) + (1 - w)) * (1 - 0.9))


def test_curves_epochs_from_steps_and_explicit_x():
    train = [4.0, 3.0, 2.0, 1.5, 1.2, 1.0, 0.9, 0.8]
    fig = P.plot_curves({"train": train, "val": ([1, 2], [2.5, 1.1])}, x_axis="epoch",
                        steps_per_epoch=4)
    ax = fig.axes[0]
    lines = lines_by_gid(ax)
    np.testing.assert_allclose(lines["train"].get_xdata(), np.arange(1, 9) / 4)
    np.testing.assert_array_equal(lines["val"].get_xdata(), [1, 2])
    np.testing.assert_array_equal(lines["val"].get_ydata(), [2.5, 1.1])
    assert ax.get_xlabel() == "epoch"


def test_curves_list_of_pairs_and_log_scale():
    ax = P.plot_curves({"loss": [(10, 1.0), (20, 0.1), (30, 0.01)]}, log_scale=True).axes[0]
    (line,) = ax.get_lines()
    np.testing.assert_array_equal(line.get_xdata(), [10, 20, 30])
    assert ax.get_yscale() == "log"


def test_curves_panels_one_axes_per_metric():
    fig = P.plot_curves({"loss": {"train": [1, 0.5], "val": [1.2, 0.7]},
                         "accuracy": {"train": [0.5, 0.8]}})
    assert [ax.get_title() for ax in fig.axes] == ["loss", "accuracy"]
    assert [len(ax.get_lines()) for ax in fig.axes] == [2, 1]


def test_curves_draw_into_a_given_axes():
    fig = Figure()
    ax = fig.add_subplot(1, 2, 2)
    out = P.plot_curves([1, 2, 3], ax=ax)
    assert out is fig and len(fig.axes) == 1 and len(ax.get_lines()) == 1


@pytest.mark.parametrize("kwargs, error, match", [
    ({"smoothing": 1.0}, ValueError, r"smoothing must be a number in \[0, 1\)"),
    ({"x_axis": "epochs"}, ValueError, r"x_axis must be one of 'step', 'epoch'"),
    ({"steps_per_epoch": 10}, ValueError, r"needs x_axis='epoch'"),
    ({"x_axis": "epoch", "steps_per_epoch": 0}, ValueError, "positive integer"),
    ({"log_scale": True}, ValueError, r"log_scale=True needs positive values.*-1"),
    ({"ax": "not an axes"}, TypeError, "ax must be a matplotlib Axes"),
])
def test_curves_errors_teach(kwargs, error, match):
    with pytest.raises(error, match=match):
        P.plot_curves({"a": [1.0, -1.0]}, **kwargs)


def test_curves_input_errors_teach():
    with pytest.raises(ValueError, match=r"'val' was given as \(x, y\) with 3 x values but 2"):
        P.plot_curves({"val": ([1, 2, 3], [0.5, 0.4])})
    with pytest.raises(TypeError, match="mix of panels and series"):
        P.plot_curves({"loss": {"train": [1]}, "acc": [0.5]})
    with pytest.raises(ValueError, match="2 panels need their own axes"):
        P.plot_curves({"a": {"x": [1]}, "b": {"y": [1]}}, ax=Figure().add_subplot())
    with pytest.raises(ValueError, match="'empty' is empty"):
        P.plot_curves({"empty": []})
    with pytest.raises(ValueError, match="empty mapping"):
        P.plot_curves({})


# --------------------------------------------------------------------------- lr schedules

def test_lr_schedule_from_a_factory_matches_the_scheduler():
    lrs = P.lr_schedule(lambda opt: L.StepLR(opt, step_size=2, gamma=0.5), steps=6, lr=1.0)
    np.testing.assert_allclose(lrs[:, 0], [1, 1, 0.5, 0.5, 0.25, 0.25])


def test_plot_lr_schedule_one_cycle_and_comparison():
    factories = {"one-cycle": lambda opt: L.OneCycleLR(opt, max_lr=1.0, total_steps=50),
                 "cosine": lambda opt: L.CosineAnnealingLR(opt, T_max=50)}
    fig = P.plot_lr_schedule(factories, steps=50, lr=0.5, title="schedules")
    ax = fig.axes[0]
    lines = lines_by_gid(ax)
    assert legend_texts(ax) == ["one-cycle", "cosine"]
    # the same schedule stepped by hand
    opt = gradlab.optim.SGD([nn.Parameter(gradlab.zeros(1))], lr=0.5, momentum=0.9)
    sched = L.OneCycleLR(opt, max_lr=1.0, total_steps=50)
    expected = []
    for _ in range(50):
        expected.append(opt.param_groups[0]["lr"])
        opt.step()
        if len(expected) < 50:
            sched.step()
    np.testing.assert_allclose(lines["one-cycle"].get_ydata(), expected)
    assert max(expected) == pytest.approx(1.0)
    assert ax.get_ylabel() == "learning rate" and ax.get_title() == "schedules"


def test_lr_schedule_of_a_scheduler_with_two_groups_and_a_plain_list():
    a, b = nn.Parameter(gradlab.zeros(1)), nn.Parameter(gradlab.zeros(1))
    opt = gradlab.optim.SGD([{"params": [a], "lr": 1.0}, {"params": [b], "lr": 0.1}], lr=1.0)
    fig = P.plot_lr_schedule(L.ExponentialLR(opt, gamma=0.5), steps=3, log_scale=True)
    ax = fig.axes[0]
    assert legend_texts(ax) == ["group 0", "group 1"]
    np.testing.assert_allclose(lines_by_gid(ax)["group 1"].get_ydata(), [0.1, 0.05, 0.025])
    assert ax.get_yscale() == "log"
    (line,) = P.plot_lr_schedule([0.1, 0.2, 0.3]).axes[0].get_lines()
    np.testing.assert_array_equal(line.get_ydata(), [0.1, 0.2, 0.3])


def test_lr_schedule_reduce_on_plateau_needs_metrics():
    factory = lambda opt: L.ReduceLROnPlateau(opt, patience=0, factor=0.5)  # noqa: E731
    with pytest.raises(ValueError, match="ReduceLROnPlateau.*pass metrics="):
        P.lr_schedule(factory, steps=3)
    lrs = P.lr_schedule(factory, steps=4, lr=1.0, metrics=[1.0, 1.0, 1.0, 1.0])
    # the first metric is the best so far; each later non-improving one halves the lr
    np.testing.assert_allclose(lrs[:, 0], [1.0, 1.0, 0.5, 0.25])


def test_lr_schedule_errors_teach():
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        P.plot_lr_schedule(lambda opt: L.StepLR(opt, 2))
    with pytest.raises(TypeError, match="must return an lr scheduler.*returned int"):
        P.lr_schedule(lambda opt: 3, steps=2)
    with pytest.raises(TypeError, match="expected a list of lrs, an lr scheduler, or a factory"):
        P.lr_schedule(3.0, steps=2)


# --------------------------------------------------------------------------- gradient norms

def test_grad_norms_of_a_model_after_backward():
    model, _ = small_model()
    ax = P.plot_grad_norms(model).axes[0]
    names = [n for n, _ in model.named_parameters()]
    expected = [float(np.linalg.norm(p.grad.numpy())) for _, p in model.named_parameters()]
    bars = ax.patches
    assert len(bars) == len(names)
    np.testing.assert_allclose([b.get_width() for b in bars], expected)
    assert [t.get_text() for t in ax.get_yticklabels()] == names
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "gradient norm (L2)"


def test_grad_norms_by_layer_and_missing_grads():
    model, _ = small_model()
    model[2].bias.grad = None
    ax = P.plot_grad_norms(model, by="layer", norm_type=math.inf, log_scale=False).axes[0]
    w0, b0 = model[0].weight.grad.numpy(), model[0].bias.grad.numpy()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0", "2"]
    expected = max(np.abs(w0).max(), np.abs(b0).max())
    assert ax.patches[0].get_width() == pytest.approx(expected)
    ax = P.plot_grad_norms(model).axes[0]
    assert len(ax.patches) == 3
    assert ax.get_yticklabels()[3].get_text() == "2.bias (no grad)"


def test_grad_norm_history_one_line_per_layer():
    ax = P.plot_grad_norms({"fc1": [1.0, 0.5, 0.25], "fc2": [gradlab.tensor([3.0, 4.0])] * 3}
                           ).axes[0]
    lines = lines_by_gid(ax)
    np.testing.assert_array_equal(lines["fc1"].get_ydata(), [1.0, 0.5, 0.25])
    np.testing.assert_allclose(lines["fc2"].get_ydata(), [5.0, 5.0, 5.0])
    assert legend_texts(ax) == ["fc1", "fc2"] and ax.get_yscale() == "log"


def test_grad_norms_errors_teach():
    fresh = nn.Linear(2, 2)
    with pytest.raises(ValueError, match=r"no parameter of Linear has a \.grad yet; run "
                                         r"loss\.backward\(\) first"):
        P.plot_grad_norms(fresh)
    with pytest.raises(ValueError, match="exactly zero.*log_scale=False"):
        P.plot_grad_norms({"dead": np.zeros(3)})
    with pytest.raises(TypeError, match="mix of snapshots and histories"):
        P.plot_grad_norms({"a": np.ones(2), "b": [1.0, 2.0]})
    with pytest.raises(ValueError, match="by must be one of 'parameter', 'layer'"):
        P.plot_grad_norms({"a": np.ones(2)}, by="module")
    with pytest.raises(TypeError, match=r"expected a gradlab nn.Module.*got list"):
        P.plot_grad_norms([1.0, 2.0])


# --------------------------------------------------------------------------- histograms

def test_histograms_of_gradients_one_panel_per_parameter():
    model, _ = small_model()
    fig = P.plot_histograms(model, bins=20)
    params = dict(model.named_parameters())
    assert [ax.get_title() for ax in fig.axes] == list(params)
    for ax, p in zip(fig.axes, params.values()):
        assert sum(patch.get_height() for patch in ax.patches) == p.numel()
        assert f"n={p.numel()}" in ax.get_xlabel()
    assert fig.get_suptitle() == "gradients per layer"
    assert P.plot_histograms(model, which="param").get_suptitle() == "weights per layer"


def test_histograms_of_captured_activations_count_zeros_and_nonfinite():
    model, x = small_model()
    acts = P.capture_activations(model, x)
    assert list(acts) == ["0", "1", "2"]
    assert tuple(acts["1"].shape) == (16, 8) and not acts["1"].requires_grad
    assert not model[0]._forward_hooks  # hooks removed again
    relu_zeros = float(np.mean(acts["1"].numpy() == 0))
    fig = P.plot_histograms(acts)
    assert f"zeros={relu_zeros:.0%}" in fig.axes[1].get_xlabel()
    fig = P.plot_histograms({"bad": [1.0, float("nan"), 2.0, float("inf")]})
    assert "non-finite: 2" in fig.axes[0].get_xlabel()
    assert sum(p.get_height() for p in fig.axes[0].patches) == 2


def test_histograms_overlay_on_a_given_axes():
    ax = Figure().add_subplot()
    P.plot_histograms({"a": np.arange(10.0), "b": [np.ones(3), np.zeros(2)]}, ax=ax, bins=5)
    assert legend_texts(ax) == ["a", "b"] and len(ax.patches) == 2  # one outline each


def test_histograms_errors_teach():
    with pytest.raises(ValueError, match="bins must be a positive integer"):
        P.plot_histograms({"a": [1.0]}, bins=0)
    with pytest.raises(ValueError, match="'a' has no values"):
        P.plot_histograms({"a": []})
    with pytest.raises(ValueError, match="which must be one of 'grad', 'param'"):
        P.plot_histograms(nn.Linear(2, 2), which="weights")
    with pytest.raises(TypeError, match="capture_activations: expected a gradlab nn.Module"):
        P.capture_activations([1, 2])


# --------------------------------------------------------------------------- memory

def test_memory_from_plain_lists_stacks_in_order():
    data = {"other": [0, 1024, 0], "parameter": [2048, 2048, 2048], "gradient": [0, 0, 1024]}
    ax = P.plot_memory(data, x=[0, 1, 2]).axes[0]
    areas = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert [a.get_gid() for a in areas] == ["parameter", "gradient", "other"]
    assert areas[1].get_hatch() == "//"
    lines = lines_by_gid(ax)
    np.testing.assert_allclose(lines["total"].get_ydata(), [2, 3, 3])  # KiB
    assert ax.get_ylabel() == "memory (KiB)"
    assert legend_texts(ax)[:3] == ["other", "gradient", "parameter"]  # top of stack first
    assert "peak 3 KiB" in legend_texts(ax)


def test_memory_events_replay_matches_the_engines_accounting():
    recorded = []
    before = gradlab.memory_stats()
    with events.subscribe(recorded.append):
        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
        opt = gradlab.optim.Adam(model.parameters(), lr=1e-3)
        for _ in range(2):
            loss = nn.functional.cross_entropy(model(gradlab.randn(8, 32)),
                                               gradlab.randint(0, 4, (8,)))
            loss.backward()
            opt.step()
            opt.zero_grad()
        del loss
        gc.collect()  # any freeing still pending happens while we listen
    after = gradlab.memory_stats()
    timeline = P.memory_timeline(recorded, initial=before)
    final = {c: v[-1] for c, v in timeline["categories"].items()}
    for cat in ("parameter", "gradient", "activation", "optimizer", "other"):
        assert final[cat] == after[f"{cat}_bytes"], cat
    assert final["parameter"] == sum(p.numel() * 4 for p in model.parameters())
    memory_events = [e for e in recorded if isinstance(e, events.Memory)]
    assert timeline["live"][-1] == memory_events[-1].live_bytes
    ax = P.plot_memory(recorded, initial=before, title="2 steps").axes[0]
    assert len([c for c in ax.collections if isinstance(c, PolyCollection)]) == 5
    phases = [g for g in lines_by_gid(ax) if g.startswith("phase:")]
    assert set(phases) == {"phase:backward_begin", "phase:step"}
    n_phase_lines = sum(line.get_gid().startswith("phase:") for line in ax.get_lines())
    assert n_phase_lines == 4  # two backwards, two optimizer steps
    assert ax.get_xlabel() == "memory event" and ax.get_title() == "2 steps"


def test_memory_errors_teach():
    def mem(device):
        return events.Memory(events.next_seq(), "alloc", device, 8, "other", 8, 8)

    with pytest.raises(ValueError, match=r"no gradlab.events.Memory events in the 1 given"):
        P.plot_memory([events.Phase(events.next_seq(), "step", 1)])
    with pytest.raises(ValueError, match=r"several devices \(cpu, cuda:0\); pick one"):
        P.plot_memory([mem("cpu"), mem("cuda:0")])
    assert P.plot_memory([mem("cpu"), mem("cuda:0")], device="cuda:0") is not None
    with pytest.raises(ValueError, match="one value per time point"):
        P.plot_memory({"parameter": [1, 2], "gradient": [1]})
    with pytest.raises(TypeError, match="expected a list of gradlab.events.Memory events"):
        P.plot_memory(42)


# --------------------------------------------------------------------------- optimizer paths

def test_sgd_path_equals_hand_computation():
    # f = x^2/2 + 10 y^2, grad = (x, 20 y); SGD: p <- p - lr * grad
    paths = P.optimizer_trajectories("quadratic", ["sgd"], start=(2.0, 1.0), steps=3, lr=0.01)
    p = np.array([2.0, 1.0])
    expected = [p.copy()]
    for _ in range(3):
        p = p - 0.01 * np.array([p[0], 20 * p[1]])
        expected.append(p.copy())
    np.testing.assert_allclose(paths["SGD"].points, expected, rtol=1e-12)
    np.testing.assert_allclose(paths["SGD"].losses,
                               [0.5 * x ** 2 + 10 * y ** 2 for x, y in expected])
    assert not paths["SGD"].diverged and paths["SGD"].lr == 0.01


def test_momentum_and_adam_first_steps_by_hand():
    paths = P.optimizer_trajectories("quadratic", ["momentum", "adam"], start=(2.0, 1.0),
                                     steps=2, lr=0.1)
    g0 = np.array([2.0, 20.0])
    p1 = np.array([2.0, 1.0]) - 0.1 * g0  # buffer = g0
    g1 = np.array([p1[0], 20 * p1[1]])
    p2 = p1 - 0.1 * (0.9 * g0 + g1)
    np.testing.assert_allclose(paths["SGD+momentum"].points[1:], [p1, p2], rtol=1e-12)
    # Adam's first step is lr * m_hat / (sqrt(v_hat) + eps) = lr * g / (|g| + eps)
    np.testing.assert_allclose(paths["Adam"].points[1], [2.0 - 0.1, 1.0 - 0.1], rtol=1e-7)


def test_plot_optimizer_paths_structure():
    fig = P.plot_optimizer_paths("rosenbrock", steps=20, resolution=40)
    ax = fig.axes[0]
    labels = legend_texts(ax)
    assert labels == ["SGD (lr=0.001)", "SGD+momentum (lr=0.0004)", "RMSprop (lr=0.01)",
                      "Adam (lr=0.1)", "start", "minimum"]
    assert len(ax.get_lines()) == 4 * 2 + 2  # path + end marker each, start, minimum
    paths = P.optimizer_trajectories("rosenbrock", steps=20)
    line = lines_by_gid(ax)["Adam"]
    np.testing.assert_allclose(np.column_stack([line.get_xdata(), line.get_ydata()]),
                               paths["Adam"].points)
    assert ax.collections  # the contour
    assert ax.get_xlim() == (-2.0, 2.0) and ax.get_title() == "Rosenbrock: 20 steps"


def test_optimizer_paths_on_a_user_function_with_custom_optimizers():
    def bowl(x, y):
        return (x - 1) ** 2 + (y + 0.5) ** 2

    opts = {"Adagrad": lambda ps: gradlab.optim.Adagrad(ps, lr=0.5), "sgd-fast": "sgd"}
    ax = P.plot_optimizer_paths(bowl, opts, start=(-2, 2), steps=5, lr=0.25,
                                resolution=20).axes[0]
    assert legend_texts(ax)[:2] == ["Adagrad (lr=0.5)", "sgd-fast (lr=0.25)"]
    assert ax.get_title() == "bowl: 5 steps"
    sgd = lines_by_gid(ax)["sgd-fast"]
    # lr 0.25 on (x-1)^2 halves the distance to the minimum each step
    assert sgd.get_xdata()[1] == pytest.approx(-0.5) and sgd.get_ydata()[1] == pytest.approx(0.75)


def test_a_diverging_optimizer_is_stopped_and_labelled():
    paths = P.optimizer_trajectories("quadratic", ["sgd"], steps=300, lr=0.5)
    assert paths["SGD"].diverged and len(paths["SGD"].points) < 301
    ax = P.plot_optimizer_paths("quadratic", ["sgd"], steps=300, lr=0.5, resolution=20).axes[0]
    assert legend_texts(ax)[0] == "SGD (lr=0.5) - diverged"


def test_optimizer_paths_errors_teach():
    with pytest.raises(ValueError, match="unknown surface 'banana'; built in: quadratic"):
        P.plot_optimizer_paths("banana")
    with pytest.raises(ValueError, match="unknown optimizer 'lion'"):
        P.optimizer_trajectories("quadratic", ["lion"], steps=1)
    with pytest.raises(TypeError, match="returned float, not a gradlab tensor; write it with "
                                        "gradlab ops"):
        P.optimizer_trajectories(lambda x, y: math.sin(float(x)), ["sgd"], steps=1)
    with pytest.raises(ValueError, match=r"start must be a point \(x, y\)"):
        P.optimizer_trajectories("quadratic", start=(1, 2, 3), steps=1)
    with pytest.raises(ValueError, match="must work elementwise on tensors"):
        P.plot_optimizer_paths(lambda x, y: (x * y).sum(), ["sgd"], steps=1, resolution=10)


# --------------------------------------------------------------------------- saving, headless

@pytest.mark.parametrize("ext", ["png", "svg", "pdf"])
def test_saving_by_extension_gives_valid_files(tmp_path, ext):
    path = tmp_path / f"curves.{ext}"
    fig = P.plot_curves({"train": [1, 0.5, 0.2], "val": [1.1, 0.7, 0.4]}, path=path)
    assert isinstance(fig, Figure)
    data = path.read_bytes()
    if ext == "png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
    elif ext == "pdf":
        assert data.startswith(b"%PDF-") and b"%%EOF" in data[-64:]
    else:
        assert ET.fromstring(data).tag.endswith("svg")
    assert os.listdir(tmp_path) == [path.name]  # no temporary file left behind


def test_svg_output_is_deterministic(tmp_path):
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    P.plot_lr_schedule([0.1, 0.05, 0.01], path=a)
    P.plot_lr_schedule([0.1, 0.05, 0.01], path=b)
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("plot, args", [
    (P.plot_grad_norms, ({"w": np.ones(4)},)),
    (P.plot_histograms, ({"w": np.arange(5.0)},)),
    (P.plot_memory, ({"parameter": [1, 2]},)),
])
def test_every_plot_saves(tmp_path, plot, args):
    path = tmp_path / "out.png"
    plot(*args, path=str(path))
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_save_errors_teach(tmp_path):
    with pytest.raises(ValueError, match=r"must end in .png, .svg or .pdf, got '.jpg'"):
        P.plot_curves([1, 2], path=tmp_path / "a.jpg")
    with pytest.raises(FileNotFoundError, match="does not exist. Fix: create it first"):
        P.plot_curves([1, 2], path=tmp_path / "missing" / "a.png")
    assert os.listdir(tmp_path) == []


def test_library_never_imports_pyplot():
    code = ("import sys, gradlab.viz.plots as P; P.plot_curves([1, 2]); "
            "P.plot_memory({'other': [1, 2]}); print('matplotlib.pyplot' in sys.modules)")
    env = dict(os.environ, MPLBACKEND="")
    env.pop("MPLBACKEND")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
