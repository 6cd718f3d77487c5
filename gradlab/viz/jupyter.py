"""Jupyter: a tensor that has a graph displays as its value *and* its graph.

``register(ip)`` adds an HTML formatter for :class:`gradlab.Tensor` to an
IPython shell: the tensor's usual text, then its forward graph as inline SVG.
Tensors without a graph (leaves, results under ``no_grad``) keep their plain
text, and so does every tensor when Graphviz's ``dot`` is missing or the
graph is large. Nothing here imports graphviz until a tensor is displayed,
so ``import gradlab`` stays light. The ``graphviz.Digraph`` that
``draw_graph`` returns displays inline on its own.
"""

from __future__ import annotations

import shutil
from html import escape

__all__ = ["register", "register_in_running_shell", "tensor_html", "MAX_INLINE_OPS"]

MAX_INLINE_OPS = 300  # bigger graphs: draw_graph(t, depth=...) explicitly


def tensor_html(tensor) -> str | None:
    """The HTML a notebook shows for ``tensor``, or None to fall back to its text."""
    if getattr(tensor, "grad_fn", None) is None or shutil.which("dot") is None:
        return None
    from .capture import capture
    from .dot import to_digraph
    from .graph import build

    try:
        cap = capture(tensor)
        if len(cap.ops) > MAX_INLINE_OPS:
            return None
        svg = to_digraph(build(cap)).pipe(format="svg").decode("utf-8")
    except Exception:  # a display hook must never break printing a tensor
        return None
    svg = svg[svg.find("<svg"):]  # drop the XML prolog and DOCTYPE inside HTML
    return f"<pre>{escape(repr(tensor))}</pre>\n{svg}"


def register(ip=None) -> bool:
    """Show tensors with a graph as text + SVG in IPython shell ``ip`` (default: the running one).

    Returns False when there is no IPython shell to register with.
    """
    if ip is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        ip = get_ipython()
    if ip is None:
        return False
    from ..tensor import Tensor

    ip.display_formatter.formatters["text/html"].for_type(Tensor, tensor_html)
    return True


def register_in_running_shell() -> bool:
    """``register`` with the running IPython shell, if there is one (``import gradlab`` calls
    this); True if it registered. Outside IPython it imports nothing and does nothing."""
    import sys

    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return False
    register(shell)
    return True
