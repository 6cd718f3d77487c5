"""gradlab.autograd.graph: hooks on the tensors the graph saves for backward."""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

import gradlab
from gradlab import nn
from gradlab.autograd.graph import (
    Node,
    disable_saved_tensors_hooks,
    increment_version,
    save_on_cpu,
    saved_tensors_hooks,
)
from tests.oracle import needs_torch, torch


def _to_numpy(log):
    """A pack/unpack pair that keeps each saved tensor as a NumPy copy, and logs calls."""
    def pack(t):
        log.append(("pack", t))
        return t.detach().numpy().copy()

    def unpack(array):
        log.append(("unpack", array))
        return gradlab.from_numpy(array)
    return pack, unpack


def test_pack_sees_each_saved_input_and_unpack_runs_at_backward():
    a = gradlab.randn(3, requires_grad=True)
    b = gradlab.randn(3, requires_grad=True)
    log = []
    with saved_tensors_hooks(*_to_numpy(log)):
        y = (a * b).exp().sum()  # mul keeps a and b, exp keeps its result
    packed = [t for kind, t in log if kind == "pack"]
    assert len(packed) == 3 and packed[0] is a and packed[1] is b
    np.testing.assert_array_equal(packed[2].numpy(), (a * b).exp().detach().numpy())
    assert not packed[2].requires_grad  # a saved output comes detached (no cycle to its node)
    assert all(kind == "pack" for kind, _ in log)  # nothing unpacked before backward
    y.backward()
    assert [kind for kind, _ in log].count("unpack") == 3
    a2, b2 = (t.detach().requires_grad_() for t in (a, b))
    (a2 * b2).exp().sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), a2.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), b2.grad.numpy(), rtol=1e-6)


def test_the_node_keeps_only_what_pack_returned():
    x = gradlab.randn(256, 256, requires_grad=True)
    before = gradlab.memory_stats()["activation_bytes"]
    with saved_tensors_hooks(*_to_numpy([])):
        h = (x * 2).tanh()  # tanh keeps its 256 KiB output: as a NumPy copy here
        kept = gradlab.memory_stats()["activation_bytes"] - before
    plain = (x * 2).tanh()
    held = gradlab.memory_stats()["activation_bytes"] - before
    assert kept == 0 and held >= 256 * 256 * 4  # without hooks: at least tanh's output
    assert h.grad_fn.saved_bytes == 0 and plain.grad_fn.saved_bytes == 256 * 256 * 4


def test_a_pack_that_keeps_the_tensor_itself_still_counts_its_bytes():
    x = gradlab.randn(128, 128, requires_grad=True)
    before = gradlab.memory_stats()["activation_bytes"]
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        h = (x * 2).tanh()
    held = gradlab.memory_stats()["activation_bytes"] - before
    assert held >= 128 * 128 * 4 and h.grad_fn.saved_bytes == 128 * 128 * 4
    h.sum().backward()
    assert gradlab.memory_stats()["activation_bytes"] == before  # released with the node
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t):  # a view: the same bytes
        h = (x * 2).tanh()
    assert gradlab.memory_stats()["activation_bytes"] - before == held
    del h
    assert gradlab.memory_stats()["activation_bytes"] == before


def test_packed_values_are_freed_after_backward_and_a_second_backward_explains():
    x = gradlab.randn(4, requires_grad=True)
    boxes = []

    class Box:
        def __init__(self, t):
            self.t = t

    def pack(t):
        boxes.append(weakref.ref(box := Box(t.detach().clone())))
        return box

    with saved_tensors_hooks(pack, lambda box: box.t):
        y = (x * x).sum()
    assert all(r() is not None for r in boxes)
    y.backward()
    gc.collect()
    assert boxes and all(r() is None for r in boxes)
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()


def test_retain_graph_unpacks_again_for_each_backward():
    x = gradlab.randn(3, requires_grad=True)
    log = []
    with saved_tensors_hooks(*_to_numpy(log)):
        y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert [kind for kind, _ in log].count("unpack") == 4  # x twice, in each backward
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.detach().numpy(), rtol=1e-6)


def test_second_derivatives_flow_through_unpacked_tensors():
    x = gradlab.randn(5, dtype=gradlab.float64, requires_grad=True)
    with saved_tensors_hooks(*_to_numpy([])):
        y = (x ** 3).sum()
        h = (x * 2).sin().sum()  # a non-leaf saved input: its history must come back too
    (gx,) = gradlab.autograd.grad(y, x, create_graph=True)
    (ggx,) = gradlab.autograd.grad(gx.sum(), x)
    np.testing.assert_allclose(ggx.numpy(), 6 * x.detach().numpy())
    (gh,) = gradlab.autograd.grad(h, x, create_graph=True)
    (ggh,) = gradlab.autograd.grad(gh.sum(), x)
    np.testing.assert_allclose(ggh.numpy(), -4 * np.sin(2 * x.detach().numpy()))


def test_gradcheck_through_hooks():
    x = gradlab.randn(3, 4, dtype=gradlab.float64, requires_grad=True)
    w = gradlab.randn(5, 4, dtype=gradlab.float64, requires_grad=True)

    def f(x, w):
        with saved_tensors_hooks(*_to_numpy([])):
            return nn.functional.gelu(nn.functional.linear(x, w)).softmax(-1)
    assert gradlab.autograd.gradcheck(f, (x, w))
    assert gradlab.autograd.gradgradcheck(f, (x, w))


