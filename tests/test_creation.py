"""Making tensors: from data (with PyTorch's dtype inference), filled, ranges, random, *_like."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.oracle import needs_torch, torch

# --- dtype inference, as PyTorch does it ---------------------------------------------------------

INFERENCE = [
    ("python float", lambda lib: lib.tensor(1.5), "float32"),
    ("python int", lambda lib: lib.tensor(3), "int64"),
    ("python bool", lambda lib: lib.tensor(True), "bool"),
    ("ints and floats", lambda lib: lib.tensor([1, 2.5]), "float32"),
    ("bools and ints", lambda lib: lib.tensor([True, 2]), "int64"),
    ("empty list", lambda lib: lib.tensor([]), "float32"),
    ("nested", lambda lib: lib.tensor([[1, 2], [3, 4]]), "int64"),
    ("numpy float64", lambda lib: lib.tensor(np.array([1.0])), "float64"),
    ("numpy int32", lambda lib: lib.tensor(np.array([1], dtype=np.int32)), "int32"),
    ("numpy float16", lambda lib: lib.tensor(np.ones(2, np.float16)), "float16"),
    ("numpy bool", lambda lib: lib.tensor(np.array([True])), "bool"),
    ("numpy scalar", lambda lib: lib.tensor(np.float64(1.0)), "float64"),
    ("numpy int32 scalar", lambda lib: lib.tensor(np.int32(3)), "int32"),
    ("list of numpy scalars", lambda lib: lib.tensor([np.float64(1), np.float64(2)]),
     "float64"),
    ("list of numpy arrays", lambda lib: lib.tensor([np.ones(2), np.zeros(2)]), "float64"),
    ("explicit dtype", lambda lib: lib.tensor([1, 2], dtype=lib.float64), "float64"),
    ("as_tensor of floats", lambda lib: lib.as_tensor([1.5, 2]), "float32"),
    ("as_tensor of numpy", lambda lib: lib.as_tensor(np.arange(3, dtype=np.int32)), "int32"),
    ("numpy uint8 image", lambda lib: lib.tensor(np.zeros((2, 3, 3), np.uint8)), "uint8"),
    ("numpy int8", lambda lib: lib.tensor(np.array([-1], np.int8)), "int8"),
    ("numpy int16", lambda lib: lib.as_tensor(np.array([-1], np.int16)), "int16"),
    ("numpy uint8 scalar", lambda lib: lib.tensor(np.uint8(200)), "uint8"),
    ("list of numpy uint8 scalars", lambda lib: lib.tensor([np.uint8(1), np.uint8(2)]), "uint8"),
    ("explicit uint8", lambda lib: lib.tensor([0, 255], dtype=lib.uint8), "uint8"),
    ("explicit int8 from floats", lambda lib: lib.tensor([-1.5, 2.7], dtype=lib.int8), "int8"),
    ("uint8 takes -1 as 255", lambda lib: lib.tensor([-1, 255], dtype=lib.uint8), "uint8"),
    ("explicit short", lambda lib: lib.tensor([1], dtype=lib.short), "int16"),
]


@pytest.mark.parametrize("make, expected", [(m, e) for _, m, e in INFERENCE],
                         ids=[i for i, _, _ in INFERENCE])
def test_dtype_inference(make, expected):
    assert make(gradlab).dtype.name == expected


@needs_torch
@pytest.mark.filterwarnings("ignore:Creating a tensor from a list of numpy")
@pytest.mark.parametrize("make", [m for _, m, _ in INFERENCE], ids=[i for i, _, _ in INFERENCE])
def test_dtype_inference_matches_torch(make):
    t = make(torch)
    g = make(gradlab)
    assert g.dtype.name == str(t.dtype).replace("torch.", "")
    assert tuple(g.shape) == tuple(t.shape)
    assert g.tolist() == t.tolist()


def test_default_dtype_applies_to_python_floats():
    gradlab.set_default_dtype(gradlab.float64)
    try:
        assert gradlab.tensor(1.5).dtype is gradlab.float64
        assert gradlab.zeros(2).dtype is gradlab.float64
        assert gradlab.tensor(2).dtype is gradlab.int64
        assert gradlab.get_default_dtype() is gradlab.float64
    finally:
        gradlab.set_default_dtype(gradlab.float32)
    with pytest.raises(TypeError, match="only floating dtypes"):
        gradlab.set_default_dtype(gradlab.int64)


def test_tensor_copies_its_data():
    a = np.zeros(3)
    t = gradlab.tensor(a)
    a[0] = 5
    assert t.tolist() == [0.0, 0.0, 0.0]
    s = gradlab.ones(2)
    c = gradlab.tensor(s)
    assert c is not s and not np.shares_memory(c.numpy(), s.numpy())
    assert not gradlab.tensor(gradlab.ones(2, requires_grad=True)).requires_grad


def test_tensor_from_a_list_of_tensors():
    t = gradlab.tensor([gradlab.tensor(1.0), gradlab.tensor(2.0)])
    assert t.tolist() == [1.0, 2.0] and t.dtype is gradlab.float32


def test_tensor_options():
    t = gradlab.tensor([1.0, 2.0], dtype=gradlab.float64, device="cpu", requires_grad=True,
                       name="w")
    assert t.dtype is gradlab.float64 and t.device == "cpu" and t.requires_grad
    assert t.name == "w" and t.is_leaf


def test_ragged_lists_explain():
    with pytest.raises(ValueError, match=r"rectangular.*\[\[1\], \[1, 2\]\]"):
        gradlab.tensor([[1], [1, 2]])


def test_non_numbers_explain():
    with pytest.raises(TypeError, match=r"must be numbers"):
        gradlab.tensor([1, None])
    with pytest.raises(TypeError, match="no dtype for NumPy's <U1"):
        gradlab.tensor(np.array(["a"]))


def test_python_ints_beyond_int64_explain():
    with pytest.raises(RuntimeError, match=r"9223372036854775808 is out of range for int64"):
        gradlab.tensor(2 ** 63)
    assert gradlab.tensor(2 ** 63 - 1).item() == 2 ** 63 - 1


def test_as_tensor_shares_memory_when_it_can():
    a = np.zeros(3)
    t = gradlab.as_tensor(a)
    a[1] = 4.0
    assert t.tolist() == [0.0, 4.0, 0.0]
    converted = gradlab.as_tensor(a, dtype=gradlab.float32)  # a conversion must copy
    a[2] = 1.0
    assert converted.tolist() == [0.0, 4.0, 0.0]
    s = gradlab.ones(2)
    assert gradlab.as_tensor(s) is s
    assert gradlab.as_tensor(s, dtype=gradlab.float64).dtype is gradlab.float64


def test_from_numpy_shares_memory_both_ways():
    a = np.zeros(3, dtype=np.float32)
    t = gradlab.from_numpy(a)
    t.add_(1)
    assert a.tolist() == [1.0, 1.0, 1.0]
    a[0] = 5.0
    assert t.tolist() == [5.0, 1.0, 1.0]
    assert t.dtype is gradlab.float32


def test_from_numpy_keeps_strides():
    a = np.ones((3, 4)).T
    t = gradlab.from_numpy(a)
    assert t.shape == (4, 3) and t.stride() == (1, 4)


def test_from_numpy_errors():
    with pytest.raises(TypeError, match="expected a numpy.ndarray, got list"):
        gradlab.from_numpy([1.0])
    with pytest.raises(TypeError, match=r"uint16 has no gradlab equivalent.*astype"):
        gradlab.from_numpy(np.zeros(2, np.uint16))


NUMPY_INTEGERS = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64]


@needs_torch
@pytest.mark.parametrize("np_type", NUMPY_INTEGERS, ids=lambda t: t.__name__)
def test_numpy_integer_arrays_keep_their_dtype_like_torch(np_type):
    a = np.array([0, 1, 1, 0], dtype=np_type)
    theirs = str(torch.from_numpy(a).dtype).replace("torch.", "")
    for make in (gradlab.from_numpy, gradlab.tensor, gradlab.as_tensor):
        assert make(a).dtype.name == theirs, make.__name__
    shared = gradlab.from_numpy(a)
    a[0] = 1
    assert shared[0].item() == 1  # from_numpy shares memory for each of them


@pytest.mark.parametrize("np_type, widened", [(np.uint16, "int32"), (np.uint32, "int64"),
                                              (np.uint64, "int64")], ids=lambda v: str(v))
def test_wider_unsigned_numpy_arrays_widen_to_signed_types(np_type, widened):
    """PyTorch 2.x has uint16/32/64 (few ops accept them); gradlab copies into a signed type
    that holds every value (uint64 values of 2**63 and above wrap around)."""
    big = np.iinfo(np_type).max if np_type is not np.uint64 else 2 ** 62
    t = gradlab.tensor(np.array([0, big], dtype=np_type))
    assert t.dtype.name == widened and t.tolist() == [0, big]


@pytest.mark.parametrize("make, match", [
    (lambda: gradlab.tensor([300], dtype=gradlab.uint8),
     r"tensor: value cannot be converted to type uint8 without overflow: 300 is outside "
     r"gradlab.uint8's range 0..255"),
    (lambda: gradlab.tensor([[1, -256]], dtype=gradlab.uint8), r"-256 is outside"),
    (lambda: gradlab.tensor(128, dtype=gradlab.int8), r"128 is outside gradlab.int8's range "
                                                       r"-128..127"),
    (lambda: gradlab.tensor([1.0, 255.5], dtype=gradlab.uint8), r"255.5 is outside"),
    (lambda: gradlab.tensor([float("nan")], dtype=gradlab.int16), r"nan is outside"),
    (lambda: gradlab.tensor([2 ** 31], dtype=gradlab.int32), r"int32 without overflow"),
    (lambda: gradlab.ByteTensor([1, 256]), r"256 is outside gradlab.uint8's range"),
    (lambda: gradlab.full((2,), 300, dtype=gradlab.uint8), r"full: value cannot be converted"),
])
def test_python_numbers_that_overflow_an_integer_dtype_explain(make, match):
    with pytest.raises(RuntimeError, match=match):
        make()


@needs_torch
@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([300], dtype=lib.uint8), lambda lib: lib.tensor(128, dtype=lib.int8),
    lambda lib: lib.tensor([255.5], dtype=lib.uint8), lambda lib: lib.ByteTensor([256]),
    lambda lib: lib.full((2,), 300, dtype=lib.uint8),
    lambda lib: lib.randint(0, 300, (2,), dtype=lib.uint8),
    lambda lib: lib.randint(-1, 3, (2,), dtype=lib.uint8),
    lambda lib: lib.randint(0, 129, (2,), dtype=lib.int8),
])
def test_overflow_errors_are_where_torch_has_them(make):
    with pytest.raises(RuntimeError):
        make(torch)
    with pytest.raises(RuntimeError):
        make(gradlab)


def test_numpy_data_is_cast_without_the_overflow_check():
    """As in PyTorch: only Python numbers are checked; NumPy values wrap like a C cast."""
    assert gradlab.tensor(np.array([300, -1]), dtype=gradlab.uint8).tolist() == [44, 255]


# --- filled tensors and ranges -------------------------------------------------------------------

@pytest.mark.parametrize("fn, value", [(gradlab.zeros, 0.0), (gradlab.ones, 1.0),
                                       (gradlab.empty, None)])
def test_filled(fn, value):
    for t in (fn(2, 3), fn((2, 3)), fn([2, 3])):
        assert t.shape == (2, 3) and t.dtype is gradlab.float32
        if value is not None:
            assert t.tolist() == [[value] * 3] * 2
    assert fn(()).shape == ()
    assert fn(0, 2).shape == (0, 2)
    assert fn(2, dtype=gradlab.int64).dtype is gradlab.int64
    assert fn(2, requires_grad=True).requires_grad


def test_negative_sizes_explain():
    with pytest.raises(RuntimeError, match=r"negative dimension in size \(2, -1\)"):
        gradlab.zeros(2, -1)


SMALL_INTS = ["uint8", "int8", "int16"]


@needs_torch
@pytest.mark.parametrize("name", SMALL_INTS)
@pytest.mark.parametrize("make", [
    lambda lib, d: lib.zeros(2, 3, dtype=d), lambda lib, d: lib.ones(4, dtype=d),
    lambda lib, d: lib.empty(0, dtype=d), lambda lib, d: lib.full((2,), 7, dtype=d),
    lambda lib, d: lib.full((2,), -1, dtype=d), lambda lib, d: lib.full((3,), 2.7, dtype=d),
    lambda lib, d: lib.arange(5, dtype=d), lambda lib, d: lib.arange(120, 130, 3, dtype=d),
    lambda lib, d: lib.linspace(0, 100, 5, dtype=d), lambda lib, d: lib.eye(2, 3, dtype=d),
    lambda lib, d: lib.zeros_like(lib.ones(2, dtype=d)),
    lambda lib, d: lib.full_like(lib.ones(2), 9, dtype=d),
    lambda lib, d: lib.tensor([[1, 2], [3, 4]], dtype=d),
], ids=["zeros", "ones", "empty", "full", "full-1", "full2.7", "arange", "arange_step",
        "linspace", "eye", "zeros_like", "full_like", "tensor"])
def test_small_integer_creation_matches_torch(make, name):
    ours, theirs = make(gradlab, getattr(gradlab, name)), make(torch, getattr(torch, name))
    assert ours.dtype.name == name and str(theirs.dtype) == f"torch.{name}"
    assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("name", SMALL_INTS)
def test_small_integer_random_tensors(name):
    d = getattr(gradlab, name)
    t = gradlab.randint(0, 100, (400,), dtype=d)
    assert t.dtype is d and 0 <= t.numpy().min() and t.numpy().max() < 100
    assert gradlab.randint(0, 256 if name == "uint8" else 128, (3,), dtype=d).dtype is d
    assert sorted(gradlab.randperm(20, dtype=d).tolist()) == list(range(20))
    assert gradlab.randint_like(t, 5).dtype is d
    with pytest.raises(RuntimeError, match="draws floating point values"):
        gradlab.rand(2, dtype=d)


def test_full_infers_dtype_from_the_value():
    assert gradlab.full((2,), 3).dtype is gradlab.int64
    assert gradlab.full((2,), 3.0).dtype is gradlab.float32
    assert gradlab.full((2,), True).dtype is gradlab.bool
    assert gradlab.full((2, 2), 7.0).tolist() == [[7.0, 7.0], [7.0, 7.0]]
    assert gradlab.full((2,), 3, dtype=gradlab.float64).dtype is gradlab.float64


@needs_torch
@pytest.mark.parametrize("args", [(5,), (1, 4), (0, 1, 0.1), (1, 2.5, 0.5), (5, 0, -1),
                                  (-1.0, 1.0, 0.25), (5.0,), (0, 10, 3)])
def test_arange_matches_torch(args):
    ours, theirs = gradlab.arange(*args), torch.arange(*args)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_arange():
    assert gradlab.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert gradlab.arange(5).dtype is gradlab.int64
    assert gradlab.arange(1, 2.5, 0.5).tolist() == [1.0, 1.5, 2.0]
    assert gradlab.arange(5, 0, -2).tolist() == [5, 3, 1]
    assert gradlab.arange(3, dtype=gradlab.float64).dtype is gradlab.float64


def test_arange_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        gradlab.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match=r"never gets there.*arange\(5, 0, -1\)"):
        gradlab.arange(5, 0, 1)


def test_linspace_and_eye():
    t = gradlab.linspace(0, 1, 5)
    assert t.dtype is gradlab.float32 and t.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert gradlab.linspace(2, 3, 1).tolist() == [2.0]
    assert gradlab.eye(3).tolist() == np.eye(3).tolist()
    assert gradlab.eye(2, 3).shape == (2, 3)
    assert gradlab.eye(2, dtype=gradlab.int64).dtype is gradlab.int64


# --- random --------------------------------------------------------------------------------------

def test_rand_randn_shapes_dtypes_and_ranges():
    u = gradlab.rand(1000)
    assert u.dtype is gradlab.float32 and u.shape == (1000,)
    assert 0.0 <= u.numpy().min() and u.numpy().max() < 1.0
    assert abs(u.numpy().mean() - 0.5) < 0.05
    z = gradlab.randn(2000, dtype=gradlab.float64)
    assert z.dtype is gradlab.float64
    assert abs(z.numpy().mean()) < 0.1 and abs(z.numpy().std() - 1) < 0.1
    assert gradlab.rand((2, 3)).shape == (2, 3)
    for dtype in (gradlab.float16, gradlab.bfloat16):
        assert gradlab.randn(3, dtype=dtype).dtype is dtype
    assert gradlab.randn(2, requires_grad=True).requires_grad


def test_random_floats_refuse_integer_dtypes():
    with pytest.raises(RuntimeError, match=r"rand: .*int64 tensor can't hold.*randint"):
        gradlab.rand(2, dtype=gradlab.int64)
    with pytest.raises(RuntimeError, match=r"randn: .*int32"):
        gradlab.randn(2, dtype=gradlab.int32)
    with pytest.raises(RuntimeError, match="rand: "):
        gradlab.rand_like(gradlab.zeros(2, dtype=gradlab.int64))


def test_randint():
    t = gradlab.randint(3, 10, (500,))
    assert t.dtype is gradlab.int64 and t.shape == (500,)
    assert t.numpy().min() >= 3 and t.numpy().max() <= 9
    assert set(t.tolist()) == set(range(3, 10))  # 500 draws cover all 7 values
    assert gradlab.randint(10, (3,)).numpy().max() < 10
    assert gradlab.randint(10, size=(2, 2)).shape == (2, 2)
    assert gradlab.randint(0, 2, (3,), dtype=gradlab.float32).dtype is gradlab.float32


def test_randint_errors():
    with pytest.raises(RuntimeError, match=r"randint: the range \[low, high\) = \[0, 300\) is "
                                           r"out of bounds for gradlab.uint8, which holds 0..255"):
        gradlab.randint(0, 300, (2,), dtype=gradlab.uint8)
    with pytest.raises(RuntimeError, match=r"\[5, 5\) is empty"):
        gradlab.randint(5, 5, (3,))
    with pytest.raises(TypeError, match="size is required"):
        gradlab.randint(0, 10)


def test_normal():
    z = gradlab.normal(2.0, 3.0, (4000,))
    assert z.shape == (4000,) and z.dtype is gradlab.float32
    assert abs(z.numpy().mean() - 2) < 0.2 and abs(z.numpy().std() - 3) < 0.2
    m = gradlab.normal(gradlab.tensor([0.0, 100.0]), 0.001)
    np.testing.assert_allclose(m.numpy(), [0.0, 100.0], atol=0.01)
    s = gradlab.normal(gradlab.zeros(3), gradlab.ones(3))
    assert s.shape == (3,)
    with pytest.raises(RuntimeError, match="std must be >= 0"):
        gradlab.normal(0.0, -1.0, (2,))
    with pytest.raises(TypeError, match="give size"):
        gradlab.normal(0.0, 1.0)


def test_randperm():
    p = gradlab.randperm(10)
    assert p.dtype is gradlab.int64 and sorted(p.tolist()) == list(range(10))


# --- *_like --------------------------------------------------------------------------------------

LIKE = [
    (gradlab.zeros_like, (), lambda a: (a == 0).all()),
    (gradlab.ones_like, (), lambda a: (a == 1).all()),
    (gradlab.empty_like, (), lambda a: True),
    (gradlab.full_like, (7,), lambda a: (a == 7).all()),
    (gradlab.rand_like, (), lambda a: ((0 <= a) & (a < 1)).all()),
    (gradlab.randn_like, (), lambda a: np.isfinite(a).all()),
]


@pytest.mark.parametrize("fn, args, check", LIKE, ids=[f[0].__name__ for f in LIKE])
def test_like_keeps_shape_dtype_and_device(fn, args, check):
    src = gradlab.zeros(2, 3, dtype=gradlab.float64)
    out = fn(src, *args)
    assert out.shape == (2, 3) and out.dtype is gradlab.float64 and out.device == src.device
    assert check(out.numpy())
    assert not out.requires_grad
    assert fn(src, *args, dtype=gradlab.float32).dtype is gradlab.float32
    assert fn(src, *args, requires_grad=True).requires_grad


def test_integer_likes():
    src = gradlab.zeros(2, 3, dtype=gradlab.int64)
    assert gradlab.zeros_like(src).dtype is gradlab.int64
    assert gradlab.full_like(src, 4).tolist() == [[4] * 3] * 2
    r = gradlab.randint_like(src, 5)
    assert r.dtype is gradlab.int64 and r.shape == (2, 3) and r.numpy().max() < 5
    assert gradlab.randint_like(src, 2, 4).numpy().min() >= 2


def test_python_floats_with_an_explicit_dtype_are_not_rounded_through_the_default():
    assert gradlab.tensor([0.3], dtype=gradlab.float64).item() == 0.3
    assert gradlab.tensor(0.1, dtype=gradlab.float64).item() == 0.1
    assert gradlab.tensor([0.3]).dtype == gradlab.float32  # without dtype: the default


# --- multinomial ---------------------------------------------------------------------------

def test_multinomial_with_replacement_draws_each_category_by_its_weight():
    weights = gradlab.tensor([1.0, 0.0, 3.0, 6.0])  # not normalised: shares 0.1, 0, 0.3, 0.6
    draws = gradlab.multinomial(weights, 20000, replacement=True)
    assert draws.dtype is gradlab.int64 and tuple(draws.shape) == (20000,)
    freq = np.bincount(draws.numpy(), minlength=4) / 20000
    assert freq[1] == 0.0  # weight 0: never drawn
    np.testing.assert_allclose(freq, [0.1, 0.0, 0.3, 0.6], atol=0.015)


def test_multinomial_without_replacement_matches_drawing_one_at_a_time():
    p = np.array([0.5, 0.3, 0.2])
    draws = gradlab.tensor(p).expand(20000, 3).multinomial(2).numpy()  # the Tensor method
    assert draws.shape == (20000, 2) and (draws[:, 0] != draws[:, 1]).all()
    # P(second = j) = sum over i != j of p_i * p_j / (1 - p_i)
    second = [sum(p[i] * p[j] / (1 - p[i]) for i in range(3) if i != j) for j in range(3)]
    np.testing.assert_allclose(np.bincount(draws[:, 0], minlength=3) / 20000, p, atol=0.015)
    np.testing.assert_allclose(np.bincount(draws[:, 1], minlength=3) / 20000, second,
                               atol=0.015)


def test_multinomial_rows_are_separate_distributions():
    weights = gradlab.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], dtype=gradlab.float64)
    assert gradlab.multinomial(weights, 4, True).tolist() == [[2] * 4, [0] * 4]
    assert gradlab.multinomial(weights, 1).tolist() == [[2], [0]]
    # Without replacement, zero-weight categories come only after the others ran out.
    assert gradlab.multinomial(gradlab.tensor([0.0, 5.0, 0.0]), 3)[0].item() == 1
    assert sorted(gradlab.multinomial(gradlab.tensor([0.0, 5.0, 0.0]), 3).tolist()) == [0, 1, 2]
    assert tuple(gradlab.multinomial(gradlab.ones(0, 3), 2).shape) == (0, 2)


def test_multinomial_is_reproducible_under_seeds_and_generators():
    weights = gradlab.tensor([0.2, 0.3, 0.5])
    gradlab.manual_seed(7)
    first = gradlab.multinomial(weights, 50, True).tolist()
    gradlab.manual_seed(7)
    assert gradlab.multinomial(weights, 50, True).tolist() == first
    gen = gradlab.Generator().manual_seed(3)
    mine = gradlab.multinomial(weights, 3, generator=gen).tolist()
    gradlab.multinomial(weights, 3)  # the default generator doesn't disturb gen's stream
    assert gradlab.multinomial(weights, 3, generator=gen.manual_seed(3)).tolist() == mine
    assert sorted(mine) == [0, 1, 2]


@needs_torch
def test_multinomial_shapes_dtypes_and_half_inputs_match_torch():
    for weights, n, replacement in (([0.2, 0.8], 1, False), ([[1.0, 2.0], [3.0, 4.0]], 5, True),
                                    ([1.0, 1.0, 1.0], 3, False)):
        for dtype in ("float32", "float64", "float16"):
            ours = gradlab.multinomial(gradlab.tensor(weights, dtype=getattr(gradlab, dtype)),
                                       n, replacement)
            theirs = torch.multinomial(torch.tensor(weights, dtype=getattr(torch, dtype)), n,
                                       replacement)
            assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype is gradlab.int64


@pytest.mark.parametrize("weights, n, replacement, error, match", [
    ([1.0, -1.0], 1, True, RuntimeError, r"contains either `inf`, `nan` or element < 0 "
                                         r"\(row 0"),
    ([[1.0, 1.0], [1.0, float("inf")]], 1, True, RuntimeError, r"element < 0 \(row 1"),
    ([1.0, float("nan")], 1, False, RuntimeError, r"must be finite and >= 0"),
    ([[1.0, 0.0], [0.0, 0.0]], 1, True, RuntimeError,
     r"sum of probabilities <= 0\): row 1 .* no positive weight"),
    ([1.0, 1.0], 3, False, RuntimeError,
     r"n_sample > prob_dist.size\(-1\) .*3 draws from 2 categories. Fix: replacement=True"),
    ([1.0, 1.0], 0, True, RuntimeError, r"cannot sample n_sample <= 0"),
    ([1, 1], 1, True, RuntimeError, r"must be floating point, got gradlab.int64.*float\(\)"),
    ([[[1.0]]], 1, True, RuntimeError, r"must be 1-D .* or 2-D .*got shape \(1, 1, 1\)"),
    (1.0, 1, True, RuntimeError, r"got shape \(\)"),
    ([1.0, 1.0], 1.0, True, TypeError, r"num_samples must be an int, got float"),
])
def test_multinomial_errors_teach(weights, n, replacement, error, match):
    with pytest.raises(error, match=match):
        gradlab.multinomial(gradlab.tensor(weights), n, replacement)


def test_multinomial_needs_a_tensor_and_a_generator_of_its_device():
    with pytest.raises(TypeError, match=r"multinomial: input must be a Tensor of weights"):
        gradlab.multinomial([0.5, 0.5], 1)
    if gradlab.cuda.is_available():
        with pytest.raises(RuntimeError, match=r"generator is for cuda.*same device"):
            gradlab.multinomial(gradlab.ones(2), 1, generator=gradlab.Generator("cuda"))

