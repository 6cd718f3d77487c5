"""The debugger's side panels, fed hand-built snapshots in a small Textual app (80x24)."""

from __future__ import annotations

import asyncio
import html
import re
from dataclasses import replace

import pytest
from textual.app import App, ComposeResult
from textual.containers import Container
from textual.widgets import RichLog

import gradlab
from gradlab.debug.snapshot import (
    DeviceMemorySnapshot,
    EdgeSnapshot,
    GraphSnapshot,
    LogLine,
    MemorySample,
    NodeSnapshot,
    OptimizerSnapshot,
    ParamStateSnapshot,
    Snapshot,
    TensorSummary,
)
from tui.widgets.inspector import InspectorPanel, summary_lines
from tui.widgets.log import LogPanel, parse_filter
from tui.widgets.memory import MemoryPanel
from tui.widgets.optimizer import OptimizerPanel
from tui.widgets.timing import TimePanel, time_by_op
from tui.widgets.training import TrainingPanel

# ------------------------------------------------------------------ hand-built data

EMPTY = Snapshot(version=0, status="idle", iteration=0, epoch=0, position=None,
                 pause_reason=None, graph=None, history=(), memory=(), optimizers=(),
                 losses=(), metrics={}, steps_per_second=None, log=(), output="", error=None,
                 breakpoints=())

WEIGHT = TensorSummary(shape=(4, 2), dtype="float32", device="cpu", numel=8, min=-0.5, max=0.75,
                       mean=0.125, std=0.4, norm=1.25,
                       heatmap=((-0.5, 0.0), (0.25, 0.75), (0.1, -0.2), (0.0, 0.3)))
RELU_OUT = TensorSummary(shape=(3, 4), dtype="float32", device="cpu", numel=12, min=0.0,
                         max=2.5, mean=0.75, std=0.8, norm=3.5,
                         histogram=((0.0, 1.0, 2.0, 2.5), (6, 4, 2)),
                         values="[[0.0, 1.0, 2.5, 0.0], ...]")
BAD_GRAD = TensorSummary(shape=(3, 4), dtype="float32", device="cpu", numel=12, min=-1.0,
                         max=1.0, mean=0.0, std=0.5, norm=2.0, nan=3, inf=1)


def graph(current: str | None = "op1", relu_grad: TensorSummary | None = None) -> GraphSnapshot:
    nodes = (
        NodeSnapshot(key="param:fc1.weight", kind="parameter", label="fc1.weight",
                     state="forward", order=0, dtype="float32", device="cpu", value=WEIGHT),
        NodeSnapshot(key="op0", kind="op", label="linear", state="forward", order=1,
                     module="fc1", backward_name="LinearBackward0", node_id=11,
                     input_shapes=((3, 2), (4, 2)), output_shapes=((3, 4),), dtype="float32",
                     device="cpu"),
        NodeSnapshot(key="op1", kind="op", label="relu", state="backward" if relu_grad else
                     "forward", order=2, module="act", backward_name="ReluBackward0",
                     node_id=12, input_shapes=((3, 4),), output_shapes=((3, 4),),
                     dtype="float32", device="cpu", value=RELU_OUT, grad=relu_grad,
                     grad_inputs=(relu_grad,) if relu_grad else (),
                     derivative="d relu(x)/dx = 1 where x > 0, else 0: the gradient passes "
                                "through where the input was positive"),
    )
    edges = (EdgeSnapshot("param:fc1.weight", "op0", "(4, 2)"), EdgeSnapshot("op0", "op1"))
    return GraphSnapshot(iteration=3, nodes=nodes, edges=edges, shape_key=1, current=current)


