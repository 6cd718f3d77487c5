"""asarray / frombuffer share memory where they can; empty_strided lays elements out by hand."""

from __future__ import annotations

import array
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import needs_torch, torch

# --- asarray ---------------------------------------------------------------------------------


def test_asarray_shares_a_numpy_arrays_memory_by_default():
    a = np.arange(4.0)
    t = gradlab.asarray(a)
    t[0] = 9.0
    assert a[0] == 9.0 and t.dtype is gradlab.float64
    strided = np.arange(6.0).reshape(2, 3)[:, ::2]
    s = gradlab.asarray(strided)
    s[0, 0] = 5.0
    assert strided[0, 0] == 5.0 and s.stride() == (3, 2)  # the view's own layout


@pytest.mark.parametrize("kwargs", [{"copy": True}, {"dtype": gradlab.float32}])
def test_asarray_copies_when_asked_or_when_converting(kwargs):
    a = np.arange(4.0)
    t = gradlab.asarray(a, **kwargs)
    t[1] = 7.0
    assert a[1] == 1.0


def test_asarray_copy_false_refuses_a_conversion_or_plain_python_data():
    a = np.arange(3.0)
    assert gradlab.asarray(a, copy=False).data_ptr() == a.ctypes.data
    with pytest.raises(ValueError, match=r"asarray: can't alias a NumPy array of dtype float64 "
                                         r"as float32 on cpu, and copy=False forbids a copy.*"
                                         r"Fix"):
        gradlab.asarray(a, dtype=gradlab.float32, copy=False)
    with pytest.raises(ValueError, match=r"can't alias arbitrary Python data \(list\)"):
        gradlab.asarray([1, 2], copy=False)
    with pytest.raises(ValueError, match="can't alias NumPy scalars"):
        gradlab.asarray(np.float64(2.0), copy=False)
    x = gradlab.ones(2)
    with pytest.raises(ValueError, match="can't alias a float32 tensor on cpu as float64 on cpu"):
        gradlab.asarray(x, dtype=gradlab.float64, copy=False)
    with pytest.raises(TypeError, match="asarray: copy must be True, False or None, got 'yes'"):
        gradlab.asarray(a, copy="yes")


def test_asarray_of_a_tensor_is_the_tensor_unless_converted_or_copied():
    x = gradlab.ones(3, requires_grad=True)
    assert gradlab.asarray(x) is x
    copied = gradlab.asarray(x, copy=True)
    assert copied is not x and copied.grad_fn is not None  # a clone, still in the graph
    converted = gradlab.asarray(x, dtype=gradlab.float64)
    assert converted.dtype is gradlab.float64 and converted.grad_fn is not None
    detached = gradlab.asarray(x, requires_grad=False)
    assert not detached.requires_grad and detached.data_ptr() == x.data_ptr()
    plain = gradlab.zeros(2)
    assert gradlab.asarray(plain, requires_grad=True) is plain and plain.requires_grad


@needs_torch
@pytest.mark.parametrize("data", [[1, 2.5], 3, True, [[1, 2]], np.float64(2.0),
                                  np.arange(3, dtype=np.int32)])
def test_asarray_dtypes_match_torch(data):
    ours, theirs = gradlab.asarray(data), torch.asarray(data)
    assert ours.dtype.name == str(theirs.dtype)[6:] and ours.tolist() == theirs.tolist()


def test_asarray_of_buffers_dlpack_and_devices(device):
    buf = bytearray(np.arange(3, dtype=np.float32).tobytes())
    t = gradlab.asarray(buf)
    assert t.tolist() == [0.0, 1.0, 2.0]
    t[0] = 5.0
    assert np.frombuffer(buf, dtype=np.float32)[0] == 5.0  # shared
    moved = gradlab.asarray(np.arange(3.0), device=device)
    assert moved.device == device and moved.tolist() == [0.0, 1.0, 2.0]
    if torch is not None:  # a DLPack producer: shared memory, as from_dlpack
        source = torch.arange(4.0)
        shared = gradlab.asarray(source)
        shared[1] = 8.0
        assert source[1].item() == 8.0
    assert not gradlab.asarray([1.0]).requires_grad
    assert gradlab.asarray([1.0], requires_grad=True).requires_grad


# --- frombuffer ------------------------------------------------------------------------------


def test_frombuffer_shares_memory_and_reads_count_from_offset():
    buf = bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00")
    t = gradlab.frombuffer(buf, dtype=gradlab.int32)
    assert t.tolist() == [1, 2] and t.dtype is gradlab.int32 and t.device == "cpu"
    t[0] = 5
    assert buf[:4] == b"\x05\x00\x00\x00"
    assert gradlab.frombuffer(buf, dtype=gradlab.int8, count=3, offset=2).tolist() == [0, 0, 2]
    assert gradlab.frombuffer(array.array("d", [1.5, 2.5]), dtype=gradlab.float64).tolist() \
        == [1.5, 2.5]
    assert gradlab.frombuffer(buf, dtype=gradlab.float32, requires_grad=True).requires_grad


