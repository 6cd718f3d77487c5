"""dtypes and PyTorch's promotion rules: ``promote_types`` and ``result_type`` over all pairs."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

import gradlab
from gradlab import dtypes
from tests.oracle import needs_torch, torch

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
         "float64", "complex64", "complex128"]
# 300 and -1 don't fit uint8 (or 300 int8): PyTorch keeps the tensor's dtype and wraps the value.
SCALARS = [True, 2, 2.5, 300, -1, 1 - 2j]


def torch_name(dtype) -> str:
    """PyTorch's name for a dtype, as gradlab has it: gradlab has no complex32 (half-precision
    complex, experimental in PyTorch), so float16 meeting a complex number is complex64."""
    return str(dtype).replace("torch.", "").replace("complex32", "complex64")


def make(lib, name, ndim):
    return lib.ones((2,) if ndim else (), dtype=getattr(lib, name))


def test_dtype_facts():
    assert repr(gradlab.float32) == "gradlab.float32"
    assert gradlab.float32.itemsize == 4 and gradlab.bfloat16.itemsize == 2
    assert gradlab.float16.is_floating_point and not gradlab.int64.is_floating_point
    assert gradlab.bfloat16.np == np.dtype(ml_dtypes.bfloat16)
    assert gradlab.float is gradlab.float32 and gradlab.double is gradlab.float64
    assert gradlab.half is gradlab.float16 and gradlab.long is gradlab.int64
    assert gradlab.int is gradlab.int32


def test_to_dtype_accepts_many_spellings():
    assert dtypes.to_dtype("float64") is gradlab.float64
    assert dtypes.to_dtype("double") is gradlab.float64
    assert dtypes.to_dtype(np.int32) is gradlab.int32
    assert dtypes.to_dtype(np.dtype("float16")) is gradlab.float16
    assert dtypes.to_dtype(float) is gradlab.float64  # as torch.zeros(2, dtype=float)
    assert dtypes.to_dtype(complex) is gradlab.complex128
    assert dtypes.to_dtype(int) is gradlab.int64
    assert dtypes.to_dtype(bool) is gradlab.bool
    assert dtypes.to_dtype(np.complex64) is gradlab.complex64
    assert dtypes.to_dtype("cdouble") is gradlab.complex128
    with pytest.raises(TypeError, match="no dtype for NumPy's float128"):
        dtypes.to_dtype(np.longdouble)


def test_promote_types_examples():
    p = gradlab.promote_types
    assert p(gradlab.int32, gradlab.float16) is gradlab.float16
    assert p(gradlab.float16, gradlab.bfloat16) is gradlab.float32
    assert p(gradlab.bool, gradlab.int32) is gradlab.int32
    assert p(gradlab.int64, gradlab.int32) is gradlab.int64


def test_result_type_examples():
    """PyTorch's three groups: dimensioned tensors, then 0-d tensors, then Python numbers."""
    r = gradlab.result_type
    f32, i32 = gradlab.ones(2), gradlab.ones(2, dtype=gradlab.int32)
    assert r(i32, 2.5) is gradlab.float32  # NumPy would say float64
    assert r(f32, gradlab.tensor(1.0, dtype=gradlab.float64)) is gradlab.float32
    assert r(i32, gradlab.tensor(1.0, dtype=gradlab.float64)) is gradlab.float64
    assert r(i32, 10 ** 3) is gradlab.int32
    assert r(gradlab.ones(2, dtype=gradlab.bool), True) is gradlab.bool


@needs_torch
def test_promote_types_matches_torch_for_all_pairs():
    for a, b in itertools.product(NAMES, NAMES):
        ours = gradlab.promote_types(getattr(gradlab, a), getattr(gradlab, b)).name
        theirs = str(torch.promote_types(getattr(torch, a), getattr(torch, b)))
        assert ours == theirs.replace("torch.", ""), (a, b)


@needs_torch
def test_result_type_matches_torch_for_all_pairs():
    for a, nda, b, ndb in itertools.product(NAMES, (0, 1), NAMES, (0, 1)):
        ours = gradlab.result_type(make(gradlab, a, nda), make(gradlab, b, ndb)).name
        theirs = str(torch.result_type(make(torch, a, nda), make(torch, b, ndb)))
        assert ours == torch_name(theirs), (a, nda, b, ndb)


@needs_torch
def test_result_type_with_python_scalars_matches_torch():
    for a, nda, s in itertools.product(NAMES, (0, 1), SCALARS):
        ours = gradlab.result_type(make(gradlab, a, nda), s).name
        theirs = str(torch.result_type(make(torch, a, nda), s))
        assert ours == torch_name(theirs), (a, nda, s)


