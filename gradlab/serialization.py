"""``gradlab.save`` and ``gradlab.load``: checkpoints that can never run code when loaded.

PyTorch's ``torch.save`` pickles, and unpickling an untrusted file can run
anything. gradlab writes the `safetensors <https://github.com/huggingface/safetensors>`_
format instead: an 8-byte little-endian header length, a JSON header naming
each array's dtype, shape and byte range, then the raw bytes. Loading parses
JSON and copies bytes; there is nothing to execute.

What is stored:

* tensors and NumPy arrays become safetensors entries, named by where they
  sit in the object (``"model.fc.weight"``, ``"optim.state.0.exp_avg"``), so
  other safetensors tools show readable names;
* the structure around them (dicts with str or int keys, OrderedDicts,
  lists, tuples, None, bool, int, float, str, NumPy scalars) goes into the
  header's ``__metadata__`` as a JSON tree whose leaves point at the entries.

What comes back: the same structure, with ``dict`` as ``dict`` and
``OrderedDict`` as ``OrderedDict`` (so ``state_dict()`` round-trips exactly);
tensors keep dtype (bfloat16 and bool included), shape, ``requires_grad``,
``name``, Parameter-ness and device; arrays come back as NumPy arrays, NumPy
scalars as NumPy scalars. A tensor that appears twice is stored once and
comes back as one object twice. Views that share memory with another tensor
are stored as separate copies (PyTorch keeps such sharing; gradlab does not).
Non-contiguous tensors are stored contiguously.

Saving to a path is atomic: the bytes go to a temporary file in the same
folder, which is flushed, fsynced and then renamed over the target, so a
crash mid-save leaves the old checkpoint intact. (Writing into an open file
object is as safe as that object.)

complex64 is safetensors' own C64. safetensors has no complex128, so such a
tensor is stored as float64 (real, imaginary) pairs, an extra last dim of 2,
and the header's ``__metadata__["complex128"]`` lists those entries; other
safetensors readers see the pairs.

A plain safetensors file (one not written by gradlab, e.g. downloaded model
weights) loads as a flat ``{name: tensor}`` dict. Its U16, U32 and U64 entries
become int32, int64 and int64 tensors: gradlab has no unsigned dtype wider
than uint8.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import stat
import struct
from collections import OrderedDict
from pathlib import Path

import ml_dtypes
import numpy as np
import safetensors

from .backends import device as as_device
from .ops.creation import as_tensor
from .tensor import Tensor

__all__ = ["save", "load"]

FORMAT = "gradlab"  # __metadata__["format"] marks files whose tree we wrote
FORMAT_VERSION = "1"

# safetensors dtype codes <-> NumPy dtypes (those gradlab can write or read back).
_CODES = {
    np.dtype(np.bool_): "BOOL", np.dtype(np.uint8): "U8", np.dtype(np.int8): "I8",
    np.dtype(np.int16): "I16", np.dtype(np.uint16): "U16", np.dtype(np.int32): "I32",
    np.dtype(np.uint32): "U32", np.dtype(np.int64): "I64", np.dtype(np.uint64): "U64",
    np.dtype(np.float16): "F16", np.dtype(ml_dtypes.bfloat16): "BF16",
    np.dtype(np.float32): "F32", np.dtype(np.float64): "F64", np.dtype(np.complex64): "C64",
}
_DTYPES = {code: dt for dt, code in _CODES.items()}


# --- writing -------------------------------------------------------------------------------
class _Flattener:
    """Turns ``obj`` into a JSON tree plus named, contiguous little-endian host arrays."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.complex_pairs: list[str] = []  # complex128 entries, stored as float64 pairs
        self._seen: dict[int, str] = {}  # id(tensor or array) -> entry name: store once
        self._open: set[int] = set()  # containers being walked, to catch cycles

    def _entry(self, value, array: np.ndarray, path: str) -> str:
        name = self._seen.get(id(value))
        if name is not None:
            return name
        dt = array.dtype.newbyteorder("=") if array.dtype.byteorder == ">" else array.dtype
        pairs = dt == np.complex128  # no safetensors code: float64 (re, im) pairs
        if pairs:
            array = np.stack([array.real, array.imag], -1)
            dt = array.dtype
        if dt not in _CODES:
            raise TypeError(f"save: can't store {path}: dtype {array.dtype} has no safetensors "
                            f"code; supported: {', '.join(sorted(map(str, _CODES)))}")
        name, n = path or "tensor", 1
        while name in self.arrays:  # paths can collide: {"a.b": x, "a": {"b": y}}
            name, n = f"{path}#{n}", n + 1
        stored = np.asarray(array, dtype=dt.newbyteorder("<"))  # keeps 0-d arrays 0-d
        self.arrays[name] = stored if stored.flags.c_contiguous else stored.copy(order="C")
        self._seen[id(value)] = name
        if pairs:
            self.complex_pairs.append(name)
        return name

    def encode(self, obj, path: str = ""):
        where = path or "the object"
        if isinstance(obj, np.generic) and not isinstance(obj, (str, bytes)):
            # before float: np.float64 is a float subclass, and should come back as itself
            return {"$": "scalar", "key": self._entry(obj, np.asarray(obj), path)}
        if obj is None or isinstance(obj, (bool, int, str)):
            return obj
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"$": "float", "value": repr(obj)}
        if isinstance(obj, Tensor):
            host = obj.detach().cpu().numpy()
            node = {"$": "tensor", "key": self._entry(obj, host, path),
                    "device": str(obj.device), "requires_grad": obj.requires_grad}
            if obj.name is not None:
                node["name"] = obj.name
            if _is_parameter(obj):
                node["parameter"] = True
            return node
        if isinstance(obj, np.ndarray):
            return {"$": "ndarray", "key": self._entry(obj, obj, path)}
        kind = type(obj)
        if kind not in (list, tuple, dict, OrderedDict):
            raise TypeError(
                f"save: can't store {where}: a {kind.__module__}.{kind.__qualname__}. gradlab "
                "checkpoints hold tensors, NumPy arrays, None/bool/int/float/str and dicts, "
                "lists and tuples of them (no pickle, so no arbitrary objects). Fix: convert "
                "it, e.g. to a dict of tensors.")
        if id(obj) in self._open:
            raise ValueError(f"save: {where} contains itself; a checkpoint must be a tree")
        self._open.add(id(obj))
        try:
            prefix = f"{path}." if path else ""
            if kind is list:
                return [self.encode(v, f"{prefix}{i}") for i, v in enumerate(obj)]
            if kind is tuple:
                return {"$": "tuple",
                        "items": [self.encode(v, f"{prefix}{i}") for i, v in enumerate(obj)]}
            for key in obj:
                if isinstance(key, bool) or not isinstance(key, (str, int)):
                    raise TypeError(f"save: can't store {where}: dict keys must be str or int, "
                                    f"got {key!r} ({type(key).__name__})")
            return {"$": "dict" if kind is dict else "odict", "keys": list(obj),
                    "values": [self.encode(v, f"{prefix}{k}") for k, v in obj.items()]}
        finally:
            self._open.discard(id(obj))


