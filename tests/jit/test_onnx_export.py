"""gradlab.onnx.export: the exported model, run by onnxruntime, computes what gradlab computes.

Each case exports a model, runs the ONNX file in onnxruntime (an independent
implementation of every ONNX operator) and compares with gradlab's eval-mode
output; ``onnx.checker`` validates every file on the way out.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

import gradlab
import gradlab.nn as nn

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


class Recurrent(nn.Module):
    def __init__(self, rnn) -> None:
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        return self.rnn(x)[0]


class SelfAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.norm = nn.Linear(8, 8), nn.Linear(8, 8), nn.LayerNorm(8)

    def forward(self, x):
        weights = (self.q(x) @ self.k(x).transpose(1, 2) / 8 ** 0.5).softmax(-1)
        return self.norm(weights @ x + x).mean(1)


CASES = {
    "alpha_and_view": lambda: (lambda x, y: gradlab.sub(gradlab.add(x, y, alpha=2.5), y,
                                                      alpha=0.5).view(2, 6),
                               (gradlab.randn(3, 4), gradlab.randn(4))),
    "mlp": lambda: (nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.LayerNorm(8), nn.Dropout(0.1),
                                  nn.Linear(8, 3), nn.LogSoftmax(1)), (gradlab.randn(4, 6),)),
    "activations": lambda: (nn.Sequential(nn.GELU("tanh"), nn.SiLU(), nn.ELU(0.5), nn.SELU(),
                                          nn.Softplus(2.0), nn.LeakyReLU(0.2), nn.Tanh(),
                                          nn.Sigmoid(), nn.Softmax(0)), (gradlab.randn(3, 5),)),
    "lenet": lambda: (nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
                                    nn.Conv2d(6, 16, 5), nn.BatchNorm2d(16), nn.ReLU(),
                                    nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 120),
                                    nn.ReLU(), nn.Linear(120, 10)),
                      (gradlab.randn(2, 1, 28, 28),)),
    "pools": lambda: (nn.Sequential(nn.Conv2d(2, 4, 3, padding=1, stride=2, groups=2),
                                    nn.AvgPool2d(3, stride=2, padding=1,
                                                 count_include_pad=False),
                                    nn.AvgPool2d(2, padding=1), nn.MaxPool2d(2, ceil_mode=True),
                                    nn.AdaptiveAvgPool2d(1), nn.Flatten()),
                      (gradlab.randn(2, 2, 13, 13),)),
    "conv1d": lambda: (nn.Sequential(nn.Conv1d(2, 4, 3, padding=1, dilation=2),
                                     nn.MaxPool1d(2, ceil_mode=True), nn.AvgPool1d(2, padding=1)),
                       (gradlab.randn(2, 2, 9),)),
    "embedding": lambda: (nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(12, 2)),
                          (gradlab.randint(0, 10, (5, 3)),)),
    "attention": lambda: (SelfAttention(), (gradlab.randn(2, 5, 8),)),
    "lstm": lambda: (Recurrent(nn.LSTM(3, 4, 2, batch_first=True)), (gradlab.randn(2, 5, 3),)),
    "gru": lambda: (Recurrent(nn.GRU(3, 4, bidirectional=True)), (gradlab.randn(5, 2, 3),)),
    "encoder": lambda: (nn.TransformerEncoderLayer(8, 2, 16, batch_first=True),
                        (gradlab.randn(2, 3, 8),)),
    "multihead": lambda: (nn.MultiheadAttention(8, 2, batch_first=True),
                          (gradlab.randn(2, 3, 8), gradlab.randn(2, 4, 8), gradlab.randn(2, 4, 8))),
    "tensor_ops": lambda: (lambda a, b: ((2 - a).clamp(-1, 1) * b.exp() / 3 + a.pow(2).sqrt(),
                                         gradlab.cat([a, b], 1).permute(1, 0).sum(0),
                                         a.max(1)[0], a.amax(0), b.to(gradlab.float64),
                                         a.unsqueeze(0).expand(2, 3, 4) + gradlab.ones(4),
                                         gradlab.stack([a, b], 2).unbind(1)[2],
                                         a[1], a[:, ::2], a[..., -1], a[None, 1:3, :2],
                                         a[::-1], a + gradlab.zeros_like(a) + gradlab.arange(4)),
                           (gradlab.randn(3, 4), gradlab.randn(3, 4))),
    "mobile": lambda: (nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.Hardswish(), nn.ReLU6(),
                                     nn.PReLU(4), nn.Hardsigmoid(), nn.Mish(), nn.LogSigmoid(),
                                     nn.Hardtanh(-0.5, 0.5), nn.ZeroPad2d((1, 2, 0, 1))),
                       (gradlab.randn(2, 2, 5, 5),)),
    "decoder": lambda: (nn.Sequential(nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1,
                                                         output_padding=1),
                                      nn.GroupNorm(1, 3), nn.ConvTranspose2d(3, 4, 2, stride=2,
                                                                             groups=1),
                                      nn.InstanceNorm2d(4, affine=True)),
                        (gradlab.randn(2, 4, 5, 5),)),
    "upsampling": lambda: (lambda x: (nn.functional.interpolate(x, scale_factor=2),
                                      nn.functional.interpolate(x, size=(7, 5), mode="bilinear"),
                                      nn.functional.interpolate(x, scale_factor=1.5,
                                                                mode="bilinear",
                                                                align_corners=True),
                                      nn.functional.interpolate(x, scale_factor=2,
                                                                mode="bicubic"),
                                      nn.functional.interpolate(x, size=(3, 8),
                                                                mode="nearest-exact")),
                           (gradlab.randn(2, 3, 4, 4),)),
    "decoder1d": lambda: (nn.Sequential(nn.ConvTranspose1d(4, 2, 3, stride=2, dilation=2,
                                                           padding=1, groups=2)),
                          (gradlab.randn(2, 4, 6),)),
    "selection": lambda: (lambda a, b: (gradlab.where(a > 0, a, b * 0.5), a.triu(1), a.tril(-1),
                                        a.masked_fill(a < b, 2.0), gradlab.maximum(a, b),
                                        gradlab.minimum(a, 0.2), a.argmax(1), a.argmin(),
                                        (a >= b).float() + (a <= 0).float() + (a == a).float(),
                                        a.sign(), a.floor(), a.ceil()),
                          (gradlab.randn(3, 4), gradlab.randn(3, 4))),
    "index_tensors": lambda: (lambda a, i: (a.index_select(0, i), a.index_select(1, i),
                                            a.gather(1, i.unsqueeze(0).expand(3, 2))),
                              (gradlab.randn(3, 4), gradlab.tensor([2, 0]))),
}


def _run(model, inputs, **options):
    buf = io.BytesIO()
    gradlab.onnx.export(model, inputs, buf, **options)
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    return session, session.run(None, {i.name: t.numpy() for i, t in
                                       zip(session.get_inputs(), inputs)})


@pytest.mark.parametrize("name", list(CASES))
def test_onnxruntime_computes_what_gradlab_computes(name):
    model, inputs = CASES[name]()
    _, got = _run(model, inputs)
    if isinstance(model, nn.Module):
        model.eval()
    want = model(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.detach().numpy().dtype and g.shape == tuple(w.shape)
        np.testing.assert_allclose(g, w.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_names_initializers_and_the_modules_mode():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Dropout(0.5))
    x = gradlab.randn(2, 3)
    session, (y,) = _run(model, (x,), input_names=["features"], output_names=["scores"])
    assert [i.name for i in session.get_inputs()] == ["features"]
    assert [o.name for o in session.get_outputs()] == ["scores"]
    assert model.training and model[2].training  # put back as it was
    buf = io.BytesIO()
    gradlab.onnx.export(model, x, buf)
    proto = onnx.load_from_string(buf.getvalue())
    names = {init.name for init in proto.graph.initializer}
    assert {"0.weight", "0.bias", "1.running_mean", "1.running_var"} <= names
    assert [n.op_type for n in proto.graph.node][:2] == ["Gemm", "BatchNormalization"]
    np.testing.assert_allclose(y, model.eval()(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_export_to_a_path_is_a_valid_onnx_file(tmp_path):
    path = tmp_path / "model.onnx"
    gradlab.onnx.export(nn.Linear(2, 2), gradlab.randn(1, 2), str(path), opset_version=20)
    model = onnx.load(str(path))
    onnx.checker.check_model(model)
    assert model.opset_import[0].version == 20


def test_what_does_not_export_says_so():
    with pytest.raises(gradlab.onnx.ExportError, match=r"no ONNX form for the op cumsum.*Ops "
                                                       r"that export: .*linear"):
        gradlab.onnx.export(lambda x: x.cumsum(0), gradlab.randn(3), io.BytesIO())
    with pytest.raises(ValueError, match="dynamic_axes names 'nope'.*input_names"):
        gradlab.onnx.export(nn.Linear(2, 2), gradlab.randn(1, 2), io.BytesIO(),
                            dynamic_axes={"nope": [0]})
    with pytest.raises(ValueError, match="opset_version 11"):
        gradlab.onnx.export(nn.Linear(2, 2), gradlab.randn(1, 2), io.BytesIO(),
                            opset_version=11)
    with pytest.raises(gradlab.onnx.ExportError, match="bfloat16"):
        gradlab.onnx.export(nn.Linear(2, 2).to(gradlab.bfloat16),
                            gradlab.randn(1, 2).to(gradlab.bfloat16), io.BytesIO())
    with pytest.raises(gradlab.onnx.ExportError, match=r"tensor\(\) of a computed tensor"):
        gradlab.onnx.export(lambda x: gradlab.tensor(x.detach()) * 2, gradlab.randn(3),
                            io.BytesIO())
    with pytest.raises(gradlab.onnx.ExportError, match="indexing with tensors"):
        gradlab.onnx.export(lambda x, i: x[i], (gradlab.randn(3), gradlab.tensor([0, 2])),
                            io.BytesIO())


# --- dynamic_axes ----------------------------------------------------------------------------

class Tokens(nn.Module):
    """Embedding, attention over the sequence, a per-token head: batch and length both vary."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(20, 8)
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, ids):
        h = self.embed(ids)
        h = h + self.attn(h, h, h, need_weights=False)[0]
        first = h[:, 0]  # basic indexing along a dynamic axis
        return self.head(h).flatten(1, 2), first[:, -1:]


