"""gradlab.jit.trace: the recorded graph, its replay, retracing, and what a trace refuses.

A traced graph must compute what the Python code computes, values and
gradients, on every input it accepts; everything here compares the replay
with the eager run of the same code (which the op tests compare with
PyTorch). Saving and loading are in ``test_archive.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
import gradlab.nn as nn
import gradlab.nn.functional as F
from gradlab import events, jit


class Block(nn.Module):
    """Linear, BatchNorm, a residual ``+=`` (in place), ReLU, Dropout."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.bn = nn.BatchNorm1d(width)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        out = self.bn(self.fc(x))
        out += x
        return self.drop(out.relu())


def _outputs(result) -> list:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _same(a, b, tol=0.0) -> None:
    for x, y in zip(_outputs(a), _outputs(b)):
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=tol, atol=tol)


# --- the graph ------------------------------------------------------------------------------

def test_graph_lists_each_call_with_module_paths_and_names():
    block = Block()
    traced = jit.trace(block, gradlab.randn(3, 4))
    text = str(traced.graph)
    lines = text.splitlines()
    assert lines[0] == "graph(%x : float32[3, 4]):"
    assert "  %self.fc.weight : float32[4, 4] = parameter" in lines
    assert "  %self.bn.running_mean : float32[4] = buffer" in lines
    calls = [line.split(" = ", 1)[1] for line in lines if line.startswith("  %") and
             "(" in line.split(" = ", 1)[1]]
    assert [c.split("(")[0] for c in calls] == ["linear", "add_", "batch_norm", "add_", "relu",
                                                "dropout"]
    assert calls[0] == "linear(%x, %self.fc.weight, %self.fc.bias)  # fc"
    assert calls[1].startswith("add_(%self.bn.num_batches_tracked, 1)")  # BatchNorm's counter
    assert calls[3] == "add_(%3, %x)"  # out += x: the residual, in place
    assert "<generator cpu>" in calls[5] and calls[5].endswith("# drop")
    assert lines[-1] == "  return %6"  # (each in-place change makes a new value)


def test_example_graph_is_a_straight_list_of_nodes_and_values():
    traced = jit.trace(lambda a, b: (a * b).sum(), (gradlab.randn(3), gradlab.randn(3)))
    graph = traced.graph
    assert [n.op for n in graph.nodes] == ["mul", "sum"]
    assert [v.name for v in graph.inputs] == ["a", "b"]
    assert [v.name for v in graph.values()] == ["a", "b", "1", "2"]
    assert graph.nodes[0].args == tuple(graph.inputs)


# --- replay = eager -------------------------------------------------------------------------

class Recurrent(nn.Module):
    def __init__(self, rnn) -> None:
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        out, _ = self.rnn(x)
        return out


MODELS = {
    "mlp": lambda: (nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.LayerNorm(8), nn.Dropout(0.2),
                                  nn.Linear(8, 3)), (gradlab.randn(4, 6),)),
    "residual": lambda: (Block(), (gradlab.randn(5, 4),)),
    "cnn": lambda: (nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(),
                                  nn.MaxPool2d(2), nn.Flatten(), nn.Linear(12, 2)),
                    (gradlab.randn(2, 1, 4, 4),)),
    "lstm": lambda: (Recurrent(nn.LSTM(3, 4, num_layers=2, batch_first=True)),
                     (gradlab.randn(2, 5, 3),)),
    "gru": lambda: (Recurrent(nn.GRU(3, 4)), (gradlab.randn(5, 2, 3),)),
    "transformer": lambda: (nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1,
                                                       batch_first=True),
                            (gradlab.randn(2, 3, 8),)),
    "embedding": lambda: (nn.Sequential(nn.Embedding(7, 3, padding_idx=0), nn.Flatten(),
                                        nn.Linear(6, 2)), (gradlab.randint(0, 7, (4, 2)),)),
    "conv_transpose": lambda: (nn.Sequential(nn.ConvTranspose2d(2, 2, 3, stride=2,
                                                                output_padding=1),
                                             nn.GroupNorm(1, 2), nn.AdaptiveAvgPool2d(1)),
                               (gradlab.randn(2, 2, 3, 3),)),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_replay_matches_eager_in_values_gradients_and_buffers(name):
    """Two identical models, one traced: same outputs (dropout included, from the same seed),
    same parameter gradients, same running statistics after a few training calls."""
    model, inputs = MODELS[name]()
    twin, _ = MODELS[name]()
    twin.load_state_dict(model.state_dict())
    traced = jit.trace(model, inputs)
    twin.load_state_dict(model.state_dict())  # (tracing ran the model once: BN moved)
    for step in range(3):
        gradlab.manual_seed(step)
        got = traced(*inputs)
        gradlab.manual_seed(step)
        want = twin(*inputs)
        _same(got, want)
        sum(o.float().pow(2).sum() for o in _outputs(got)).backward()
        sum(o.float().pow(2).sum() for o in _outputs(want)).backward()
    for (n, p), (_, q) in zip(model.named_parameters(), twin.named_parameters()):
        assert p.grad is not None, n
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-7)
    for (n, b), (_, c) in zip(model.named_buffers(), twin.named_buffers()):
        np.testing.assert_array_equal(b.numpy(), c.numpy(), err_msg=n)


