"""TensorBoard's event file, written by hand: records of protocol-buffer ``Event`` messages.

TensorBoard reads ``events.out.tfevents.*`` files: a sequence of records,
each ``length (uint64 LE) · masked CRC-32C of the length · data · masked
CRC-32C of the data``, where the data is one serialized ``Event`` message.
gradlab writes the few messages it needs (a scalar, a histogram, an image,
a text) with a tiny protobuf encoder, so writing logs needs neither
TensorFlow nor the ``tensorboard`` package (reading them, in TensorBoard,
does). The field numbers are TensorFlow's ``event.proto`` and
``summary.proto``.
"""

from __future__ import annotations

import struct

__all__ = ["crc32c", "record", "event", "scalar_value", "histogram_value", "image_value",
           "text_value", "pr_curve_value", "hparams_values", "node_def", "graph_def_bytes"]


def _crc_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1  # Castagnoli's polynomial, reflected
        table.append(c)
    return table


_TABLE = _crc_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), the checksum TFRecord files use."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data: bytes) -> bytes:
    """One TFRecord: the data framed by its length and both checksums."""
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", _masked(crc32c(length))) + data +
            struct.pack("<I", _masked(crc32c(data))))


# --- a protobuf encoder for the handful of fields used here ---------------------------------

def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1  # negative int64s go as their two's complement
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _int(field: int, value: int) -> bytes:
    return _key(field, 0) + _varint(int(value))


def _double(field: int, value: float) -> bytes:
    return _key(field, 1) + struct.pack("<d", float(value))


def _float(field: int, value: float) -> bytes:
    return _key(field, 5) + struct.pack("<f", float(value))


def _bytes(field: int, value: bytes) -> bytes:
    return _key(field, 2) + _varint(len(value)) + value


def _packed_doubles(field: int, values) -> bytes:
    return _bytes(field, b"".join(struct.pack("<d", float(v)) for v in values))


# --- the messages ---------------------------------------------------------------------------

def event(wall_time: float, step: int | None = None, *, file_version: str | None = None,
          values: list[bytes] = (), graph: bytes | None = None) -> bytes:
    """An ``Event``: a time, a step, and one of: the file's version, summary values, or a
    serialized ``GraphDef``."""
    out = _double(1, wall_time)
    if step is not None:
        out += _int(2, step)
    if file_version is not None:
        out += _bytes(3, file_version.encode())
    if graph is not None:
        out += _bytes(4, graph)
    if values:
        out += _bytes(5, b"".join(_bytes(1, v) for v in values))  # Summary.value (repeated)
    return out


def scalar_value(tag: str, value: float) -> bytes:
    """A ``Summary.Value`` holding one number (``simple_value``)."""
    return _bytes(1, tag.encode()) + _float(2, value)


def histogram_value(tag: str, minimum, maximum, count, total, sum_squares, limits,
                    counts) -> bytes:
    """A ``Summary.Value`` holding a ``HistogramProto`` (bucket right edges and counts)."""
    histo = (_double(1, minimum) + _double(2, maximum) + _double(3, count) + _double(4, total)
             + _double(5, sum_squares) + _packed_doubles(6, limits) + _packed_doubles(7, counts))
    return _bytes(1, tag.encode()) + _bytes(5, histo)


def image_value(tag: str, height: int, width: int, channels: int, png: bytes) -> bytes:
    """A ``Summary.Value`` holding an encoded image (``Summary.Image``)."""
    image = _int(1, height) + _int(2, width) + _int(3, channels) + _bytes(4, png)
    return _bytes(1, tag.encode()) + _bytes(4, image)


def text_value(tag: str, text: str) -> bytes:
    """A ``Summary.Value`` holding a string tensor for TensorBoard's text plugin."""
    shape = _bytes(2, _int(1, 1))  # TensorShapeProto.dim: one dim of size 1
    tensor = _int(1, 7) + _bytes(2, shape) + _bytes(8, text.encode())  # DT_STRING, string_val
    metadata = _bytes(1, _bytes(1, b"text"))  # SummaryMetadata.plugin_data.plugin_name
    return _bytes(1, tag.encode()) + _bytes(9, metadata) + _bytes(8, tensor)


