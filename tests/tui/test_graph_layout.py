"""The graph view's layout (Graphviz or our own) and its character canvas."""

from __future__ import annotations

import itertools
import shutil
from types import SimpleNamespace

import pytest

from gradlab.debug.snapshot import EdgeSnapshot, GraphSnapshot, NodeSnapshot
from tui.graph import layout as lay
from tui.graph.canvas import paint
from tui.graph.layout import GraphvizMissing, layout_graph

HAS_DOT = shutil.which("dot") is not None
ENGINES = [pytest.param("dot", marks=pytest.mark.skipif(not HAS_DOT, reason="no Graphviz")),
           "layered"]


def node(key, kind="op", label=None, module=None, shape=(2, 3), state="forward"):
    return NodeSnapshot(key, kind, label or key, state, 0, module=module,
                        output_shapes=(shape,) if shape is not None else ())


def graph(nodes, edges, shape_key=1, current=None, iteration=1):
    return GraphSnapshot(iteration, tuple(nodes), tuple(EdgeSnapshot(s, t) for s, t in edges),
                         shape_key=shape_key, current=current)


def mlp(blocks=2, state="forward", shape_key=None, current=None):
    """x -> [linear(W, b) -> relu, tanh branch -> add] * blocks -> mse_loss, in modules."""
    nodes = [node("in0", "input", "x", shape=(64, 8), state=state)]
    edges = []
    count = itertools.count(1)

    def op(label, inputs, module, shape=(64, 8)):
        key = f"op{next(count)}"
        nodes.append(node(key, "op", label, module, shape, state))
        edges.extend((i, key) for i in inputs)
        return key

    h = "in0"
    for b in range(blocks):
        m = f"blocks.{b}"
        w, bias = f"param:{m}.fc.weight", f"param:{m}.fc.bias"
        nodes.append(node(w, "parameter", f"{m}.fc.weight", shape=(8, 8), state=state))
        nodes.append(node(bias, "parameter", f"{m}.fc.bias", shape=(8,), state=state))
        y = op("relu", [op("linear", [h, w, bias], m + ".fc")], m)
        h = op("add", [y, op("tanh", [h], m)], m)
    loss = op("mse_loss", [h], None, ())
    return graph(nodes, edges, shape_key=shape_key or 1000 + blocks,
                 current=current or loss)


def chain(n, shape_key=77):
    nodes = [node("in0", "input", "x")] + [node(f"op{i}", label="tanh") for i in range(1, n)]
    keys = [x.key for x in nodes]
    return graph(nodes, zip(keys, keys[1:]), shape_key=shape_key)


def diamond():
    nodes = [node("in0", "input", "x"), node("param:w", "parameter", "w"), node("op1", label="mm"),
             node("op2", label="sigmoid"), node("op3", label="tanh"), node("op4", label="mul"),
             node("op5", label="sum", shape=())]
    return graph(nodes, [("in0", "op1"), ("param:w", "op1"), ("op1", "op2"), ("op1", "op3"),
                         ("op2", "op4"), ("op3", "op4"), ("op4", "op5"), ("in0", "op4")],
                 shape_key=5)


@pytest.fixture(autouse=True)
def fresh_cache():
    lay.clear_cache()
    yield
    lay.clear_cache()


