"""Devices: parsing and identity, and the errors that say what to do when CUDA is missing."""

from __future__ import annotations

import importlib.util
import sys
import types

import numpy as np
import pytest

import gradlab
from gradlab.backends import get_backend
from gradlab.storage import Storage


def test_device_parsing_and_identity():
    d = gradlab.device("cuda:1")
    assert d.type == "cuda" and d.index == 1
    assert d is gradlab.device("cuda", 1) is gradlab.device(1) is gradlab.device(d)
    assert repr(d) == "device(type='cuda', index=1)" and str(d) == "cuda:1"
    assert d == "cuda:1" and d != "cuda:0" and d != gradlab.device("cuda:0")
    assert gradlab.device("cuda") is gradlab.device("cuda:0")  # gradlab's default index is 0
    cpu = gradlab.device("cpu")
    assert cpu.index is None and repr(cpu) == "device(type='cpu')" and str(cpu) == "cpu"
    assert cpu == "cpu" and cpu != "cuda" and cpu != 3 and cpu != "not a device"
    assert {gradlab.device("cuda:1"): "x"}[gradlab.device("cuda", 1)] == "x"


def test_device_errors():
    with pytest.raises(RuntimeError, match="unknown device type 'tpu'.*'cpu' and 'cuda'"):
        gradlab.device("tpu")
    with pytest.raises(ValueError, match=r"bad index in 'cuda:x'.*'cuda:0'"):
        gradlab.device("cuda:x")
    with pytest.raises(ValueError, match="index given twice"):
        gradlab.device("cuda:1", 2)
    with pytest.raises(ValueError, match="index must be >= 0, got -1"):
        gradlab.device("cuda", -1)
    with pytest.raises(TypeError, match="expected a string like 'cpu' or 'cuda:0'"):
        gradlab.device(1.5)


def test_cuda_queries_agree():
    assert gradlab.cuda.is_available() == (gradlab.cuda.device_count() > 0)
    assert gradlab.cuda.current_device() == 0
    if importlib.util.find_spec("cupy") is None:  # as on the machines without a GPU
        assert gradlab.cuda.is_available() is False and gradlab.cuda.device_count() == 0


@pytest.fixture
def no_gpu(monkeypatch):
    """Make CUDA look absent even on a GPU machine; returns a function choosing why."""
    backend = get_backend("cuda")
    monkeypatch.setattr(backend, "_cupy", None)
    monkeypatch.setattr(backend, "_count", None)
    for index in (0, 1):
        monkeypatch.setattr(gradlab.device("cuda", index), "backend", None)

    def why(reason: str) -> None:
        if reason == "no cupy":
            monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` raises ImportError
        else:  # CuPy imports fine but finds no GPU
            monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(__version__="13.9"))
            monkeypatch.setattr(backend, "device_count", lambda: 0)

    return why


CUDA_CALLS = {
    "zeros": lambda: gradlab.zeros(2, device="cuda"),
    "tensor": lambda: gradlab.tensor([1.0], device="cuda:0"),
    "to": lambda: gradlab.ones(2).to("cuda"),
    "cuda()": lambda: gradlab.ones(2).cuda(),
    "randn": lambda: gradlab.randn(2, device="cuda"),
    "synchronize": lambda: gradlab.cuda.synchronize(),
}


@pytest.mark.parametrize("call", CUDA_CALLS.values(), ids=CUDA_CALLS.keys())
def test_cuda_without_cupy_says_how_to_get_it(no_gpu, call):
    no_gpu("no cupy")
    with pytest.raises(RuntimeError, match=r"CuPy is not installed.*gradlab\[cuda\].*"
                                           r"device='cpu'"):
        call()
    assert not gradlab.cuda.is_available() and gradlab.cuda.device_count() == 0


@pytest.mark.parametrize("call", CUDA_CALLS.values(), ids=CUDA_CALLS.keys())
def test_cuda_with_cupy_but_no_gpu_says_so(no_gpu, call):
    no_gpu("cupy without a GPU")
    with pytest.raises(RuntimeError, match=r"CuPy 13.9 found no usable GPU.*gradlab\[cuda\].*"
                                           r"device='cpu'"):
        call()
    assert not gradlab.cuda.is_available()


def test_missing_cuda_index_is_named(monkeypatch):
    backend = get_backend("cuda")
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(__version__="13.9"))
    monkeypatch.setattr(backend, "_cupy", None)
    monkeypatch.setattr(backend, "device_count", lambda: 2)
    with pytest.raises(RuntimeError, match=r"cuda:5 does not exist.*2 CUDA device.*cuda:1"):
        backend.check_device(5)


def test_mixing_devices_names_both_and_the_fix():
    """A tensor that claims cuda:0 (its data is NumPy) is enough to reach the check."""
    data = np.ones(2, dtype=np.float32)
    on_gpu = gradlab.Tensor._make(data, Storage(data.nbytes, gradlab.device("cuda", 0)), None,
                                  0, False)
    on_cpu = gradlab.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"mul: expected all tensors on the same device, "
                                           r"got \(2,\) on cpu, \(2,\) on cuda:0.*\.to\('cpu'\)"):
        on_cpu * on_gpu


def test_mixing_devices_suggests_moving_the_data_to_the_parameters():
    """The usual mistake: a model on the GPU, its batch left on the CPU."""
    data = np.ones((2, 3), dtype=np.float32)
    weight = gradlab.Tensor._make(data, Storage(data.nbytes, gradlab.device("cuda", 0)), None,
                                  0, True)
    batch = gradlab.ones(4, 3)
    with pytest.raises(RuntimeError, match=r"Fix: move the \(4, 3\) to cuda:0 where the "
                                           r"tensors that require grad \(the model's "
                                           r"parameters\) are, e.g. x.to\('cuda:0'\)"):
        gradlab.nn.functional.linear(batch, weight)