def test_input_gradients_and_double_backward_flow_through_a_replay():
    fn = lambda x, w: (x @ w).tanh().sum()  # noqa: E731
    x = gradlab.randn(3, 4, dtype=gradlab.float64, requires_grad=True)
    w = gradlab.randn(4, 2, dtype=gradlab.float64, requires_grad=True)
    traced = jit.trace(fn, (x, w))
    assert gradlab.autograd.gradcheck(traced, (x, w))
    assert gradlab.autograd.gradgradcheck(traced, (x, w))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=0, max_size=3),
       st.lists(st.integers(1, 3), min_size=0, max_size=3))
def test_broadcasting_graphs_replay_any_shapes(shape_a, shape_b):
    """Elementwise math over broadcast shapes: each new shape pair traces its own graph."""
    fn = lambda a, b: (a * b + a.exp()).relu() - b  # noqa: E731
    try:
        np.broadcast_shapes(tuple(shape_a), tuple(shape_b))
    except ValueError:
        return
    a, b = gradlab.randn(*shape_a), gradlab.randn(*shape_b)
    traced = jit.trace(fn, (a, b))
    _same(traced(a, b), fn(a, b))
    a2, b2 = gradlab.randn(*shape_a), gradlab.randn(*shape_b)
    _same(traced(a2, b2), fn(a2, b2))


# --- one graph per signature ----------------------------------------------------------------

def test_new_shapes_and_train_eval_trace_again_and_are_cached():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    traced = jit.trace(model, gradlab.randn(2, 4))
    assert len(traced._graphs) == 1
    x = gradlab.randn(7, 4)
    gradlab.manual_seed(3)
    got = traced(x)
    gradlab.manual_seed(3)
    _same(got, model(x))
    assert len(traced._graphs) == 2
    traced.eval()
    assert not model.training and not model[1].training  # the original follows
    _same(traced(x), model(x))  # eval: no dropout in this graph
    assert [n.op for n in traced._graphs[traced._key((x,))][0].nodes] == ["linear"]
    traced(x)
    assert len(traced._graphs) == 3


