"""default_collate / default_convert, and the DataLoader in the main process (num_workers=0)."""

from __future__ import annotations

import multiprocessing as mp
from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import gradlab
from gradlab.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    SequentialSampler,
    TensorDataset,
    default_collate,
    default_convert,
)
from tests.oracle import needs_torch, torch

Point = namedtuple("Point", "x y")


class Items(Dataset):
    def __init__(self, items) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class Counter(IterableDataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


class SizedCounter(Counter):
    def __len__(self) -> int:
        return self.n


def plain(x):
    """A batch as (dtype, values) pairs and Python containers, for exact comparison."""
    if isinstance(x, gradlab.Tensor) or (torch is not None and isinstance(x, torch.Tensor)):
        return (str(x.dtype).split(".")[-1], x.tolist())
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    return x


# --- default_collate ---------------------------------------------------------------------------
COLLATE_CASES = {
    "tensors": [gradlab.tensor([1.0, 2.0]), gradlab.tensor([3.0, 4.0])],
    "floats": [1.5, 2.0, -1.0],
    "ints": [1, 2, 3],
    "bools": [True, False],
    "numpy_arrays": [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
    "numpy_scalars": [np.float32(1.5), np.float32(2.5)],
    "numpy_float64_scalars": [np.float64(1.5), np.float64(2.5)],
    "strings": ["a", "b"],
    "bytes": [b"a", b"b"],
    "pairs": [(gradlab.tensor([1.0]), 0), (gradlab.tensor([2.0]), 1)],
    "dicts": [{"x": 1.0, "y": "a"}, {"x": 2.0, "y": "b"}],
    "lists": [[1, 2.0], [3, 4.0]],
    "nested": [{"p": (np.int64(1), [True])}, {"p": (np.int64(2), [False])}],
    "uint8_images": [(np.full((2, 2), 255, np.uint8), 0), (np.zeros((2, 2), np.uint8), 1)],
    "uint8_tensors": [gradlab.tensor([0, 200], dtype=gradlab.uint8),
                      gradlab.tensor([255, 1], dtype=gradlab.uint8)],
    "numpy_uint8_scalars": [np.uint8(7), np.uint8(255)],
    "int8_int16_arrays": [(np.array([-1], np.int8), np.array([300], np.int16))] * 2,
}


def test_default_collate_kinds():
    out = {name: default_collate(batch) for name, batch in COLLATE_CASES.items()}
    assert plain(out["tensors"]) == ("float32", [[1.0, 2.0], [3.0, 4.0]])
    assert plain(out["floats"]) == ("float64", [1.5, 2.0, -1.0])  # Python floats are doubles
    assert plain(out["ints"]) == ("int64", [1, 2, 3])
    assert plain(out["bools"]) == ("bool", [True, False])
    assert plain(out["numpy_arrays"]) == ("int32", [[1, 2], [3, 4]])
    assert plain(out["numpy_scalars"]) == ("float32", [1.5, 2.5])
    assert plain(out["numpy_float64_scalars"]) == ("float64", [1.5, 2.5])
    assert out["strings"] == ["a", "b"] and out["bytes"] == [b"a", b"b"]
    assert isinstance(out["pairs"], list)  # tuples come back as lists, as in PyTorch
    assert plain(out["pairs"]) == [("float32", [[1.0], [2.0]]), ("int64", [0, 1])]
    assert plain(out["dicts"]) == {"x": ("float64", [1.0, 2.0]), "y": ["a", "b"]}
    assert plain(out["lists"]) == [("int64", [1, 3]), ("float64", [2.0, 4.0])]
    assert plain(out["nested"]) == {"p": [("int64", [1, 2]), [("bool", [True, False])]]}
    # images stay uint8 (4x smaller than float32); the model converts: x.float() / 255
    assert plain(out["uint8_images"]) == [("uint8", [[[255, 255], [255, 255]], [[0, 0], [0, 0]]]),
                                          ("int64", [0, 1])]
    assert plain(out["uint8_tensors"]) == ("uint8", [[0, 200], [255, 1]])
    assert plain(out["numpy_uint8_scalars"]) == ("uint8", [7, 255])
    assert plain(out["int8_int16_arrays"]) == [("int8", [[-1], [-1]]), ("int16", [[300], [300]])]


@needs_torch
@pytest.mark.parametrize("name", list(COLLATE_CASES))
def test_default_collate_matches_torch(name):
    from torch.utils.data import default_collate as torch_collate

    def to_torch(x):
        if isinstance(x, gradlab.Tensor):
            return torch.tensor(x.tolist(), dtype=getattr(torch, x.dtype.name))
        if isinstance(x, dict):
            return {k: to_torch(v) for k, v in x.items()}
        if isinstance(x, tuple):
            return tuple(to_torch(v) for v in x)
        if isinstance(x, list):
            return [to_torch(v) for v in x]
        return x
    batch = COLLATE_CASES[name]
    assert plain(default_collate(batch)) == plain(torch_collate([to_torch(b) for b in batch]))


def test_default_collate_keeps_namedtuples_and_mapping_types():
    out = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(out, Point) and out.x.tolist() == [1, 3] and out.y.dtype == gradlab.float64
    od = default_collate([OrderedDict(b=1, a=2), OrderedDict(b=3, a=4)])
    assert isinstance(od, OrderedDict) and list(od) == ["b", "a"] and od["a"].tolist() == [2, 4]


def test_default_collate_shape_error_names_field_shapes_and_fix():
    batch = [{"image": gradlab.zeros(3), "y": 0}, {"image": gradlab.zeros(4), "y": 1}]
    with pytest.raises(RuntimeError, match=r"can't stack sample\['image'\] into a batch: sample "
                                           r"0 has shape \(3,\) but sample 1 has shape \(4,\).*"
                                           r"pad them .*collate_fn="):
        default_collate(batch)
    with pytest.raises(RuntimeError, match=r"sample\[0\].*shape \(2,\) but sample 1 has shape "
                                           r"\(1,\)"):
        default_collate([(np.zeros(2), 1), (np.zeros(1), 2)])


def test_default_collate_other_errors():
    with pytest.raises(RuntimeError, match=r"sample has 2 fields in sample 0 and 3 in sample 1"):
        default_collate([[1, 2], [1, 2, 3]])
    with pytest.raises(RuntimeError, match=r"keys \['a'\] but sample 1 has \['b'\]"):
        default_collate([{"a": 1}, {"b": 1}])
    with pytest.raises(TypeError, match="sample\\[1\\] is a object; batches must contain"):
        default_collate([(1, object()), (2, object())])
    with pytest.raises(TypeError, match="a NumPy array of dtype <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert():
    out = default_convert({"a": np.arange(3), "b": (np.float32(1.0), "s"), "c": [np.int64(2)]})
    assert plain(out["a"]) == ("int64", [0, 1, 2])
    assert isinstance(out["b"], list) and plain(out["b"][0]) == ("float32", 1.0)
    assert out["b"][1] == "s" and plain(out["c"]) == [("int64", 2)]
    assert default_convert(1.5) == 1.5  # numbers are not batched: left alone
    strings = np.array(["x"])
    assert default_convert(strings) is strings
    p = default_convert(Point(np.zeros(1), 2))
    assert isinstance(p, Point) and isinstance(p.x, gradlab.Tensor) and p.y == 2


# --- DataLoader in the main process -------------------------------------------------------------
def dataset_xy(n=10):
    return TensorDataset(gradlab.arange(2 * n, dtype=gradlab.float32).reshape(n, 2),
                         gradlab.arange(n))


@needs_torch
@pytest.mark.parametrize("batch_size, drop_last", [(3, False), (3, True), (1, False),
                                                   (10, False), (None, False)])
def test_sequential_batches_match_torch(batch_size, drop_last):
    ours = DataLoader(dataset_xy(), batch_size=batch_size, drop_last=drop_last)
    x = torch.arange(20, dtype=torch.float32).reshape(10, 2)
    theirs = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, torch.arange(10)),
                                         batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert [plain(b) for b in ours] == [plain(b) for b in theirs]


@needs_torch
def test_dict_samples_match_torch():
    samples = [{"x": float(i), "n": i, "s": str(i)} for i in range(5)]
    ours = [plain(b) for b in DataLoader(Items(samples), batch_size=2)]
    theirs = [plain(b) for b in torch.utils.data.DataLoader(samples, batch_size=2)]
    assert ours == theirs


def test_shuffle_is_reproducible_with_a_generator_and_manual_seed():
    def order(**kw):
        return [b[1].tolist() for b in DataLoader(dataset_xy(), batch_size=4, shuffle=True,
                                                  **kw)]
    a = order(generator=gradlab.Generator().manual_seed(0))
    assert a == order(generator=gradlab.Generator().manual_seed(0))
    assert sorted(i for b in a for i in b) == list(range(10)) and a[0] != [0, 1, 2, 3]
    gradlab.manual_seed(9)
    b = order()
    gradlab.manual_seed(9)
    assert order() == b


def test_iterable_dataset_batches_and_len():
    loader = DataLoader(SizedCounter(7), batch_size=3)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]] and len(loader) == 3
    loader = DataLoader(SizedCounter(7), batch_size=3, drop_last=True)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5]] and len(loader) == 2
    loader = DataLoader(SizedCounter(4), batch_size=None)
    assert list(loader) == [0, 1, 2, 3] and len(loader) == 4
    with pytest.raises(TypeError, match="has no len"):
        len(DataLoader(Counter(3)))


