"""nn.Parameter and nn.Buffer: sharing, errors, repr, memory counting, copying and pickling."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import gradlab
from gradlab import nn
from tests.oracle import needs_torch, torch


def test_parameter_shares_memory_is_a_leaf_and_requires_grad():
    t = gradlab.ones(3)
    p = nn.Parameter(t)
    assert isinstance(p, gradlab.Tensor) and p.is_leaf and p.requires_grad
    p.data.mul_(2)  # the same memory as t
    np.testing.assert_array_equal(t.numpy(), [2.0, 2.0, 2.0])
    assert not nn.Parameter(gradlab.ones(2), requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)
    y = gradlab.ones(2, requires_grad=True) * 2
    assert nn.Parameter(y).grad_fn is None


def test_parameter_errors_teach():
    with pytest.raises(RuntimeError, match="only tensors of floating point or complex dtype"):
        nn.Parameter(gradlab.tensor([1, 2]))
    with pytest.raises(TypeError, match=r"Parameter: expected a Tensor, got list.*wrap"):
        nn.Parameter([1.0, 2.0])


@needs_torch
def test_parameter_repr_matches_torch():
    values = np.array([[1.5, -2.0], [0.25, 3.0]], dtype=np.float32)
    assert repr(nn.Parameter(gradlab.tensor(values))) == \
        repr(torch.nn.Parameter(torch.tensor(values)))


def test_parameter_bytes_are_counted_as_parameter_memory():
    import gc

    gc.collect()  # parameters of earlier tests, freed now rather than in the middle
    before = gradlab.memory_stats()["parameter_bytes"]
    layer = nn.Linear(10, 20)  # 200 + 20 float32 values
    assert gradlab.memory_stats()["parameter_bytes"] - before == 220 * 4
    layer.double()  # new storages: the old are freed, the new counted
    assert gradlab.memory_stats()["parameter_bytes"] - before == 220 * 8
    del layer
    gc.collect()
    assert gradlab.memory_stats()["parameter_bytes"] == before


def test_parameter_deepcopy_and_pickle_stay_parameters():
    p = nn.Parameter(gradlab.tensor([1.0, 2.0]))
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.requires_grad and q.data_ptr() != p.data_ptr()
    r = pickle.loads(pickle.dumps(p))
    assert isinstance(r, nn.Parameter) and r.tolist() == [1.0, 2.0] and r.requires_grad


def test_buffer_marker_registers_a_buffer():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Buffer(gradlab.zeros(2))
            self.b = nn.Buffer(gradlab.ones(1), persistent=False)

    m = M()
    assert isinstance(m.a, nn.Buffer) and not isinstance(gradlab.zeros(1), nn.Buffer)
    assert [n for n, _ in m.named_buffers()] == ["a", "b"]
    assert list(m.state_dict()) == ["a"]