class Pooled(nn.Module):
    """A CNN whose flatten and zeros_like follow the batch; GroupNorm reshapes by batch."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.norm = nn.GroupNorm(2, 4)
        self.fc = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        h = nn.functional.max_pool2d(self.norm(self.conv(x)).relu(), 2)
        h = h.view(h.shape[0], -1)
        return self.fc(h) + gradlab.zeros_like(self.fc(h)[:, :1]).expand(-1, 5)


class CausalSelfAttention(nn.Module):
    """Attention over the past only: the causal mask's size follows the sequence length."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, 2, 4).permute(2, 0, 3, 1, 4)
        out = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return out.transpose(1, 2).reshape(b, t, 8)


DYNAMIC = {
    "causal_attention_length": lambda: (CausalSelfAttention(), (gradlab.randn(2, 5, 8),),
                                        {"x": {0: "batch", 1: "length"}},
                                        [(1, 3, 8), (3, 11, 8)]),
    "mlp_batch": lambda: (nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.LayerNorm(8),
                                        nn.Linear(8, 3), nn.Softmax(-1)),
                          (gradlab.randn(4, 6),), {"x": {0: "batch"}}, [(1, 6), (9, 6)]),
    "cnn_batch": lambda: (Pooled(), (gradlab.randn(3, 1, 8, 8),), {"x": [0]},
                          [(1, 1, 8, 8), (6, 1, 8, 8)]),
    "tokens_batch_and_length": lambda: (Tokens(), (gradlab.randint(0, 20, (2, 5)),),
                                        {"ids": {0: "batch", 1: "length"}},
                                        [(1, 3), (4, 9)]),
    "fully_convolutional": lambda: (nn.Sequential(nn.Conv2d(2, 3, 3), nn.ReLU(),
                                                  nn.MaxPool2d(2), nn.AvgPool2d(2)),
                                    (gradlab.randn(2, 2, 12, 12),),
                                    {"input": {0: "n", 2: "h", 3: "w"}},
                                    [(1, 2, 16, 20), (3, 2, 10, 14)]),
}


