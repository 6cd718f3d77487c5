"""``SummaryWriter``: training logs TensorBoard reads (``torch.utils.tensorboard``'s API).

::

    from gradlab.utils.tensorboard import SummaryWriter

    writer = SummaryWriter()                    # runs/<date>_<host>/events.out.tfevents...
    for step in range(100):
        ...
        writer.add_scalar("loss/train", loss.item(), step)
    writer.add_histogram("fc1.weight", model.fc1.weight, step)
    writer.close()                              # then: tensorboard --logdir runs

Scalars, groups of scalars, histograms, images (one, or a grid of many),
matplotlib figures, text, precision-recall curves and the model's graph
(traced with ``gradlab.jit.trace``, one node per op, grouped by module) go
into the event file (:mod:`.event_file`); embeddings for the projector go
into TSV files beside it, listed in ``projector_config.pbtxt``. Each
scalar is also reported to the debugger (``gradlab.debug.report``), so
``gradlab run train.py`` plots it in its Training panel.

An event file is a log that TensorBoard reads while it grows: records are
appended and flushed every ``max_queue`` records or ``flush_secs`` seconds
(and at ``flush``/``close``/exit). A crash can cut the last record short;
TensorBoard skips it.
"""

from __future__ import annotations

import io
import math
import os
import socket
import time
import weakref
from datetime import datetime

import numpy as np

from ..._atomic_files import write_bytes_atomically
from ...tensor import Tensor
from . import event_file as ef

__all__ = ["SummaryWriter"]

_FILE_COUNT = [0]  # tells apart files one process opens in the same second


class _EventFile:
    """One ``events.out.tfevents...`` file: appends records, flushes now and then."""

    def __init__(self, folder: str, suffix: str, max_queue: int, flush_secs: float) -> None:
        os.makedirs(folder, exist_ok=True)
        _FILE_COUNT[0] += 1
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
                f"{os.getpid()}.{_FILE_COUNT[0]}{suffix}")
        self.path = os.path.join(folder, name)
        self._file = open(self.path, "ab")  # noqa: SIM115 - closed by close() or at exit
        self._finalizer = weakref.finalize(self, self._file.close)
        self.max_queue, self.flush_secs = max_queue, flush_secs
        self._pending = 0
        self._flushed_at = time.monotonic()
        self.write(ef.event(time.time(), 0, file_version="brain.Event:2"))

    def write(self, data: bytes) -> None:
        self._file.write(ef.record(data))
        self._pending += 1
        if self._pending >= self.max_queue or \
                time.monotonic() - self._flushed_at >= self.flush_secs:
            self.flush()

    def flush(self) -> None:
        if not self._file.closed:
            self._file.flush()
        self._pending = 0
        self._flushed_at = time.monotonic()

    def close(self) -> None:
        self.flush()
        self._finalizer()


