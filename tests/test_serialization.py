"""gradlab.save / gradlab.load: safetensors checkpoints, no pickle, atomic writes, clear errors."""

import io
import json
import math
import os
import pickle
import stat
import struct
from collections import OrderedDict
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import safetensors.numpy

import gradlab
from gradlab import serialization
from tests.oracle import needs_torch, torch


def roundtrip(obj, **load_kw):
    buf = io.BytesIO()
    gradlab.save(obj, buf)
    buf.seek(0)
    return gradlab.load(buf, **load_kw)


def assert_same_tensor(a, b):
    assert isinstance(b, gradlab.Tensor)
    assert b.dtype is a.dtype and b.shape == a.shape and b.device == a.device
    assert b.requires_grad == a.requires_grad and b.is_leaf
    np.testing.assert_array_equal(np.asarray(b.detach()), np.asarray(a.detach()))


TENSORS = {
    "float32": lambda: gradlab.randn(3, 4),
    "0-d": lambda: gradlab.tensor(2.5),
    "0-d int": lambda: gradlab.tensor(7),
    "empty": lambda: gradlab.zeros(0, 3),
    "empty 1-d": lambda: gradlab.zeros(0, dtype=gradlab.int64),
    "non-contiguous": lambda: gradlab.arange(12.0).reshape(3, 4).t(),
    "strided slice": lambda: gradlab.arange(20).reshape(4, 5)[::2, 1::2],
    "float16": lambda: gradlab.randn(5, dtype=gradlab.float16),
    "bfloat16": lambda: gradlab.randn(2, 3).to(gradlab.bfloat16),
    "float64": lambda: gradlab.randn(2, 2, dtype=gradlab.float64),
    "bool": lambda: gradlab.tensor([True, False, True]),
    "int32": lambda: gradlab.tensor([-(2**31), 0, 2**31 - 1], dtype=gradlab.int32),
    "int64": lambda: gradlab.tensor([-(2**63), 2**63 - 1]),
    "uint8": lambda: gradlab.tensor([[0, 1], [128, 255]], dtype=gradlab.uint8),
    "int8": lambda: gradlab.tensor([-128, 0, 127], dtype=gradlab.int8),
    "int16": lambda: gradlab.tensor([-(2**15), 0, 2**15 - 1], dtype=gradlab.int16),
    "requires_grad": lambda: gradlab.randn(2, 2, requires_grad=True),
    "non-leaf": lambda: gradlab.randn(2, requires_grad=True) * 2,
    "complex64": lambda: gradlab.tensor([[1 + 2j, -0.5j], [3, 1e-8 + 1j]], requires_grad=True),
    "complex128": lambda: gradlab.tensor([1 + 2j, -3 - 1e-300j], dtype=gradlab.complex128),
    "complex128 0-d": lambda: gradlab.tensor(2 - 1j, dtype=gradlab.complex128),
    "complex128 strided": lambda: gradlab.arange(12.0, dtype=gradlab.float64).reshape(3, 4)
    .t().to(gradlab.complex128) * (1 + 1j),
}


@pytest.mark.parametrize("kind", TENSORS)
def test_tensor_round_trip(kind, device):
    t = TENSORS[kind]().to(device)
    out = roundtrip(t)
    assert_same_tensor(t, out)
    assert out.is_contiguous()


def test_loaded_tensor_is_writable_and_independent():
    t = gradlab.ones(3)
    out = roundtrip(t)
    out.add_(1)
    assert t.tolist() == [1, 1, 1] and out.tolist() == [2, 2, 2]


def test_name_and_parameter_survive():
    p = gradlab.nn.Parameter(gradlab.randn(2, 2))
    p.name = "w"
    frozen = gradlab.nn.Parameter(gradlab.randn(2), requires_grad=False)
    out = roundtrip({"p": p, "frozen": frozen})
    assert isinstance(out["p"], gradlab.nn.Parameter) and out["p"].requires_grad
    assert out["p"].name == "w"
    assert isinstance(out["frozen"], gradlab.nn.Parameter) and not out["frozen"].requires_grad


