"""The Tensor itself: attributes, conversions, names and interop (its repr: test_tensor_repr.py)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import gradlab
from gradlab.storage import Storage
from tests.oracle import needs_torch, torch


def fake_cuda_tensor(values=(1.0, 2.0)):
    """A tensor that claims to live on cuda:0 (its data is NumPy): for the device errors."""
    data = np.asarray(values, dtype=np.float32)
    return gradlab.Tensor._make(data, Storage(data.nbytes, gradlab.device("cuda", 0)), None,
                                0, False)


# --- shape and metadata -----------------------------------------------------------------------

def test_shape_size_ndim_numel():
    t = gradlab.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, gradlab.Size)
    assert t.size() == t.shape
    assert (t.size(0), t.size(1), t.size(-1)) == (2, 3, 4)
    assert t.ndim == t.dim() == 3
    assert t.numel() == 24 == t.shape.numel()
    assert repr(t.shape) == "gradlab.Size([2, 3, 4])"
    assert t.dtype is gradlab.float32
    assert t.device == gradlab.device("cpu") and t.device.type == "cpu"


SIZE_EXPRESSIONS = {
    "slice": lambda s: s[1:], "step": lambda s: s[::2], "empty": lambda s: s[5:],
    "add": lambda s: s + (5,), "radd": lambda s: (5,) + s, "add_size": lambda s: s + s,
    "mul": lambda s: s * 2, "rmul": lambda s: 2 * s, "index": lambda s: s[-1],
}


@pytest.mark.parametrize("name", sorted(SIZE_EXPRESSIONS))
def test_size_slices_and_sums_stay_sizes_like_torch(name):
    """``x.shape[1:]`` is a Size, as in PyTorch: it prints as one and has numel()."""
    ours = SIZE_EXPRESSIONS[name](gradlab.zeros(2, 3, 4).shape)
    expected = SIZE_EXPRESSIONS[name]((2, 3, 4))
    assert ours == expected and type(ours) is (int if name == "index" else gradlab.Size)
    if name != "index":
        assert repr(ours) == f"gradlab.Size({list(expected)})"
        assert ours.numel() == int(np.prod(expected)) and hash(ours) == hash(expected)
    if torch is not None:
        theirs = SIZE_EXPRESSIONS[name](torch.zeros(2, 3, 4).shape)
        assert repr(ours).replace("gradlab", "torch") == repr(theirs)


def test_size_refuses_what_a_tuple_refuses():
    s = gradlab.zeros(2, 3).shape
    with pytest.raises(TypeError, match="can only concatenate tuple"):
        s + [1]
    with pytest.raises(TypeError, match="can only concatenate list"):
        [1] + s
    with pytest.raises(TypeError, match="integer"):
        s * 1.5
    copied = pickle.loads(pickle.dumps(s[1:]))
    assert copied == (3,) and type(copied) is gradlab.Size


def test_size_of_a_missing_dim_names_the_range():
    with pytest.raises(IndexError, match=r"size: dimension 3 .* 3 dimension.*\[-3, 2\]"):
        gradlab.zeros(2, 3, 4).size(3)


def test_zero_dim_tensor():
    t = gradlab.tensor(2.5)
    assert t.shape == () and t.ndim == 0 and t.numel() == 1
    assert t.item() == 2.5
    with pytest.raises(TypeError, match="len"):
        len(t)


def test_transposes():
    t = gradlab.arange(24).reshape(2, 3, 4)
    m = gradlab.arange(6).reshape(2, 3)
    assert m.T.shape == (3, 2)
    np.testing.assert_array_equal(m.T.numpy(), m.numpy().T)
    assert t.T.shape == (4, 3, 2)
    assert t.mT.shape == (2, 4, 3)
    np.testing.assert_array_equal(t.mT.numpy(), np.swapaxes(t.numpy(), -1, -2))


def test_item_returns_python_numbers():
    assert type(gradlab.tensor(3).item()) is int
    assert type(gradlab.tensor(2.5).item()) is float
    assert type(gradlab.tensor(True).item()) is bool
    assert gradlab.tensor([[7.0]]).item() == 7.0


def test_item_of_many_values_explains():
    with pytest.raises(RuntimeError, match=r"6 elements .*\(2, 3\).*Fix: reduce"):
        gradlab.zeros(2, 3).item()


def test_tolist():
    assert gradlab.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert gradlab.tensor(1.5).tolist() == 1.5
    assert gradlab.tensor([True, False]).tolist() == [True, False]


def test_numpy_shares_memory():
    t = gradlab.tensor([1.0, 2.0])
    a = t.numpy()
    a[0] = 10.0
    assert t.tolist() == [10.0, 2.0]


def test_numpy_refuses_tensors_that_require_grad():
    t = gradlab.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"requires grad.*detach\(\)\.numpy\(\)"):
        t.numpy()
    assert t.detach().numpy().tolist() == [1.0, 1.0]


def test_numpy_refuses_cuda_tensors():
    with pytest.raises(TypeError, match=r"cuda:0 tensor to NumPy.*\.cpu\(\)\.numpy\(\)"):
        fake_cuda_tensor().numpy()


def test_detach_shares_memory_and_leaves_the_graph():
    x = gradlab.ones(3, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert d.grad_fn is None and not d.requires_grad and d.is_leaf
    d.numpy()[0] = 100.0
    assert y.detach().tolist() == [100.0, 2.0, 2.0]


def test_clone_copies_and_is_differentiable():
    x = gradlab.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c.grad_fn is not None and c.grad_fn.name() == "CloneBackward0"
    c.detach().numpy()[0] = 50.0
    assert x.detach().tolist() == [1.0, 2.0]
    (c * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_contiguous():
    m = gradlab.arange(6.0).reshape(2, 3)
    assert m.contiguous() is m
    t = m.T
    assert not t.is_contiguous()
    c = t.contiguous()
    assert c.is_contiguous() and c.tolist() == t.tolist()


def test_to_dtype_device_and_other():
    t = gradlab.tensor([1.5, 2.5])
    assert t.to(gradlab.float64).dtype is gradlab.float64
    assert t.to(dtype=gradlab.int32).tolist() == [1, 2]
    assert t.to(np.float64).dtype is gradlab.float64
    assert t.to(np.dtype("float16")).dtype is gradlab.float16
    assert t.to("cpu", gradlab.float64).dtype is gradlab.float64
    assert t.to(gradlab.ones(1, dtype=gradlab.float64)).dtype is gradlab.float64
    # Nothing to change: the same tensor, as in PyTorch; copy=True forces a new one.
    assert t.to("cpu") is t and t.to(gradlab.float32) is t and t.cpu() is t
    assert t.to(gradlab.float32, copy=True) is not t


def test_dtype_shortcuts():
    t = gradlab.tensor([1.7, -2.2, 0.0])
    expected = {"float": "float32", "double": "float64", "half": "float16",
                "bfloat16": "bfloat16", "long": "int64", "int": "int32", "short": "int16",
                "char": "int8", "byte": "uint8", "bool": "bool"}
    for method, name in expected.items():
        assert getattr(t, method)().dtype.name == name, method
    assert t.long().tolist() == [1, -2, 0]  # truncation toward zero
    assert t.bool().tolist() == [True, True, False]


def test_casting_keeps_the_gradient_flowing():
    x = gradlab.tensor([1.0, 2.0], requires_grad=True)
    y = x.double() * 3
    assert y.dtype is gradlab.float64
    y.sum().backward()
    assert x.grad.dtype is gradlab.float32 and x.grad.tolist() == [3.0, 3.0]


def test_casting_to_an_integer_cuts_the_graph():
    x = gradlab.tensor([1.0, 2.0], requires_grad=True)
    assert not x.long().requires_grad


def test_type_names():
    assert gradlab.zeros(1).type() == "gradlab.FloatTensor"
    assert gradlab.zeros(1, dtype=gradlab.int64).type() == "gradlab.LongTensor"
    assert gradlab.zeros(1, dtype=gradlab.uint8).type() == "gradlab.ByteTensor"


@needs_torch
@pytest.mark.parametrize("name", [d.name for d in gradlab.dtypes.ALL_DTYPES])
def test_type_names_match_torch_for_every_dtype(name):
    ours = gradlab.zeros(1, dtype=getattr(gradlab, name)).type()
    theirs = torch.zeros(1, dtype=getattr(torch, name)).type()
    assert ours == theirs.replace("torch.", "gradlab.")
    assert gradlab.zeros(1).type(theirs).dtype.name == name  # x.type("torch.ByteTensor")
    assert gradlab.zeros(1).type(getattr(gradlab, theirs[6:])).dtype.name == name


def test_type_with_an_unknown_name_explains():
    with pytest.raises(ValueError, match=r"type\(\): unknown CPU tensor type 'torch.cuda."):
        gradlab.zeros(1).type("torch.cuda.FloatTensor")


def test_small_integer_casts_wrap_like_c():
    """Casting to a narrower integer keeps the low bits (as in PyTorch and NumPy)."""
    t = gradlab.tensor([300, -1, 128])
    assert t.byte().tolist() == [44, 255, 128]
    assert t.char().tolist() == [44, -1, -128]
    assert gradlab.tensor([70000]).short().tolist() == [4464]
    assert gradlab.tensor([2.9, 255.0]).byte().tolist() == [2, 255]  # floats truncate


def test_python_conversions():
    assert int(gradlab.tensor(2.7)) == 2 and float(gradlab.tensor(2)) == 2.0
    assert bool(gradlab.tensor([1.0])) and not bool(gradlab.tensor(0))
    assert [10, 20, 30][gradlab.tensor(1)] == 20
    assert f"{gradlab.tensor(2.5):.2f}" == "2.50"
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(gradlab.ones(2))
    with pytest.raises(TypeError, match="integer tensors"):
        [1, 2][gradlab.tensor(1.0)]


# --- requires_grad and leaves -------------------------------------------------------------------

def test_requires_grad_and_leaves():
    x = gradlab.ones(2)
    assert not x.requires_grad and x.is_leaf and x.grad is None and x.grad_fn is None
    assert x.requires_grad_() is x and x.requires_grad and x.is_leaf
    y = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.op == "mul"
    z = gradlab.ones(2) * 2  # no input requires grad: a leaf again
    assert z.is_leaf and not z.requires_grad
    x.requires_grad_(False)
    assert not x.requires_grad


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match=r"floating point.*int64.*\.float\(\)"):
        gradlab.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point.*bool"):
        gradlab.tensor([True]).requires_grad_()


def test_non_leaf_requires_grad_cannot_be_switched_off():
    y = gradlab.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=r"leaf tensors.*'mul'.*detach\(\)"):
        y.requires_grad = False


def test_assigning_grad_is_checked():
    x = gradlab.zeros(2, 3, requires_grad=True)
    x.grad = gradlab.ones(2, 3)
    assert x.grad.tolist() == [[1.0] * 3] * 2
    with pytest.raises(RuntimeError, match=r"shape \(3,\).*\(2, 3\)"):
        x.grad = gradlab.ones(3)
    with pytest.raises(RuntimeError, match="dtype gradlab.float64"):
        x.grad = gradlab.ones(2, 3, dtype=gradlab.float64)
    with pytest.raises(TypeError, match="Tensor or None"):
        x.grad = [1.0]
    x.grad = None
    assert x.grad is None


# --- names --------------------------------------------------------------------------------------

def test_display_name():
    w = gradlab.tensor([1.0, 2.0], name="w")
    assert w.name == "w"
    assert repr(w) == "tensor([1., 2.], name='w')"
    assert gradlab.Tensor([1.0], name="b").name == "b"
    assert gradlab.tensor([1.0]).name is None
    assert w.detach().name == "w"
    w.name = "weight"
    assert "name='weight'" in repr(w)
    p = gradlab.tensor([1.0], requires_grad=True, name="p")
    assert repr(p) == "tensor([1.], requires_grad=True, name='p')"


def test_copy_and_pickle_keep_values_dtype_grad_flag_and_name():
    x = gradlab.tensor([1.0, 2.0], dtype=gradlab.float64, requires_grad=True, name="x")
    x.grad = gradlab.ones(2, dtype=gradlab.float64)
    for y in (copy.deepcopy(x), pickle.loads(pickle.dumps(x))):
        assert y is not x and y.tolist() == [1.0, 2.0] and y.dtype is gradlab.float64
        assert y.requires_grad and y.name == "x"
    assert copy.deepcopy(x).grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="only leaf tensors support deepcopy"):
        copy.deepcopy(x * 2)
    b = pickle.loads(pickle.dumps(gradlab.ones(2, dtype=gradlab.bfloat16)))
    assert b.dtype is gradlab.bfloat16


# --- interop: __array__ and DLPack --------------------------------------------------------------

def test_np_asarray_shares_memory():
    t = gradlab.tensor([1.0, 2.0, 3.0])
    a = np.asarray(t)
    a[0] = 9.0
    assert t.tolist() == [9.0, 2.0, 3.0]
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert np.array(t, copy=True) is not t.numpy()


def test_numpy_from_dlpack_shares_memory():
    t = gradlab.tensor([1.0, 2.0])
    n = np.from_dlpack(t)
    n[1] = 7.0
    assert t.tolist() == [1.0, 7.0]


def test_gradlab_from_dlpack_shares_memory_with_numpy():
    arr = np.arange(3.0)
    t = gradlab.from_dlpack(arr)
    assert t.dtype is gradlab.float64
    t.add_(1)
    assert arr.tolist() == [1.0, 2.0, 3.0]


def test_dlpack_refuses_tensors_that_require_grad():
    with pytest.raises(RuntimeError, match=r"requires grad through DLPack.*detach"):
        np.from_dlpack(gradlab.ones(2, requires_grad=True))


@needs_torch
def test_torch_from_dlpack_shares_memory():
    t = gradlab.tensor([1.0, 2.0, 3.0])
    tt = torch.from_dlpack(t)
    tt[2] = 5.0
    assert t.tolist() == [1.0, 2.0, 5.0]
    strided = torch.from_dlpack(gradlab.ones(3, 4).T)
    assert strided.shape == (4, 3) and strided.stride() == (1, 4)


@needs_torch
def test_gradlab_from_dlpack_shares_memory_with_torch():
    src = torch.arange(4.0)
    t = gradlab.from_dlpack(src)
    assert t.dtype is gradlab.float32
    t.mul_(2)
    assert src.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert gradlab.from_dlpack(torch.arange(3)).dtype is gradlab.int64


@needs_torch
@pytest.mark.parametrize("args", [([1, 2],), ([[1.5, 2.0]],), (2, 3), ()], ids=str)
def test_legacy_constructor_matches_torch(args):
    ours, theirs = gradlab.Tensor(*args), torch.Tensor(*args)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    if args and not isinstance(args[0], int):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@needs_torch
@pytest.mark.parametrize("args", [([1, 2],), ([[1.5, 2.0]],), (2, 3), (), (torch.Size([2]),)],
                         ids=str)
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_new_makes_the_legacy_constructors_tensors_in_the_tensors_dtype(args, dtype):
    ours = gradlab.zeros(1, dtype=getattr(gradlab, dtype)).new(
        *(gradlab.Size(a) if isinstance(a, torch.Size) else a for a in args))
    theirs = torch.zeros(1, dtype=getattr(torch, dtype)).new(*args)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype.name == dtype
    if args and not isinstance(args[0], (int, torch.Size)):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_set_default_tensor_type_sets_the_default_dtype(recwarn):
    try:
        gradlab.set_default_tensor_type(gradlab.DoubleTensor)
        assert gradlab.zeros(1).dtype is gradlab.float64
        gradlab.set_default_tensor_type("torch.FloatTensor")
        assert gradlab.zeros(1).dtype is gradlab.float32
        assert "deprecated" in str(recwarn[0].message)
        with pytest.raises(TypeError, match="only floating point types can be the default"):
            gradlab.set_default_tensor_type(gradlab.LongTensor)
        with pytest.raises(TypeError, match="expected a tensor type"):
            gradlab.set_default_tensor_type("torch.Nonsense")
    finally:
        gradlab.set_default_dtype(gradlab.float32)


def test_legacy_constructor_refuses_mixed_arguments():
    with pytest.raises(TypeError, match="data or integer sizes"):
        gradlab.Tensor(2, [3])


def test_get_device_is_minus_one_on_cpu_and_the_index_on_cuda():
    assert gradlab.zeros(2).get_device() == -1
    assert fake_cuda_tensor().get_device() == 0
    data = np.zeros(1, dtype=np.float32)
    on_second_gpu = gradlab.Tensor._make(data, Storage(4, gradlab.device("cuda", 1)), None, 0,
                                         False)
    assert on_second_gpu.get_device() == 1
    if torch is not None:
        assert torch.zeros(2).get_device() == gradlab.zeros(2).get_device()