def check(layout):
    """No two boxes overlap or touch; every edge starts just below its source's bottom border
    and ends (its arrowhead) just above its target's top border, in straight runs."""
    boxes = list(layout.boxes.values())
    for a, b in itertools.combinations(boxes, 2):
        apart = (a.x + a.w < b.x or b.x + b.w < a.x or a.y + a.h < b.y or b.y + b.h < a.y)
        assert apart, f"{a} and {b} overlap or touch"
    canvas = paint(layout)
    assert set(canvas.routes) == set(layout.edges)
    for (s, t), pts in canvas.routes.items():
        src, tgt = layout.boxes[s], layout.boxes[t]
        (x0, y0), (x1, y1) = pts[0], pts[-1]
        assert y0 == src.y + src.h and src.x < x0 < src.x + src.w - 1, (s, t, pts)
        assert y1 == tgt.y - 1 and tgt.x < x1 < tgt.x + tgt.w - 1, (s, t, pts)
        for (ax, ay), (bx, by) in zip(pts, pts[1:]):
            assert ax == bx or ay == by, f"edge {s}->{t} has a diagonal run"
    text = canvas.text().split("\n")
    for pts in canvas.routes.values():
        x, y = pts[-1]
        assert text[y + canvas.top][x] == "▼"
    return canvas


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("make", [lambda: mlp(1), lambda: mlp(3), diamond, lambda: chain(6)])
def test_small_graphs_no_overlaps_edges_touch_boxes(engine, make):
    g = make()
    layout = layout_graph(g, engine=engine)
    assert layout.engine == engine
    assert set(layout.boxes) == {n.key for n in g.nodes}
    check(layout)
    for s, t in layout.edges:  # forward order: inputs at the top, the loss at the bottom
        assert layout.boxes[t].band > layout.boxes[s].band


@pytest.mark.parametrize("engine", ENGINES)
def test_same_shape_key_reuses_the_layout(engine, monkeypatch):
    first = layout_graph(mlp(2, state="created"), engine=engine)
    runs = lay.stats["dot_runs"]
    again = layout_graph(mlp(2, state="backward"), engine=engine)  # states changed, shape not
    assert again is first
    assert lay.stats["dot_runs"] == runs
    assert paint(again) is paint(first)
    other = layout_graph(mlp(3), engine=engine)
    assert other is not first


def test_dot_missing_falls_back_with_install_hint(monkeypatch):
    monkeypatch.setattr(lay, "_dot_program", lambda: None)
    layout = layout_graph(mlp(2))
    assert layout.engine == "layered"
    assert "apt install graphviz" in layout.note and ".ci/setup" in layout.note
    check(layout)
    lay.clear_cache()
    with pytest.raises(GraphvizMissing, match="apt install graphviz"):
        layout_graph(mlp(2), engine="dot")


def test_dot_failure_falls_back(monkeypatch):
    monkeypatch.setattr(lay, "_dot_program", lambda: shutil.which("false") or "/bin/false")
    layout = layout_graph(diamond())
    assert layout.engine == "layered" and "dot failed" in layout.note
    check(layout)


@pytest.mark.skipif(not HAS_DOT, reason="no Graphviz")
def test_dot_text_sizes_boxes_in_cells():
    info, edges, _ = lay._prepare(diamond(), frozenset(), None, 2)
    text, keys = lay.dot_text(info, edges, {k: lay._size(v[0]) for k, v in info.items()})
    assert "splines=false" in text and "fixedsize=true" in text
    assert "n0 [width=0.7, height=0.8];" in text  # "x" / "2×3": 3 + 4 columns, 4 rows
    assert keys[0] == "in0" and text.count("->") == len(edges)


