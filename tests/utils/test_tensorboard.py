"""gradlab.utils.tensorboard: event files that TensorBoard's own reader reads back."""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest

import gradlab
from gradlab import events, nn
from gradlab.utils.tensorboard import SummaryWriter
from gradlab.utils.tensorboard.event_file import crc32c, record
from tests.oracle import needs_torch

accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")


def _read(folder):
    acc = accumulator.EventAccumulator(str(folder), size_guidance={
        "images": 0, "histograms": 0, "scalars": 0, "tensors": 0})
    acc.Reload()
    return acc


def test_crc32c_and_the_record_frame():
    assert crc32c(b"123456789") == 0xE3069283  # the standard check value
    assert crc32c(b"") == 0
    data = b"an event"
    framed = record(data)
    assert struct.unpack("<Q", framed[:8])[0] == len(data) and framed[12:-4] == data
    assert len(framed) == 8 + 4 + len(data) + 4


def test_scalars_read_back_in_tensorboard(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        for step in range(4):
            writer.add_scalar("loss/train", 1.0 / (step + 1), step)
        writer.add_scalar("one_element", gradlab.tensor([2.5]), 9)
        writer.add_scalar("numpy", np.float32(0.25), 10, walltime=1234.5)
    files = os.listdir(tmp_path)
    assert len(files) == 1 and files[0].startswith("events.out.tfevents.")
    acc = _read(tmp_path)
    assert sorted(acc.Tags()["scalars"]) == ["loss/train", "numpy", "one_element"]
    assert [(e.step, round(e.value, 6)) for e in acc.Scalars("loss/train")] == [
        (0, 1.0), (1, 0.5), (2, 0.333333), (3, 0.25)]
    assert acc.Scalars("one_element")[0].value == 2.5
    numpy_event = acc.Scalars("numpy")[0]
    assert (numpy_event.step, numpy_event.wall_time) == (10, 1234.5)


def test_add_scalars_writes_one_run_per_line(tmp_path):
    writer = SummaryWriter(tmp_path)
    for step in range(3):
        writer.add_scalars("loss", {"train": 1.0 - step / 10, "val": 2.0 - step / 10}, step)
    writer.close()
    assert sorted(d for d in os.listdir(tmp_path) if (tmp_path / d).is_dir()) == [
        "loss_train", "loss_val"]
    val = _read(tmp_path / "loss_val").Scalars("loss")
    assert [round(e.value, 6) for e in val] == [2.0, 1.9, 1.8]


def test_histogram_buckets_hold_every_value(tmp_path):
    values = gradlab.randn(1000, generator=gradlab.Generator().manual_seed(0))
    with SummaryWriter(tmp_path) as writer:
        writer.add_histogram("weights", values, 3)
        writer.add_histogram("ten_bins", values.numpy(), 4, bins=10)
    acc = _read(tmp_path)
    h = acc.Histograms("weights")[0].histogram_value
    v = values.numpy().astype(np.float64)
    assert (h.num, h.min, h.max) == (1000, v.min(), v.max())
    assert h.sum == pytest.approx(v.sum()) and h.sum_squares == pytest.approx((v * v).sum())
    assert sum(h.bucket) == 1000 and len(h.bucket) == len(h.bucket_limit)
    assert h.bucket_limit[-1] >= v.max() and list(h.bucket_limit) == sorted(h.bucket_limit)
    ten = acc.Histograms("ten_bins")[0].histogram_value
    assert len(ten.bucket) <= 10 and sum(ten.bucket) == 1000
    with pytest.raises(ValueError, match="NaN or Inf"):
        SummaryWriter(tmp_path / "x").add_histogram("bad", gradlab.tensor([1.0, float("nan")]))


def test_images_grids_figures_and_text(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with SummaryWriter(tmp_path) as writer:
        writer.add_image("chw", gradlab.rand(3, 8, 10), 1)
        writer.add_image("hw", np.full((5, 6), 255, np.uint8), 1, dataformats="HW")
        writer.add_images("batch", gradlab.rand(10, 1, 4, 4), 2)
        fig = plt.figure(figsize=(2, 1), dpi=40)
        writer.add_figure("figure", fig, 3)
        writer.add_text("notes", "lr **0.1**", 4)
        with pytest.raises(ValueError, match="dataformats 'CHW' doesn't describe"):
            writer.add_image("bad", gradlab.rand(8, 10), 1)
    acc = _read(tmp_path)
    chw = acc.Images("chw")[0]
    assert (chw.width, chw.height) == (10, 8) and chw.encoded_image_string[:4] == b"\x89PNG"
    hw = acc.Images("hw")[0]
    assert (hw.width, hw.height) == (6, 5)
    grid = acc.Images("batch")[0]  # 8 per row: 2 rows of 4x4 images, 2 pixels apart
    assert (grid.width, grid.height) == (8 * 6 + 2, 2 * 6 + 2)
    assert (acc.Images("figure")[0].width, acc.Images("figure")[0].height) == (80, 40)
    assert acc.Tensors("notes")[0].tensor_proto.string_val == [b"lr **0.1**"]


def test_add_graph_groups_ops_by_module(tmp_path):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
            self.head = nn.Linear(4, 2)

        def forward(self, x):
            return self.head(self.encoder(x)).softmax(-1)

    with SummaryWriter(tmp_path) as writer:
        writer.add_graph(Net(), gradlab.randn(5, 3))
        with pytest.raises(ValueError, match="example input"):
            writer.add_graph(Net())
    graph = _read(tmp_path).Graph()
    nodes = {n.name: n for n in graph.node}
    assert nodes["input/x"].op == "IO Node" and nodes["encoder/0/weight"].op == "Parameter"
    linear = nodes["encoder/0/linear_0"]
    assert list(linear.input) == ["input/x", "encoder/0/weight", "encoder/0/bias"]
    assert nodes["encoder/1/relu_1"].input == ["encoder/0/linear_0"]
    assert nodes["softmax_3"].input == ["head/linear_2"]
    assert nodes["output/output.0"].input == ["softmax_3"]
    dims = linear.attr["_output_shapes"].list.shape[0].dim
    assert [d.size for d in dims] == [5, 4]


def test_scalars_reach_the_debugger_and_bad_values_explain(tmp_path):
    seen = []
    with events.subscribe(lambda e: seen.append(e.values) if isinstance(e, events.Metric)
                          else None, light=True):
        with SummaryWriter(tmp_path) as writer:
            writer.add_scalar("accuracy", 0.75, 1)
            with pytest.raises(ValueError, match="must be one number.*loss.item"):
                writer.add_scalar("loss", gradlab.ones(3), 1)
            with pytest.raises(TypeError, match="must be a number, got str"):
                writer.add_scalar("loss", "low", 1)
    assert seen == [{"accuracy": 0.75}]


def test_default_log_dir_is_runs_date_host(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    writer = SummaryWriter(comment="_lr0.1")
    writer.close()
    (run,) = os.listdir(tmp_path / "runs")
    assert run.endswith("_lr0.1") and writer.get_logdir() == os.path.join("runs", run)


def test_pr_curve_counts_and_rates(tmp_path):
    from tensorboard.util import tensor_util

    labels = np.array([1, 1, 1, 0, 0, 1, 0, 0])
    scores = np.array([0.9, 0.8, 0.55, 0.6, 0.3, 0.2, 0.1, 0.05])
    with SummaryWriter(tmp_path) as writer:
        writer.add_pr_curve("pr", gradlab.tensor(labels), gradlab.tensor(scores), 2,
                            num_thresholds=11)
        with pytest.raises(ValueError, match="probabilities in \\[0, 1\\]"):
            writer.add_pr_curve("bad", labels, scores * 3)
    event = _read(tmp_path).Tensors("pr")[0]
    data = tensor_util.make_ndarray(event.tensor_proto)
    assert event.step == 2 and data.shape == (6, 11) and data.dtype == np.float32
    tp, fp, tn, fn, precision, recall = data
    for k in range(11):  # predicting 1 at score >= k/10, counted by hand
        predicted = np.floor(scores * 10) >= k
        assert tp[k] == (predicted & (labels == 1)).sum()
        assert fp[k] == (predicted & (labels == 0)).sum()
        assert tn[k] == (~predicted & (labels == 0)).sum()
        assert fn[k] == (~predicted & (labels == 1)).sum()
    assert precision[0] == pytest.approx(0.5) and recall[0] == 1.0
    assert precision[8] == 1.0 and recall[8] == pytest.approx(0.5)


def test_add_embedding_writes_the_projector_files(tmp_path):
    points = gradlab.randn(5, 3)
    with SummaryWriter(tmp_path) as writer:
        writer.add_embedding(points, metadata=["a", "b", "c", "d", "e"],
                             label_img=gradlab.rand(5, 1, 4, 4), global_step=7, tag="words")
        writer.add_embedding(points.numpy(), metadata=[(1, "x")] * 5,
                             metadata_header=["id", "name"])
    folder = tmp_path / "00007" / "words"
    rows = (folder / "tensors.tsv").read_text().splitlines()
    np.testing.assert_allclose([[float(v) for v in r.split("\t")] for r in rows],
                               points.numpy(), rtol=1e-6)
    assert (folder / "metadata.tsv").read_text().splitlines() == list("abcde")
    assert (folder / "sprite.png").read_bytes()[:4] == b"\x89PNG"
    config = (tmp_path / "projector_config.pbtxt").read_text()
    assert config.count("embeddings {") == 2
    assert 'tensor_path: "00007/words/tensors.tsv"' in config
    assert "single_image_dim: 4 single_image_dim: 4" in config
    assert (tmp_path / "00000" / "default" / "metadata.tsv").read_text().splitlines()[:2] == [
        "id\tname", "1\tx"]


@needs_torch
def test_pr_curve_matches_pytorchs():
    from torch.utils.tensorboard.summary import compute_curve

    from gradlab.utils.tensorboard.writer import pr_curve

    rng = np.random.default_rng(4)
    labels, scores = rng.integers(0, 2, 200), rng.random(200)
    weights = rng.random(200)
    for thresholds in (5, 127):
        np.testing.assert_allclose(
            pr_curve(labels.astype(float), scores, thresholds, weights),
            compute_curve(labels, scores, num_thresholds=thresholds, weights=weights),
            rtol=1e-12)


def test_add_hparams_reads_back_as_the_hparams_plugin_data(tmp_path):
    from tensorboard.plugins.hparams import plugin_data_pb2

    with SummaryWriter(tmp_path) as writer:
        writer.add_hparams({"lr": 0.1, "optimizer": "adam", "nesterov": True},
                           {"hparam/accuracy": 0.9, "hparam/loss": gradlab.tensor(0.25)},
                           hparam_domain_discrete={"optimizer": ["adam", "sgd"]},
                           run_name="trial1")
        with pytest.raises(ValueError, match="'layers' is a list"):
            writer.add_hparams({"layers": [1, 2]}, {})
    acc = _read(tmp_path / "trial1")
    content = acc.PluginTagToContent("hparams")
    data = {tag: plugin_data_pb2.HParamsPluginData.FromString(raw)
            for tag, raw in content.items()}
    experiment = data["_hparams_/experiment"].experiment
    infos = {i.name: i for i in experiment.hparam_infos}
    assert set(infos) == {"lr", "optimizer", "nesterov"}
    assert [v.string_value for v in infos["optimizer"].domain_discrete.values] == ["adam", "sgd"]
    assert [m.name.tag for m in experiment.metric_infos] == ["hparam/accuracy", "hparam/loss"]
    start = data["_hparams_/session_start_info"].session_start_info
    assert start.hparams["lr"].number_value == 0.1
    assert start.hparams["optimizer"].string_value == "adam"
    assert start.hparams["nesterov"].bool_value is True
    assert data["_hparams_/session_end_info"].session_end_info.status == 1
    assert [e.value for e in acc.Scalars("hparam/loss")] == [0.25]