def test_custom_batch_sampler_and_collate_fn():
    sampler = BatchSampler(SequentialSampler(range(5)), 2, False)
    loader = DataLoader(Items(list("abcde")), batch_sampler=sampler, collate_fn="".join)
    assert list(loader) == ["ab", "cd", "e"] and len(loader) == 3


def test_error_in_main_process_names_the_sample():
    class Bad(Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            if i == 4:
                raise IndexError("no sample 4 here")
            return i
    with pytest.raises(IndexError, match="no sample 4 here") as info:
        list(DataLoader(Bad(), batch_size=2))
    assert "while loading sample index 4 (batch index 2)" in "".join(info.value.__notes__)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(num_workers=-1), ValueError, "num_workers option should be non-negative"),
    (dict(timeout=-1), ValueError, "timeout option should be non-negative"),
    (dict(prefetch_factor=2), ValueError, "prefetch_factor option could only be specified in "
                                          "multiprocessing"),
    (dict(num_workers=1, prefetch_factor=0), ValueError, "prefetch_factor should be at least 1"),
    (dict(persistent_workers=True), ValueError, "persistent_workers option needs num_workers"),
    (dict(sampler=[0, 1], shuffle=True), ValueError, "sampler option is mutually exclusive "
                                                     "with shuffle"),
    (dict(batch_sampler=[[0]], batch_size=2), ValueError, "batch_sampler option is mutually "
                                                          "exclusive with batch_size"),
    (dict(batch_sampler=[[0]], drop_last=True), ValueError, "mutually exclusive with batch_size"),
    (dict(batch_size=None, drop_last=True), ValueError, "batch_size=None option disables "
                                                        "auto-batching"),
    (dict(multiprocessing_context="fork"), ValueError, "multiprocessing_context can only be used "
                                                       "with multi-process loading"),
    (dict(num_workers=1, multiprocessing_context="nope"), ValueError, "should specify a valid "
                                                                      "start method"),
    (dict(num_workers=1, multiprocessing_context=3), TypeError, "should be a valid context "
                                                                "object"),
])
def test_argument_conflicts(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        DataLoader(dataset_xy(), **kwargs)
    if torch is not None and kwargs.get("prefetch_factor") != 0:  # PyTorch allows 0
        with pytest.raises(exc):  # PyTorch refuses the same combinations
            torch.utils.data.DataLoader(list(range(10)), **kwargs)


@pytest.mark.parametrize("kwargs", [dict(shuffle=True), dict(sampler=[0]),
                                    dict(batch_sampler=[[0]])])
def test_iterable_dataset_refuses_order_options(kwargs):
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=f"IterableDataset: expected unspecified {name} option"):
        DataLoader(SizedCounter(3), **kwargs)


def test_attributes_are_frozen_after_init():
    loader = DataLoader(dataset_xy(), batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after "
                                         "DataLoader is initialized"):
        loader.batch_size = 3
    loader.num_workers = 0  # not frozen, as in PyTorch
    assert loader.multiprocessing_context is None


def test_context_object_is_accepted():
    loader = DataLoader(dataset_xy(), num_workers=1, multiprocessing_context=mp.get_context(
        "fork" if "fork" in mp.get_all_start_methods() else "spawn"))
    assert isinstance(loader.multiprocessing_context, mp.context.BaseContext)
    assert loader.prefetch_factor == 2