@pytest.mark.parametrize("array", [
    np.arange(6, dtype=np.uint8).reshape(2, 3), np.array([-1, 2], dtype=np.int8),
    np.array([1, 2], dtype=np.uint16), np.array([1.5], dtype=np.float32),
    np.arange(4, dtype=">i4"), np.array(3.25), np.zeros((2, 0)),
    np.ones(3, dtype=ml_dtypes.bfloat16), np.arange(10.0)[::3],
    np.array([1 + 2j], dtype=np.complex64), np.array([[1j, 2]], dtype=np.complex128),
], ids=lambda a: f"{a.dtype.str}{a.shape}")
def test_numpy_array_round_trip(array):
    out = roundtrip({"a": array})["a"]
    assert isinstance(out, np.ndarray) and out.dtype == array.dtype.newbyteorder("=")
    assert out.shape == array.shape
    np.testing.assert_array_equal(out, array)


def test_numpy_scalars_come_back_as_numpy_scalars():
    obj = [np.float64(1.5), np.int32(-3), np.bool_(True), np.float32(0.25)]
    out = roundtrip(obj)
    for a, b in zip(obj, out):
        assert type(b) is type(a) and b == a


def test_nested_structure_and_plain_values_keep_their_types():
    obj = {
        "none": None, "bool": False, "int": -(10**30), "float": 0.1, "str": "ünïcode",
        "nan": math.nan, "inf": math.inf, "-inf": -math.inf,
        "list": [1, [2, (3, "x")], {}], "tuple": (), "od": OrderedDict([("b", 1), ("a", 2)]),
        7: "int key", "t": {"deep": [gradlab.ones(2)]},
    }
    out = roundtrip(obj)
    assert list(out) == list(obj) and type(out) is dict
    assert out["none"] is None and out["bool"] is False and out["int"] == -(10**30)
    assert out["float"] == 0.1 and out["str"] == "ünïcode" and out[7] == "int key"
    assert math.isnan(out["nan"]) and out["inf"] == math.inf and out["-inf"] == -math.inf
    assert out["list"] == [1, [2, (3, "x")], {}] and type(out["list"][1][1]) is tuple
    assert out["tuple"] == () and type(out["od"]) is OrderedDict and list(out["od"]) == ["b", "a"]
    assert_same_tensor(obj["t"]["deep"][0], out["t"]["deep"][0])


def test_shared_tensor_is_stored_once_and_loaded_as_one_object():
    w = gradlab.randn(100, 100)
    buf = io.BytesIO()
    gradlab.save({"a": w, "b": [w, w]}, buf)
    assert len(buf.getvalue()) < 1.1 * w.nbytes
    buf.seek(0)
    out = gradlab.load(buf)
    assert out["a"] is out["b"][0] is out["b"][1]


