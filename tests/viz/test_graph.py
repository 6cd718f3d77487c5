"""The graph model: what each view contains, clusters, depth, repeats, highlight, numbers."""

from __future__ import annotations

import pytest

import gradlab
from gradlab import viz
from gradlab.viz.graph import format_values

from .programs import deep, mlp, scalar


def kinds(graph, kind):
    return [n for n in graph.nodes if n.kind == kind]


def edges_between(graph, a, b):
    return [e for e in graph.edges if e.source == a.id and e.target == b.id]


def test_forward_view_of_an_mlp_has_named_parameters_ops_inputs_and_the_output():
    loss, model, tape, x = mlp()
    g = viz.graph_model(loss, model=model, trace=tape)
    assert [n.label for n in kinds(g, "parameter")] == [
        "hidden.weight", "hidden.bias", "out.weight", "out.bias"]
    assert [n.label for n in kinds(g, "op")] == ["linear", "relu", "linear", "mse_loss"]
    inputs = kinds(g, "input")
    assert [n.label for n in inputs] == ["x", "input"]  # the data and the unnamed target
    assert inputs[0].shape == (5, 3) and inputs[0].dtype == "float32"
    (out,) = kinds(g, "output")
    assert out.label == "loss" and out.shape == ()
    lin1, relu, lin2, mse = kinds(g, "op")
    assert edges_between(g, inputs[0], lin1)
    assert edges_between(g, lin1, relu)[0].label == "(5, 4)"
    assert edges_between(g, relu, lin2)[0].label == "(5, 4)"
    assert edges_between(g, lin2, mse)[0].label == "(5, 2)"
    assert edges_between(g, mse, out)
    assert [n.module for n in (lin1, relu, lin2, mse)] == ["hidden", "act", "out", None]


def test_casts_say_their_dtype_so_autocast_shows():
    w = gradlab.randn(4, 3, requires_grad=True)
    with gradlab.autocast("cpu"):
        y = gradlab.nn.functional.linear(gradlab.randn(2, 3), w)
    loss = y.float().sum()
    g = viz.graph_model(loss)
    assert [n.label for n in kinds(g, "op")] == ["to bfloat16", "linear", "to float32", "sum"]


def test_without_a_trace_data_inputs_are_absent_but_parameters_are_named_by_params():
    loss, model, _, _ = mlp()
    g = viz.graph_model(loss, params=dict(model.named_parameters()))
    assert kinds(g, "input") == []
    assert len(kinds(g, "parameter")) == 4
    # without the model, clusters are labelled by path only
    assert [c.label for c in g.clusters[0].children] == ["act", "hidden", "out"]


def test_clusters_nest_by_module_path_and_are_labelled_by_class():
    loss, model, tape, _ = mlp()
    g = viz.graph_model(loss, model=model, trace=tape)
    (root,) = g.clusters
    assert root.path == "" and root.label == "model : MLP"
    assert [c.label for c in root.children] == ["act : ReLU", "hidden : Linear", "out : Linear"]
    hidden = root.children[1]
    labels = {g.node(i).label for i in hidden.nodes}
    assert labels == {"hidden.weight", "hidden.bias", "linear"}
    assert all(g.node(i).module is None for i in (n.id for n in kinds(g, "output")))


def test_backward_view_walks_grad_fn_nodes_with_saved_tensors_down_to_accumulate_grad():
    loss, model, tape, _ = mlp()
    cap = viz.capture(loss, params=dict(model.named_parameters()), trace=tape)
    g = viz.graph_model(cap, view="backward")
    assert [n.label for n in kinds(g, "backward")] == [
        "MseLossBackward0", "AddmmBackward0", "ReluBackward0", "AddmmBackward0"]
    acc = kinds(g, "accumulate")
    assert [n.detail for n in acc] == ["hidden.weight", "hidden.bias", "out.weight", "out.bias"]
    saved = kinds(g, "saved")
    assert {n.label for n in saved} >= {"x", "hidden.weight", "out.weight"}
    assert all(e.kind == "saved" for e in g.edges if g.node(e.source).kind == "saved")
    mse = kinds(g, "backward")[0]
    (out,) = kinds(g, "output")
    assert edges_between(g, out, mse)
    # gradients flow from a node to the nodes that made its inputs
    lin2 = kinds(g, "backward")[1]
    assert {g.node(e.target).detail for e in g.edges if e.source == lin2.id} >= {
        "out.weight", "out.bias"}
    loss.backward()
    after = viz.graph_model(loss, view="backward")
    assert all(n.detail == "saved tensors freed" for n in kinds(after, "backward"))
    assert kinds(after, "saved") == []