def _is_parameter(t: Tensor) -> bool:
    try:
        from .nn.parameter import Parameter
    except ImportError:  # nn not importable: nothing can be a Parameter
        return False
    return isinstance(t, Parameter)


def _header(tree, arrays: dict[str, np.ndarray], complex_pairs: list[str] | tuple = ()) -> bytes:
    """The length-prefixed JSON header; tensor bytes follow in ``arrays`` order."""
    header: dict = {"__metadata__": {"format": FORMAT, "format_version": FORMAT_VERSION,
                                     "tree": json.dumps(tree, separators=(",", ":"))}}
    if complex_pairs:  # (metadata values must be strings)
        header["__metadata__"]["complex128"] = json.dumps(complex_pairs)
    offset = 0
    for name, arr in arrays.items():
        header[name] = {"dtype": _CODES[arr.dtype.newbyteorder("=")],
                        "shape": list(arr.shape), "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # pad so the tensor data starts 8-byte aligned
    return struct.pack("<Q", len(text)) + text


def _write(stream, header: bytes, arrays: dict[str, np.ndarray]) -> None:
    stream.write(header)
    for arr in arrays.values():
        if arr.nbytes:
            stream.write(arr.reshape(-1).view(np.uint8).data)


def save(obj, f) -> None:
    """Write ``obj`` (tensors, arrays, and dicts/lists/tuples of them) to ``f``.

    ``f`` is a path (``str`` or ``os.PathLike``; written atomically) or a binary
    file object opened for writing. The format is safetensors with the object's
    structure in the header metadata: see the module docstring.
    """
    flat = _Flattener()
    tree = flat.encode(obj)
    header = _header(tree, flat.arrays, flat.complex_pairs)
    if isinstance(f, (str, os.PathLike)):
        _atomic_write(Path(f), header, flat.arrays)
    elif hasattr(f, "write"):
        _write(f, header, flat.arrays)
    else:
        raise TypeError(f"save: f must be a path or a binary file object, got "
                        f"{type(f).__name__}")


def _atomic_write(path: Path, header: bytes, arrays) -> None:
    """Write to a temporary sibling, fsync, then rename over ``path`` (all or nothing).

    A symlink is written through (its target is replaced, the link stays, as
    ``torch.save`` does), and a file that exists keeps its permissions (a
    private 0600 checkpoint must not become world-readable by a re-save).
    """
    path = Path(os.path.realpath(path))
    folder = path.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"save: can't write {path}: the folder {folder} does not "
                                "exist. Fix: create it first, e.g. os.makedirs(folder)")
    tmp = folder / f".{path.name}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as stream:
            if path.exists() and hasattr(os, "fchmod"):
                os.fchmod(stream.fileno(), stat.S_IMODE(path.stat().st_mode))
            _write(stream, header, arrays)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_folder(folder)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders can't be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# --- reading -------------------------------------------------------------------------------
