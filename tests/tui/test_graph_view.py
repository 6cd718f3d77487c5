"""The GraphView widget, driven with Textual's pilot in an 80x24 terminal."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from types import SimpleNamespace

import pytest
from textual import events
from textual.app import App

from tests.tui.test_graph_layout import mlp
from tui.graph import layout as lay
from tui.widgets.graph_view import GraphView


class GraphApp(App):
    def __init__(self, graph=None) -> None:
        super().__init__()
        self.graph = graph
        self.selected_keys: list[str] = []

    def compose(self):
        yield GraphView()

    def on_mount(self) -> None:
        self.query_one(GraphView).show(self.graph)

    def on_graph_view_node_selected(self, message: GraphView.NodeSelected) -> None:
        self.selected_keys.append(message.key)


def pilot_test(body):
    """Run an async pilot test with asyncio (no pytest async plugin needed)."""
    @functools.wraps(body)
    def test() -> None:
        asyncio.run(body())
    return test


@pytest.fixture(autouse=True)
def fresh_cache():
    lay.clear_cache()
    yield


async def _started(graph, size=(80, 24)):
    app = GraphApp(graph)
    return app, app.run_test(size=size)


def _line_styles(view: GraphView, key: str):
    """The styles of the visible cells of box ``key``'s label row."""
    box = view.graph_layout.boxes[key]
    y = view.canvas.box_top(box) + 1 - view.scroll_offset.y
    strip = view.render_line(y)
    x = box.x - view.scroll_offset.x
    cells, styles = 0, []
    for seg in strip:
        if x <= cells < x + box.w:
            styles.append(seg.style)
        cells += len(seg.text)
    return styles


@pilot_test
async def test_arrows_follow_edges_and_post_node_selected():
    app, ctx = await _started(mlp(2))
    async with ctx as pilot:
        view = app.query_one(GraphView)
        await pilot.pause()
        view.select("op1")  # linear of block 0; select() itself sends no message
        await pilot.press("down")
        await pilot.pause()
        assert ("op1", view.selected) in view.graph_layout.edges
        assert app.selected_keys == [view.selected]
        await pilot.press("up")
        await pilot.pause()
        assert view.selected == "op1"  # back up the edge
        await pilot.press("left", "right")
        await pilot.pause()
        assert len(app.selected_keys) >= 3
        await pilot.press("enter")
        await pilot.pause()
        assert app.selected_keys[-1] == view.selected


@pilot_test
async def test_click_selects_a_box():
    app, ctx = await _started(mlp(2))
    async with ctx as pilot:
        view = app.query_one(GraphView)
        await pilot.pause()
        view.center_on("op2")
        await pilot.pause()
        box = view.graph_layout.boxes["op2"]
        offset = (box.x - view.scroll_offset.x + 2, view.canvas.box_top(box) + 1
                  - view.scroll_offset.y)
        assert await pilot.click(GraphView, offset=offset)
        await pilot.pause()
        assert view.selected == "op2" and app.selected_keys == ["op2"]


@pilot_test
async def test_show_same_shape_only_changes_colours():
    g = mlp(2, state="created")
    app, ctx = await _started(g)
    async with ctx as pilot:
        view = app.query_one(GraphView)
        await pilot.pause()
        layout = view.graph_layout
        view.center_on("op3")
        await pilot.pause()
        offset = view.scroll_offset
        before = _line_styles(view, "op3")
        later = dataclasses.replace(
            g, nodes=tuple(dataclasses.replace(n, state="backward") for n in g.nodes),
            current="op3")
        runs = lay.stats["layouts"]
        view.show(later)
        await pilot.pause()
        assert view.graph_layout is layout and lay.stats["layouts"] == runs
        assert view.scroll_offset == offset  # nothing moved
        after = _line_styles(view, "op3")
        assert before != after
        assert any(s.reverse for s in after) and not any(s.reverse for s in before)


@pilot_test
async def test_focus_mode_shrinks_the_drawing():
    app, ctx = await _started(mlp(8))
    async with ctx as pilot:
        view = app.query_one(GraphView)
        await pilot.pause()
        full = view.virtual_size
        view.select("op13")
        await pilot.press("f")
        await pilot.pause()
        assert view.focus_mode
        assert view.virtual_size.height < full.height / 3
        assert "op13" in view.graph_layout.boxes and len(view.graph_layout.boxes) < 15
        await pilot.press("f")
        await pilot.pause()
        assert view.virtual_size == full


