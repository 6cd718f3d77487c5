"""The event bus: what a debugger sees of a run, and that listening never changes the run."""

from __future__ import annotations

import threading

import pytest

import gradlab
from gradlab import events


@pytest.fixture
def log():
    """Events recorded while the test runs (subscription removed afterwards)."""
    seen: list = []
    with events.subscribe(seen.append):
        yield seen


def of_type(seen, kind):
    return [e for e in seen if isinstance(e, kind)]


def small_program():
    a = gradlab.tensor([1.0, 2.0], requires_grad=True, name="a")
    b = gradlab.tensor([3.0, 4.0], name="b")
    c = gradlab.tensor([0.5, 0.5], dtype=gradlab.float32, name="c")
    return a, b, c


def test_subscription_remove_and_context_manager():
    seen = []
    sub = events.subscribe(seen.append)
    assert sub.callback in events.listeners
    gradlab.ones(1) * 2
    sub.remove()
    assert sub.callback not in events.listeners and not sub.active
    n = len(seen)
    gradlab.ones(1) * 2
    assert len(seen) == n > 0
    sub.remove()  # twice is harmless
    with events.subscribe(seen.append) as sub2:
        assert sub2.active
    assert not sub2.active and seen.append not in events.listeners


def test_subscribe_needs_a_callable():
    with pytest.raises(TypeError, match="expected a callable, got int"):
        events.subscribe(3)


def test_one_op_forward_per_op_in_order(log):
    a, b, c = small_program()
    log.clear()
    out = (a * b + c).sum()
    forwards = of_type(log, events.OpForward)
    assert [e.op for e in forwards] == ["mul", "add", "sum"]
    mul, add, total = forwards
    assert [r.name for r in mul.inputs] == ["a", "b"]
    assert mul.inputs[0].tensor is a and mul.inputs[1].tensor is b
    assert mul.inputs[0].shape == (2,) and mul.inputs[0].dtype is gradlab.float32
    assert mul.inputs[0].device == "cpu" and mul.inputs[0].requires_grad
    assert not mul.inputs[1].requires_grad
    assert add.inputs[0].id == mul.outputs[0].id  # the mul's output fed the add
    assert add.inputs[1].tensor is c
    assert total.outputs[0].tensor is out and total.outputs[0].shape == ()
    assert total.node_id == out.grad_fn.id
    assert all(e.duration >= 0 and e.module is None for e in forwards)


def test_op_forward_without_a_graph_has_no_node(log):
    with gradlab.no_grad():
        gradlab.ones(2, requires_grad=True) * 2
    (forward,) = of_type(log, events.OpForward)
    assert forward.op == "mul" and forward.node_id is None


def test_tensor_refs_are_weak(log):
    x = gradlab.ones(2) * 3
    ref = of_type(log, events.OpForward)[-1].outputs[0]
    assert ref.tensor is x
    del x
    assert ref.tensor is None


def test_backward_events(log):
    a, b, c = small_program()
    out = (a * b + c).sum()
    log.clear()
    out.backward()
    phases = of_type(log, events.Phase)
    assert [p.kind for p in phases] == ["backward_begin", "backward_end"]
    assert [r.tensor for r in phases[0].roots] == [out]  # where backward starts
    assert phases[1].roots == ()
    nodes = of_type(log, events.BackwardNode)
    assert [n.op for n in nodes] == ["sum", "add", "mul"]  # one per node run, outputs first
    assert nodes[0].node_id == out.grad_fn.id
    assert nodes[0].grad_outputs[0].shape == () and nodes[0].grad_inputs[0].shape == (2,)
    # add's second input (c) needs no gradient; mul's second (b) neither
    assert nodes[1].grad_inputs[1] is None and nodes[2].grad_inputs[1] is None
    (acc,) = of_type(log, events.GradAccumulated)  # only a requires grad
    assert acc.tensor.tensor is a and acc.tensor.name == "a"
    assert acc.grad.tensor is a.grad and acc.grad.shape == (2,)
    order = [e.seq for e in (phases[0], *nodes, acc, phases[1])]
    assert order == sorted(order)


def test_grad_accumulated_once_per_leaf_per_backward(log):
    x = gradlab.ones(2, requires_grad=True)
    w = gradlab.ones(2, requires_grad=True)
    for _ in range(2):
        (x * w * x).sum().backward()
    accs = [e.tensor.id for e in of_type(log, events.GradAccumulated)]
    assert sorted(accs) == sorted([id(x), id(x), id(w), id(w)])


def test_seq_strictly_increasing(log):
    a, b, c = small_program()
    (a * b + c).sum().backward()
    seqs = [e.seq for e in log]
    assert len(seqs) > 10
    assert all(s < t for s, t in zip(seqs, seqs[1:]))


def test_memory_events(log):
    before = gradlab.memory_allocated()
    t = gradlab.zeros(250)  # 1000 bytes
    alloc = [e for e in of_type(log, events.Memory) if e.action == "alloc"][-1]
    assert alloc.nbytes == 1000 and alloc.device == "cpu" and alloc.category == "other"
    assert alloc.live_bytes == before + 1000 and alloc.peak_bytes >= alloc.live_bytes
    del t
    free = of_type(log, events.Memory)[-1]
    assert free.action == "free" and free.nbytes == 1000 and free.live_bytes == before