@pytest.mark.parametrize("name", list(DYNAMIC))
def test_dynamic_axes_run_at_other_sizes_in_onnxruntime(name):
    model, example, axes, other_shapes = DYNAMIC[name]()
    model.eval()
    names = list(axes)
    buf = io.BytesIO()
    gradlab.onnx.export(model, example, buf, input_names=names, dynamic_axes=axes)
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    declared = session.get_inputs()[0].shape
    for axis, dim in (axes[names[0]].items() if isinstance(axes[names[0]], dict)
                      else ((a, f"{names[0]}_dim{a}") for a in axes[names[0]])):
        assert declared[axis] == dim  # the graph names its dynamic dims
    for shape in other_shapes:
        x = (gradlab.randint(0, 20, shape) if example[0].dtype == gradlab.int64
             else gradlab.randn(*shape))
        got = session.run(None, {names[0]: x.numpy()})
        want = model(x)
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want):
            assert g.shape == tuple(w.shape)
            np.testing.assert_allclose(g, w.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_output_dims_are_named_after_the_input_dims_they_follow():
    buf = io.BytesIO()
    gradlab.onnx.export(nn.Linear(3, 2), gradlab.randn(4, 3), buf, input_names=["x"],
                        output_names=["y"], dynamic_axes={"x": {0: "batch"}})
    proto = onnx.load_from_string(buf.getvalue())
    out_dims = proto.graph.output[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in out_dims] == ["batch", 2]
    buf = io.BytesIO()
    gradlab.onnx.export(nn.Linear(3, 2), gradlab.randn(4, 3), buf, input_names=["x"],
                        output_names=["y"], dynamic_axes={"x": [0], "y": {0: "rows"}})
    out_dims = onnx.load_from_string(buf.getvalue()).graph.output[0].type.tensor_type.shape.dim
    assert out_dims[0].dim_param == "rows"


def test_dynamic_axes_that_cannot_be_say_why():
    def branchy(x):  # Python looks at the size: the graph changes with it
        return x * 2 if x.shape[0] < 4 else x.sum(0)
    with pytest.raises(gradlab.onnx.ExportError, match="graph changes on input 0 with dim 0"):
        gradlab.onnx.export(branchy, gradlab.randn(3, 2), io.BytesIO(), input_names=["x"],
                            dynamic_axes={"x": [0]})
    with pytest.raises(gradlab.onnx.ExportError, match="can't run on input 0 with dim 1 = 7"):
        gradlab.onnx.export(nn.Linear(3, 2), gradlab.randn(2, 3), io.BytesIO(),
                            input_names=["x"], dynamic_axes={"x": [1]})
    with pytest.raises(gradlab.onnx.ExportError, match="upsampling needs the size"):
        gradlab.onnx.export(nn.Upsample(scale_factor=2, mode="bilinear"),
                            gradlab.randn(1, 1, 4, 4), io.BytesIO(), input_names=["x"],
                            dynamic_axes={"x": [2]})
    with pytest.raises(ValueError, match="follows no dynamic input axis"):
        gradlab.onnx.export(nn.Linear(3, 2), gradlab.randn(2, 3), io.BytesIO(),
                            input_names=["x"], output_names=["y"],
                            dynamic_axes={"x": [0], "y": [1]})