def test_depth_collapses_modules_into_boxes():
    loss, model, tape, _ = mlp()
    whole = viz.graph_model(loss, model=model, trace=tape, depth=0)
    (box,) = kinds(whole, "module")
    assert box.label == "model : MLP" and box.detail == "3 ops \u00b7 4 params"
    assert [n.label for n in kinds(whole, "op")] == ["mse_loss"]
    assert kinds(whole, "parameter") == [] and whole.clusters == []
    x = next(n for n in kinds(whole, "input") if n.label == "x")
    assert edges_between(whole, x, box)
    one = viz.graph_model(loss, model=model, trace=tape, depth=1)
    boxes = {n.label: n for n in kinds(one, "module")}
    assert sorted(boxes) == ["act : ReLU", "hidden : Linear", "out : Linear"]
    hidden, act, out = (boxes[k] for k in ("hidden : Linear", "act : ReLU", "out : Linear"))
    assert edges_between(one, hidden, act)[0].label == "(5, 4)"
    assert edges_between(one, act, out)
    assert [c.path for c in one.clusters] == [""]
    full = viz.graph_model(loss, model=model, trace=tape, depth=2)
    assert kinds(full, "module") == [] and len(kinds(full, "op")) == 4


def test_repeated_sibling_modules_collapse_after_the_first():
    loss, model = deep(blocks=6)
    g = viz.graph_model(loss, model=model)
    (rep,) = kinds(g, "repeat")
    assert rep.label == "layers.1 \u2026 layers.5  (\u00d75)"
    assert rep.detail == "same as layers.0 \u00b7 15 ops \u00b7 10 params"
    assert rep.module == "layers"
    first = [n.label for n in g.nodes if (n.module or "").startswith("layers.0")]
    assert sorted(first) == ["add", "layers.0.fc.bias", "layers.0.fc.weight", "linear", "tanh"]
    head = next(n for n in kinds(g, "op") if n.module == "head")
    assert edges_between(g, rep, head)
    plain = viz.graph_model(loss, model=model, collapse_repeats=None)
    assert kinds(plain, "repeat") == [] and len(kinds(plain, "op")) == 6 * 3 + 2
    assert kinds(viz.graph_model(deep(blocks=2)[0]), "repeat") == []


def test_highlight_marks_op_and_leaf_nodes():
    loss, model, tape, _ = mlp()
    g = viz.graph_model(loss, model=model, highlight=[loss, model.hidden.weight])
    marked = [n.label for n in g.nodes if n.highlighted]
    assert marked == ["hidden.weight", "mse_loss"]
    g = viz.graph_model(loss, model=model, view="backward", highlight=loss.grad_fn)
    assert [n.label for n in g.nodes if n.highlighted] == ["MseLossBackward0"]
    boxed = viz.graph_model(loss, model=model, depth=0, highlight=model.out.weight)
    assert [n.kind for n in boxed.nodes if n.highlighted] == ["module"]
    with pytest.raises(TypeError, match="highlight takes tensors"):
        viz.graph_model(loss, highlight="loss")


def test_values_and_gradients_make_the_data_grad_diagram():
    L, tape, (a, b, c, d, e, f) = scalar()
    g = viz.graph_model(L, trace=tape, show_values=True, show_grads=True)
    by_label = {n.label: n for n in g.nodes if n.kind != "op"}
    assert {k: (n.value, n.grad) for k, n in by_label.items()} == {
        "a": ("2.0000", "6.0000"), "b": ("-3.0000", "-4.0000"), "c": ("10.0000", "-2.0000"),
        "f": ("-2.0000", "4.0000"), "e": ("-6.0000", "-2.0000"), "d": ("4.0000", "-2.0000"),
        "L": ("-8.0000", "1.0000")}
    assert [n.label for n in kinds(g, "op")] == ["mul", "add", "mul"]
    assert by_label["e"].kind == "tensor" and by_label["L"].kind == "output"
    quiet = viz.graph_model(L, trace=tape)
    assert all(n.value is None and n.grad is None for n in quiet.nodes)
    assert kinds(quiet, "tensor") != []  # named intermediates are drawn as tensors anyway


