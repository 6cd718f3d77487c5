"""PyTorch's top-level odds and ends: accelerator, backends.mps/cudnn, compile, threads, RNG
state, the legacy tensor types and Variable."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradlab
from gradlab.autograd.variable import Variable
from tests.oracle import needs_torch, torch

# --- devices ----------------------------------------------------------------------------------


def test_accelerator_agrees_with_cuda():
    has_gpu = gradlab.cuda.is_available()
    assert gradlab.accelerator.is_available() is has_gpu
    assert gradlab.accelerator.device_count() == gradlab.cuda.device_count()
    current = gradlab.accelerator.current_accelerator()
    assert current == (gradlab.device("cuda") if has_gpu else None)


def test_quickstart_device_line_runs():
    torch_ = gradlab
    device = torch_.accelerator.current_accelerator().type \
        if torch_.accelerator.is_available() else "cpu"
    assert device == ("cuda" if gradlab.cuda.is_available() else "cpu")
    assert gradlab.ones(2, device=device).device.type == device


def test_accelerator_set_device_index_only_allows_zero():
    gradlab.accelerator.set_device_index(0)
    assert gradlab.accelerator.current_device_index() == 0
    with pytest.raises(RuntimeError, match=r"set_device_index\(1\): gradlab has no "
                                           r"current-device state.*x.to\('cuda:1'\)"):
        gradlab.accelerator.set_device_index(1)


def test_mps_is_never_available():
    assert gradlab.backends.mps.is_available() is False
    assert gradlab.backends.mps.is_built() is False
    device = "cuda" if gradlab.cuda.is_available() else \
        "mps" if gradlab.backends.mps.is_available() else "cpu"
    assert device != "mps"


def test_cudnn_flags_are_settable_and_keep_pytorchs_defaults():
    cudnn = gradlab.backends.cudnn
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (True, False, False)
    if torch is not None:
        assert cudnn.benchmark == torch.backends.cudnn.benchmark
        assert cudnn.deterministic == torch.backends.cudnn.deterministic
    old = cudnn.benchmark
    try:
        cudnn.benchmark = True
        assert gradlab.backends.cudnn.benchmark is True
    finally:
        cudnn.benchmark = old
    assert cudnn.is_available() is False and cudnn.version() is None


# --- compile ----------------------------------------------------------------------------------

def test_compile_returns_the_model_unchanged():
    model = gradlab.nn.Linear(2, 3)
    assert gradlab.compile(model) is model
    assert gradlab.compile(model, mode="reduce-overhead", fullgraph=True) is model


def test_compile_as_a_decorator_with_and_without_arguments():
    @gradlab.compile
    def double(x):
        return x * 2

    @gradlab.compile(mode="max-autotune", dynamic=True)
    def triple(x):
        return x * 3

    assert double(gradlab.ones(2)).tolist() == [2.0, 2.0]
    assert triple(gradlab.ones(1)).tolist() == [3.0]
    assert double.__name__ == "double" and triple.__name__ == "triple"
    assert gradlab.compiler.is_compiling() is False


@pytest.mark.parametrize("kwargs, match", [
    ({"mode": "fastest"}, r"compile: unrecognized mode='fastest'"),
    ({"mode": "default", "options": {}}, r"compile: either mode or options"),
])
def test_compile_checks_its_arguments(kwargs, match):
    with pytest.raises(RuntimeError, match=match):
        gradlab.compile(lambda x: x, **kwargs)


def test_compile_refuses_what_cannot_be_called():
    with pytest.raises(RuntimeError, match=r"compile: expected a function or an nn.Module"):
        gradlab.compile(3)


# --- threads ----------------------------------------------------------------------------------

def test_set_num_threads_sets_the_blas_pool():
    before = gradlab.get_num_threads()
    try:
        gradlab.set_num_threads(2)
        assert gradlab.get_num_threads() == 2
        gradlab.set_num_threads(1)
        assert gradlab.get_num_threads() == 1
    finally:
        gradlab.set_num_threads(before)
    a = gradlab.randn(64, 64)
    np.testing.assert_allclose((a @ a).numpy(), a.numpy() @ a.numpy(), rtol=1e-5)


@pytest.mark.parametrize("value, error, match", [
    (0, RuntimeError, r"set_num_threads: the number of threads must be positive, got 0"),
    (2.0, TypeError, r"set_num_threads: expected an int, got float"),
])
def test_set_num_threads_errors(value, error, match):
    with pytest.raises(error, match=match):
        gradlab.set_num_threads(value)


# --- RNG state --------------------------------------------------------------------------------

def test_rng_state_round_trip_replays_the_stream():
    gradlab.rand(7)  # move the stream somewhere that isn't the start
    state = gradlab.get_rng_state()
    first = (gradlab.randn(5), gradlab.rand(3), gradlab.randint(0, 100, (4,)))
    gradlab.set_rng_state(state)
    second = (gradlab.randn(5), gradlab.rand(3), gradlab.randint(0, 100, (4,)))
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_rng_state_is_a_copy_not_a_live_view():
    state = gradlab.get_rng_state()
    copy = state.clone()
    gradlab.randn(10)
    assert state.tolist() == copy.tolist()
    assert state.dtype is gradlab.int64 and state.shape == (14,)
    assert gradlab.get_rng_state().tolist() != state.tolist()


def test_rng_state_survives_a_reseed_in_between():
    gradlab.manual_seed(3)
    state = gradlab.get_rng_state()
    expected = gradlab.rand(4).tolist()
    gradlab.manual_seed(99)
    gradlab.set_rng_state(state)
    assert gradlab.rand(4).tolist() == expected
    assert gradlab.initial_seed() == 3


@pytest.mark.parametrize("bad, match", [
    (lambda: gradlab.zeros(5056), r"set_rng_state: expected the int64 tensor of 14 entries .*"
     r"got a gradlab.float32 tensor of shape \(5056,\)"),
    (lambda: b"\x00" * 14, r"set_rng_state: expected .* got a bytes"),
    (lambda: gradlab.zeros(14, dtype=gradlab.int64), r"set_rng_state: this tensor is not a "
     r"state from gradlab.get_rng_state\(\)"),
])
def test_set_rng_state_rejects_other_states(bad, match):
    with pytest.raises(RuntimeError, match=match):
        gradlab.set_rng_state(bad())


# --- legacy tensor types ----------------------------------------------------------------------

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
          "IntTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_constructors_match_torch(name):
    cls = getattr(gradlab, name)
    data = [[1, 0], [3, 2]]
    made = cls(data)
    assert made.dtype is cls.dtype and isinstance(made, gradlab.Tensor)
    assert cls(2, 3).shape == (2, 3) and cls(2, 3).dtype is cls.dtype
    assert cls().shape == (0,) and cls(gradlab.Size([4])).shape == (4,)
    assert cls(made) is made
    if torch is not None:
        theirs = getattr(torch, name)(data)
        np.testing.assert_array_equal(made.float().numpy(), theirs.float().numpy())
        assert made.type() == theirs.type().replace("torch", "gradlab")


def test_legacy_long_tensor_truncates_floats_like_torch():
    assert gradlab.LongTensor([1.7, -2.5]).tolist() == [1, -2]
    assert gradlab.LongTensor(np.array([3.9])).tolist() == [3]


@pytest.mark.parametrize("make, name, expected", [
    (lambda: gradlab.ones(2), "FloatTensor", True),
    (lambda: gradlab.ones(2), "DoubleTensor", False),
    (lambda: gradlab.ones(2, dtype=gradlab.float64), "DoubleTensor", True),
    (lambda: gradlab.tensor([1, 2]), "LongTensor", True),
    (lambda: gradlab.tensor([1, 2]), "IntTensor", False),
    (lambda: gradlab.tensor([True]), "BoolTensor", True),
    (lambda: gradlab.nn.Parameter(gradlab.ones(2)), "FloatTensor", True),
    (lambda: [1.0], "FloatTensor", False),
])
def test_isinstance_checks_dtype_on_the_cpu(make, name, expected):
    assert isinstance(make(), getattr(gradlab, name)) is expected


@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.FloatTensor(gradlab.tensor([1, 2])), TypeError,
     r"FloatTensor: expected a tensor of dtype gradlab.float32 on the CPU, got gradlab.int64"),
    (lambda: gradlab.FloatTensor(2.5), TypeError,
     r"FloatTensor: data must be a sequence of numbers \(got float\); for one value write "
     r"FloatTensor\(\[v\]\)"),
    (lambda: gradlab.FloatTensor(2, "a"), TypeError, r"FloatTensor: expected integer sizes"),
    (lambda: gradlab.FloatTensor(-1), RuntimeError, r"FloatTensor: a size can't be negative"),
    (lambda: gradlab.LongTensor([1], device="cuda"), RuntimeError,
     r"LongTensor: the legacy types make CPU tensors, but device='cuda' was passed"),
])
def test_legacy_constructor_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- Variable ---------------------------------------------------------------------------------

def test_variable_is_a_detached_alias_with_requires_grad_as_asked():
    x = gradlab.ones(2, requires_grad=True) * 2
    v = Variable(x)
    assert isinstance(v, gradlab.Tensor) and v is not x
    assert v.grad_fn is None and not v.requires_grad
    w = Variable(x.detach(), requires_grad=True)
    assert w.requires_grad and w.grad_fn is None
    (w * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]
    x.detach().add_(1)  # shares memory with x, as PyTorch's Variable does
    assert v.tolist() == [3.0, 3.0]


def test_every_tensor_is_a_variable_and_nothing_warns():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v = Variable(gradlab.ones(2))
    assert isinstance(gradlab.ones(1), Variable) and isinstance(v, Variable)
    assert not isinstance([1.0], Variable)
    assert Variable().shape == (0,)


def test_variable_volatile_warns_and_list_data_is_refused():
    with pytest.warns(UserWarning, match=r"volatile was removed .* gradlab.no_grad"):
        Variable(gradlab.ones(1), volatile=True)
    with pytest.raises(TypeError, match=r"Variable data has to be a tensor, but got list"):
        Variable([1, 2])


@needs_torch
def test_variable_behaves_like_torchs():
    for lib, var in ((gradlab, Variable), (torch, torch.autograd.Variable)):
        x = lib.ones(2, requires_grad=True) * 2
        v = var(x, requires_grad=True)
        assert v.requires_grad and v.grad_fn is None and v is not x


# --- gradlab.cuda: device name and the memory cache --------------------------------------------

def test_cuda_get_device_name_without_a_gpu_says_how_to_get_one():
    if gradlab.cuda.is_available():
        name = gradlab.cuda.get_device_name()
        assert isinstance(name, str) and name == gradlab.cuda.get_device_name(0)
        return
    for device in (None, 0, "cuda:0", gradlab.device("cuda", 0)):
        with pytest.raises(RuntimeError, match=r"CUDA is not available.*device='cpu'"):
            gradlab.cuda.get_device_name(device)


def test_cuda_get_device_name_refuses_a_cpu_device():
    with pytest.raises(ValueError, match=r"get_device_name: expected a cuda device, but got cpu"):
        gradlab.cuda.get_device_name("cpu")


def test_cuda_empty_cache_keeps_live_tensors():
    device = "cuda" if gradlab.cuda.is_available() else "cpu"
    x = gradlab.arange(4.0, device=device)
    allocated = gradlab.cuda.memory_allocated()
    assert gradlab.cuda.empty_cache() is None
    assert gradlab.cuda.memory_allocated() == allocated  # only cached, unused blocks go
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
