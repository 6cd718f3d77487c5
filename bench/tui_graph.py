"""How long the debugger's graph view takes to lay out and paint a 2,000-node graph.

The issue's bar: "time to lay out and paint a 2,000-node graph (target <= 1 s)".
The graph is built by hand as a :class:`~gradlab.debug.snapshot.GraphSnapshot`
(what a debug session hands the view): a chain of MLP-like blocks, each a
``linear`` (with its weight and bias parameters) into ``relu``, a ``tanh``
side branch multiplied in, and a residual ``add``, in nested modules; a loss
at the end. Cases:

* **auto/cold**: what the view does the first time it sees the graph: layout
  (``engine="auto"``: gradlab's layered layout above ``DOT_MAX_NODES``), edge
  routing, and every row of the canvas painted (the widget itself paints only
  the visible rows);
* **auto/cached**: the same shape again (every step of a run): the layout
  and canvas come from the cache, only node states are read;
* **visible/cold**: layout, routing and one 80x50 screenful of rows;
* **focus/cold**: focus mode, the neighbourhood of one node (laid out by dot);
* **dot/300** and **dot/2000**: Graphviz's dot forced, for the record of why
  the layered layout takes over above 300 nodes.

Wall time (dot is a child process), best of ``--repeat`` runs.

    python bench/tui_graph.py [--repeat 3] [--markdown]
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import time

import _harness as h

NODES = 2000


def _graph(n: int, snapshot):
    NodeSnapshot, EdgeSnapshot = snapshot.NodeSnapshot, snapshot.EdgeSnapshot
    nodes, edges = [], []

    def add(kind, label, key, module, shape, inputs=()):
        nodes.append(NodeSnapshot(key, kind, label, "forward", len(nodes), module=module,
                                  output_shapes=(shape,)))
        edges.extend(EdgeSnapshot(i, key) for i in inputs)
        return key

    def op(label, inputs, module, shape=(64, 32)):
        return add("op", label, f"op{len(nodes)}", module, shape, inputs)

    x = add("input", "x", "in0", None, (64, 32))
    b = 0
    while len(nodes) < n - 7:
        m = f"model.blocks.{b}"
        w = add("parameter", f"{m}.fc.weight", f"param:{m}.fc.weight", None, (32, 32))
        bias = add("parameter", f"{m}.fc.bias", f"param:{m}.fc.bias", None, (32,))
        y = op("relu", [op("linear", [x, w, bias], m + ".fc")], m)
        x = op("add", [y, op("mul", [op("tanh", [x], m), y], m)], m)
        b += 1
    while len(nodes) < n:
        x = op("sum" if len(nodes) == n - 1 else "mean", [x], None, ())
    return snapshot.GraphSnapshot(1, tuple(nodes), tuple(edges), shape_key=n,
                                  current=nodes[-1].key)


def _best(fn, repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return {"best": min(runs), "median": sorted(runs)[len(runs) // 2], "calls": 1}


def worker_gradlab(opts) -> dict:
    h.import_gradlab("cpu")
    from gradlab.debug import snapshot
    from tui.graph import layout as lay
    from tui.graph.canvas import paint

    big = _graph(NODES, snapshot)
    small = _graph(300, snapshot)
    has_dot = shutil.which("dot") is not None
    info = {}

    def cold(graph, engine="auto", rows=None, **kw):
        def run():
            lay.clear_cache()
            layout = lay.layout_graph(graph, engine=engine, **kw)
            canvas = paint(layout)
            for y in range(canvas.height if rows is None else min(rows, canvas.height)):
                canvas.row(y)
            info[engine if not kw else "focus"] = (layout.engine, canvas.width, canvas.height,
                                                   len(layout.boxes))
        return run

    def cached():
        graph = dataclasses.replace(big, current=big.nodes[NODES // 2].key)
        layout = lay.layout_graph(graph)
        paint(layout)
        owner = layout.owner
        {owner[n.key]: n.state for n in graph.nodes}  # what show() recomputes

    cases = {"auto/cold": _best(cold(big), opts.repeat)}
    cases["auto/cached"] = _best(cached, opts.repeat)
    cases["visible/cold"] = _best(cold(big, rows=50), opts.repeat)
    if has_dot:
        cases["focus/cold"] = _best(cold(big, focus=big.nodes[NODES // 2].key), opts.repeat)
        cases["dot/300"] = _best(cold(small, "dot"), opts.repeat)
        cases["dot/2000"] = _best(cold(big, "dot"), 1)
    return {"cases": cases, "nodes": len(big.nodes), "edges": len(big.edges),
            "info": {k: list(v) for k, v in info.items()}, "dot": has_dot}


WORKERS = {"gradlab": worker_gradlab}
CASES = {"auto/cold": "lay out + route + paint every row",
         "auto/cached": "same shape again (cache hit, states read)",
         "visible/cold": "lay out + route + paint one 50-row screen",
         "focus/cold": "focus mode: neighbourhood of one node",
         "dot/300": "Graphviz dot forced, 300 nodes, all rows",
         "dot/2000": "Graphviz dot forced, 2,000 nodes, all rows (1 run)"}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    h.common_args(p, repeat=3, min_time=0.0)
    return p


def collect(opts: argparse.Namespace) -> dict:
    return h.run_contestants(__file__, list(WORKERS), h.passed_on(opts), rounds=opts.rounds)


def report(results: dict, opts: argparse.Namespace) -> h.Section:
    g = results["gradlab"]
    sec = h.Section("Debugger graph view: lay out and paint a 2,000-node graph (cpu, wall time)")
    tab = h.Table(["case", "what", "ms"])
    for name, what in CASES.items():
        if g.get("status") == "ok" and name not in g["cases"]:
            continue
        tab.add(name, what, h.status_cell(g, name, "ms"))
    sec.table("Time of tui.graph.layout_graph + paint (the GraphView's work):", tab)
    if g.get("status") == "ok":
        sizes = ", ".join(f"{k}: {v[0]} engine, {v[1]}x{v[2]} cells, {v[3]} boxes"
                          for k, v in g["info"].items())
        sec.note(f"{g['nodes']} nodes, {g['edges']} edges. {sizes}. Target: <= 1 s cold."
                 + ("" if g["dot"] else " Graphviz is not installed: dot cases skipped."))
    return h.close_section(sec, results, opts, timing=(
        f"Best of {opts.repeat} runs; wall time (Graphviz runs as a child process)."))


def main(argv=None) -> None:
    return h.run_benchmark(argv, parser, WORKERS, collect, report)


if __name__ == "__main__":
    sys.exit(main())