@needs_torch
@pytest.mark.parametrize("dtype, count, offset", [("int8", -1, 0), ("int16", 3, 2),
                                                  ("uint8", 5, 3), ("float32", -1, 4),
                                                  ("int64", 1, 0)])
def test_frombuffer_matches_torch(dtype, count, offset):
    data = bytes(range(1, 17))
    ours = gradlab.frombuffer(bytearray(data), dtype=getattr(gradlab, dtype), count=count,
                              offset=offset)
    theirs = torch.frombuffer(bytearray(data), dtype=getattr(torch, dtype), count=count,
                              offset=offset)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_frombuffer_of_read_only_bytes_warns_and_stays_read_only():
    with pytest.warns(UserWarning, match="not writable.*bytearray"):
        t = gradlab.frombuffer(b"abcd", dtype=gradlab.uint8)
    assert t.tolist() == [97, 98, 99, 100]
    with pytest.raises(ValueError, match="read-only"):
        t.numpy()[0] = 1


@pytest.mark.parametrize("kwargs, match", [
    ({"dtype": gradlab.int32, "count": 3}, r"requested buffer length \(3 \* 4 bytes\) after "
                                           r"offset \(0 bytes\) must not be greater than actual "
                                           r"buffer length \(8 bytes\)"),
    ({"dtype": gradlab.int32, "offset": 9}, r"offset \(9 bytes\) must be non-negative and no "
                                            r"greater than buffer length \(8 bytes\) minus 1"),
    ({"dtype": gradlab.int64, "offset": 1}, r"buffer length \(7 bytes\) after offset \(1 bytes\) "
                                            r"must be a multiple of element size \(8\)"),
    ({"dtype": gradlab.int32, "count": 0}, r"both buffer length \(8\) and count \(0\) must not "
                                           r"be 0"),
])
def test_frombuffer_errors_teach(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gradlab.frombuffer(bytearray(8), **kwargs)
    with pytest.raises(TypeError, match="frombuffer: expected an object with the buffer "
                                        "protocol .* got list"):
        gradlab.frombuffer([1, 2], dtype=gradlab.int8)


# --- empty_strided, new_empty_strided, storage_offset ----------------------------------------


@settings(max_examples=30, deadline=None)
@given(size=st.lists(st.integers(0, 4), min_size=0, max_size=3), data=st.data())
def test_empty_strided_has_the_asked_layout_over_a_tight_buffer(size, data):
    stride = data.draw(st.lists(st.integers(0, 6), min_size=len(size), max_size=len(size)))
    t = gradlab.empty_strided(size, stride, dtype=gradlab.float64)
    assert tuple(t.shape) == tuple(size) and t.dtype is gradlab.float64
    if all(n > 1 for n in size):  # a dim of length 0 or 1 never steps: any stride is its own
        assert t.stride() == tuple(stride)
    assert t.storage_offset() == 0 and not np.any(t.numpy())  # zeros, not garbage
    needed = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    assert t._storage.nbytes == 8 * needed


@needs_torch
@pytest.mark.parametrize("size, stride", [((2, 3), (1, 2)), ((2, 3), (0, 1)), ((3,), (2,)),
                                          ((2, 2, 2), (4, 1, 2)), ((), ())])
def test_empty_strided_matches_torchs_layout(size, stride, device):
    ours = gradlab.empty_strided(size, stride, device=device)
    theirs = torch.empty_strided(size, stride)
    assert ours.stride() == theirs.stride() and ours.shape == theirs.shape
    assert ours.is_contiguous() == theirs.is_contiguous() and ours.dtype is gradlab.float32
    assert ours.device == device


def test_new_empty_strided_takes_self_dtype_and_device_and_requires_grad():
    x = gradlab.ones(2, dtype=gradlab.float64)
    t = x.new_empty_strided((2, 2), (1, 2))
    assert t.dtype is gradlab.float64 and t.stride() == (1, 2) and not t.is_contiguous()
    assert x.new_empty_strided((3,), (1,), dtype=gradlab.int32).dtype is gradlab.int32
    assert gradlab.empty_strided((2,), (1,), requires_grad=True).requires_grad


@pytest.mark.parametrize("size, stride, error, match", [
    ((2, 3), (1,), RuntimeError, r"empty_strided: dimensionality of sizes \(2\) must match "
                                 r"dimensionality of strides \(1\)"),
    ((2, 3), (-1, 1), RuntimeError, r"empty_strided: strides must be >= 0, got \(-1, 1\)"),
    ((2, -3), (1, 1), RuntimeError, "negative dimension"),
    ((2,), None, TypeError, "empty_strided: stride must be a sequence of ints"),
])
def test_empty_strided_errors_teach(size, stride, error, match):
    with pytest.raises(error, match=match):
        gradlab.empty_strided(size, stride)


def test_empty_strided_with_stride_0_aliases_one_element():
    t = gradlab.empty_strided((3,), (0,))
    t.numpy()[0] = 4.0  # the three elements are one memory location, as in PyTorch
    assert t.tolist() == [4.0, 4.0, 4.0]


def test_nothing_warns_on_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradlab.asarray([1.0, 2.0])
        gradlab.frombuffer(bytearray(4), dtype=gradlab.float32)