def test_entries_are_named_by_their_place_and_readable_by_safetensors(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    model = {"fc.weight": gradlab.ones(2, 3), "fc.bias": gradlab.zeros(2)}
    gradlab.save({"model": model, "optim": {"state": {0: {"exp_avg": gradlab.ones(1)}}}}, path)
    plain = safetensors.numpy.load_file(path)
    assert set(plain) == {"model.fc.weight", "model.fc.bias", "optim.state.0.exp_avg"}
    np.testing.assert_array_equal(plain["model.fc.weight"], np.ones((2, 3), np.float32))


def test_colliding_names_stay_apart():
    obj = {"a.b": gradlab.ones(1), "a": {"b": gradlab.zeros(1)}}
    out = roundtrip(obj)
    assert out["a.b"].tolist() == [1.0] and out["a"]["b"].tolist() == [0.0]


def test_plain_safetensors_file_loads_as_a_flat_dict(tmp_path):
    path = tmp_path / "weights.safetensors"
    safetensors.numpy.save_file({"z.weight": np.ones((2, 2), np.float32),
                                 "a.ids": np.arange(3, dtype=np.uint8),
                                 "a.wide": np.array([1, 65535], dtype=np.uint16)}, path)
    out = gradlab.load(path)
    assert type(out) is dict and set(out) == {"z.weight", "a.ids", "a.wide"}
    assert out["z.weight"].dtype is gradlab.float32 and out["z.weight"].shape == (2, 2)
    assert out["a.ids"].dtype is gradlab.uint8 and out["a.ids"].tolist() == [0, 1, 2]
    # no uint16 in gradlab: U16 widens to int32, which holds every value
    assert out["a.wide"].dtype is gradlab.int32 and out["a.wide"].tolist() == [1, 65535]


@pytest.mark.parametrize("code, dtype", [("U8", "uint8"), ("I8", "int8"), ("I16", "int16")])
def test_small_integer_tensors_are_stored_under_their_safetensors_codes(tmp_path, code, dtype):
    """Other safetensors tools (and PyTorch's loader) see U8/I8/I16, not a widened type."""
    path = tmp_path / "t.safetensors"
    gradlab.save({"x": gradlab.tensor([1, 2, 3], dtype=getattr(gradlab, dtype))}, path)
    header_len = int.from_bytes(path.read_bytes()[:8], "little")
    header = json.loads(path.read_bytes()[8:8 + header_len])
    assert header["x"]["dtype"] == code
    assert safetensors.numpy.load_file(path)["x"].dtype == np.dtype(dtype)


def test_paths_str_pathlib_and_file_objects(tmp_path):
    t = gradlab.randn(3)
    gradlab.save(t, str(tmp_path / "a.pt"))
    gradlab.save(t, tmp_path / "b.pt")
    with open(tmp_path / "c.pt", "wb") as f:
        gradlab.save(t, f)
    for name in ("a.pt", "b.pt", "c.pt"):
        assert_same_tensor(t, gradlab.load(Path(tmp_path / name)))
        with open(tmp_path / name, "rb") as f:
            assert_same_tensor(t, gradlab.load(f))
    assert_same_tensor(t, gradlab.load(str(tmp_path / "a.pt"), weights_only=True))


def test_model_and_optimizer_state_dicts_round_trip(tmp_path):
    gradlab.manual_seed(0)
    model = gradlab.nn.Sequential(gradlab.nn.Linear(3, 4), gradlab.nn.Linear(4, 2))
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(gradlab.randn(5, 3)).sum().backward()
    opt.step()
    path = tmp_path / "ckpt.pt"
    gradlab.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}, path)
    ckpt = gradlab.load(path)
    sd = model.state_dict()
    assert type(ckpt["model"]) is type(sd) and list(ckpt["model"]) == list(sd)
    for k in sd:
        assert_same_tensor(sd[k], ckpt["model"][k])
    fresh = gradlab.nn.Sequential(gradlab.nn.Linear(3, 4), gradlab.nn.Linear(4, 2))
    fresh.load_state_dict(ckpt["model"])
    x = gradlab.randn(2, 3)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())
    osd = opt.state_dict()
    assert ckpt["optim"]["param_groups"] == osd["param_groups"] and ckpt["epoch"] == 3
    assert set(ckpt["optim"]["state"]) == set(osd["state"])
    fresh_opt = gradlab.optim.SGD(fresh.parameters(), lr=0.1, momentum=0.9)
    fresh_opt.load_state_dict(ckpt["optim"])


