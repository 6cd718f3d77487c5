"""Sequential, ModuleList, ModuleDict, ParameterList and ParameterDict."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import gradlab
from gradlab import nn
from tests.oracle import needs_torch, torch


def layers(lib, n=3):
    return [lib.nn.Linear(i + 1, i + 2) for i in range(n)]


# --- Sequential ---------------------------------------------------------------------------

def test_sequential_runs_in_order():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    x = gradlab.randn(4, 2)
    want = seq[2](seq[1](seq[0](x)))
    np.testing.assert_array_equal(seq(x).detach().numpy(), want.detach().numpy())
    assert nn.Sequential()(x) is x


def test_sequential_indexing_slicing_and_length():
    a, b, c = layers(gradlab)
    seq = nn.Sequential(a, b, c)
    assert len(seq) == 3 and list(seq) == [a, b, c]
    assert seq[0] is a and seq[-1] is c and seq[-3] is a
    part = seq[1:]
    assert isinstance(part, nn.Sequential) and list(part) == [b, c]
    assert list(part._modules) == ["1", "2"]  # slices keep the names, as in PyTorch
    with pytest.raises(IndexError, match=r"Sequential\[\]: index 3 is out of range for 3 "
                                         r"entries \(valid: -3 to 2\)"):
        seq[3]
    with pytest.raises(IndexError, match="index -4 is out of range"):
        seq[-4]


def test_sequential_from_ordered_dict_uses_the_names():
    seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Tanh())]))
    assert list(seq._modules) == ["fc", "act"]
    assert isinstance(seq.fc, nn.Linear) and seq[1] is seq.act
    assert list(seq.state_dict()) == ["fc.weight", "fc.bias"]
    new = nn.ReLU()
    seq[1] = new
    assert seq.act is new


def test_sequential_append_extend_insert_delete():
    a, b, c = layers(gradlab)
    seq = nn.Sequential(a)
    assert seq.append(b) is seq
    seq.extend([c])
    assert list(seq) == [a, b, c]
    d = nn.ReLU()
    seq.insert(1, d)
    assert list(seq) == [a, d, b, c] and list(seq._modules) == ["0", "1", "2", "3"]
    del seq[1]
    assert list(seq) == [a, b, c] and list(seq._modules) == ["0", "1", "2"]
    del seq[-2:]
    assert list(seq) == [a]
    seq.insert(-1, d)
    assert list(seq) == [d, a]
    assert seq.pop(0) is d and list(seq) == [a]
    with pytest.raises(IndexError, match="insert: index 5 is out of range"):
        seq.insert(5, d)
    combined = nn.Sequential(a) + nn.Sequential(b)
    assert list(combined) == [a, b]


@needs_torch
def test_sequential_repr_and_keys_match_torch():
    ours = nn.Sequential(*layers(gradlab), nn.ReLU(), nn.Sequential(nn.Tanh()))
    theirs = torch.nn.Sequential(*layers(torch), torch.nn.ReLU(),
                                 torch.nn.Sequential(torch.nn.Tanh()))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(nn.Sequential()) == repr(torch.nn.Sequential())


# --- ModuleList ---------------------------------------------------------------------------

def test_module_list_holds_and_registers_modules():
    a, b, c = layers(gradlab)
    ml = nn.ModuleList([a, b])
    ml.append(c)
    assert len(ml) == 3 and ml[-1] is c and list(ml) == [a, b, c]
    assert isinstance(ml[:2], nn.ModuleList) and list(ml[:2]) == [a, b]
    assert len(list(ml.parameters())) == 6
    ml[0] = c
    assert ml[0] is c
    del ml[0]
    assert list(ml) == [b, c] and list(ml._modules) == ["0", "1"]
    ml += [a]
    assert list(ml) == [b, c, a]
    with pytest.raises(NotImplementedError, match="ModuleList has no forward"):
        ml(gradlab.ones(1))


@needs_torch
def test_module_list_repr_groups_repeats_like_torch():
    def make(lib):
        return lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)] +
                                 [lib.nn.ReLU(), lib.nn.Linear(2, 3), lib.nn.Linear(2, 3)])

    assert repr(make(gradlab)) == repr(make(torch))
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())
    one = nn.ModuleList([nn.Sequential(nn.ReLU())])
    assert repr(one) == repr(torch.nn.ModuleList([torch.nn.Sequential(torch.nn.ReLU())]))


# --- ModuleDict ---------------------------------------------------------------------------

def test_module_dict():
    md = nn.ModuleDict({"enc": nn.Linear(2, 2), "act": nn.ReLU()})
    assert list(md) == ["enc", "act"] and len(md) == 2 and "enc" in md
    md["dec"] = nn.Linear(2, 1)
    assert list(md.keys()) == ["enc", "act", "dec"]
    assert [type(v).__name__ for v in md.values()] == ["Linear", "ReLU", "Linear"]
    assert list(md.state_dict()) == ["enc.weight", "enc.bias", "dec.weight", "dec.bias"]
    assert isinstance(md.pop("act"), nn.ReLU) and "act" not in md
    md.update([("x", nn.Tanh())])
    assert list(md) == ["enc", "dec", "x"]
    del md["x"]
    md.clear()
    assert len(md) == 0
    with pytest.raises(ValueError, match=r"element #0 should be a \(name, module\) pair"):
        md.update([nn.ReLU()])
    with pytest.raises(NotImplementedError, match="ModuleDict has no forward"):
        md(1)


@needs_torch
def test_module_dict_repr_matches_torch():
    ours = nn.ModuleDict({"enc": nn.Linear(2, 2), "act": nn.ReLU()})
    theirs = torch.nn.ModuleDict({"enc": torch.nn.Linear(2, 2), "act": torch.nn.ReLU()})
    assert repr(ours) == repr(theirs)


# --- ParameterList / ParameterDict --------------------------------------------------------

def test_parameter_list_registers_parameters():
    pl = nn.ParameterList([nn.Parameter(gradlab.ones(2)), gradlab.zeros(3)])
    assert len(pl) == 2 and all(isinstance(p, nn.Parameter) for p in pl)
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pl.append(gradlab.ones(1))
    assert pl[-1].shape == (1,) and len(list(pl.parameters())) == 3
    pl[0] = gradlab.full((2,), 5.0)
    assert pl[0].tolist() == [5.0, 5.0] and isinstance(pl[0], nn.Parameter)
    assert [p.shape for p in pl[1:]] == [(3,), (1,)]

    class Owner(nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([gradlab.ones(2, 2) for _ in range(2)])

    assert list(Owner().state_dict()) == ["ws.0", "ws.1"]


def test_parameter_dict_registers_parameters():
    pd = nn.ParameterDict({"a": gradlab.ones(2), "b": nn.Parameter(gradlab.zeros(1))})
    assert list(pd) == ["a", "b"] and "a" in pd and len(pd) == 2
    assert isinstance(pd["a"], nn.Parameter)
    assert [n for n, _ in pd.named_parameters()] == ["a", "b"]
    pd["c"] = gradlab.ones(3)
    assert list(pd.keys()) == ["a", "b", "c"]
    assert pd.pop("b").shape == (1,) and list(pd) == ["a", "c"]
    assert [k for k, _ in pd.items()] == ["a", "c"] and len(pd.values()) == 2


@needs_torch
def test_parameter_containers_repr_match_torch():
    values = [np.ones((2, 3), np.float32), np.zeros(4, np.float32)]
    ours = nn.ParameterList([gradlab.tensor(v) for v in values])
    theirs = torch.nn.ParameterList([torch.tensor(v) for v in values])
    assert repr(ours) == repr(theirs).replace("torch.", "gradlab.")
    ours = nn.ParameterDict({"w": gradlab.tensor(values[0])})
    theirs = torch.nn.ParameterDict({"w": torch.tensor(values[0])})
    assert repr(ours) == repr(theirs).replace("torch.", "gradlab.")
