"""The debugger's graph: the live computation graph, drawn with box-drawing characters.

:class:`GraphView` shows a :class:`~gradlab.debug.snapshot.GraphSnapshot`.
The layout (:mod:`tui.graph.layout`) is computed once per graph shape and the
picture (:mod:`tui.graph.canvas`) once per layout, so :meth:`GraphView.show`
with the same ``shape_key`` only swaps node states: stepping never moves a
node. Only the visible rows are drawn (the Line API), each cell coloured at
draw time from its tag: node state (created dim, forward, backward), kind
(parameters, inputs and collapsed modules have their own border colour as
well as their own border lines), the current node (reverse, bold) and the
selected one (bold, underlined). Colours are component classes set from the
theme's variables, so dark and light themes both read well and an app's CSS
can override them.

Keys: arrows move the selection (up/down follow edges to the nearest input
or consumer, else the nearest box that way), shift+arrows pan, ``home``
centres the current node, ``f`` focus mode (only the nodes two edges from the
selected or current node, laid out on their own), ``m`` collapses the
selected node's module into one box or expands a collapsed one, ``enter``
re-announces the selection. The mouse: wheel scrolls, drag pans, click
selects.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.graph.canvas import Canvas, paint
from tui.graph.layout import Layout, layout_graph, node_module

__all__ = ["GraphView"]

_STATE_RANK = {"created": 0, "forward": 1, "backward": 2}
_KIND_CLASS = {"parameter": "parameter", "input": "input", "leaf": "input", "module": "module"}
FOCUS_RADIUS = 2


class GraphView(ScrollView, can_focus=True):
    """The computation graph of one iteration; see the module docstring for keys and colours."""

    COMPONENT_CLASSES = {
        "graph-view--edge", "graph-view--frame", "graph-view--title", "graph-view--created",
        "graph-view--forward", "graph-view--backward", "graph-view--parameter",
        "graph-view--input", "graph-view--module", "graph-view--current",
        "graph-view--selected", "graph-view--empty",
    }
    DEFAULT_CSS = """
    GraphView { background: $surface; scrollbar-size: 1 1; }
    GraphView > .graph-view--edge { color: $foreground-muted; }
    GraphView > .graph-view--frame { color: $foreground-disabled; }
    GraphView > .graph-view--title { color: $text-muted; text-style: italic; }
    GraphView > .graph-view--created { color: $text-disabled; }
    GraphView > .graph-view--forward { color: $text-primary; }
    GraphView > .graph-view--backward { color: $text-success; }
    GraphView > .graph-view--parameter { color: $text-warning; }
    GraphView > .graph-view--input { color: $text-secondary; }
    GraphView > .graph-view--module { color: $text-accent; }
    GraphView > .graph-view--current { text-style: reverse bold; }
    GraphView > .graph-view--selected { text-style: bold underline; }
    GraphView > .graph-view--empty { color: $text-muted; text-style: italic; }
    """
    BINDINGS = [
        Binding("up", "move('up')", "Select up", show=False),
        Binding("down", "move('down')", "Select down", show=False),
        Binding("left", "move('left')", "Select left", show=False),
        Binding("right", "move('right')", "Select right", show=False),
        Binding("shift+up", "pan(0, -3)", "Pan", show=False),
        Binding("shift+down", "pan(0, 3)", "Pan", show=False),
        Binding("shift+left", "pan(-8, 0)", "Pan", show=False),
        Binding("shift+right", "pan(8, 0)", "Pan", show=False),
        # Listed in the help screen; off the footer so the step keys fit in 80 columns.
        Binding("home", "home", "Current node", show=False),
        Binding("f", "toggle_focus", "Focus", show=False),
        Binding("m", "toggle_module", "Collapse module", show=False),
        Binding("enter", "choose", "Select", show=False),
    ]

    selected: reactive[str | None] = reactive(None)
    focus_mode: reactive[bool] = reactive(False)

    class NodeSelected(Message):
        """The user selected a node (arrows, click, enter). ``key`` is a node key, or
        ``"module:<path>"`` for a collapsed module's box."""

        def __init__(self, graph_view: GraphView, key: str) -> None:
            self.graph_view = graph_view
            self.key = key
            super().__init__()

        @property
        def control(self) -> GraphView:
            return self.graph_view

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None, follow: bool = True) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.graph = None
        self.graph_layout: Layout | None = None
        self.canvas: Canvas | None = None
        self.collapsed: frozenset[str] = frozenset()
        self.follow = follow  # keep the current node in view as it moves
        self.note: str | None = None  # why the built-in layout is used, if it is
        self._layout_key = None
        self._states: dict[str, str] = {}
        self._current_box: str | None = None
        self._styles: dict = {}
        self._strips: dict = {}  # (row, scroll_x, width) -> Strip, until states or styles change
        self._painted = None  # (layout key, states, current box) last painted
        self._drag = None
        self._dragged = False
        self._noted = False

    # --- data ---------------------------------------------------------------------------

    def show(self, graph) -> None:
        """Show ``graph`` (None: nothing). Cheap when ``graph.shape_key`` is unchanged."""
        if graph is None:
            if self.graph is not None or self.canvas is not None:
                self.graph = self.graph_layout = self.canvas = None
                self._layout_key = self._painted = None
                self.virtual_size = Size(0, 0)
                self._restyle()
            return
        self.graph = graph
        first = self.graph_layout is None
        self._relayout()
        if self.selected is not None and self.selected not in self.graph_layout.boxes:
            self.selected = self.box_of(self.selected)  # gone, or now inside a module box
        old_current = self._current_box
        self._update_states()
        if first:
            self.call_after_refresh(self.action_home)
        elif self.follow and self._current_box != old_current and self._current_box:
            self._scroll_into_view(self._current_box)

    def _focus_center(self) -> str | None:
        if self.graph is None:
            return None
        center = self.selected or self.graph.current
        if center is not None and center.startswith("module:"):
            return None
        return center

    def _relayout(self) -> None:
        graph = self.graph
        focus = self._focus_center() if self.focus_mode else None
        key = (graph.shape_key, self.collapsed, focus)
        if key == self._layout_key:
            return
        self._layout_key = key
        self.graph_layout = layout_graph(graph, collapsed=self.collapsed, focus=focus,
                                   radius=FOCUS_RADIUS)
        self.canvas = paint(self.graph_layout)
        self.virtual_size = Size(self.canvas.width, self.canvas.height)
        self.note = self.graph_layout.note
        if self.note and not self._noted and self.is_attached:
            self._noted = True
            self.app.notify(self.note, title="Graph layout", severity="warning", timeout=8)

    def _update_states(self) -> None:
        owner = self.graph_layout.owner
        states: dict[str, str] = {}
        for n in self.graph.nodes:
            box = owner.get(n.key)
            if box is not None and (box not in states or
                                    _STATE_RANK.get(n.state, 0) > _STATE_RANK[states[box]]):
                states[box] = n.state if n.state in _STATE_RANK else "created"
        current = self.graph.current
        current_box = owner.get(current) if current is not None else None
        painted = (self._layout_key, states, current_box)
        if painted == self._painted:
            return  # a new iteration that looks the same: nothing to repaint
        self._painted = painted
        self._states = states
        self._current_box = current_box
        self._restyle()

    def _restyle(self) -> None:
        """Forget the cached styles and rows, and repaint."""
        self._styles.clear()
        self._strips.clear()
        self.refresh()

    def box_of(self, key: str | None) -> str | None:
        """The box showing node ``key`` now (its collapsed module's box, maybe)."""
        if key is None or self.graph_layout is None:
            return None
        if key in self.graph_layout.boxes:
            return key
        return self.graph_layout.owner.get(key)

    # --- drawing ------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = {}
        self._strips = {}

    def _style(self, tag) -> Style:
        style = self._styles.get(tag)
        if style is not None:
            return style
        part, key = tag
        comp = self.get_component_rich_style
        base = self.rich_style
        if part in ("edge", "arrow"):
            style = base + comp("graph-view--edge", partial=True)
        elif part in ("frame", "title"):
            style = base + comp(f"graph-view--{part}", partial=True)
        else:
            style = base + comp(f"graph-view--{self._states.get(key, 'created')}", partial=True)
            box = self.graph_layout.boxes.get(key)
            kind = _KIND_CLASS.get(box.kind) if box is not None else None
            if part == "border" and kind is not None:
                style += comp(f"graph-view--{kind}", partial=True)
            if key == self._current_box:
                style += comp("graph-view--current", partial=True)
            if key == self.selected:
                style += comp("graph-view--selected", partial=True)
        self._styles[tag] = style
        return style

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        canvas = self.canvas
        row = scroll_y + y
        if canvas is None:
            if y == 0:
                empty = self.get_component_rich_style("graph-view--empty", partial=True)
                return Strip([Segment(" no graph yet", base + empty)]).extend_cell_length(
                    width, base)
            return Strip.blank(width, base)
        if row >= canvas.height:
            return Strip.blank(width, base)
        cached = self._strips.get((row, scroll_x, width))
        if cached is not None:
            return cached
        text, spans = canvas.row(row)
        segments = []
        x = 0
        for x0, x1, tag in spans:
            if x1 <= scroll_x or x0 >= scroll_x + width:
                continue
            if x0 > x:
                segments.append(Segment(text[x:x0], base))
            segments.append(Segment(text[x0:x1], self._style(tag)))
            x = x1
        if x < len(text):
            segments.append(Segment(text[x:], base))
        strip = Strip(segments).crop_extend(scroll_x, scroll_x + width, base)
        if len(self._strips) > 4096:  # a long pan: keep only the latest rows
            self._strips.clear()
        self._strips[(row, scroll_x, width)] = strip
        return strip

    # --- selection and scrolling ----------------------------------------------------------

    def select(self, key: str | None) -> None:
        """Select node ``key`` (or the box that shows it) and scroll it into view; no message."""
        self.selected = self.box_of(key) if key is not None else None

    def watch_selected(self, old: str | None, new: str | None) -> None:
        self._styles.clear()
        self._strips.clear()
        if self.focus_mode and self.graph is not None and new is not None:
            self._relayout()
            self._update_states()
        if new is not None:
            self._scroll_into_view(new)
        self.refresh()

    def watch_focus_mode(self, on: bool) -> None:
        if self.graph is None:
            return
        self._relayout()
        self._update_states()
        center = self.box_of(self._focus_center())
        if center is not None:
            self.center_on(center)

    def _region(self, key: str) -> Region | None:
        if self.graph_layout is None:
            return None
        box = self.graph_layout.boxes.get(self.box_of(key))
        if box is None:
            return None
        return Region(box.x, self.canvas.box_top(box), box.w, box.h)

    def _scroll_into_view(self, key: str) -> None:
        region = self._region(key)
        if region is not None:
            self.scroll_to_region(region.grow((1, 2, 1, 2)), animate=False, force=True,
                                  immediate=True)

    def center_on(self, key: str) -> None:
        """Scroll so that node ``key``'s box is in the middle of the view."""
        region = self._region(key)
        if region is None:
            return
        size = self.scrollable_content_region.size
        self.scroll_to(x=region.x + region.width // 2 - size.width // 2,
                       y=region.y + region.height // 2 - size.height // 2,
                       animate=False, force=True, immediate=True)

    def _announce(self, key: str | None) -> None:
        if key is not None:
            self.post_message(self.NodeSelected(self, key))

    def action_choose(self) -> None:
        self._announce(self.selected)

    def action_home(self) -> None:
        if self.graph is not None and self.graph.current is not None:
            self.center_on(self.graph.current)

    def action_pan(self, dx: int, dy: int) -> None:
        self.scroll_to(x=self.scroll_x + dx, y=self.scroll_y + dy, animate=False, force=True,
                       immediate=True)

    def action_toggle_focus(self) -> None:
        self.focus_mode = not self.focus_mode

    def action_move(self, direction: str) -> None:
        if self.graph_layout is None or not self.graph_layout.boxes:
            return
        boxes = self.graph_layout.boxes
        start = self.selected if self.selected in boxes else self._current_box
        if start not in boxes:
            target = next(iter(boxes))
        else:
            target = _nearest(self.graph_layout, boxes[start], direction)
        if target is not None and target != self.selected:
            self.selected = target
            self._announce(target)

    def action_toggle_module(self) -> None:
        """Collapse the selected node's module into one box, or expand a collapsed one."""
        key = self.selected
        if key is None or self.graph is None:
            self.app.bell()
            return
        if key.startswith("module:"):
            path = key[len("module:"):]
            self.collapsed = frozenset(p for p in self.collapsed if p != path)
            members = [k for k, box in self.graph_layout.owner.items() if box == key]
            self._relayout()
            self._update_states()
            self.selected = self.box_of(members[0]) if members else None
            return
        try:
            module = node_module(self.graph.node(key))
        except KeyError:
            module = None
        if not module:
            self.app.bell()
            return
        self.collapsed = self.collapsed | {module}
        self._relayout()
        self._update_states()
        self.selected = self.box_of(key)

    # --- mouse --------------------------------------------------------------------------

    def on_mouse_down(self, event) -> None:
        self._drag = (event.screen_x, event.screen_y, self.scroll_x, self.scroll_y)
        self._dragged = False
        self.capture_mouse()

    def on_mouse_move(self, event) -> None:
        if self._drag is None or not event.button:
            return
        x0, y0, sx, sy = self._drag
        dx, dy = event.screen_x - x0, event.screen_y - y0
        if dx or dy:
            self._dragged = True
            self.scroll_to(x=sx - dx, y=sy - dy, animate=False, force=True, immediate=True)

    def on_mouse_up(self, event) -> None:
        self._drag = None
        self.release_mouse()

    def on_click(self, event) -> None:
        if self._dragged or self.canvas is None:
            return
        offset = event.get_content_offset(self)
        if offset is None:
            return
        box = self.canvas.box_at(offset.x + self.scroll_offset.x, offset.y + self.scroll_offset.y)
        if box is not None:
            self.selected = box.key
            self._announce(box.key)


def _nearest(layout: Layout, box, direction: str) -> str | None:
    """The box to select from ``box`` going ``direction``: along an edge when going up or
    down (the nearest input or consumer), else the nearest box whose centre lies that way."""
    cx, cy = box.center
    if direction in ("up", "down"):
        linked = [s if direction == "up" else t for s, t in layout.edges
                  if (t if direction == "up" else s) == box.key]
        if linked:
            return min(linked, key=lambda k: (abs(layout.boxes[k].center[0] - cx), k))
    best, best_cost = None, None
    for other in layout.boxes.values():
        ox, oy = other.center
        dx, dy = ox - cx, oy - cy
        ahead = {"up": -dy, "down": dy, "left": -dx, "right": dx}[direction]
        if ahead <= 0 or other.key == box.key:
            continue
        side = abs(dx) if direction in ("up", "down") else abs(dy)
        cost = ahead + 3 * side if direction in ("up", "down") else ahead + 6 * side
        if best_cost is None or cost < best_cost:
            best, best_cost = other.key, cost
    return best