class CheckpointError(ValueError):
    """A file that isn't a readable checkpoint: truncated, corrupt or in another format."""


_FOREIGN = [  # (magic bytes or a tuple of them, what the file is, what to do)
    (b"PK\x03\x04", "a ZIP archive, which is what torch.save writes (pickled objects inside)",
     "gradlab never unpickles: a pickle can run any code. Convert it where PyTorch is "
     "installed: safetensors.torch.save_file(torch.load(path, weights_only=True), "
     "'model.safetensors'); gradlab.load then returns a flat dict of tensors"),
    (tuple(bytes([0x80, protocol]) for protocol in range(2, 6)), "a Python pickle",
     "gradlab never unpickles (a pickle can run any code); save it again with gradlab.save"),
    (b"\x93NUMPY", "a NumPy .npy file", "read it with numpy.load(path, allow_pickle=False)"),
    (b"\x1f\x8b", "gzip-compressed data", "decompress it first"),
]


def _read_all(f) -> tuple[bytes, str]:
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as stream:
            return stream.read(), os.fspath(f)
    if hasattr(f, "read"):
        data = f.read()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError("load: the file object must be opened in binary mode ('rb')")
        name = getattr(f, "name", None)
        return bytes(data), str(name) if name is not None else f"<{type(f).__name__}>"
    raise TypeError(f"load: f must be a path or a binary file object, got {type(f).__name__}")