@needs_torch
@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")  # PyTorch's float16+1j
def test_ops_produce_the_promoted_dtype_like_torch():
    """The dtype an op actually returns, not only what result_type says."""
    for a, nda, b, ndb in itertools.product(NAMES, (0, 1), NAMES, (0, 1)):
        ours = (make(gradlab, a, nda) + make(gradlab, b, ndb)).dtype.name
        theirs = str((make(torch, a, nda) + make(torch, b, ndb)).dtype)
        assert ours == torch_name(theirs), (a, nda, b, ndb)
    for a, s in itertools.product(NAMES, SCALARS):
        if a == "bfloat16" and isinstance(s, float):
            continue  # a known bug, see test_bfloat16_with_python_floats_stays_bfloat16
        ours, theirs = make(gradlab, a, 1) * s, make(torch, a, 1) * s
        assert ours.dtype.name == torch_name(theirs.dtype), (a, s)
        assert ours.tolist() == theirs.tolist(), (a, s)  # uint8 * 300 wraps to 44 in both


def test_scalar_promotion_follows_the_default_dtype():
    gradlab.set_default_dtype(gradlab.float64)
    try:
        assert gradlab.result_type(gradlab.ones(2, dtype=gradlab.int64), 1.5) is gradlab.float64
        assert gradlab.result_type(gradlab.ones(2, dtype=gradlab.float16), 1.5) is \
            gradlab.float16
    finally:
        gradlab.set_default_dtype(gradlab.float32)


@pytest.mark.parametrize("name", NAMES)
def test_only_floating_tensors_can_require_grad(name):
    t = gradlab.zeros(2, dtype=getattr(gradlab, name))
    if t.dtype.is_floating_point or t.dtype.is_complex:
        assert t.requires_grad_().requires_grad
    else:
        with pytest.raises(RuntimeError,
                           match=f"only tensors of floating point or complex dtype.*{name}"):
            t.requires_grad_()


def test_bfloat16_with_python_floats_stays_bfloat16():
    b = gradlab.ones(2, dtype=gradlab.bfloat16)
    assert (b * 2.5).dtype is gradlab.bfloat16
    assert (b ** 2.0).dtype is gradlab.bfloat16


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_every_floating_dtype_gets_a_gradient(name):
    x = gradlab.tensor([1.0, 2.0], dtype=getattr(gradlab, name), requires_grad=True)
    (x * 3).sum().backward()
    assert x.grad.dtype is x.dtype and x.grad.tolist() == [3.0, 3.0]


def test_bfloat16_op_outputs_require_grad():
    """bfloat16 is an ml_dtypes type of NumPy kind 'V', not 'f': it must still count."""
    x = gradlab.ones(2, requires_grad=True)
    assert x.bfloat16().requires_grad
    assert (gradlab.ones(2, dtype=gradlab.bfloat16, requires_grad=True) * 2).requires_grad


# --- the small integer types: uint8 (images), int8, int16 -----------------------------------------

SMALL_INTS = ["uint8", "int8", "int16"]


def test_small_integer_dtype_facts():
    assert repr(gradlab.uint8) == "gradlab.uint8" and gradlab.short is gradlab.int16
    assert [d.itemsize for d in (gradlab.uint8, gradlab.int8, gradlab.int16)] == [1, 1, 2]
    assert not gradlab.uint8.is_signed and gradlab.int8.is_signed and not gradlab.bool.is_signed
    assert dtypes.to_dtype("short") is gradlab.int16 and dtypes.to_dtype(np.uint8) is gradlab.uint8
    assert dtypes.to_dtype(np.uint16) is gradlab.int32  # no uint16: the next wider signed type


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_dtype_attributes_match_torch(name):
    ours, theirs = getattr(gradlab, name), getattr(torch, name)
    assert (ours.itemsize, ours.is_signed, ours.is_floating_point) == \
        (theirs.itemsize, theirs.is_signed, theirs.is_floating_point)


def test_small_integer_promotion_examples():
    p, r = gradlab.promote_types, gradlab.result_type
    assert p(gradlab.uint8, gradlab.int8) is gradlab.int16  # neither holds the other
    assert p(gradlab.uint8, gradlab.bool) is gradlab.uint8
    assert p(gradlab.uint8, gradlab.int16) is gradlab.int16
    assert p(gradlab.int8, gradlab.float16) is gradlab.float16
    u8 = gradlab.zeros(2, dtype=gradlab.uint8)
    assert r(u8, 300) is gradlab.uint8  # a Python int never widens an integer tensor
    assert r(u8, 2.5) is gradlab.float32
    assert r(u8, gradlab.tensor(5)) is gradlab.uint8  # nor does a 0-d tensor of its category
    assert r(gradlab.tensor(5, dtype=gradlab.uint8), gradlab.ones(2, dtype=gradlab.bool)) is \
        gradlab.uint8


