"""Questions about tensors and dtypes (is_signed, storage_offset, finfo, can_cast ...) and the
global switches (default device, matmul precision, determinism), compared with PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.oracle import needs_torch, torch

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_dtype_predicates_match_torch(dtype):
    ours = gradlab.zeros(2, dtype=getattr(gradlab, dtype))
    theirs = torch.zeros(2, dtype=getattr(torch, dtype))
    for name in ("is_floating_point", "is_signed", "is_complex", "is_inference"):
        assert getattr(gradlab, name)(ours) == getattr(torch, name)(theirs), name
        assert getattr(ours, name)() == getattr(theirs, name)(), f"Tensor.{name}"
    assert gradlab.typename(ours) == torch.typename(theirs).replace("torch.", "gradlab.")


def test_shape_predicates():
    x = gradlab.zeros(2, 3)
    assert x.ndimension() == 2 and gradlab.zeros(()).ndimension() == 0
    assert gradlab.is_same_size(x, gradlab.ones(2, 3)) and x.is_same_size(gradlab.ones(2, 3))
    assert not gradlab.is_same_size(x, gradlab.ones(3, 2))
    assert not gradlab.is_same_size(gradlab.ones(2), gradlab.ones(2, 1))  # no broadcasting
    assert x.is_cpu and not x.is_cuda


@pytest.mark.parametrize("value, expected", [([0.5], True), (0.0, False), ([[0]], False),
                                             (True, True), ([-3], True)])
def test_is_nonzero_reads_the_one_element(value, expected):
    assert gradlab.is_nonzero(gradlab.tensor(value)) is expected
    assert gradlab.tensor(value).is_nonzero() is expected


@pytest.mark.parametrize("value, match", [([], "with no values"), ([1, 2], r"with more than one "
                                                                              r"value \(2\)")])
def test_is_nonzero_errors_teach(value, match):
    with pytest.raises(RuntimeError, match=rf"is_nonzero: Boolean value of Tensor {match} is "
                                           r"ambiguous.*Fix"):
        gradlab.is_nonzero(gradlab.tensor(value))


def test_predicates_refuse_non_tensors():
    with pytest.raises(TypeError, match=r"is_floating_point\(\): argument 'input' \(position 1\) "
                                        r"must be Tensor, not list"):
        gradlab.is_floating_point([1.0])
    with pytest.raises(TypeError, match=r"is_same_size\(\): argument 'other' \(position 2\)"):
        gradlab.is_same_size(gradlab.ones(1), 1)


def test_is_inference_is_false_even_inside_inference_mode():
    with gradlab.inference_mode():
        t = gradlab.ones(2) * 2
    assert gradlab.is_inference(t) is False and t.is_inference() is False


@needs_torch
@pytest.mark.parametrize("view", [
    lambda lib: lib.arange(10)[3:], lambda lib: lib.arange(10).view(2, 5)[1],
    lambda lib: lib.arange(10).view(2, 5)[:, 2], lambda lib: lib.arange(24).view(2, 3, 4)[1, 1:],
    lambda lib: lib.arange(10), lambda lib: lib.arange(10)[3:][2:].t(),
    lambda lib: lib.arange(12).view(3, 4).narrow(1, 1, 2).transpose(0, 1),
    lambda lib: lib.arange(10)[3:] + 1, lambda lib: lib.arange(10)[4:].unsqueeze(0)[0, 1:],
])
def test_storage_offset_matches_torch(view):
    assert view(gradlab).storage_offset() == view(torch).storage_offset()


@pytest.mark.parametrize("obj, expected", [(3, "int"), ("x", "str"), (None, "NoneType"),
                                           (gradlab.nn.Linear, "gradlab.nn.modules.linear.Linear"),
                                           (gradlab.ones(1, dtype=gradlab.int64),
                                            "gradlab.LongTensor")])
def test_typename(obj, expected):
    assert gradlab.typename(obj) == expected


def test_typename_of_an_instance_names_its_class():
    assert gradlab.typename(gradlab.nn.Linear(1, 1)) == "gradlab.nn.modules.linear.Linear"


# --- finfo, iinfo, can_cast ------------------------------------------------------------------

FINFO_FIELDS = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS)
def test_finfo_matches_torch_field_by_field_and_in_repr(dtype):
    ours, theirs = gradlab.finfo(getattr(gradlab, dtype)), torch.finfo(getattr(torch, dtype))
    for field in FINFO_FIELDS:
        assert getattr(ours, field) == getattr(theirs, field), field
    assert repr(ours) == repr(theirs)


def test_finfo_defaults_and_names():
    assert gradlab.finfo() == gradlab.finfo(gradlab.float32)
    assert gradlab.finfo(gradlab.float64).eps == 2.0**-52
    assert gradlab.finfo("bfloat16").bits == 16 and gradlab.finfo(gradlab.half).max == 65504.0
    gradlab.set_default_dtype(gradlab.float64)
    try:
        assert gradlab.finfo().dtype == "float64"
    finally:
        gradlab.set_default_dtype(gradlab.float32)


@needs_torch
@pytest.mark.parametrize("dtype", INTS)
def test_iinfo_matches_torch(dtype):
    ours, theirs = gradlab.iinfo(getattr(gradlab, dtype)), torch.iinfo(getattr(torch, dtype))
    assert (ours.bits, ours.min, ours.max, ours.dtype) == \
        (theirs.bits, theirs.min, theirs.max, theirs.dtype)
    assert repr(ours) == repr(theirs) and ours == gradlab.iinfo(getattr(gradlab, dtype))


@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.finfo(gradlab.int32), TypeError,
     r"finfo: requires a floating point dtype, got gradlab.int32. Use gradlab.iinfo"),
    (lambda: gradlab.iinfo(gradlab.float32), TypeError,
     r"iinfo: gradlab.float32 is not an integer dtype. Use gradlab.finfo"),
    (lambda: gradlab.iinfo(gradlab.bool), TypeError, r"iinfo: gradlab.bool is not an integer"),
    (lambda: gradlab.finfo("complex32"), TypeError, r"finfo: expected a gradlab dtype"),
    (lambda: gradlab.can_cast(gradlab.float32, 3.5), TypeError, r"can_cast: expected a gradlab"),
])
def test_type_info_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()


@needs_torch
def test_can_cast_matches_torch_for_every_pair():
    for a in DTYPES:
        for b in DTYPES:
            assert gradlab.can_cast(getattr(gradlab, a), getattr(gradlab, b)) == \
                torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)


@needs_torch
def test_promote_and_result_type_match_torch_for_every_pair():
    for a in DTYPES:
        for b in DTYPES:
            ours = gradlab.promote_types(getattr(gradlab, a), getattr(gradlab, b))
            assert ours.name == str(torch.promote_types(getattr(torch, a),
                                                        getattr(torch, b)))[6:], (a, b)


# --- global switches -------------------------------------------------------------------------


@needs_torch
def test_defaults_match_torch():
    assert gradlab.get_default_device() == "cpu" == torch.get_default_device().type
    assert gradlab.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    assert gradlab.are_deterministic_algorithms_enabled() == \
        torch.are_deterministic_algorithms_enabled()
    assert gradlab.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()


def test_switches_are_remembered():
    try:
        gradlab.set_float32_matmul_precision("medium")
        assert gradlab.get_float32_matmul_precision() == "medium"
        with pytest.warns(UserWarning, match="'bad' is not one of 'highest', 'high', or "
                                             "'medium'; the call has no effect"):
            gradlab.set_float32_matmul_precision("bad")
        assert gradlab.get_float32_matmul_precision() == "medium"
        gradlab.use_deterministic_algorithms(True, warn_only=True)
        assert gradlab.are_deterministic_algorithms_enabled()
        assert gradlab.is_deterministic_algorithms_warn_only_enabled()
        assert gradlab.get_deterministic_debug_mode() == 1
        gradlab.set_deterministic_debug_mode("error")
        assert gradlab.get_deterministic_debug_mode() == 2
        assert not gradlab.is_deterministic_algorithms_warn_only_enabled()
        gradlab.set_num_interop_threads(3)
        assert gradlab.get_num_interop_threads() == 3
    finally:
        gradlab.set_float32_matmul_precision("highest")
        gradlab.use_deterministic_algorithms(False)
        gradlab.set_num_interop_threads(1)
    assert gradlab.get_deterministic_debug_mode() == 0


def test_deterministic_mode_changes_no_result():
    x = gradlab.randn(50, 50, generator=gradlab.Generator().manual_seed(3))
    before = (x @ x).sum(0).tolist()
    gradlab.use_deterministic_algorithms(True)
    try:
        assert (x @ x).sum(0).tolist() == before
    finally:
        gradlab.use_deterministic_algorithms(False)


@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.use_deterministic_algorithms(1), TypeError,
     "use_deterministic_algorithms: expected a bool, got int"),
    (lambda: gradlab.set_deterministic_debug_mode("loud"), RuntimeError,
     "set_deterministic_debug_mode: invalid mode 'loud'"),
    (lambda: gradlab.set_deterministic_debug_mode(5), RuntimeError, "invalid mode 5"),
    (lambda: gradlab.set_num_interop_threads(0), RuntimeError,
     "set_num_interop_threads: the number of threads must be positive, got 0"),
    (lambda: gradlab.set_num_interop_threads(2.0), TypeError,
     "set_num_interop_threads: expected an int, got float"),
])
def test_switch_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.fixture
def default_cuda():
    gradlab.set_default_device("cuda")
    yield
    gradlab.set_default_device(None)


@pytest.mark.parametrize("make", [
    lambda: gradlab.zeros(2), lambda: gradlab.tensor([1.0]), lambda: gradlab.arange(3),
    lambda: gradlab.randn(2), lambda: gradlab.full((2,), 1.0), lambda: gradlab.linspace(0, 1, 3),
    lambda: gradlab.eye(2), lambda: gradlab.randint(0, 3, (2,)), lambda: gradlab.asarray([1, 2]),
    lambda: gradlab.nn.Linear(2, 2).weight,
], ids=["zeros", "tensor", "arange", "randn", "full", "linspace", "eye", "randint", "asarray",
        "Linear"])
def test_set_default_device_routes_every_factory_there(default_cuda, make):
    """With the default set to CUDA, tensors made without device= go there: on a GPU they
    are CUDA tensors; without one, making them raises the CUDA error (so they were sent)."""
    assert str(gradlab.get_default_device()) == "cuda:0"
    if gradlab.cuda.is_available():
        assert make().device.type == "cuda"
    else:
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            make()


def test_an_explicit_device_and_from_numpy_ignore_the_default(default_cuda):
    assert gradlab.zeros(2, device="cpu").device.type == "cpu"
    assert gradlab.from_numpy(np.zeros(2)).device.type == "cpu"
    gradlab.set_default_device(None)
    assert gradlab.zeros(2).device.type == "cpu" and str(gradlab.get_default_device()) == "cpu"
