"""DOT text and files: structure, golden output, image formats, the missing-`dot` error, theme."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import gradlab
from gradlab import viz
from gradlab.viz import theme
from gradlab.viz.jupyter import register, tensor_html

from .programs import deep, mlp, scalar

GOLDEN = Path(__file__).parent / "golden"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")


def golden_programs() -> dict:
    """name -> DOT text of a small program (each call reruns the program from scratch)."""
    L, tape, _ = scalar()
    loss, model, mlp_tape, _ = mlp()
    cap = viz.capture(loss, params=dict(model.named_parameters()), trace=mlp_tape)
    cap.module_types = {p: type(m).__name__ for p, m in model.named_modules()}
    deep_loss, deep_model = deep(blocks=4)
    return {
        "scalar_values_grads": viz.draw_graph(L, trace=tape, show_values=True,
                                              show_grads=True).source,
        "mlp_forward": viz.draw_graph(cap).source,
        "mlp_backward": viz.draw_graph(cap, view="backward").source,
        "deep_depth2_highlight": viz.draw_graph(deep_loss, model=deep_model, depth=2,
                                                highlight=deep_loss).source,
    }


def test_dot_matches_the_golden_files_byte_for_byte_and_runs_agree():
    first, second = golden_programs(), golden_programs()
    assert first == second
    if os.environ.get("GRADLAB_UPDATE_GOLDEN"):
        for name, text in first.items():
            (GOLDEN / f"{name}.dot").write_text(text, encoding="utf-8")
    for name, text in first.items():
        assert text == (GOLDEN / f"{name}.dot").read_text(encoding="utf-8"), (
            f"{name}.dot changed; if on purpose, rerun with GRADLAB_UPDATE_GOLDEN=1")


def node_ids(source: str) -> list[str]:
    return re.findall(r"^\s+(n\d+) \[", source, flags=re.M)


def test_dot_structure_nodes_edges_clusters_and_labels():
    loss, model, tape, _ = mlp()
    graph = viz.graph_model(loss, model=model, trace=tape)
    source = viz.draw_graph(loss, model=model, trace=tape).source
    assert source.startswith("digraph gradlab_forward {")
    assert sorted(node_ids(source), key=lambda i: int(i[1:])) == [n.id for n in graph.nodes]
    edges = re.findall(r"^\s+(n\d+) -> (n\d+)", source, flags=re.M)
    assert edges == [(e.source, e.target) for e in graph.edges]
    assert source.count("subgraph cluster_") == 4  # the model and its three layers
    assert 'label="model : MLP"' in source and 'label="hidden : Linear"' in source
    assert "<B>hidden.weight</B>" in source and "(4, 3) float32" in source
    assert 'label="(5, 4)"' in source  # the tensor between linear and relu
    assert "rankdir=LR" in source
    backward = viz.draw_graph(loss, model=model, trace=tape, view="backward").source
    assert "<B>AddmmBackward0</B>" in backward and "style=dashed" in backward
    assert "rankdir=TB" in viz.draw_graph(loss, view="backward").source


def test_highlight_values_and_grads_reach_the_dot_text():
    L, tape, _ = scalar()
    plain = viz.draw_graph(L, trace=tape).source
    assert "data " not in plain and theme.THEME.highlight.fill not in plain
    marked = viz.draw_graph(L, trace=tape, highlight=L, show_values=True,
                            show_grads=True).source
    assert marked.count(f'fillcolor="{theme.THEME.highlight.fill}"') == 1
    assert "data -8.0000" in marked and "grad 6.0000" in marked


@needs_dot
@pytest.mark.parametrize("ext, magic", [("svg", None), ("png", b"\x89PNG\r\n\x1a\n"),
                                        ("pdf", b"%PDF-")])
def test_render_writes_valid_images(tmp_path, ext, magic):
    loss, model, tape, _ = mlp()
    path = tmp_path / f"graph.{ext}"
    assert viz.render(loss, path, model=model, trace=tape) == str(path)
    data = path.read_bytes()
    if magic is None:
        root = ET.fromstring(data)
        assert root.tag.endswith("svg")
        texts = {t.text for t in root.iter() if t.tag.endswith("text")}
        assert {"hidden.weight", "linear", "loss"} <= texts
    else:
        assert data.startswith(magic)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"graph.{ext}"]  # no temp files


def test_dot_files_work_without_graphviz_and_images_fail_clearly(tmp_path, monkeypatch):
    loss, _, _, _ = mlp()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    viz.render(loss, tmp_path / "graph.dot")
    assert (tmp_path / "graph.dot").read_text().startswith("digraph gradlab_forward")
    with pytest.raises(viz.GraphvizNotFound, match=r"apt install graphviz.*brew install "
                       r"graphviz.*conda install"):
        viz.render(loss, tmp_path / "graph.svg")
    assert not (tmp_path / "graph.svg").exists()
    assert tensor_html(loss) is None  # notebooks fall back to the text
    with pytest.raises(ValueError, match=r"can't tell the format of .*graph.jpeg"):
        viz.render(loss, tmp_path / "graph.jpeg")


@needs_dot
def test_a_big_graph_with_repeated_blocks_renders(tmp_path):
    loss, model = deep(blocks=40)
    viz.render(loss, tmp_path / "deep.svg", model=model)
    text = (tmp_path / "deep.svg").read_text()
    assert "layers.1 \u2026 layers.39" in text


def test_theme_is_readable_in_print_and_in_grayscale():
    t = theme.THEME
    styles = dict(t.nodes, highlight=t.highlight)
    for kind, style in styles.items():
        assert theme.contrast(style.text, style.fill) >= 7.0, kind  # WCAG AAA body text
        assert theme.contrast(t.muted_text, style.fill) >= 4.5, kind
    for depth in range(3):
        assert theme.contrast(t.muted_text, t.cluster_fill(depth)) >= 4.5
    # Kinds that share a shape and line must differ in lightness, so gray prints tell
    # them apart: at least 0.1 apart in relative luminance.
    looks: dict = {}
    for kind, s in styles.items():
        looks.setdefault((s.shape, s.line, s.peripheries), []).append(kind)
    for group in looks.values():
        lums = sorted(theme.luminance(styles[k].fill) for k in group
                      if k not in ("accumulate",))  # accumulate is parameter in the other view
        assert all(b - a >= 0.1 for a, b in zip(lums, lums[1:])), group
    assert theme.luminance("#000000") == 0 and theme.luminance("#ffffff") == pytest.approx(1)


def test_importing_gradlab_viz_loads_neither_graphviz_nor_matplotlib():
    code = ("import sys, gradlab, gradlab.viz, gradlab.viz.jupyter; "
            "print('graphviz' in sys.modules, 'matplotlib' in sys.modules); "
            "import importlib; name = importlib.import_module('gradlab.viz.plots').__all__[0]; "
            "print(getattr(gradlab.viz, name) is getattr(gradlab.viz.plots, name))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False", "False", "True"]  # the plots load on first use


class _FakeShell:
    """Just enough of IPython's shell: display_formatter.formatters[mime].for_type."""

    class _Formatter:
        def __init__(self):
            self.types = {}

        def for_type(self, cls, func):
            self.types[cls] = func

    def __init__(self):
        self.display_formatter = type("DF", (), {})()
        self.display_formatter.formatters = {"text/html": self._Formatter()}


@needs_dot
def test_jupyter_shows_tensors_with_a_graph_as_text_and_svg():
    shell = _FakeShell()
    assert register(shell) is True
    show = shell.display_formatter.formatters["text/html"].types[gradlab.Tensor]
    a = gradlab.ones(2, requires_grad=True)
    html = show((a * 3).sum())
    assert html.startswith("<pre>tensor(6.")
    assert "<svg" in html and "<?xml" not in html and "mul" in html
    assert show(a) is None and show(gradlab.ones(2)) is None  # no graph: plain text
    assert register(None) in (True, False)  # without IPython running: False, no error