# --- atomic writes --------------------------------------------------------------------------
def test_crash_mid_write_keeps_the_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    gradlab.save({"v": gradlab.ones(3)}, path)
    before = path.read_bytes()
    real_write = serialization._write

    def crash(stream, header, arrays):
        stream.write(header[: len(header) // 2])  # half a file on disk, then the "power cut"
        raise KeyboardInterrupt

    monkeypatch.setattr(serialization, "_write", crash)
    with pytest.raises(KeyboardInterrupt):
        gradlab.save({"v": gradlab.zeros(1000)}, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.pt"]
    monkeypatch.setattr(serialization, "_write", real_write)
    monkeypatch.setattr(serialization.os, "fsync", lambda fd: (_ for _ in ()).throw(
        OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        gradlab.save({"v": gradlab.zeros(1000)}, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.pt"]
    assert gradlab.load(path)["v"].tolist() == [1, 1, 1]


def test_unsavable_object_fails_before_touching_the_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    gradlab.save([1], path)
    with pytest.raises(TypeError, match=r"can't store x\.1: a builtins\.set"):
        gradlab.save({"x": [1, {2}]}, path)
    assert gradlab.load(path) == [1] and os.listdir(tmp_path) == ["ckpt.pt"]


def test_new_file_gets_normal_permissions(tmp_path):
    path = tmp_path / "ckpt.pt"
    gradlab.save(1, path)
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


# --- loading never runs code, and says what is wrong ------------------------------------------
class _Evil:
    def __reduce__(self):
        return (os.mkdir, (str(_Evil.marker),))


def test_pickles_are_refused_without_running_them(tmp_path):
    _Evil.marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    path.write_bytes(pickle.dumps({"w": _Evil()}))
    with pytest.raises(ValueError, match=r"evil\.pt is not a gradlab checkpoint: it is a Python "
                                         r"pickle.*never unpickles"):
        gradlab.load(path)
    assert not _Evil.marker.exists()


@needs_torch
def test_a_torch_save_file_is_recognised(tmp_path):
    path = tmp_path / "torch.pt"
    torch.save({"w": torch.ones(2)}, path)
    with pytest.raises(ValueError, match=r"torch\.pt is not a gradlab checkpoint: it is a ZIP "
                                         r"archive.*torch\.save.*safetensors\.torch\.save_file"):
        gradlab.load(path)


def _valid_bytes():
    buf = io.BytesIO()
    gradlab.save({"w": gradlab.ones(4, 4), "n": 1}, buf)
    return buf.getvalue()


@pytest.mark.parametrize("data, match", [
    (b"", "is empty"),
    (b"\x01\x02\x03", r"too short \(3 bytes\)"),
    (b"PK\x03\x04" + bytes(30), "ZIP archive"),
    (b"\x93NUMPY" + bytes(30), r"NumPy \.npy file.*allow_pickle=False"),
    (b"\x1f\x8b" + bytes(30), "gzip-compressed"),
    (bytes(range(7, 57)), r"not a gradlab checkpoint \(safetensors format\): it starts with 07 08"),
    (b"\x80\x04" + bytes(30), "Python pickle"),
    (struct.pack("<Q", 12) + b"{not json}!!", r"corrupt header \(not valid JSON"),
    (struct.pack("<Q", 2) + b"[]", "it starts with 02 00"),
], ids=["empty", "short", "zip", "npy", "gzip", "random", "pickle", "bad-json", "json-list"])
def test_foreign_and_broken_files(tmp_path, data, match):
    path = tmp_path / "file.bin"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=r"load: .*file\.bin") as info:
        gradlab.load(path)
    assert info.match(match)
    assert isinstance(info.value, serialization.CheckpointError)


@pytest.mark.parametrize("cut", [20, 60, -1, -32])
def test_truncated_files_say_truncated(cut):
    data = _valid_bytes()
    short = data[:cut] if cut > 0 else data[:cut]
    with pytest.raises(ValueError, match=r"<BytesIO> is truncated"):
        gradlab.load(io.BytesIO(short))


def _with_metadata(tree_text: str, extra: dict | None = None) -> bytes:
    data = _valid_bytes()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    header["__metadata__"]["tree"] = tree_text
    header.update(extra or {})
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data[8 + size:]


@pytest.mark.parametrize("tree, match", [
    ("{oops", "structure tree is unreadable"),
    ('{"$": "tensor", "key": "nope"}', "missing entry 'nope'"),
    ('{"$": "mystery"}', "unknown node type 'mystery'"),
    ('{"$": "dict", "keys": [1]}', "malformed node"),
    ('{"no": "tag"}', "unexpected node"),
])
def test_corrupt_gradlab_metadata(tree, match):
    with pytest.raises(ValueError, match=f"corrupt gradlab metadata: .*{match}"):
        gradlab.load(io.BytesIO(_with_metadata(tree)))


def test_overlapping_entries_are_caught_by_the_safetensors_parser():
    data = _with_metadata('{"$": "tensor", "key": "w"}',
                          {"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})
    with pytest.raises(ValueError, match="corrupt safetensors file"):
        gradlab.load(io.BytesIO(data))


@pytest.mark.parametrize("obj, error, match", [
    ({1.5: 1}, TypeError, r"dict keys must be str or int, got 1\.5"),
    ({True: 1}, TypeError, "dict keys must be str or int"),
    ([object()], TypeError, r"can't store 0: a builtins\.object"),
    ({"a": np.array(["x"])}, TypeError, r"can't store a: dtype <U1 has no safetensors code"),
    ({"c": np.ones(2, np.longdouble)}, TypeError, "float128"),
    (b"bytes", TypeError, "the object: a builtins.bytes"),
])
def test_unsupported_objects(obj, error, match):
    with pytest.raises(error, match=match):
        gradlab.save(obj, io.BytesIO())


def test_cycles_are_refused():
    a = []
    a.append(a)
    with pytest.raises(ValueError, match="contains itself"):
        gradlab.save({"a": a}, io.BytesIO())


def test_bad_destinations_and_sources(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"folder .*missing does not exist"):
        gradlab.save(1, tmp_path / "missing" / "x.pt")
    with pytest.raises(TypeError, match="a path or a binary file object"):
        gradlab.save(1, 42)
    with pytest.raises(TypeError, match="a path or a binary file object"):
        gradlab.load(42)
    (tmp_path / "x.pt").write_bytes(_valid_bytes())
    with open(tmp_path / "x.pt", encoding="latin-1") as f, \
            pytest.raises(TypeError, match="binary mode"):
        gradlab.load(f)


# --- map_location ---------------------------------------------------------------------------
def _saved_on(device: str) -> bytes:
    """A checkpoint that says its tensor lived on ``device`` (made without that device)."""
    flat = serialization._Flattener()
    tree = flat.encode({"w": gradlab.arange(3.0)})
    tree["values"][0]["device"] = device
    buf = io.BytesIO()
    serialization._write(buf, serialization._header(tree, flat.arrays), flat.arrays)
    return buf.getvalue()


@pytest.mark.parametrize("where", ["cpu", gradlab.device("cpu"), {"cuda:0": "cpu"},
                                   {"cuda": "cpu"}])
def test_map_location_moves_cuda_tensors_to_the_cpu(where):
    out = gradlab.load(io.BytesIO(_saved_on("cuda:0")), map_location=where)
    assert out["w"].device == gradlab.device("cpu") and out["w"].tolist() == [0, 1, 2]


@pytest.mark.skipif(gradlab.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_checkpoint_without_cuda_suggests_map_location():
    with pytest.raises(RuntimeError, match=r"saved on cuda:0.*map_location='cpu'"):
        gradlab.load(io.BytesIO(_saved_on("cuda:0")))
    with pytest.raises(RuntimeError, match="map_location='cpu'"):
        roundtrip(gradlab.ones(1), map_location="cuda")


def test_bad_map_location():
    with pytest.raises(TypeError, match=r"map_location must be None, a device"):
        roundtrip(gradlab.ones(1), map_location=lambda storage, loc: storage)


def test_saved_device_is_restored_and_map_location_overrides_it(device):
    t = gradlab.randn(3, device=device)
    assert roundtrip({"t": t})["t"].device == gradlab.device(device)
    assert roundtrip(t, map_location="cpu").device == gradlab.device("cpu")
    back = roundtrip(gradlab.ones(2), map_location=device)
    assert back.device == gradlab.device(device) and back.tolist() == [1, 1]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions and symlinks")
def test_saving_over_a_private_file_keeps_it_private(tmp_path):
    path = tmp_path / "private.safetensors"
    gradlab.save({"w": gradlab.ones(2)}, path)
    os.chmod(path, 0o600)
    gradlab.save({"w": gradlab.zeros(2)}, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert gradlab.load(path)["w"].tolist() == [0.0, 0.0]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions and symlinks")
def test_saving_through_a_symlink_updates_its_target_and_keeps_the_link(tmp_path):
    target, link = tmp_path / "ckpt_10.safetensors", tmp_path / "latest.safetensors"
    gradlab.save({"w": gradlab.ones(2)}, target)
    link.symlink_to(target)
    gradlab.save({"w": gradlab.zeros(2)}, link)
    assert link.is_symlink()
    assert gradlab.load(target)["w"].tolist() == [0.0, 0.0]


def test_a_crafted_deeply_nested_structure_is_a_checkpoint_error(tmp_path):
    """Nothing runs, and the error is the documented one, not a RecursionError."""
    tree = "[" * 100_000 + "]" * 100_000
    header = json.dumps({"__metadata__": {"format": "gradlab", "format_version": "1",
                                          "tree": tree}}).encode()
    path = tmp_path / "deep.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    with pytest.raises(serialization.CheckpointError, match="nested too deeply"):
        gradlab.load(path)


def test_complex128_is_stored_as_float64_pairs_other_readers_can_use(tmp_path):
    """safetensors has C64 but no complex128: such entries are (re, im) float64 pairs, and
    the header lists them so gradlab.load puts them back together."""
    path = tmp_path / "c.safetensors"
    gradlab.save({"z": gradlab.tensor([1 + 2j], dtype=gradlab.complex128),
                  "w": gradlab.tensor([3 - 1j])}, path)
    plain = safetensors.numpy.load_file(path)
    assert plain["z"].dtype == np.float64 and plain["z"].tolist() == [[1.0, 2.0]]
    assert plain["w"].dtype == np.complex64
    out = gradlab.load(path)
    assert out["z"].dtype is gradlab.complex128 and out["z"].tolist() == [1 + 2j]


def test_a_corrupt_complex128_list_is_a_checkpoint_error(tmp_path):
    path = tmp_path / "c.safetensors"
    gradlab.save({"z": gradlab.tensor([1 + 2j], dtype=gradlab.complex128),
                  "x": gradlab.ones(3, dtype=gradlab.float64)}, path)
    data = path.read_bytes()
    path.write_bytes(data.replace(b'[\\"z\\"]', b'[\\"x\\"]'))
    with pytest.raises(serialization.CheckpointError, match="listed as complex128 but is not"):
        gradlab.load(path)
