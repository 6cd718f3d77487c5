"""Shared by the lr-scheduler tests: a two-group optimizer, and a library's scheduler module."""

from __future__ import annotations

from typing import Any

import gradlab
from gradlab.optim import lr_scheduler as glr
from tests.oracle import torch

REL = 1e-12
GROUP_LRS = (0.1, 0.03)
OPT_DEFAULTS = {
    "sgd": {"lr": 0.1, "momentum": 0.9},
    "adam": {"lr": 0.01, "betas": (0.9, 0.999)},
}


def make_optimizer(lib: Any, kind: str = "sgd", n_groups: int = 2) -> Any:
    params = [lib.zeros(2, requires_grad=True) for _ in range(n_groups)]
    groups = [{"params": [p], "lr": lr} for p, lr in zip(params, GROUP_LRS)]
    name = {"sgd": "SGD", "adam": "Adam"}[kind]
    return getattr(lib.optim, name)(groups, **OPT_DEFAULTS[kind])


def sched_module(lib: Any) -> Any:
    return glr if lib is gradlab else torch.optim.lr_scheduler