def test_parameters_are_read_live_so_training_the_traced_module_works():
    model = nn.Linear(3, 1)
    traced = jit.trace(model, gradlab.randn(4, 3))
    assert list(traced.state_dict()) == ["weight", "bias"]
    assert [p is q for p, q in zip(traced.parameters(), model.parameters())] == [True, True]
    opt = gradlab.optim.SGD(traced.parameters(), lr=0.1)
    x, y = gradlab.randn(8, 3), gradlab.randn(8, 1)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = F.mse_loss(traced(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    model.weight = nn.Parameter(gradlab.zeros(1, 3))  # a replaced parameter is seen too
    model.bias = nn.Parameter(gradlab.zeros(1))
    assert traced(x).abs().sum().item() == 0.0


def test_factories_make_fresh_tensors_on_every_run():
    def accumulate(x):
        total = gradlab.zeros(3)
        total += x  # would pile up run after run if the zeros were frozen into the graph
        return total + gradlab.randn(3)

    x = gradlab.ones(3)
    traced = jit.trace(accumulate, x)
    gradlab.manual_seed(5)
    first = traced(x)
    gradlab.manual_seed(5)
    second = traced(x)
    _same(first, second)
    gradlab.manual_seed(5)
    _same(first, accumulate(x))


def test_in_place_changes_of_views_and_inputs_replay_like_eager():
    def poke(x):
        y = x.clone()
        y[0].mul_(10)  # through a view
        y.t_()
        x.add_(1)  # the caller's input, in place
        return y

    a, b = gradlab.randn(2, 3), None
    traced = jit.trace(poke, a.clone(), check_trace=False)
    a = gradlab.randn(2, 3)
    b = a.clone()
    _same(traced(a), poke(b))
    _same(a, b)


def test_replay_emits_the_ops_events_with_module_paths():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    traced = jit.trace(model, gradlab.randn(1, 2))
    seen = []
    with events.subscribe(lambda e: seen.append(e) if isinstance(e, events.OpForward) else None):
        traced(gradlab.randn(1, 2))
    assert [(e.op, e.module) for e in seen] == [("linear", "0"), ("relu", "1")]
    outer = nn.Sequential(nn.Linear(2, 2), traced)  # inside a bigger model: its paths nest
    seen.clear()
    with events.subscribe(lambda e: seen.append(e) if isinstance(e, events.OpForward) else None):
        outer(gradlab.randn(1, 2))
    assert [(e.op, e.module) for e in seen] == [("linear", "0"), ("linear", "1.0"),
                                                ("relu", "1.1")]


def test_a_bound_method_names_its_modules_weights():
    model = nn.Linear(2, 2)
    traced = jit.trace(model.forward, gradlab.randn(1, 2))
    assert [v.name for v, _, _ in traced.graph.constants] == ["weight", "bias"]
    assert isinstance(traced, jit.TracedFunction)


def test_custom_functions_replay():
    class Cube(gradlab.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    x = gradlab.randn(3, requires_grad=True)
    traced = jit.trace(lambda t: Cube.apply(t).sum(), x)
    assert [n.op for n in traced.graph.nodes] == ["cube", "sum"]
    traced(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2, rtol=1e-6)


def test_a_function_that_differentiates_inside_traces_its_backward_too():
    """autograd.grad inside the traced function: backward's ops become nodes of the graph."""
    def gradient(x):
        (g,) = gradlab.autograd.grad((x * x).sin().sum(), x)
        return g

    traced = jit.trace(gradient, gradlab.randn(4, dtype=gradlab.float64, requires_grad=True))
    assert "cos" in [n.op for n in traced.graph.nodes]  # d sin = cos, recorded
    x = gradlab.randn(4, dtype=gradlab.float64, requires_grad=True)
    np.testing.assert_allclose(traced(x).detach().numpy(),
                               (2 * x * (x * x).cos()).detach().numpy(), rtol=1e-12)


def test_is_tracing_is_true_only_inside_a_trace():
    seen = []
    jit.trace(lambda x: (seen.append(jit.is_tracing()), x * 2)[1], gradlab.randn(2))
    assert seen[0] is True and jit.is_tracing() is False


# --- what a trace refuses or flags ----------------------------------------------------------

def test_reading_a_computed_value_into_python_warns():
    def branchy(x):
        return x * 2 if x.sum() > 0 else x * 3

    with pytest.warns(jit.TracerWarning, match=r"bool\(\) \(an if or while on a tensor\) "
                                               r"reads the traced value %2 .*into Python"):
        jit.trace(branchy, gradlab.ones(3))
    with warnings.catch_warnings():  # reading a parameter (not computed) is fine
        warnings.simplefilter("error")
        w = gradlab.ones(1)
        jit.trace(lambda x: x * w.item(), gradlab.ones(3))


def test_check_inputs_catch_value_dependent_control_flow():
    def branchy(x):
        return x * 2 if x.sum() > 0 else x * 3

    with pytest.warns(jit.TracerWarning):
        with pytest.raises(jit.TracingCheckError, match=r"output 0 .* check input set 1"):
            jit.trace(branchy, gradlab.ones(3),
                      check_inputs=[(gradlab.ones(3),), (-gradlab.ones(3),)])


def test_check_trace_leaves_no_side_effects():
    model = nn.BatchNorm1d(2)
    x = gradlab.randn(4, 2)
    jit.trace(model, x, check_trace=True)
    assert model.num_batches_tracked.item() == 1  # the trace's own run only


def test_a_traced_loss_reads_each_calls_labels():
    """The class targets are an input of the graph: new labels, new loss (and range checks)."""
    loss_fn = lambda z, y: F.cross_entropy(z, y, ignore_index=1) + F.nll_loss(  # noqa: E731
        z.log_softmax(1), y, weight=gradlab.tensor([1.0, 2.0, 3.0]))
    logits = gradlab.randn(4, 3, requires_grad=True)
    traced = jit.trace(loss_fn, (logits, gradlab.tensor([0, 2, 2, 0])))
    for labels in ([1, 1, 0, 2], [2, 2, 2, 2], [1, 1, 1, 1]):
        y = gradlab.tensor(labels)
        got, want = traced(logits, y), loss_fn(logits, y)
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-6, equal_nan=True)
    with pytest.raises(IndexError, match=r"cross_entropy: target has class 3 but input has 3"):
        traced(logits, gradlab.tensor([0, 3, 0, 0]))


INDEXED = {
    "x[i]": lambda x, i, m: x[i],
    "x[i, 0]": lambda x, i, m: x[i, 0],
    "x[mask]": lambda x, i, m: x[m],
    "x[:, mask[0]]": lambda x, i, m: x[:, m[0]],
    "index_select": lambda x, i, m: x.index_select(0, i),
    "index_add": lambda x, i, m: x.index_add(0, i, gradlab.ones(2, 3)),
    "x[i] = v": lambda x, i, m: (lambda y: (y.__setitem__(i, 7.0), y)[1])(x.clone()),
    "x[mask] = v": lambda x, i, m: (lambda y: (y.__setitem__(m, -1.0), y)[1])(x.clone()),
    "index_put accumulate": lambda x, i, m: x.index_put((i,), gradlab.ones(3), True),
    "gather": lambda x, i, m: x.gather(0, i.unsqueeze(1).expand(2, 3)),
}


@pytest.mark.parametrize("name", list(INDEXED))
def test_index_tensors_are_inputs_of_the_graph(name):
    """Positions chosen by a tensor are read on every replay, never frozen at the example's."""
    fn = INDEXED[name]
    x = gradlab.randn(5, 3, requires_grad=True)
    first, second = gradlab.tensor([0, 1]), gradlab.tensor([4, 2])
    traced = jit.trace(fn, (x, first, x.detach() > 0))
    mask = x.detach() < 0.3
    got, want = traced(x, second, mask), fn(x, second, mask)
    _same(got, want)
    got.sum().backward()
    grad = x.grad.clone()
    x.grad = None
    want.sum().backward()
    _same(grad, x.grad)


def test_ops_that_read_an_index_up_front_warn():
    with pytest.warns(jit.TracerWarning, match="index_copy's index reads the traced value %i"):
        jit.trace(lambda x, i: x.index_copy(0, i, gradlab.ones(2, 3)),
                  (gradlab.randn(5, 3), gradlab.tensor([0, 1])))


class Opaque(gradlab.autograd.Function):
    """A custom op taking an object that could hold anything."""

    @staticmethod
    def forward(ctx, x, box):
        return x * box.factor

    @staticmethod
    def backward(ctx, g):
        return g, None


def test_data_derived_arguments_are_refused_with_the_op_and_the_fix():
    box = type("Box", (), {"factor": 2.0})()
    with pytest.raises(jit.TracingError, match=r"opaque: got an argument of type Box, .*Fix: "
                                               r"call this part outside the traced function"):
        jit.trace(lambda x: Opaque.apply(x, box), gradlab.randn(3))
    with pytest.warns(jit.TracerWarning, match="numpy"):
        with pytest.raises(jit.TracingError, match=r"tensor: got a NumPy array that shares "
                                                   r"memory with the traced value %x"):
            jit.trace(lambda x: gradlab.tensor(x.numpy()) * 2, gradlab.randn(3))


def test_bad_examples_and_nested_traces_explain_themselves():
    with pytest.raises(TypeError, match=r"example_inputs\[1\] is a int.*functools.partial"):
        jit.trace(lambda x, n: x * n, (gradlab.randn(2), 3))
    with pytest.raises(TypeError, match="a tensor or a tuple of tensors"):
        jit.trace(lambda x: x, [])
    inner = jit.trace(lambda x: x * 2, gradlab.randn(2))
    with pytest.raises(jit.TracingError, match="already tracing"):
        jit.trace(lambda x: jit.trace(lambda y: y, x), gradlab.randn(2))
    with pytest.raises(TypeError, match=r"traced with 1 input\(s\) \(x\), called with 2"):
        inner(gradlab.randn(2), gradlab.randn(2))


def test_a_traced_function_called_in_a_trace_is_inlined():
    inner = jit.trace(lambda x: x * 2, gradlab.randn(2))
    outer = jit.trace(lambda x: inner(x) + 1, gradlab.randn(2))
    assert [n.op for n in outer.graph.nodes] == ["mul", "add"]
    outer3 = jit.trace(lambda x: inner(x) + 1, gradlab.randn(3))  # inner meets a new shape
    assert [n.op for n in outer3.graph.nodes] == ["mul", "add"]
    x = gradlab.randn(3)
    _same(outer3(x), x * 2 + 1)


def test_torchscript_markers_in_model_code_run_and_script_points_at_trace():
    class Model(nn.Module):
        scale: jit.Final[float] = 2.0

        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(2, 2)

        @jit.ignore
        def debug(self, x):
            return x

        @jit.unused
        def old_path(self, x):
            return x

        @jit.ignore(drop=True)
        def dropped(self, x):
            return x

        @jit.export
        def forward(self, x):
            y = jit.annotate(list, [])
            y.append(self.fc(x) * self.scale)
            return y[0] if not jit.is_scripting() else x

    model = Model()
    x = gradlab.randn(3, 2)
    traced = jit.trace(model, x)
    _same(traced(x), model(x))
    assert jit.freeze(traced) is traced and jit.optimize_for_inference(traced) is traced
    assert model.debug(x) is x and model.old_path(x) is x and model.dropped(x) is x
    with pytest.raises(NotImplementedError, match=r"no TorchScript compiler.*jit.trace"):
        jit.script(model)