def _pair(lib, name):
    values = {"uint8": [0, 1, 100, 200, 255, 3], "int8": [-128, -1, 0, 5, 100, 127],
              "int16": [-32768, -300, 0, 7, 255, 32767]}[name]
    return lib.tensor(values, dtype=getattr(lib, name))


# (id, fn(lib, x)) with x a small-integer tensor holding extreme values of its dtype.
SMALL_INT_OPS = [
    ("add", lambda lib, x: x + x), ("add_300", lambda lib, x: x + 300),
    ("radd_minus_1", lambda lib, x: -1 + x), ("sub", lambda lib, x: x - x.flip(0)),
    ("rsub", lambda lib, x: 1 - x), ("mul_wraps", lambda lib, x: x * 3),
    ("mul_self", lambda lib, x: x * x), ("neg", lambda lib, x: -x), ("abs", lambda lib, x: x.abs()),
    ("div", lambda lib, x: x / 2), ("div_tensor", lambda lib, x: x / (x.flip(0) + 1)),
    ("floor_divide", lambda lib, x: x // 3), ("remainder", lambda lib, x: x % 7),
    ("pow", lambda lib, x: x ** 2), ("mul_float", lambda lib, x: x * 2.5),
    ("add_true", lambda lib, x: x + True), ("add_0d_int64", lambda lib, x: x + lib.tensor(300)),
    ("add_0d_float64", lambda lib, x: x + lib.tensor(0.5, dtype=lib.float64)),
    ("to_float_255", lambda lib, x: x.float() / 255),
    ("to_float32", lambda lib, x: x.to(lib.float32)),
    ("double", lambda lib, x: x.double()), ("long", lambda lib, x: x.long()),
    ("gt", lambda lib, x: x > 100), ("eq_wrapped", lambda lib, x: x == 255),
    ("le_tensor", lambda lib, x: x <= x.flip(0)), ("ne", lambda lib, x: x != 0),
    ("sum", lambda lib, x: x.sum()), ("sum_dim", lambda lib, x: x.reshape(2, 3).sum(1)),
    ("prod", lambda lib, x: x.prod()), ("cumsum", lambda lib, x: x.cumsum(0)),
    ("max", lambda lib, x: x.max()), ("min", lambda lib, x: x.min()),
    ("max_dim", lambda lib, x: x.reshape(2, 3).max(1)[0]), ("argmax", lambda lib, x: x.argmax()),
    ("argmin", lambda lib, x: x.argmin()), ("sort", lambda lib, x: x.sort()[0]),
    ("topk", lambda lib, x: x.topk(2)[0]), ("maximum", lambda lib, x: lib.maximum(x, x.flip(0))),
    ("clamp", lambda lib, x: x.clamp(1, 100)), ("where", lambda lib, x: lib.where(x > 3, x, 0)),
    ("where_float", lambda lib, x: lib.where(x > 3, x, 1.5)), ("invert", lambda lib, x: ~x),
    ("slice", lambda lib, x: x[1:4]), ("index_list", lambda lib, x: x[[0, 2, 2]]),
    ("mask", lambda lib, x: x[x > 5]), ("cat", lambda lib, x: lib.cat([x, x])),
    ("cat_with_int8", lambda lib, x: lib.cat([x, x.to(lib.int8)])),
    ("add_uint8_int8", lambda lib, x: x + x.to(lib.int8)),
    ("mul_uint8_bool", lambda lib, x: x * (x > 3)), ("stack", lambda lib, x: lib.stack([x, x])),
    ("sqrt", lambda lib, x: x.sqrt()), ("sign", lambda lib, x: x.sign()),
    ("unique", lambda lib, x: lib.unique(x)),
    ("gather", lambda lib, x: x.gather(0, lib.tensor([5, 0]))),
    ("pad", lambda lib, x: lib.nn.functional.pad(x, (1, 1))),
    ("isclose", lambda lib, x: lib.isclose(x, x)),
    ("matmul_float", lambda lib, x: x.float().reshape(2, 3) @ x.float().reshape(3, 2)),
]


def _result(lib, fn, x):
    try:
        out = fn(lib, x)
    except Exception as e:  # noqa: BLE001 - comparing which calls fail, not only results
        return ("error", type(e).__name__)
    return (str(out.dtype).split(".")[-1], out.tolist())


@needs_torch
@pytest.mark.filterwarnings("ignore:(divide by zero|invalid value):RuntimeWarning")
@pytest.mark.parametrize("name", SMALL_INTS)
@pytest.mark.parametrize("fn", [f for _, f in SMALL_INT_OPS], ids=[i for i, _ in SMALL_INT_OPS])
def test_small_integer_ops_match_torch(fn, name):
    """dtype and values, wrap-around included (uint8 200 * 3 is 88, as in C and PyTorch)."""
    ours = _result(gradlab, fn, _pair(gradlab, name))
    theirs = _result(torch, fn, _pair(torch, name))
    if ours[0] in ("float32", "float64") and ours[0] == theirs[0]:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    else:
        assert ours == theirs


def test_uint8_wraps_around():
    u = gradlab.tensor([0, 1, 200, 255], dtype=gradlab.uint8)
    assert (u + 300).tolist() == [44, 45, 244, 43]  # 300 is 44 in uint8
    assert (u - 1).tolist() == [255, 0, 199, 254]
    assert (-u).tolist() == [0, 255, 56, 1]
    assert (u * 2).tolist() == [0, 2, 144, 254]
    assert (u == 256 + 255).tolist() == [False, False, False, True]
    assert (gradlab.tensor([1], dtype=gradlab.int8) + 300).tolist() == [45]


def test_integer_reductions_widen_and_mean_refuses():
    u = gradlab.full((1000,), 255, dtype=gradlab.uint8)
    assert u.sum().dtype is gradlab.int64 and u.sum().item() == 255_000  # no wrap at 256
    assert u.cumsum(0)[-1].item() == 255_000 and u[:3].prod().item() == 255 ** 3
    assert gradlab.ones(3, dtype=gradlab.int16).sum().dtype is gradlab.int64
    with pytest.raises(RuntimeError,
                       match=r"mean: expected a floating point or complex tensor, got "
                             r"gradlab.uint8 .*x.float\(\).mean\(\)"):
        u.mean()
    assert u.float().mean().item() == 255.0


@needs_torch
def test_uint8_mean_is_an_error_in_torch_too():
    with pytest.raises(RuntimeError):
        torch.ones(2, dtype=torch.uint8).mean()


def test_uint8_image_pipeline():
    """What vision tutorials do: uint8 pixels, converted to float32 in [0, 1]."""
    images = gradlab.randint(0, 256, (4, 3, 8, 8), dtype=gradlab.uint8)
    x = images.float() / 255
    assert x.dtype is gradlab.float32 and 0 <= x.min().item() and x.max().item() <= 1
    np.testing.assert_allclose(x.numpy(), images.numpy() / np.float32(255), rtol=1e-6)
    flipped = images.flip(-1)
    assert flipped.dtype is gradlab.uint8 and images.element_size() == 1
    assert images.nbytes == 4 * 3 * 8 * 8


@pytest.mark.parametrize("name, dtype", [("ByteTensor", "uint8"), ("CharTensor", "int8"),
                                         ("ShortTensor", "int16")])
def test_legacy_small_integer_types(name, dtype):
    cls = getattr(gradlab, name)
    made = cls([[1, 0], [3, 2]])
    assert made.dtype is getattr(gradlab, dtype) and isinstance(made, cls)
    assert made.type() == f"gradlab.{name}" and cls(2, 3).shape == (2, 3)
    assert not isinstance(gradlab.tensor([1]), cls)
    if torch is not None:
        assert getattr(torch, name)([[1, 0], [3, 2]]).type() == f"torch.{name}"


@needs_torch
@pytest.mark.filterwarnings("ignore:Creating a tensor from a list of numpy.ndarrays")
@pytest.mark.parametrize("data", [
    [np.float32(1), 2], [np.float64(1), 2], [np.float16(1), 2.5], [1, np.float32(2.5)],
    [np.int32(1), 2], [np.uint8(3), True], [np.float16(1), np.float16(2)],
    [np.array([1, 2], dtype=np.int32), [3, 4]], [np.array([1.0], dtype=np.float32), [True]],
], ids=str)
def test_lists_with_numpy_values_get_torchs_dtype(data):
    """Each element keeps its own dtype (a Python float the default one), then they are
    promoted as tensors are: NumPy would make [np.float32(1), 2] float64."""
    ours, theirs = gradlab.tensor(data), torch.tensor(data)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