def _parse_header(data: bytes, name: str) -> dict:
    """The JSON header, with errors that say what the file is and what is wrong."""
    if data[8:9] != b"{":  # not safetensors: say what it is, if we can tell
        for magic, what, fix in _FOREIGN:
            if data.startswith(magic):
                raise CheckpointError(f"load: {name} is not a gradlab checkpoint: it is {what}. "
                                      f"{fix}.")
    if len(data) < 8:
        raise CheckpointError(f"load: {name} is empty" if not data else
                              f"load: {name} is too short ({len(data)} bytes) to be a checkpoint "
                              "(truncated?)")
    size = struct.unpack("<Q", data[:8])[0]
    if data[8:9] != b"{":
        raise CheckpointError(
            f"load: {name} is not a gradlab checkpoint (safetensors format): it starts with "
            f"{data[:9].hex(' ')}; a checkpoint starts with an 8-byte header length and '{{'")
    if size > len(data) - 8:
        raise CheckpointError(
            f"load: {name} is truncated: its header alone should be {size} bytes but the file "
            f"has {len(data)} in all (an interrupted save, copy or download?)")
    try:
        header = json.loads(data[8:8 + size])
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"load: {name} has a corrupt header (not valid JSON: {e})") \
            from None
    ends = [0]  # where each entry's bytes end; malformed entries are left to safetensors
    for key, entry in header.items():
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if key != "__metadata__" and isinstance(offsets, list) and len(offsets) == 2 \
                and isinstance(offsets[1], int):
            ends.append(offsets[1])
    have = len(data) - 8 - size
    if max(ends) > have:
        raise CheckpointError(
            f"load: {name} is truncated: its header promises {max(ends)} bytes of tensor data "
            f"but only {have} are there (an interrupted save, copy or download?)")
    return header


def _arrays(data: bytes, name: str) -> dict[str, np.ndarray]:
    """Every entry as a writable NumPy array, validated by the safetensors library."""
    try:
        entries = safetensors.deserialize(data)
    except Exception as e:  # SafetensorError: overlapping ranges, bad dtype, bad sizes...
        raise CheckpointError(f"load: {name} is a corrupt safetensors file: {e}") from None
    out = {}
    for key, entry in entries:
        dt = _DTYPES.get(entry["dtype"])
        if dt is None:
            raise CheckpointError(f"load: {name}: entry {key!r} has dtype {entry['dtype']}, "
                                  "which gradlab can't hold")
        raw = entry["data"]
        raw = raw if isinstance(raw, bytearray) else bytearray(raw)  # writable: tensors are
        out[key] = np.frombuffer(raw, dtype=dt.newbyteorder("<")) \
            .astype(dt, copy=False).reshape(entry["shape"])
    return out


def _join_complex_pairs(arrays: dict[str, np.ndarray], meta: dict, name: str) -> None:
    """The complex128 entries, stored as float64 (re, im) pairs, as complex128 again."""
    try:
        keys = json.loads(meta.get("complex128") or "[]")
    except (TypeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"load: {name} has an unreadable complex128 list ({e})") from None
    for key in keys if isinstance(keys, list) else [keys]:
        pairs = arrays.get(key) if isinstance(key, str) else None
        if pairs is None or pairs.dtype != np.float64 or pairs.ndim == 0 or pairs.shape[-1] != 2:
            raise CheckpointError(f"load: {name}: {key!r} is listed as complex128 but is not "
                                  "an entry of float64 (re, im) pairs (a corrupt file?)")
        arrays[key] = pairs[..., 0] + 1j * pairs[..., 1]


def _placement(map_location):
    """A function from the saved device string to the device to load onto."""
    if map_location is None:
        return lambda saved: saved
    if isinstance(map_location, dict):
        table = {str(as_device(k)): str(as_device(v)) for k, v in map_location.items()}
        return lambda saved: table.get(saved, saved)
    if isinstance(map_location, str) or hasattr(map_location, "type"):
        target = str(as_device(map_location))
        return lambda saved: target
    raise TypeError(f"load: map_location must be None, a device ('cpu', 'cuda:0') or a dict "
                    f"like {{'cuda:0': 'cpu'}}, got {type(map_location).__name__}")