def test_memory_events_for_saved_tensors(log):
    x = gradlab.ones(100, requires_grad=True)
    log.clear()
    y = x * x  # saves x: x's bytes become 'activation'
    retags = [e for e in of_type(log, events.Memory) if e.action == "retag"]
    assert [(e.nbytes, e.category, e.previous_category) for e in retags] == [
        (400, "activation", "other")]
    log.clear()
    y.sum().backward()
    retags = [e for e in of_type(log, events.Memory) if e.action == "retag"]
    moves = [(e.nbytes, e.category, e.previous_category) for e in retags]
    assert (400, "other", "activation") in moves  # x released by backward
    assert (400, "gradient", "other") in moves  # x.grad


def test_a_listener_that_raises_does_not_corrupt_the_run(capsys):
    def broken(event):
        raise ValueError("listener bug")

    x = gradlab.tensor([1.0, 2.0], requires_grad=True)
    with events.subscribe(broken):
        y = (x * x).sum()
        y.backward()
    assert y.item() == 5.0
    assert x.grad.tolist() == [2.0, 4.0]
    assert gradlab.is_grad_enabled()
    err = capsys.readouterr().err
    assert "listener" in err and "listener bug" in err and "carries on" in err
    # And the engine is still healthy afterwards.
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_a_listener_may_block_the_engine_thread():
    """The debugger pauses a run by blocking inside its listener until released."""
    reached = threading.Event()
    release = threading.Event()
    results = {}

    def pause_at_mul(event):
        if isinstance(event, events.OpForward) and event.op == "mul":
            reached.set()
            assert release.wait(timeout=10)

    def training():
        x = gradlab.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).sum().backward()
        results["grad"] = x.grad.tolist()

    with events.subscribe(pause_at_mul):
        worker = threading.Thread(target=training)
        worker.start()
        assert reached.wait(timeout=10)
        assert "grad" not in results  # paused inside the op
        release.set()
        worker.join(timeout=10)
    assert results["grad"] == [2.0, 2.0]


def test_no_listener_no_events():
    assert not events.listeners  # nothing left subscribed by other tests


def test_backward_begin_lets_a_listener_read_the_graph_before_it_is_freed():
    a = gradlab.ones(3, requires_grad=True)
    out = (a.exp() * 2).sum()
    seen = []

    def walk(event):
        if isinstance(event, events.Phase) and event.kind == "backward_begin":
            node, names = event.roots[0].tensor.grad_fn, []
            while node is not None:
                names.append(node.name())
                node = next((f for f, _ in node.next_functions if f is not None), None)
            seen.append(names)

    with events.subscribe(walk):
        out.backward()
    assert seen == [["SumBackward0", "MulBackward0", "ExpBackward0", "AccumulateGrad"]]


def test_a_light_subscription_sees_phases_and_metrics_only():
    seen = []
    sub = events.subscribe(seen.append, light=True)
    try:
        assert sub.light and sub.callback in events.light_listeners
        assert not events.listeners  # the hot paths stay as fast as with nobody listening
        w = gradlab.ones(3, requires_grad=True)
        (w * 2).sum().backward()
        events.emit(events.Metric(events.next_seq(), {"accuracy": 0.5}))
        assert [type(e).__name__ for e in seen] == ["Phase", "Phase", "Metric"]
        assert [e.kind for e in seen[:2]] == ["backward_begin", "backward_end"]
        sub.light = False  # switch to everything: ops and backward nodes arrive too
        assert sub.callback in events.listeners and sub.callback not in events.light_listeners
        (w * 2).sum().backward()
        kinds = {type(e).__name__ for e in seen[3:]}
        assert {"OpForward", "BackwardNode", "Phase"} <= kinds
        sub.light = True
        assert sub.callback in events.light_listeners and sub.callback not in events.listeners
    finally:
        sub.remove()
    assert sub.callback not in events.light_listeners and not sub.active
    sub.light = False  # a removed subscription stays removed
    assert sub.callback not in events.listeners


def test_a_dataloader_pass_is_an_epoch_phase():
    from gradlab.utils.data import DataLoader, TensorDataset

    loader = DataLoader(TensorDataset(gradlab.arange(6.0)), batch_size=4)
    seen = []
    with events.subscribe(seen.append, light=True):
        for _ in range(2):
            list(loader)
    assert [(e.kind, e.iteration, e.source) for e in seen] == \
        [("epoch", 1, id(loader)), ("epoch", 2, id(loader))]


def test_add_and_sub_with_alpha_are_one_op_each():
    """PyTorch's add(alpha=) is one op: the optimizers' p.add_(g, alpha=-lr) shows as one."""
    a = gradlab.randn(3, requires_grad=True)
    b = gradlab.randn(3)
    seen = []
    with events.subscribe(lambda e: seen.append(e.op) if isinstance(e, events.OpForward)
                          else None):
        y = gradlab.add(a, b, alpha=2.0)
        z = a.sub(b, alpha=0.5)
        with gradlab.no_grad():
            a.add_(b, alpha=-0.1)
            a.sub_(b, alpha=3)
    assert seen == ["add", "sub", "add_", "sub_"]
    assert (y.grad_fn.name(), z.grad_fn.name()) == ("AddBackward0", "SubBackward0")