def test_format_values():
    assert format_values(None) is None
    assert format_values(gradlab.tensor(1.5).numpy()) == "1.5000"
    assert format_values(gradlab.tensor([[1.0, 2.0], [3.0, 4.0]]).numpy()) == "[1, 2]\n[3, 4]"
    assert format_values(gradlab.arange(8.0).numpy()).split("\n") == ["[0, 1, 2, 3]",
                                                                       "[4, 5, 6, 7]"]
    assert format_values(gradlab.tensor([1, 2]).numpy()) == "[1, 2]"


def test_a_leaf_used_by_many_ops_is_drawn_beside_each_use():
    w = gradlab.ones(3, requires_grad=True)
    w.name = "w"
    y = gradlab.ones(3)
    for _ in range(12):
        y = y * w
    g = viz.graph_model(y.sum())
    copies = [n for n in kinds(g, "input") if n.label == "w"]
    assert len(copies) == 12 and all(n.detail == "(shared)" for n in copies)
    few = gradlab.ones(3, requires_grad=True)
    few.name = "few"
    g = viz.graph_model((few * few * few).sum())
    assert len([n for n in g.nodes if n.label == "few"]) == 1


def test_a_deep_graph_is_walked_without_recursion():
    x = gradlab.ones(2, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y + 1.0
    g = viz.graph_model(y, view="backward")
    assert len(kinds(g, "backward")) == 5000


def test_a_leaf_output_and_several_outputs():
    a = gradlab.ones(2, requires_grad=True)
    a.name = "a"
    g = viz.graph_model(a)
    assert [(n.kind, n.label) for n in g.nodes] == [("input", "a"), ("output", "a")]
    b = a * 2
    c = a + 1
    g = viz.graph_model([b, c])
    assert [n.label for n in kinds(g, "op")] == ["mul", "add"]
    assert len(kinds(g, "output")) == 2 and len(kinds(g, "input")) == 1


def test_bad_arguments_are_explained():
    loss, _, _, _ = mlp()
    with pytest.raises(ValueError, match="view must be 'forward' or 'backward'"):
        viz.graph_model(loss, view="sideways")
    with pytest.raises(ValueError, match="depth must be None or an int >= 0"):
        viz.graph_model(loss, depth=-1)
    with pytest.raises(TypeError, match="expected a Tensor or a list of Tensors, got int"):
        viz.graph_model(5)


def test_importing_gradlab_in_a_notebook_registers_the_graph_display(monkeypatch):
    """gradlab/__init__.py registers the tensor formatter when an IPython shell runs."""
    import sys
    import types

    from gradlab.viz import jupyter

    registered = []

    class Formatter:
        def for_type(self, cls, fn):
            registered.append((cls, fn))

    shell = types.SimpleNamespace(display_formatter=types.SimpleNamespace(
        formatters={"text/html": Formatter()}))
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    assert jupyter.register_in_running_shell()
    assert registered == [(gradlab.Tensor, jupyter.tensor_html)]
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: None))
    assert not jupyter.register_in_running_shell()  # plain Python: nothing to do


def test_forward_mode_tangents_show_on_the_values_that_carry_them():
    import gradlab.autograd.forward_ad as fwAD
    from gradlab.viz.dot import to_digraph

    x = gradlab.tensor([0.5, 2.0], dtype=gradlab.float64, requires_grad=True)
    x.name = "x"
    with gradlab.viz.trace() as tape, fwAD.dual_level():
        dual = fwAD.make_dual(x, gradlab.tensor([1.0, 0.0], dtype=gradlab.float64))
        y = (dual * dual).sum()
        y.name = "y"
        graph = gradlab.viz.graph_model(y, trace=tape, show_values=True, show_tangents=True)
        plain = gradlab.viz.graph_model(y, trace=tape, show_values=True)
    ops = [n.label for n in graph.nodes if n.kind == "op"]
    assert ops == ["make_dual", "mul", "sum"]  # the tangent's own arithmetic is not drawn
    tangents = [(n.label, n.tangent) for n in graph.nodes if n.tangent is not None]
    # make_dual's output carries (1, 0); mul's carries 2·x·(1, 0) = (1, 0); y = Σx² gets
    # 2·0.5·1 = 1.
    assert tangents == [("", "[1, 0]"), ("", "[1, 0]"), ("y", "1.0000")]
    assert all(n.tangent is None for n in plain.nodes)
    assert "\u1e8b" in to_digraph(graph).source