class _Builder:
    """Rebuilds the saved object from its JSON tree and the loaded arrays."""

    def __init__(self, arrays, place, name: str) -> None:
        self.arrays, self.place, self.name = arrays, place, name
        self._made: dict[tuple[str, str], object] = {}  # one object per stored entry

    def _corrupt(self, what: str) -> CheckpointError:
        return CheckpointError(f"load: {self.name} has corrupt gradlab metadata: {what}")

    def _array(self, node) -> np.ndarray:
        key = node.get("key")
        if key not in self.arrays:
            raise self._corrupt(f"the tree refers to a missing entry {key!r}")
        return self.arrays[key]

    def build(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.build(v) for v in node]
        if not isinstance(node, dict) or "$" not in node:
            raise self._corrupt(f"unexpected node {str(node)[:60]}")
        tag = node["$"]
        if tag in ("tensor", "ndarray", "scalar"):
            memo = (tag, node.get("key"))
            if memo not in self._made:
                self._made[memo] = getattr(self, "_" + tag)(node, self._array(node))
            return self._made[memo]
        if tag == "tuple":
            return tuple(self.build(v) for v in node["items"])
        if tag in ("dict", "odict"):
            pairs = zip(node["keys"], (self.build(v) for v in node["values"]))
            return dict(pairs) if tag == "dict" else OrderedDict(pairs)
        if tag == "float":
            return float(node["value"])
        raise self._corrupt(f"unknown node type {tag!r}")

    def _tensor(self, node, array):
        saved = node.get("device", "cpu")
        target = self.place(saved)
        t = as_tensor(array)  # shares memory; U16/U32/U64 widen to int32/int64/int64
        if target != "cpu":
            try:
                t = t.to(target)
            except Exception as e:
                raise RuntimeError(
                    f"load: {self.name} has tensors saved on {saved}, which can't be used here "
                    f"({e}). Fix: load them onto the CPU with map_location='cpu'.") from e
        if node.get("parameter"):
            from .nn.parameter import Parameter
            t = Parameter(t, requires_grad=bool(node.get("requires_grad")))
        elif node.get("requires_grad"):
            t.requires_grad_(True)
        if node.get("name") is not None:
            t.name = node["name"]
        return t

    @staticmethod
    def _ndarray(node, array):
        return array

    @staticmethod
    def _scalar(node, array):
        return array[()]


def load(f, map_location=None, *, weights_only: bool | None = None):
    """Read an object written by :func:`save` (or any safetensors file) from ``f``.

    ``f`` is a path or a binary file object. ``map_location`` moves tensors:
    ``"cpu"``, ``"cuda"``, a ``gradlab.device``, or a dict from saved device
    to target (``{"cuda:0": "cpu"}``); None puts each tensor back where it was
    saved. ``weights_only`` is accepted for PyTorch code and changes nothing:
    gradlab loading is always weights-only (nothing in the file is executed).
    A safetensors file without gradlab's metadata loads as a flat dict of tensors.
    """
    del weights_only  # always the safe behaviour
    place = _placement(map_location)
    data, name = _read_all(f)
    header = _parse_header(data, name)
    arrays = _arrays(data, name)
    meta = header.get("__metadata__") or {}
    _join_complex_pairs(arrays, meta, name)
    builder = _Builder(arrays, place, name)
    if meta.get("format") != FORMAT:  # plain safetensors: a flat dict in file order
        order = sorted(arrays, key=lambda k: header[k]["data_offsets"][0])
        return {k: builder.build({"$": "tensor", "key": k}) for k in order}
    try:
        tree = json.loads(meta["tree"])
    except (KeyError, TypeError, json.JSONDecodeError) as e:
        raise builder._corrupt(f"the structure tree is unreadable ({e})") from None
    except RecursionError:  # a crafted file: thousands of nested brackets
        raise builder._corrupt("the structure tree is nested too deeply") from None
    try:
        return builder.build(tree)
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, CheckpointError):
            raise
        raise builder._corrupt(f"a malformed node ({type(e).__name__}: {e})") from None
    except RecursionError:
        raise builder._corrupt("the structure is nested too deeply") from None