def memory(live: int = 3 * 1024 ** 2, pool: dict | None = None) -> DeviceMemorySnapshot:
    timeline = tuple(MemorySample(time=0.5 * i, live_bytes=live * i // 4) for i in range(1, 5))
    return DeviceMemorySnapshot(device="cpu", live_bytes=live, peak_bytes=4 * 1024 ** 2,
                                by_category={"parameter": 1024 ** 2, "gradient": 1024 ** 2,
                                             "activation": 512 * 1024, "optimizer": 0,
                                             "other": 512 * 1024},
                                timeline=timeline, pool=pool or {})


ADAM = OptimizerSnapshot(
    name="Adam", source=1, steps=12,
    groups=({"lr": 0.001, "betas": (0.9, 0.999), "eps": 1e-08, "weight_decay": 0.0,
             "amsgrad": False, "foreach": None, "nesterov": True},),
    params=(ParamStateSnapshot(name="fc1.weight", shape=(4, 2), group=0, lr=0.001, step=12,
                               grad_norm=0.375, update_norm=0.0025,
                               state_norms={"exp_avg": 0.0625, "exp_avg_sq": 0.015625},
                               state_scalars={"step": 12.0}),
            ParamStateSnapshot(name="fc1.bias", shape=(4,), group=0, lr=0.001, step=12,
                               grad_norm=0.125, update_norm=0.001,
                               state_norms={"exp_avg": 0.03125, "exp_avg_sq": 0.0078125},
                               state_scalars={"step": 12.0})))


# ------------------------------------------------------------------ a small app

class PanelApp(App):
    """One panel in a 38x16 box: the space a panel gets in an 80x24 terminal."""

    CSS = "#box { width: 38; height: 16; }"

    def __init__(self, panel, width: int = 38) -> None:
        super().__init__()
        self.panel = panel
        self.CSS = f"#box {{ width: {width}; height: 16; }}"

    def compose(self) -> ComposeResult:
        with Container(id="box"):
            yield self.panel


def run(panel, steps, width: int = 38):
    """Run ``steps(app, pilot)`` (a coroutine function) against ``panel`` in an 80x24 app."""
    async def main():
        app = PanelApp(panel, width)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await steps(app, pilot)
    asyncio.run(main())


def screen_text(app: App) -> str:
    """The characters on screen, from the SVG screenshot."""
    svg = app.export_screenshot()
    texts = re.findall(r"<text[^>]*>(.*?)</text>", svg, re.S)
    return html.unescape("".join(texts)).replace("\xa0", " ")


def flat(text: str) -> str:
    """Text with line breaks (from wrapping to the panel's width) turned into spaces."""
    return " ".join(text.split())


# ------------------------------------------------------------------ inspector

def test_inspector_shows_the_selected_node_and_its_rule():
    panel = InspectorPanel()

    async def steps(app, pilot):
        panel.show(replace(EMPTY, graph=graph()), "op1")
        await pilot.pause()
        text = panel.text
        for expected in ("relu", "ReluBackward0", "act", "(3, 4)", "float32 cpu",
                         "max 2.5", "mean 0.75", "norm 3.5", "finite",
                         "[[0.0, 1.0, 2.5, 0.0], ...]"):
            assert expected in text, expected
        assert "the gradient passes through where the input was positive" in flat(text)
        # no gradient yet, said in words
        assert "no gradient yet: backward has not reached this node" in flat(text)
        assert "histogram" not in text and "█" in text  # the histogram's columns
        assert "relu" in screen_text(app)  # and it is on screen

    run(panel, steps)


def test_inspector_follows_current_node_and_updates_with_gradients():
    panel = InspectorPanel()

    async def steps(app, pilot):
        panel.show(replace(EMPTY, graph=graph(current="op0")), None)
        await pilot.pause()
        assert "linear" in panel.text and "(current)" in panel.text
        assert "LinearBackward0" in panel.text and "(3, 2) (4, 2)" in panel.text
        before = panel.redraws
        panel.show(replace(EMPTY, version=5, graph=graph(current="op0")), None)
        assert panel.redraws == before  # same node record: nothing redrawn
        panel.show(replace(EMPTY, version=6, graph=graph(relu_grad=BAD_GRAD)), "op1")
        await pilot.pause()
        text = panel.text
        assert panel.redraws == before + 1
        assert "NaN 3" in text and "Inf 1" in text
        assert "no gradient yet" not in text
        assert "gradient sent to each input" in text and "[0] (3, 4)" in text
        # NaN counts are drawn in the theme's error colour
        styles = [str(span.style) for span in panel.body.content.spans]
        assert any("$error" in style for style in styles)

    run(panel, steps)


def test_inspector_parameter_heatmap_and_placeholders():
    panel = InspectorPanel()

    async def steps(app, pilot):
        panel.show(EMPTY, None)
        await pilot.pause()
        assert "no graph yet" in panel.text
        panel.show(replace(EMPTY, graph=graph(current=None)), None)
        await pilot.pause()
        assert "select a node in the graph" in panel.text
        panel.show(replace(EMPTY, graph=graph()), "op9")
        await pilot.pause()
        assert "op9 is not in the graph of iteration 3" in flat(panel.text)
        panel.show(replace(EMPTY, graph=graph()), "param:fc1.weight")
        await pilot.pause()
        text = panel.text
        assert "fc1.weight parameter" in text and "(4, 2) float32 cpu" in text
        assert "min -0.5" in text and "max 0.75" in text
        assert "no gradient yet: backward has not reached this parameter" in flat(text)
        # heatmap, two cells per value: shade = magnitude / 0.75 (the largest), in 4 steps
        assert "  ▓▓  \n  ░░██\n  ░░░░\n    ▒▒" in text
        styles = {str(span.style) for span in panel.body.content.spans}
        assert {"#0072B2", "#D55E00"} <= styles  # negative blue, positive vermillion

    run(panel, steps)



def test_summary_of_a_few_elements_shows_values_not_a_picture():
    scalar = TensorSummary(shape=(), dtype="float32", device="cpu", numel=1, min=0.5, max=0.5,
                           mean=0.5, norm=0.5, heatmap=((0.5,),),
                           histogram=((0.0, 0.5, 1.0), (0, 1)), values="0.5")
    pair = TensorSummary(shape=(3,), dtype="float32", device="cpu", numel=3, min=1.0, max=3.0,
                         mean=2.0, std=1.0, norm=3.742, heatmap=((1.0, 2.0, 3.0),),
                         values="[1., 2., 3.]")
    text = "\n".join(line.plain for line in summary_lines(scalar, 38))
    assert "value 0.5" in text and "min" not in text and "norm" not in text
    assert not set(text) & set("░▒▓█▁▂▃▄▅▆▇")  # no shades, no columns
    text = "\n".join(line.plain for line in summary_lines(pair, 38))
    assert "[1., 2., 3.]" in text and "min 1" in text
    assert not set(text) & set("░▒▓█▁▂▃▄▅▆▇")
    four = replace(pair, shape=(4,), numel=4, heatmap=((1.0, 2.0, 3.0, 4.0),))
    assert "█" in "\n".join(line.plain for line in summary_lines(four, 38))


def test_a_complex_tensors_statistics_say_they_are_of_magnitudes():
    from gradlab.debug.summary import summarize

    z = gradlab.tensor([3 + 4j, -1j, 0.5])
    text = "\n".join(line.plain for line in summary_lines(summarize(z), 60))
    assert "complex64" in text and "of |z|:" in text and "min 0.5" in text and "max 5" in text
    assert "[3.0000+4.j, -0.0000-1.j, 0.5000+0.j]" in text  # as print() shows them


# ------------------------------------------------------------------ memory

def test_memory_panel_table_sparkline_and_pool():
    panel = MemoryPanel()

    async def steps(app, pilot):
        panel.show(EMPTY, None)
        await pilot.pause()
        assert "no memory figures yet" in panel.text
        panel.show(replace(EMPTY, memory=(memory(),)), None)
        await pilot.pause()
        text = panel.text
        for expected in ("cpu", "live 3.0 MiB", "peak 4.0 MiB", "params", "grads",
                         "saved acts", "optim state", "other", "1.0 MiB", "512.0 KiB", "0 B",
                         "▁▃▆█", "last 1.5 s", "768.0 KiB .. 3.0 MiB"):
            assert expected in text, expected
        assert "pool" not in text
        panel.show(replace(EMPTY, memory=(memory(live=4 * 1024 ** 2,
                                                 pool={"used_bytes": 2048, "blocks": 3}),)),
                   None)
        await pilot.pause()
        assert "live 4.0 MiB" in panel.text
        assert "used 2.0 KiB" in panel.text and "blocks 3" in panel.text
        assert "live 4.0 MiB" in screen_text(app)
        before = panel.redraws
        panel.show(replace(EMPTY, version=7, memory=panel._snapshot.memory), None)
        assert panel.redraws == before  # same figures: nothing rebuilt
        app.query_one("#box").styles.width = 78  # more room: longer labels
        await pilot.pause()
        assert panel.redraws == before + 1 and "activations saved for backward" in panel.text

    run(panel, steps)


def test_memory_panel_without_times_leaves_the_timeline_off():
    panel = MemoryPanel(show_times=False)

    async def steps(app, pilot):
        panel.show(replace(EMPTY, memory=(memory(),)), None)
        await pilot.pause()
        assert "live 3.0 MiB" in panel.text and "1.0 MiB" in panel.text
        assert "last" not in panel.text and "▁▃▆█" not in panel.text

    run(panel, steps)


# ------------------------------------------------------------------ optimizer

def test_optimizer_panel_cards_when_narrow_and_table_when_wide():
    narrow = OptimizerPanel()

    async def narrow_steps(app, pilot):
        narrow.show(EMPTY, None)
        await pilot.pause()
        assert "no optimizer step yet" in narrow.text
        narrow.show(replace(EMPTY, optimizers=(ADAM,), graph=graph()), None)
        await pilot.pause()
        text = narrow.text
        for expected in ("Adam", "12 steps", "1 group", "lr 0.001", "betas (0.9, 0.999)",
                         "eps 1e-08", "fc1.weight", "(4, 2)", "|grad| 0.375", "|upd| 0.0025",
                         "|exp_avg| 0.0625", "step 12", "fc1.bias", "(4,)"):
            assert expected in text, expected
        assert "nesterov True" in text and "amsgrad" not in text and "foreach" not in text
        # update / parameter ratio: 0.0025 / 1.25 (the graph's norm of fc1.weight)
        assert "upd/param 0.002" in text

    run(narrow, narrow_steps)
    wide = OptimizerPanel()

    async def wide_steps(app, pilot):
        wide.show(replace(EMPTY, optimizers=(ADAM,)), None)
        await pilot.pause()
        lines = wide.text.splitlines()
        header = next(line for line in lines if line.startswith("param"))
        assert header.split() == ["param", "shape", "lr", "|grad|", "|upd|", "|exp_avg|",
                                  "|exp_avg_sq|", "step"]  # no ratio without the graph
        row = next(line for line in lines if line.startswith("fc1.bias"))
        assert row.split() == ["fc1.bias", "(4,)", "0.001", "0.125", "0.001", "0.0312",
                               "0.00781", "12"]

    run(wide, wide_steps, width=78)


# ------------------------------------------------------------------ training

def test_training_panel_curve_counters_and_metrics():
    panel = TrainingPanel()
    losses = tuple((i, 2.0 / i) for i in range(1, 21))

    async def steps(app, pilot):
        panel.show(EMPTY, None)
        await pilot.pause()
        assert "no loss yet" in panel.text and "iteration 0" in panel.text
        assert "it/s" not in panel.text  # steps per second unknown: hidden
        snap = replace(EMPTY, iteration=20, epoch=2, losses=losses, steps_per_second=12.5,
                       metrics={"accuracy": ((1, 0.5), (2, 0.75), (3, 1.0))})
        panel.show(snap, None)
        await pilot.pause()
        text = panel.text
        for expected in ("iteration 20", "epoch 2", "12.5 it/s", "loss 0.1 at iteration 20",
                         "2┤", "0.1┤", "metrics", "accuracy", "▁▅█"):
            assert expected in text, expected
        assert any("\u2800" < ch <= "\u28ff" for ch in text)  # the braille curve
        before = panel.redraws
        panel.show(replace(snap, version=9), None)
        assert panel.redraws == before  # nothing it shows changed
        panel.show(replace(snap, iteration=21, losses=losses + ((21, 0.05),)), None)
        await pilot.pause()
        assert "loss 0.05 at iteration 21" in panel.text and "0.05┤" in panel.text
        assert "iteration 21" in screen_text(app)

    run(panel, steps)


def test_training_panel_can_hide_the_rate():
    panel = TrainingPanel(show_rate=False)

    async def steps(app, pilot):
        panel.show(replace(EMPTY, steps_per_second=3.0, losses=((1, 1.0),)), None)
        await pilot.pause()
        assert "it/s" not in panel.text and "loss 1 at iteration 1" in panel.text

    run(panel, steps)


# ------------------------------------------------------------------ log

def log_lines(log: RichLog) -> list[str]:
    return [strip.text.rstrip() for strip in log.lines]


def test_log_panel_appends_filters_and_shows_output_and_error():
    panel = LogPanel()
    lines = (LogLine(1, "op", "linear (op0) in fc1"), LogLine(2, "backward", "ReluBackward0"),
             LogLine(3, "update", "Adam step 1"), LogLine(4, "error", "NaN in grad of op1"))

    async def steps(app, pilot):
        events = panel.query_one("#log-events", RichLog)
        panel.show(EMPTY, None)
        await pilot.pause()
        assert log_lines(events) == []
        assert panel.query_one("#log-output").has_class("-empty")  # nothing printed yet
        panel.show(replace(EMPTY, log=lines[:2], output="epoch 1\nloss 0.5"), None)
        await pilot.pause()
        assert log_lines(events) == ["op    linear (op0) in fc1", "backw ReluBackward0"]
        output = panel.query_one("#log-output", RichLog)
        assert log_lines(output) == ["epoch 1"]
        assert str(panel.query_one("#log-partial").content) == "loss 0.5"  # not ended yet
        # append only: the two shown lines are not written again
        panel.show(replace(EMPTY, log=lines, output="epoch 1\nloss 0.5\nepoch 2\n",
                           error="Traceback (most recent call last):\nValueError: boom"), None)
        await pilot.pause()
        assert len(log_lines(events)) == 4 and panel.last_seq == 4
        assert log_lines(output) == ["epoch 1", "loss 0.5", "epoch 2"]
        assert panel.query_one("#log-partial").has_class("-empty")
        error = panel.query_one("#log-error-text")
        assert "ValueError: boom" in str(error.content)
        assert not panel.query_one("#log-error").has_class("-empty")
        assert "ValueError: boom" in screen_text(app)
        # the filter: kinds and words, typed into the box
        panel.query_one("#log-filter").focus()
        await pilot.press(*"bwd")
        await pilot.pause()
        assert log_lines(events) == ["backw ReluBackward0"]
        panel.set_filter("op fc1")
        await pilot.pause()
        assert log_lines(events) == ["op    linear (op0) in fc1"]
        panel.set_filter("")
        await pilot.pause()
        assert len(log_lines(events)) == 4
        # the bounded output dropped its start, and a new run's log starts over
        panel.show(replace(EMPTY, log=(LogLine(0, "phase", "epoch"),), output="epoch 2\nok\n"))
        await pilot.pause()
        assert log_lines(output) == ["epoch 2", "ok"]
        assert log_lines(events) == ["phase epoch"]
        assert panel.query_one("#log-error").has_class("-empty")  # no error any more

    run(panel, steps)


def test_log_filter_words():
    assert parse_filter("op, bwd relu") == (frozenset({"op", "backward"}), ("relu",))
    assert parse_filter("") == (frozenset(), ())


def test_panels_repaint_without_a_new_layout_when_their_height_stays():
    panel = MemoryPanel()

    async def steps(app, pilot):
        panel.show(replace(EMPTY, memory=(memory(),)), None)
        await pilot.pause()
        calls = []
        original = panel.body.refresh
        panel.body.refresh = lambda *a, **k: calls.append(k) or original(*a, **k)
        panel.show(replace(EMPTY, memory=(memory(live=2 * 1024 ** 2),)), None)  # same rows
        assert calls and not any(k.get("layout") for k in calls)
        calls.clear()
        panel.show(replace(EMPTY, memory=(memory(pool={"blocks": 3}),)), None)  # one row more
        assert any(k.get("layout") for k in calls)

    run(panel, steps)


# ------------------------------------------------------------------ time

def timed_graph() -> GraphSnapshot:
    ops = [("linear", 0.004, 0.006), ("relu", 0.001, 0.0005), ("linear", 0.002, 0.003),
           ("mse_loss", 0.0005, None)]
    nodes = tuple(NodeSnapshot(key=f"op{i}", kind="op", label=label, state="backward",
                               order=i, duration=fwd, backward_duration=bwd)
                  for i, (label, fwd, bwd) in enumerate(ops))
    return GraphSnapshot(iteration=7, nodes=nodes, edges=(), shape_key=2)


def test_time_panel_adds_up_each_op_largest_first():
    assert time_by_op(timed_graph().nodes) == [("linear", 2, 0.006, pytest.approx(0.009)),
                                               ("relu", 1, 0.001, 0.0005),
                                               ("mse_loss", 1, 0.0005, 0.0)]
    panel = TimePanel()

    async def steps(app, pilot):
        panel.show(replace(EMPTY, graph=timed_graph()), None)
        await pilot.pause()
        lines = panel.text.splitlines()
        assert lines[0].split() == ["iteration", "7", "forward", "7.5", "ms", "backward",
                                    "9.5", "ms"]
        assert lines[1].split() == ["op", "calls", "fwd", "ms", "bwd", "ms"]
        linear, relu, loss = (line.split() for line in lines[2:5])
        assert linear[:4] == ["linear", "2", "6", "9"] and set(linear[4]) == {"█"}
        assert relu[:4] == ["relu", "1", "1", "0.5"] and loss[:4] == ["mse_loss", "1", "0.5", "-"]
        # bars in proportion: relu 1.5 ms and the loss 0.5 ms against linear's 15 ms
        full = len(linear[4])
        assert abs(len(relu[4]) - full / 10) <= 1 and len(loss[4]) <= max(1, full // 20 + 1)
        assert "gradlab profile SCRIPT" in flat(panel.text)
        panel.show(replace(EMPTY, graph=replace(timed_graph(), nodes=tuple(
            replace(n, duration=None) for n in timed_graph().nodes))), None)
        await pilot.pause()
        assert "no op times in this view" in flat(panel.text)
        panel.show(EMPTY, None)
        await pilot.pause()
        assert "no graph yet" in panel.text

    run(panel, steps, width=60)


def test_time_panel_drops_the_bars_when_narrow():
    panel = TimePanel()

    async def steps(app, pilot):
        panel.show(replace(EMPTY, graph=timed_graph()), None)
        await pilot.pause()
        lines = panel.text.splitlines()
        assert lines[2].split() == ["op", "calls", "fwd", "ms", "bwd", "ms"]
        assert lines[3].split() == ["linear", "2", "6", "9"]
        assert "█" not in panel.text

    run(panel, steps)