def test_in_place_change_after_packing_is_still_caught():
    x = gradlab.randn(3, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        h = x * 2
        z = h * h  # keeps h (as a copy)
    h.mul_(3)
    with pytest.raises(RuntimeError, match=r"'mul' .*version 0 and is now at version 1"):
        z.sum().backward()
    z2 = (x * 2) * 1.0
    increment_version(x)  # a change autograd cannot see, declared
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        z2.sum().backward()


def test_unpack_returning_the_wrong_thing_names_the_op_and_shapes():
    x = gradlab.randn(3, requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: t[:1]):
        z = (x * x).sum()
    with pytest.raises(RuntimeError, match=r"unpack_hook returned shape \(1,\).*'mul'.*\(3,\)"):
        z.backward()
    with saved_tensors_hooks(lambda t: t, lambda t: t.double()):
        z = (x * x).sum()
    with pytest.raises(RuntimeError, match="float64.*saved with shape"):
        z.backward()
    with saved_tensors_hooks(lambda t: t, lambda t: t.numpy()):
        z = (x.detach() * x).sum()
    with pytest.raises(RuntimeError, match="returned a ndarray"):
        z.backward()


def test_only_the_innermost_pair_applies_and_exit_restores_the_outer():
    x = gradlab.randn(2, requires_grad=True)
    seen = []

    def tagging(tag):
        return (lambda t: seen.append(tag) or t), (lambda t: t)
    with saved_tensors_hooks(*tagging("outer")):
        _ = x.exp()
        with saved_tensors_hooks(*tagging("inner")):
            _ = x.exp()
        _ = x.exp()
    _ = x.exp()
    assert seen == ["outer", "inner", "outer"]


def test_tensors_saved_before_the_block_keep_their_own_way():
    x = gradlab.randn(3, requires_grad=True)
    y = x.exp()
    log = []
    with saved_tensors_hooks(*_to_numpy(log)):
        y.sum().backward()
    assert log == []


def test_custom_functions_save_through_the_hooks():
    class Cube(gradlab.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    x = gradlab.tensor([1.0, 2.0], requires_grad=True)
    log = []
    with saved_tensors_hooks(*_to_numpy(log)):
        y = Cube.apply(x)
    assert [t for kind, t in log if kind == "pack"][0] is x
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]


def test_pack_runs_without_recording_a_graph():
    x = gradlab.randn(3, requires_grad=True)
    made = []
    with saved_tensors_hooks(lambda t: made.append(t * 2) or t, lambda t: t):
        _ = x * x
    assert made and all(m.grad_fn is None and not m.requires_grad for m in made)


def test_an_error_in_pack_reaches_the_caller_and_leaves_modes_intact():
    x = gradlab.randn(3, requires_grad=True)

    def pack(t):
        raise ValueError("pack failed on purpose")
    with saved_tensors_hooks(pack, lambda t: t):
        with pytest.raises(ValueError, match="on purpose"):
            _ = x * x
    assert gradlab.is_grad_enabled()
    (x * x).sum().backward()  # no hooks left behind
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-6)


def test_disable_saved_tensors_hooks_refuses_new_hooks_and_suspends_outer_ones():
    x = gradlab.randn(2, requires_grad=True)
    seen = []
    with saved_tensors_hooks(lambda t: seen.append(1) or t, lambda t: t):
        with disable_saved_tensors_hooks("this feature needs plain saved tensors"):
            with pytest.raises(RuntimeError, match="needs plain saved tensors"):
                with saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
            _ = x.exp()
        assert seen == []
        _ = x.exp()
    assert seen == [1]

    @disable_saved_tensors_hooks("not in here")
    def guarded():
        with saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
    with pytest.raises(RuntimeError, match="not in here"):
        guarded()


def test_hooks_are_per_thread():
    x = gradlab.randn(2, requires_grad=True)
    seen = []
    with saved_tensors_hooks(lambda t: seen.append("main") or t, lambda t: t):
        worker = threading.Thread(target=lambda: x.exp())
        worker.start()
        worker.join()
    assert seen == []


def test_hooks_must_be_callable():
    with pytest.raises(TypeError, match="unpack_hook must be callable"):
        saved_tensors_hooks(lambda t: t, None)


def test_save_on_cpu_trains_a_model_like_plain_saving():
    gradlab.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.LayerNorm(8), nn.Linear(8, 3))
    x, y = gradlab.randn(5, 6), gradlab.tensor([0, 2, 1, 1, 0])
    nn.functional.cross_entropy(model(x), y).backward()
    plain = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    with save_on_cpu(pin_memory=True):
        loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    for p, g in zip(model.parameters(), plain):
        np.testing.assert_allclose(p.grad.numpy(), g.numpy(), rtol=1e-6, atol=1e-7)


def test_node_is_the_class_of_grad_fns():
    y = gradlab.randn(2, requires_grad=True).exp()
    assert isinstance(y.grad_fn, Node)


@needs_torch
def test_gradients_with_hooks_match_pytorch_without():
    rng = np.random.RandomState(3)
    xs = rng.standard_normal((4, 5))
    ws = rng.standard_normal((3, 5))

    def run(lib, hooks):
        x = lib.tensor(xs, requires_grad=True)
        w = lib.tensor(ws, requires_grad=True)
        with hooks:
            loss = (lib.tanh(x @ w.T) * x.sum(1, keepdim=True)).pow(2).mean()
        loss.backward()
        return x.grad.detach().numpy(), w.grad.detach().numpy()
    ours = run(gradlab, saved_tensors_hooks(*_to_numpy([])))
    theirs = run(torch, torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10)


@needs_torch
def test_pack_receives_inputs_as_themselves_as_in_pytorch():
    def received(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        got = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: got.append(t) or t,
                                                    lambda t: t):
            _ = a * a
        return [t is a for t in got]
    assert received(gradlab) == received(torch) == [True, True]