@pilot_test
async def test_collapse_and_expand_a_module():
    app, ctx = await _started(mlp(3))
    async with ctx as pilot:
        view = app.query_one(GraphView)
        await pilot.pause()
        count = len(view.graph_layout.boxes)
        view.select("op2")  # relu in module blocks.0
        await pilot.press("m")
        await pilot.pause()
        assert view.selected == "module:blocks.0" and view.collapsed == {"blocks.0"}
        assert len(view.graph_layout.boxes) == count - 5  # 4 ops + 2 params -> 1 box
        view.center_on("module:blocks.0")
        await pilot.pause()
        assert "blocks.0" in "".join(view.render_line(y).text for y in range(24))
        await pilot.press("m")
        await pilot.pause()
        assert view.collapsed == frozenset() and len(view.graph_layout.boxes) == count
        assert view.selected in view.graph_layout.boxes
        view.select("in0")  # in no module: nothing to collapse
        await pilot.press("m")
        await pilot.pause()
        assert view.collapsed == frozenset()


@pilot_test
async def test_scrolling_and_home():
    app, ctx = await _started(mlp(6))
    async with ctx as pilot:
        view = app.query_one(GraphView)
        await pilot.pause()
        assert view.virtual_size.height > 24
        view.scroll_to(0, 0, animate=False, immediate=True)
        await pilot.press("shift+down", "shift+down")
        await pilot.pause()
        assert view.scroll_offset.y == 6
        await pilot.press("shift+up")
        await pilot.pause()
        assert view.scroll_offset.y == 3
        await pilot.press("home")
        await pilot.pause()
        loss = view.graph_layout.boxes[view.graph.current]
        top = view.canvas.box_top(loss)
        assert view.scroll_offset.y <= top < view.scroll_offset.y + 24
        y = view.scroll_offset.y
        view.post_message(events.MouseScrollUp(view, 5, 5, 0, -1, 0, False, False, False))
        await pilot.pause()
        assert view.scroll_offset.y < y  # the mouse wheel scrolls
        y, x = view.scroll_offset.y, view.scroll_offset.x
        view.on_mouse_down(SimpleNamespace(screen_x=20, screen_y=16))  # drag the picture down
        view.on_mouse_move(SimpleNamespace(screen_x=20, screen_y=20, button=1))
        view.on_mouse_up(None)
        await pilot.pause()
        assert view.scroll_offset.y == y - 4 and view.scroll_offset.x == x


@pilot_test
async def test_empty_and_themes():
    app, ctx = await _started(None)
    async with ctx as pilot:
        view = app.query_one(GraphView)
        await pilot.pause()
        assert "no graph yet" in view.render_line(0).text
        nodes = mlp(1).nodes
        g = dataclasses.replace(mlp(1), nodes=tuple(
            dataclasses.replace(n, state=s) for n, s in
            zip(nodes, ["created", "forward", "backward"] * 3)))
        view.show(g)
        await pilot.pause()
        for theme in ("textual-dark", "textual-light"):
            app.theme = theme
            await pilot.pause()
            colours = {view._style(("text", k)).color for k in ("in0", "param:blocks.0.fc.weight",
                                                                  "param:blocks.0.fc.bias")}
            assert len(colours) == 3, theme  # created, forward, backward differ
            assert view._style(("border", "param:blocks.0.fc.weight")).color != \
                view._style(("border", "op1")).color


@pilot_test
async def test_a_new_graph_that_looks_the_same_is_not_repainted():
    app, ctx = await _started(mlp(2, state="backward"))
    async with ctx as pilot:
        view = app.query_one(GraphView)
        await pilot.pause()
        first = view.render_line(3)
        repaints = []
        view.refresh = lambda *a, **k: repaints.append((a, k))  # noqa: B023
        # The next iteration, recorded anew: equal shape, states and current node.
        view.show(dataclasses.replace(mlp(2, state="backward"), iteration=9))
        assert repaints == [] and view.render_line(3) is first  # the row strip is reused
        view.show(mlp(2, state="backward", current="op1"))  # the current node moved
        assert repaints and view.render_line(3) is not first