class SummaryWriter:
    """Write TensorBoard logs to ``log_dir`` (default ``runs/<Mon07_21-05-03>_<host><comment>``).

    ``purge_step`` is accepted for PyTorch's signature; TensorBoard itself discards
    events after a restart's step when it sees one.
    """

    def __init__(self, log_dir: str | os.PathLike | None = None, comment: str = "",
                 purge_step: int | None = None, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "") -> None:
        if log_dir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = os.fspath(log_dir)
        self.purge_step = purge_step
        self._options = (max_queue, flush_secs, filename_suffix)
        self._file = self._event_file(self.log_dir)
        self._scalar_files: dict[str, _EventFile] = {}  # add_scalars' one folder per line

    def get_logdir(self) -> str:
        return self.log_dir

    # --- what can be logged ----------------------------------------------------------------
    def add_scalar(self, tag: str, scalar_value, global_step: int | None = None,
                   walltime: float | None = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """One number (a float, or a one-element tensor) under ``tag`` at ``global_step``."""
        value = _number("add_scalar", tag, scalar_value)
        self._write([ef.scalar_value(tag, value)], global_step, walltime)
        _report(tag, value)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step: int | None = None,
                    walltime: float | None = None) -> None:
        """Several numbers drawn as lines of one chart: each goes to its own run folder
        ``<log_dir>/<main_tag>_<tag>`` under the tag ``main_tag``, as PyTorch writes them."""
        for tag, scalar in tag_scalar_dict.items():
            value = _number("add_scalars", f"{main_tag}/{tag}", scalar)
            folder = os.path.join(self.log_dir, f"{main_tag}_{tag}".replace("/", "_"))
            sink = self._scalar_files.get(folder)
            if sink is None:
                sink = self._scalar_files[folder] = self._event_file(folder)
            sink.write(ef.event(_now(walltime), global_step,
                                values=[ef.scalar_value(main_tag, value)]))

    def add_histogram(self, tag: str, values, global_step: int | None = None,
                      bins="tensorflow", walltime: float | None = None,
                      max_bins: int | None = None) -> None:
        """The distribution of ``values`` (a tensor or array). ``bins``: "tensorflow" (the
        exponential buckets TensorFlow uses), a count, NumPy's bin rules or edges."""
        array = _array(values).astype(np.float64).reshape(-1)
        if array.size == 0:
            raise ValueError(f"add_histogram: '{tag}' has no values to draw a histogram of")
        if not np.isfinite(array).all():
            raise ValueError(f"add_histogram: '{tag}' holds NaN or Inf values, which have no "
                             "bucket. Fix: log values[values.isfinite()], or look at them "
                             "with gradlab run's NaN breakpoint (N)")
        edges = _TENSORFLOW_EDGES if isinstance(bins, str) and bins == "tensorflow" else bins
        counts, limits = np.histogram(array, bins=edges)
        if max_bins is not None and len(counts) > max_bins:
            counts, limits = np.histogram(array, bins=max_bins)
        used = np.nonzero(counts)[0]
        first, last = used[0], used[-1] + 1  # leave out the empty buckets at both ends
        self._write([ef.histogram_value(tag, array.min(), array.max(), array.size, array.sum(),
                                        float(np.dot(array, array)), limits[first + 1:last + 1],
                                        counts[first:last])], global_step, walltime)

    def add_image(self, tag: str, img_tensor, global_step: int | None = None,
                  walltime: float | None = None, dataformats: str = "CHW") -> None:
        """One image: floats in [0, 1] or uint8, laid out as ``dataformats`` says (CHW, HWC,
        HW; C is 1, 3 or 4)."""
        self._image(tag, _to_hwc("add_image", _array(img_tensor), dataformats), global_step,
                    walltime)

    def add_images(self, tag: str, img_tensor, global_step: int | None = None,
                   walltime: float | None = None, dataformats: str = "NCHW") -> None:
        """A batch of images as one grid, up to 8 per row (as PyTorch tiles them)."""
        array = _array(img_tensor)
        if dataformats not in ("NCHW", "NHWC") or array.ndim != 4:
            raise ValueError(f"add_images: expected a 4-D batch in NCHW or NHWC, got shape "
                             f"{array.shape} as {dataformats!r}")
        images = [_to_hwc("add_images", im, dataformats[1:]) for im in array]
        self._image(tag, _grid(images), global_step, walltime)

    def add_figure(self, tag: str, figure, global_step: int | None = None, close: bool = True,
                   walltime: float | None = None) -> None:
        """A matplotlib figure (or a list of them), rendered as PNG."""
        figures = figure if isinstance(figure, list) else [figure]
        for k, fig in enumerate(figures):
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png")
            if close:
                import matplotlib.pyplot as plt

                plt.close(fig)
            width, height = (int(round(v)) for v in fig.get_size_inches() * fig.dpi)
            name = tag if len(figures) == 1 else f"{tag}/{k}"
            self._write([ef.image_value(name, height, width, 4, buffer.getvalue())],
                        global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        """Text (Markdown, as TensorBoard's text tab shows it)."""
        self._write([ef.text_value(tag, str(text_string))], global_step, walltime)

    def add_pr_curve(self, tag: str, labels, predictions, global_step: int | None = None,
                     num_thresholds: int = 127, weights=None,
                     walltime: float | None = None) -> None:
        """A precision-recall curve: ``labels`` (0/1 or bool) against ``predictions`` (the
        probabilities of 1, in [0, 1]), at ``num_thresholds`` evenly spaced thresholds."""
        truth = _array(labels).astype(np.float64).reshape(-1)
        scores = _array(predictions).astype(np.float64).reshape(-1)
        if truth.shape != scores.shape:
            raise ValueError(f"add_pr_curve: {truth.size} labels for {scores.size} predictions; "
                             "give one label per prediction")
        if scores.size and (scores.min() < 0 or scores.max() > 1):
            raise ValueError("add_pr_curve: predictions must be probabilities in [0, 1]. Fix: "
                             "pass logits.sigmoid() (or softmax(...)[:, k] for class k)")
        weight = 1.0 if weights is None else _array(weights).astype(np.float64).reshape(-1)
        self._write([ef.pr_curve_value(tag, pr_curve(truth, scores, num_thresholds, weight),
                                       num_thresholds)], global_step, walltime)

    def add_embedding(self, mat, metadata=None, label_img=None, global_step: int | None = None,
                      tag: str = "default", metadata_header=None) -> None:
        """Vectors for TensorBoard's projector (PCA, t-SNE): one row of ``mat`` per point,
        ``metadata`` a label per point (or a row of columns, with ``metadata_header``),
        ``label_img`` an (N, C, H, W) image per point."""
        vectors = _array(mat)
        if vectors.ndim != 2:
            raise ValueError(f"add_embedding: mat must be 2-D (points, features), got shape "
                             f"{vectors.shape}")
        step = 0 if global_step is None else global_step
        sub = f"{step:05d}/{tag.replace('/', '_')}"
        folder = os.path.join(self.log_dir, sub)
        os.makedirs(folder, exist_ok=True)
        rows = ["\t".join(repr(float(v)) for v in row) for row in vectors]
        write_text(os.path.join(folder, "tensors.tsv"), rows)
        entry = [f'  tensor_name: "{tag}:{step:05d}"', f'  tensor_path: "{sub}/tensors.tsv"']
        if metadata is not None:
            labels = list(metadata)
            if len(labels) != len(vectors):
                raise ValueError(f"add_embedding: {len(labels)} metadata rows for "
                                 f"{len(vectors)} points")
            lines = [str(v) if metadata_header is None else "\t".join(map(str, v))
                     for v in labels]
            if metadata_header is not None:
                lines.insert(0, "\t".join(metadata_header))
            write_text(os.path.join(folder, "metadata.tsv"), lines)
            entry.append(f'  metadata_path: "{sub}/metadata.tsv"')
        if label_img is not None:
            images = [_to_hwc("add_embedding", im, "CHW") for im in _array(label_img)]
            height, width = images[0].shape[:2]
            side = math.ceil(math.sqrt(len(images)))
            sprite = _grid(images, per_row=side, pad=0, rows=side)
            write_bytes_atomically(os.path.join(folder, "sprite.png"), _png(sprite))
            entry.append(f'  sprite {{ image_path: "{sub}/sprite.png" single_image_dim: '
                         f'{width} single_image_dim: {height} }}')
        with open(os.path.join(self.log_dir, "projector_config.pbtxt"), "a") as f:
            f.write("embeddings {\n" + "\n".join(entry) + "\n}\n")

    def add_hparams(self, hparam_dict: dict, metric_dict: dict,
                    hparam_domain_discrete: dict | None = None, run_name: str | None = None,
                    global_step: int | None = None) -> None:
        """One run of a hyperparameter sweep for TensorBoard's HParams tab: its
        hyperparameters (numbers, strings, bools) and the final metrics, in a run folder
        of its own under ``log_dir`` (as PyTorch writes it)."""
        if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
            raise TypeError("add_hparams: hparam_dict and metric_dict must be dicts, e.g. "
                            "add_hparams({'lr': 0.1}, {'hparam/accuracy': 0.9})")
        for name, value in hparam_dict.items():
            if not isinstance(value, (bool, int, float, str)):
                raise ValueError(f"add_hparams: hyperparameter {name!r} is a "
                                 f"{type(value).__name__}; use a number, a string or a bool "
                                 "(str(value) for anything else)")
        metrics = {k: _number("add_hparams", k, v) for k, v in metric_dict.items()}
        sink = self._event_file(os.path.join(self.log_dir, run_name or repr(time.time())))
        now = time.time()
        for value in ef.hparams_values(hparam_dict, list(metrics), now, now,
                                       hparam_domain_discrete):
            sink.write(ef.event(now, global_step, values=[value]))
        for tag, value in metrics.items():
            sink.write(ef.event(now, global_step, values=[ef.scalar_value(tag, value)]))
        sink.close()

    def add_graph(self, model, input_to_model=None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        """The model's graph, traced on ``input_to_model`` with ``gradlab.jit.trace``: one
        node per op, named by module path so TensorBoard groups them by module."""
        from .graph_def import graph_def

        if input_to_model is None:
            raise ValueError("add_graph: give an example input (input_to_model): the graph is "
                             "traced by running the model on it")
        self._file.write(ef.event(time.time(), None, graph=graph_def(model, input_to_model)))
        if verbose:
            print(f"add_graph: wrote the graph of {type(model).__name__} to {self.log_dir}")

    # --- the files --------------------------------------------------------------------------
    def _event_file(self, folder: str) -> _EventFile:
        """A new event file in ``folder``, with this writer's suffix and flushing."""
        max_queue, flush_secs, suffix = self._options
        return _EventFile(folder, suffix, max_queue, flush_secs)

    def _write(self, values: list[bytes], step, walltime) -> None:
        self._file.write(ef.event(_now(walltime), step, values=values))

    def _image(self, tag: str, hwc: np.ndarray, step, walltime) -> None:
        height, width, channels = hwc.shape
        self._write([ef.image_value(tag, height, width, channels, _png(hwc))], step, walltime)

    def flush(self) -> None:
        self._file.flush()
        for sink in self._scalar_files.values():
            sink.flush()

    def close(self) -> None:
        self._file.close()
        for sink in self._scalar_files.values():
            sink.close()

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --- helpers -----------------------------------------------------------------------------------

def _now(walltime) -> float:
    return time.time() if walltime is None else float(walltime)


def _array(values) -> np.ndarray:
    if isinstance(values, Tensor):
        return values.detach().cpu().numpy()
    return np.asarray(values)


def _number(who: str, tag: str, value) -> float:
    if isinstance(value, (Tensor, np.ndarray)):
        count = value.size if isinstance(value, np.ndarray) else value.numel()
        if count != 1:
            raise ValueError(f"{who}: '{tag}' must be one number; got a tensor of shape "
                             f"{tuple(value.shape)}. Fix: log loss.item(), or reduce it first "
                             "(.mean())")
        return float(value.item())
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{who}: '{tag}' must be a number, got {type(value).__name__}") from None


def _report(tag: str, value: float) -> None:
    """Show the scalar to a debug session too (gradlab run's Training panel)."""
    from ...debug.reporting import report

    if math.isfinite(value):
        report(**{tag: value})


def _tensorflow_edges() -> np.ndarray:
    """TensorFlow's default histogram buckets: ±1e-12 · 1.1^k up to 1e20, and 0."""
    positive = [1e-12]
    while positive[-1] < 1e20:
        positive.append(positive[-1] * 1.1)
    return np.array([-v for v in reversed(positive)] + [0.0] + positive)


_TENSORFLOW_EDGES = _tensorflow_edges()


def _to_hwc(who: str, array: np.ndarray, dataformats: str) -> np.ndarray:
    """An image as (H, W, 3 or 4) uint8, from floats in [0, 1] or integers in [0, 255]."""
    formats = dataformats.upper()
    if sorted(formats) not in (sorted("CHW"), sorted("HW")) or array.ndim != len(formats):
        raise ValueError(f"{who}: dataformats {dataformats!r} doesn't describe an image of "
                         f"shape {array.shape}; use CHW, HWC or HW")
    if formats == "HW":
        array, formats = array[None], "CHW"
    hwc = np.transpose(array, [formats.index(c) for c in "HWC"])
    channels = hwc.shape[2]
    if channels == 1:
        hwc = np.repeat(hwc, 3, axis=2)
    elif channels not in (3, 4):
        raise ValueError(f"{who}: an image has 1, 3 or 4 channels, got {channels} (shape "
                         f"{array.shape} as {dataformats!r})")
    if hwc.dtype.kind == "f":
        hwc = np.clip(hwc, 0.0, 1.0) * 255.0 + 0.5
    return hwc.astype(np.uint8)


def _grid(images: list[np.ndarray], per_row: int = 8, pad: int = 2,
          rows: int | None = None) -> np.ndarray:
    """Images of one size side by side, ``per_row`` per row, ``pad`` pixels apart."""
    height, width, channels = images[0].shape
    columns = per_row if rows is not None else min(len(images), per_row)
    rows = rows if rows is not None else -(-len(images) // columns)
    grid = np.zeros((rows * (height + pad) + pad, columns * (width + pad) + pad, channels),
                    np.uint8)
    for k, image in enumerate(images):
        r, c = divmod(k, columns)
        top, left = pad + r * (height + pad), pad + c * (width + pad)
        grid[top:top + height, left:left + width] = image
    return grid


def pr_curve(truth: np.ndarray, scores: np.ndarray, num_thresholds: int,
             weight=1.0) -> np.ndarray:
    """(6, num_thresholds): true positives, false positives, true negatives, false
    negatives, precision and recall, when predicting 1 at scores >= threshold k/(n-1)."""
    bucket = np.floor(scores * (num_thresholds - 1))
    span = (0, num_thresholds - 1)
    tp_at, _ = np.histogram(bucket, bins=num_thresholds, range=span, weights=truth * weight)
    fp_at, _ = np.histogram(bucket, bins=num_thresholds, range=span,
                            weights=(1.0 - truth) * weight)
    tp = np.cumsum(tp_at[::-1])[::-1]  # everything at or above each threshold
    fp = np.cumsum(fp_at[::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    precision = tp / np.maximum(1e-7, tp + fp)
    recall = tp / np.maximum(1e-7, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def write_text(path: str, lines: list[str]) -> None:
    """A small text file, written whole (the projector reads it as TSV)."""
    write_bytes_atomically(path, ("\n".join(lines) + "\n").encode("utf-8"))


def _png(hwc: np.ndarray) -> bytes:
    """PNG bytes of an (H, W, 3 or 4) uint8 image."""
    import matplotlib.image

    buffer = io.BytesIO()
    matplotlib.image.imsave(buffer, np.ascontiguousarray(hwc), format="png")
    return buffer.getvalue()