def test_big_graphs_use_the_layered_engine():
    layout = layout_graph(mlp(lay.DOT_MAX_NODES // 6 + 2))
    assert layout.engine == "layered" and layout.note is None
    check(layout)
    assert layout.width < 120  # no staircase: the chain stays in a column


@pytest.mark.parametrize("engine", ENGINES)
def test_collapse_module_into_one_box(engine):
    g = mlp(2)
    full = layout_graph(g, engine=engine)
    folded = layout_graph(g, collapsed={"blocks.0"}, engine=engine)
    assert folded is not full
    box = folded.boxes["module:blocks.0"]
    assert box.lines == ("blocks.0", "6 nodes") and box.kind == "module"  # 4 ops + 2 params
    assert folded.owner["op1"] == "module:blocks.0" and folded.owner["op5"] == "op5"
    assert ("in0", "module:blocks.0") in folded.edges
    assert all(s != t for s, t in folded.edges)
    check(folded)


@pytest.mark.parametrize("engine", ENGINES)
def test_collapse_that_makes_a_cycle_routes_upwards(engine):
    nodes = [node("in0", "input", "x"), node("op1", module="a"), node("op2"),
             node("op3", module="a"), node("op4", label="sum")]
    g = graph(nodes, [("in0", "op1"), ("op1", "op2"), ("op2", "op3"), ("op3", "op4")], 9)
    layout = layout_graph(g, collapsed={"a"}, engine=engine)
    assert {("module:a", "op2"), ("op2", "module:a")} <= set(layout.edges)
    check(layout)


def test_focus_keeps_the_neighbourhood():
    g = mlp(3)
    layout = layout_graph(g, focus="op4", radius=1)  # op4 = add of block 0
    assert set(layout.boxes) == {"op4", "op2", "op3", "op5", "op7"}  # relu, tanh; linear, tanh
    wider = layout_graph(g, focus="op4", radius=2)
    assert {"param:blocks.1.fc.weight", "op1", "in0", "op8"} <= set(wider.boxes)
    check(layout)


def test_canvas_two_nodes_exact_picture():
    g = graph([node("in0", "input", "x"), node("op1", label="relu")], [("in0", "op1")], 3)
    picture = paint(layout_graph(g, engine="layered")).text()
    assert picture == "\n".join([
        "┌─────┐",
        "│  x  │",
        "│ 2×3 │",
        "└──┬──┘",
        "   └┐",
        "    │",
        "    ▼",
        "╭──────╮",
        "│ relu │",
        "│ 2×3  │",
        "╰──────╯"])
    if HAS_DOT:
        lay.clear_cache()
        picture = paint(layout_graph(g, engine="dot")).text()
        assert picture.split("\n")[3:7] == [" └──┬──┘", "    │", "    │", "    ▼"]


def test_canvas_tags_clipping_and_kinds():
    g = graph([node("param:w", "parameter", "a_really_long_parameter_name_here"),
               node("op1", label="relu", shape=None, state="created")], [("param:w", "op1")], 4)
    layout = layout_graph(g, engine="layered")
    canvas = paint(layout)
    top, label_row = canvas.row(0), canvas.row(1)
    assert top[0].startswith("┏━") and "┓" in top[0]
    assert "…" in label_row[0] and "a_really_long_paramet" in label_row[0]
    tags = {tag for _, _, tag in label_row[1]}
    assert ("border", "param:w") in tags and ("text", "param:w") in tags
    op = layout.boxes["op1"]
    assert op.h == 3  # no shape known: one text line
    assert canvas.row(op.y + canvas.top)[0][op.x] == "╭"
    assert any(tag == ("arrow", "op1") for _, _, tag in canvas.row(op.y - 1 + canvas.top)[1])


def test_frames_mark_modules():
    layout = layout_graph(mlp(2), engine="layered")
    canvas = paint(layout)
    titles = [f.path for f in layout.frames]
    assert "blocks" in titles
    text = canvas.text()
    assert "┄ blocks ┄" in text
    for f in layout.frames:  # a frame never covers a box of another module
        for b in layout.boxes.values():
            inside = f.x <= b.x and b.x + b.w <= f.x + f.w and f.y <= b.y and b.y + b.h <= f.y + f.h
            outside = (b.x + b.w <= f.x or f.x + f.w <= b.x or b.y + b.h <= f.y
                       or f.y + f.h <= b.y)
            assert inside or outside, (f, b)


def test_a_box_whose_value_carries_a_tangent_is_marked():
    import dataclasses

    import gradlab
    from gradlab.debug.summary import summarize

    plain = node("op0", label="mul")
    dual = dataclasses.replace(plain, tangent=summarize(gradlab.ones(2, 3)))
    assert lay.box_lines(plain) == ("mul", "2×3")
    assert lay.box_lines(dual) == ("mul", f"2×3 {lay.TANGENT_MARK}")


def test_a_cast_box_says_its_dtype_but_keeps_the_op_name_for_breakpoints():
    from gradlab.debug.graph import op_label

    node = SimpleNamespace(kind="op", label="to", key="op3", output_shapes=((3, 4),),
                           value=None, tangent=None, dtype="float16")
    assert lay.box_lines(node) == ("to float16", "3×4") and node.label == "to"
    assert op_label("to", None) == "to" and op_label("mul", "float16") == "mul"
