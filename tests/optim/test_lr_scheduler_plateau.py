"""ReduceLROnPlateau: its lr and counters against PyTorch, traced by hand, and via state_dict."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import gradlab
from gradlab.optim import lr_scheduler as glr
from tests.optim._schedulers import REL, make_optimizer, sched_module
from tests.oracle import needs_torch, torch

PLATEAU_METRICS = [5.0, 4.0, 4.0, 3.9999, 4.1, 3.0, 3.0, 3.0, 3.0, 3.0, 2.99, 2.5, 2.5, 2.5,
                   2.6, 2.7, 2.8, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
PLATEAU_OPTIONS = [
    {},
    {"patience": 2, "factor": 0.5},
    {"patience": 1, "factor": 0.5, "cooldown": 2},
    {"patience": 0, "factor": 0.3, "min_lr": [0.01, 0.005]},
    {"patience": 1, "threshold": 0.01, "threshold_mode": "abs"},
    {"patience": 1, "threshold": 0.05, "threshold_mode": "rel", "min_lr": 0.02},
    {"mode": "max", "patience": 1, "factor": 0.5},
    {"mode": "max", "patience": 2, "threshold": 0.5, "threshold_mode": "abs", "cooldown": 1},
    {"patience": 0, "factor": 0.5, "eps": 0.02},
]


def run_plateau(lib: Any, options: dict, kind: str = "sgd") -> list:
    opt = make_optimizer(lib, kind)
    sched = sched_module(lib).ReduceLROnPlateau(opt, **options)
    out = [list(sched.get_last_lr())]
    for metric in PLATEAU_METRICS:
        opt.step()
        sched.step(metric)
        out.append((list(sched.get_last_lr()), sched.best, sched.num_bad_epochs,
                    sched.cooldown_counter, sched.last_epoch))
    return out


@needs_torch
@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("options", PLATEAU_OPTIONS, ids=str)
def test_plateau_matches_torch(options: dict) -> None:
    assert run_plateau(gradlab, options) == run_plateau(torch, options)


@needs_torch
def test_plateau_state_dict_keys_match_torch() -> None:
    keys = [sorted(L.ReduceLROnPlateau(make_optimizer(lib)).state_dict())
            for lib, L in ((gradlab, glr), (torch, torch.optim.lr_scheduler))]
    assert keys[0] == keys[1]


def test_plateau_hand_traced() -> None:
    """patience=1, cooldown=1: the lr halves after the 2nd bad epoch, then one epoch rests."""
    opt = make_optimizer(gradlab)
    sched = glr.ReduceLROnPlateau(opt, factor=0.5, patience=1, cooldown=1, min_lr=0.02)
    lr0 = []
    for metric in [1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]:
        sched.step(metric)
        lr0.append(sched.get_last_lr()[0])
    # bad epochs: e2 (1), e3 (2 > patience: cut, cooldown 1), e4 (cooldown: reset), e5 (1),
    # e6 (2: cut, but 0.025 * 0.5 < min_lr 0.02, so 0.02), e7 rest, e8 (1)
    assert lr0 == pytest.approx([0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025], rel=REL)
    assert sched.get_last_lr()[1] == pytest.approx(0.02, rel=REL)  # 0.03 -> 0.02 (min_lr)


def test_plateau_round_trip() -> None:
    options = {"patience": 1, "factor": 0.5, "cooldown": 2, "mode": "max"}
    opt = make_optimizer(gradlab)
    sched = glr.ReduceLROnPlateau(opt, **options)
    for metric in PLATEAU_METRICS[:12]:
        sched.step(metric)
    state = copy.deepcopy(sched.state_dict())
    lrs = [g["lr"] for g in opt.param_groups]
    rest = []
    for metric in PLATEAU_METRICS[12:]:
        sched.step(metric)
        rest.append(sched.get_last_lr())
    opt2 = make_optimizer(gradlab)
    sched2 = glr.ReduceLROnPlateau(opt2)
    for group, lr in zip(opt2.param_groups, lrs):
        group["lr"] = lr
    sched2.load_state_dict(state)
    rest2 = []
    for metric in PLATEAU_METRICS[12:]:
        sched2.step(metric)
        rest2.append(sched2.get_last_lr())
    assert rest2 == rest and sched2.mode == "max"


def test_plateau_accepts_a_0d_tensor_metric() -> None:
    opt = make_optimizer(gradlab)
    sched = glr.ReduceLROnPlateau(opt, patience=0, factor=0.5)
    sched.step(gradlab.tensor(1.0))
    sched.step(gradlab.tensor(2.0))
    assert sched.best == 1.0
    assert sched.get_last_lr() == pytest.approx([0.05, 0.015], rel=REL)
