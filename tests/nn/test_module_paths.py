"""Module paths: every op a forward runs records the path of the module that ran it."""

from __future__ import annotations

import pytest

import gradlab
from gradlab import events, nn
from gradlab.autograd.grad_mode import state
from tests.nn.test_module import Net


def _record(model, x):
    """The events of a forward (and the loss), then those of the backward."""
    seen, seen_backward = [], []
    with events.subscribe(seen.append):
        y = model(x).sum()
    with events.subscribe(seen_backward.append):
        y.backward()
    return seen, seen_backward


def test_ops_carry_the_path_of_the_module_that_ran_them():
    net = Net()
    seen, seen_backward = _record(net, gradlab.randn(2, 3, requires_grad=True))
    forward = [(e.op, e.module) for e in seen if isinstance(e, events.OpForward)]
    assert forward[:4] == [("linear", "encoder.0.fc1"), ("relu", "encoder.0.act"),
                           ("linear", "encoder.0.fc2"), ("add", "encoder.0")]
    assert ("linear", "encoder.1.fc2") in forward
    assert forward[-3:] == [("linear", "head"), ("mul", ""), ("sum", None)]
    backward = {(e.op, e.module) for e in seen_backward if isinstance(e, events.BackwardNode)}
    assert ("linear", "encoder.1.fc1") in backward and ("mul", "") in backward
    assert ("sum", None) in backward
    assert state.module is None and state.running_module is None


def test_graph_nodes_remember_their_module():
    net = Net()
    y = net(gradlab.randn(2, 3))
    assert y.grad_fn.module == ""
    assert y.grad_fn.next_functions[0][0].module == "head"


def test_path_is_relative_to_the_outermost_module_called():
    net = Net()
    seen, _ = _record(net.encoder[1], gradlab.randn(2, 3))
    assert {e.module for e in seen if isinstance(e, events.OpForward) and e.op == "linear"} \
        == {"fc1", "fc2"}
    seen, _ = _record(net.head, gradlab.randn(2, 3))
    assert [e.module for e in seen if isinstance(e, events.OpForward)][0] == ""


def test_shared_and_grandchild_modules_get_a_path_in_the_tree():
    shared = nn.Linear(2, 2)

    class Skip(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = shared
            self.b = shared
            self.inner = nn.Sequential(nn.Linear(2, 2))
            self.stranger_list = [nn.Linear(2, 2)]  # not registered: not in the tree

        def forward(self, x):
            x = self.inner[0](self.b(x))  # a grandchild called directly
            return self.stranger_list[0](x)

    seen, _ = _record(Skip(), gradlab.randn(1, 2))
    assert [e.module for e in seen if isinstance(e, events.OpForward) and e.op == "linear"] \
        == ["a", "inner.0", ""]


def test_module_state_is_restored_when_forward_raises():
    class Broken(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x.reshape(3, 5))

    with pytest.raises(RuntimeError):
        Broken()(gradlab.randn(2, 2))
    assert state.module is None and state.running_module is None
    hooked = nn.Linear(2, 2)
    hooked.register_forward_hook(lambda m, a, o: None)
    with pytest.raises(RuntimeError):
        hooked(gradlab.randn(3, 3))
    assert state.module is None and state.running_module is None


def test_renamed_child_gets_its_new_path():
    net = nn.Sequential(nn.Linear(2, 2))
    seen, _ = _record(net, gradlab.randn(1, 2))
    assert [e.module for e in seen if isinstance(e, events.OpForward)][0] == "0"
    layer = net[0]
    del net[0]
    net.add_module("renamed", layer)
    seen, _ = _record(net, gradlab.randn(1, 2))
    assert [e.module for e in seen if isinstance(e, events.OpForward)][0] == "renamed"
