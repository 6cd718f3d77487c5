"""gradlab.jit.save / load: a traced graph in a file, runnable with no model code, and safe.

Loading must never import or call anything but gradlab's own ops, so these
tests also hand ``load`` files crafted to name something else.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

import gradlab
import gradlab.nn as nn
from gradlab import jit
from gradlab.serialization import CheckpointError


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3, padding=1)
        self.bn = nn.BatchNorm2d(3)
        self.fc = nn.Linear(12, 4)
        self.unused = nn.Embedding(5, 2)  # not in the graph, still in the state

    def forward(self, x):
        h = nn.functional.max_pool2d(self.bn(self.conv(x)).relu(), 2).flatten(1)
        z = self.fc(h) + gradlab.zeros(h.shape[0], 4)
        z[:, 0] = 0.0
        return z.log_softmax(1), h.detach()[:, :3]


def _roundtrip(traced):
    buf = io.BytesIO()
    jit.save(traced, buf)
    buf.seek(0)
    return jit.load(buf)


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_loaded_graph_computes_what_the_model_does(mode, tmp_path):
    model = Net().train(mode == "train")
    x = gradlab.randn(2, 1, 4, 4)
    traced = jit.trace(model, x)
    path = tmp_path / "net.glg"
    jit.save(traced, path)
    loaded = jit.load(path)
    twin = Net().train(mode == "train")
    twin.load_state_dict(model.state_dict())
    for got, want in zip(loaded(x), twin(x)):
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    assert str(loaded.graph) == str(traced.graph)
    # the whole state, in state_dict order, BatchNorm's running stats moved alike
    assert list(loaded.state_dict()) == list(model.state_dict())
    for (k, a), (_, b) in zip(loaded.state_dict().items(), twin.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    # the file is an ordinary checkpoint too
    assert gradlab.load(path)["format"] == "gradlab.jit.graph"


def test_a_loaded_graph_trains_and_saves_again():
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    x, y = gradlab.randn(16, 3), gradlab.randn(16, 1)
    loaded = _roundtrip(jit.trace(model, x))
    params = list(loaded.parameters())
    assert len(params) == 4 and all(p.requires_grad for p in params)
    opt = gradlab.optim.Adam(loaded.parameters(), lr=0.05)
    first = None
    for _ in range(30):
        opt.zero_grad()
        loss = nn.functional.mse_loss(loaded(x), y)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < 0.5 * first
    again = _roundtrip(loaded)
    np.testing.assert_array_equal(again(x).detach().numpy(), loaded(x).detach().numpy())


def test_random_ops_draw_afresh_from_the_default_generator():
    model = nn.Sequential(nn.Dropout(0.5))
    x = gradlab.ones(4, 6)
    loaded = _roundtrip(jit.trace(model, x))
    gradlab.manual_seed(11)
    got = loaded(x)
    gradlab.manual_seed(11)
    np.testing.assert_array_equal(got.numpy(), model(x).numpy())
    assert not np.array_equal(loaded(x).numpy(), got.numpy())


def test_a_loaded_graph_takes_only_inputs_like_its_example():
    loaded = _roundtrip(jit.trace(nn.Linear(3, 2), gradlab.randn(4, 3)))
    with pytest.raises(RuntimeError, match=r"input 0 \(%input\) was traced as float32\[4, 3\] "
                                           r"on cpu, got float32\[5, 3\].*trace and save once"):
        loaded(gradlab.randn(5, 3))
    with pytest.raises(RuntimeError, match="got float64"):
        loaded(gradlab.randn(4, 3, dtype=gradlab.float64))
    with pytest.raises(TypeError, match="called with 2"):
        loaded(gradlab.randn(4, 3), gradlab.randn(4, 3))


def test_user_code_and_own_generators_are_not_saved():
    class Twice(gradlab.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    traced = jit.trace(lambda x: Twice.apply(x), gradlab.randn(2))
    with pytest.raises(TypeError, match=r"twice calls .*Twice.*never user code"):
        jit.save(traced, io.BytesIO())
    gen = gradlab.Generator().manual_seed(1)
    traced = jit.trace(lambda x: x + gradlab.randn(2, generator=gen), gradlab.randn(2),
                       check_trace=False)
    with pytest.raises(TypeError, match="Generator of its own"):
        jit.save(traced, io.BytesIO())
    with pytest.raises(TypeError, match="what gradlab.jit.trace returns"):
        jit.save(nn.Linear(1, 1), io.BytesIO())


def _tampered(edit) -> io.BytesIO:
    """A saved graph whose tree went through ``edit`` (a crafted file)."""
    model = nn.Linear(2, 2)
    traced = jit.trace(model, gradlab.randn(1, 2))
    buf = io.BytesIO()
    jit.save(traced, buf)
    tree = gradlab.load(io.BytesIO(buf.getvalue()))
    edit(tree)
    out = io.BytesIO()
    gradlab.save(tree, out)
    out.seek(0)
    return out


@pytest.mark.parametrize("edit, message", [
    (lambda t: t["nodes"][0].update(target="os:system"), r"os:system, outside gradlab"),
    (lambda t: t["nodes"][0].update(target="gradlab.serialization:save"),
     r"gradlab.serialization:save, which is not an op a graph may call"),
    (lambda t: t["nodes"][0].update(target="gradlab.ops.dense:NoSuchOp"),
     r"which this gradlab does not have"),
    (lambda t: t["nodes"][0].update(target="gradlab.ops.dense:linear"),
     r"not an op a graph may call"),
    (lambda t: t["nodes"][0]["args"]["tuple"].append({"ref": "builtins:eval"}), r"outside gradlab"),
    (lambda t: t["nodes"][0]["args"]["tuple"].append({"pickle": "..."}), r"unknown argument tag"),
    (lambda t: t["nodes"][0].update(target="gradlab.cli:main"),
     r"not an op a graph may call|does not have"),
    (lambda t: t["nodes"][0].update(kind="exec"), r"unknown node kind"),
    (lambda t: t.update(version=99), r"format version 99"),
    (lambda t: t["constants"][0].update(name="ghost"), r"uses 'ghost'"),
    (lambda t: t.pop("nodes"), r"malformed graph \(KeyError"),
])
def test_crafted_files_are_refused_without_running_anything(edit, message):
    with pytest.raises(CheckpointError, match=message):
        jit.load(_tampered(edit))


def test_a_plain_checkpoint_is_not_a_graph(tmp_path):
    path = tmp_path / "weights.pt"
    gradlab.save(nn.Linear(2, 2).state_dict(), path)
    with pytest.raises(CheckpointError, match=r"not a gradlab graph .*read with gradlab.load"):
        jit.load(path)


def test_the_graph_tree_is_plain_json():
    model = nn.Sequential(nn.Conv1d(2, 2, 3), nn.Flatten(), nn.Linear(4, 1))
    buf = io.BytesIO()
    jit.save(jit.trace(model, gradlab.randn(1, 2, 4)), buf)
    header_len = int.from_bytes(buf.getvalue()[:8], "little")
    header = json.loads(buf.getvalue()[8:8 + header_len])
    tree = header["__metadata__"]["tree"]
    assert "gradlab.ops.convolution:Convolution" in tree  # ops by name, nothing executable
    assert "ConvGeometry" in tree