def pr_curve_value(tag: str, data, num_thresholds: int) -> bytes:
    """A ``Summary.Value`` for TensorBoard's PR-curve plugin: a float32 tensor of shape
    (6, num_thresholds) (true/false positives/negatives, precision, recall)."""
    import numpy as np

    array = np.ascontiguousarray(data, dtype="<f4")
    tensor = _int(1, 1) + _bytes(2, _shape(array.shape)) + _bytes(4, array.tobytes())
    content = _int(1, 0) + _int(2, num_thresholds)  # PrCurvePluginData: version, thresholds
    metadata = _bytes(1, _bytes(1, b"pr_curves") + _bytes(2, content))
    return _bytes(1, tag.encode()) + _bytes(9, metadata) + _bytes(8, tensor)


def _proto_value(value) -> bytes:
    """A ``google.protobuf.Value``: a number, a string or a bool."""
    if isinstance(value, bool):
        return _int(4, int(value))
    if isinstance(value, (int, float)):
        return _double(2, value)
    return _bytes(3, str(value).encode())


def hparams_values(hparams: dict, metrics: list[str], start: float, end: float,
                   discrete: dict | None = None) -> list[bytes]:
    """The three ``Summary.Value``s of TensorBoard's HParams plugin (the experiment, a
    session's start with its hyperparameters, its end), for one run."""
    discrete = discrete or {}
    infos = b""
    for name, value in hparams.items():
        kind = 2 if isinstance(value, bool) else 3 if isinstance(value, (int, float)) else 1
        info = _bytes(1, name.encode()) + _int(4, kind)  # name, DataType
        if name in discrete:  # domain_discrete: a ListValue of the allowed values
            info += _bytes(5, b"".join(_bytes(1, _proto_value(v)) for v in discrete[name]))
        infos += _bytes(4, info)
    metric_infos = b"".join(_bytes(5, _bytes(1, _bytes(2, m.encode()))) for m in metrics)
    experiment = infos + metric_infos
    session = b"".join(_bytes(1, _bytes(1, k.encode()) + _bytes(2, _proto_value(v)))
                       for k, v in hparams.items()) + _double(5, start)
    ended = _int(1, 1) + _double(2, end)  # STATUS_SUCCESS
    values = []
    for tag, field, body in (("_hparams_/experiment", 2, experiment),
                             ("_hparams_/session_start_info", 3, session),
                             ("_hparams_/session_end_info", 4, ended)):
        content = _int(1, 0) + _bytes(field, body)  # HParamsPluginData
        metadata = _bytes(1, _bytes(1, b"hparams") + _bytes(2, content))
        values.append(_bytes(1, tag.encode()) + _bytes(9, metadata))
    return values


def _shape(shape) -> bytes:
    """A ``TensorShapeProto``: one ``dim`` (with its ``size``) per axis."""
    return b"".join(_bytes(2, _int(1, n)) for n in shape)


def node_def(name: str, op: str, inputs: list[str], shapes: list[tuple]) -> bytes:
    """A ``NodeDef`` with its output shapes in the ``_output_shapes`` attribute (which the
    graph dashboard shows on the edges)."""
    shapes_attr = _bytes(1, b"".join(_bytes(7, _shape(s)) for s in shapes))  # AttrValue.list
    attr = _bytes(1, b"_output_shapes") + _bytes(2, shapes_attr)  # a map entry
    return (_bytes(1, name.encode()) + _bytes(2, op.encode()) +
            b"".join(_bytes(3, i.encode()) for i in inputs) + _bytes(5, attr))


def graph_def_bytes(nodes: list[bytes]) -> bytes:
    """A ``GraphDef`` of serialized ``NodeDef``s (``versions.producer`` 22, as PyTorch's)."""
    return b"".join(_bytes(1, n) for n in nodes) + _bytes(4, _int(1, 22))
