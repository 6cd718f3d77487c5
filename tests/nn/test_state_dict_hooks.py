"""Hooks around state_dict / load_state_dict, extra state and set_submodule, as PyTorch's."""

from __future__ import annotations

import pytest

import gradlab
import gradlab.nn as nn
from tests.oracle import needs_torch, torch


def _both(make):
    return make(gradlab), make(torch)


def _net(lib):
    return lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(), lib.nn.Linear(3, 1))


@needs_torch
def test_save_hooks_run_in_torchs_order_and_a_post_hook_edits_the_dict():
    logs = []
    for lib in (gradlab, torch):
        net, log = _net(lib), []
        for i in (0, 2):
            net[i].register_state_dict_pre_hook(
                lambda m, prefix, keep_vars, i=i, log=log: log.append(("pre", i, prefix)))
            net[i].register_state_dict_post_hook(
                lambda m, sd, prefix, meta, i=i, log=log: log.append(("post", i, prefix)))

        def drop_bias(module, sd, prefix, meta):
            del sd[prefix + "2.bias"]

        handle = net.register_state_dict_post_hook(drop_bias)
        keys = list(net.state_dict())
        handle.remove()
        logs.append((log, keys, list(net.state_dict())))
    assert logs[0] == logs[1]


@needs_torch
def test_a_load_pre_hook_renames_old_keys_and_a_post_hook_forgives_missing_ones():
    results = []
    for lib in (gradlab, torch):
        net = _net(lib)
        saved = {k.replace("weight", "w_old"): v for k, v in _net(lib).state_dict().items()}
        saved.pop("2.bias")

        def rename(module, sd, prefix, meta, strict, missing, unexpected, errors):
            for key in [k for k in sd if k.startswith(prefix) and k.endswith("w_old")]:
                sd[key.replace("w_old", "weight")] = sd.pop(key)

        def forgive(module, keys):
            if "2.bias" in keys.missing_keys:
                keys.missing_keys.remove("2.bias")

        net[0].register_load_state_dict_pre_hook(rename)
        net[2].register_load_state_dict_pre_hook(rename)
        net.register_load_state_dict_post_hook(forgive)
        result = net.load_state_dict(saved)
        results.append((list(result.missing_keys), list(result.unexpected_keys),
                        net[0].weight.tolist() == saved["0.w_old"].tolist()))
    assert results[0] == results[1] == ([], [], True)


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.calls = 0

    def get_extra_state(self):
        return {"calls": self.calls}

    def set_extra_state(self, state):
        self.calls = state["calls"]


def test_extra_state_is_saved_and_loaded_and_required():
    a = Counter()
    a.calls = 7
    sd = a.state_dict()
    assert list(sd) == ["_extra_state", "lin.weight", "lin.bias"] and sd["_extra_state"] == {
        "calls": 7}
    b = Counter()
    b.load_state_dict(sd)
    assert b.calls == 7
    del sd["_extra_state"]
    with pytest.raises(RuntimeError, match='Missing key.*"_extra_state"'):
        b.load_state_dict(sd)
    with pytest.raises(RuntimeError, match='Unexpected key.*"_extra_state"'):
        nn.Linear(2, 2).load_state_dict({"weight": b.lin.weight, "bias": b.lin.bias,
                                         "_extra_state": 1})


@needs_torch
def test_extra_state_keys_come_where_torchs_do():
    class TorchCounter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

        def get_extra_state(self):
            return 1

        def set_extra_state(self, state):
            pass

    assert list(Counter().state_dict()) == list(TorchCounter().state_dict())


@needs_torch
def test_set_submodule_as_torch():
    for lib in (gradlab, torch):
        net = _net(lib)
        net.set_submodule("1", lib.nn.Tanh())
        assert type(net[1]).__name__ == "Tanh"
        with pytest.raises(AttributeError):
            net.set_submodule("5", lib.nn.Tanh(), strict=True)
        with pytest.raises(ValueError):
            net.set_submodule("", lib.nn.Tanh())
        with pytest.raises(ValueError):
            net.set_submodule("1", 3)
