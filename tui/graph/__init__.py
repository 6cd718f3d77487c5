"""The debugger's graph picture: layout (Graphviz or our own) and a character canvas."""

from .canvas import Canvas, paint
from .layout import Box, Frame, GraphvizMissing, Layout, layout_graph

__all__ = ["Box", "Frame", "Layout", "GraphvizMissing", "layout_graph", "Canvas", "paint"]
