"""Learning-rate schedulers: every argument check and misuse raises an error that teaches."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import gradlab
from gradlab.optim import lr_scheduler as glr
from tests.optim._schedulers import make_optimizer


def no_momentum() -> Any:
    return gradlab.optim.Adagrad([gradlab.zeros(2, requires_grad=True)])


def _plateau_with_new_group(L: Any, o: Any) -> None:
    sched = L.ReduceLROnPlateau(o, patience=0, min_lr=[0.0, 0.0])
    o.param_groups.append(dict(o.param_groups[0]))
    sched.step(1.0)
    sched.step(2.0)


def _one_cycle_past_end(L: Any, o: Any) -> None:
    sched = L.OneCycleLR(o, max_lr=0.1, total_steps=3)
    for _ in range(4):
        o.step()
        sched.step()


def _two_optimizers(L: Any, o: Any) -> None:
    other = make_optimizer(gradlab)
    L.SequentialLR(o, [L.StepLR(o, 2), L.StepLR(other, 2)], milestones=[3])


def _plateau_in_chain(L: Any, o: Any) -> None:
    L.ChainedScheduler([L.StepLR(o, 2), L.ReduceLROnPlateau(o)])


class _NoGetLR(glr.LRScheduler):
    pass


ERRORS = [
    (lambda L, o: L.StepLR([0.1], 3), TypeError, "StepLR: expected an optimizer with param_grou"),
    (lambda L, o: L.StepLR(o, 0), ValueError, "StepLR: step_size must be an integer >= 1, got 0"),
    (lambda L, o: L.StepLR(o, 2.5), ValueError, "step_size must be an integer"),
    (lambda L, o: L.MultiStepLR(o, [3, -1]), ValueError, "MultiStepLR: each milestone must be"),
    (lambda L, o: L.ConstantLR(o, factor=1.5), ValueError, r"ConstantLR: factor .* \[0.0, 1.0\]"),
    (lambda L, o: L.ConstantLR(o, total_iters=0), ValueError, "ConstantLR: total_iters"),
    (lambda L, o: L.LinearLR(o, start_factor=0), ValueError, r"start_factor .* \(0.0, 1.0\]"),
    (lambda L, o: L.LinearLR(o, end_factor=2.0), ValueError, "LinearLR: end_factor"),
    (lambda L, o: L.LinearLR(o, total_iters=-3), ValueError, "LinearLR: total_iters"),
    (lambda L, o: L.ExponentialLR(o, -0.5), ValueError, "ExponentialLR: gamma .* got -0.5"),
    (lambda L, o: L.PolynomialLR(o, total_iters=0), ValueError, "PolynomialLR: total_iters"),
    (lambda L, o: L.CosineAnnealingLR(o, T_max=0), ValueError, "CosineAnnealingLR: T_max"),
    (lambda L, o: L.LambdaLR(o, [lambda e: 1.0]), ValueError,
     r"LambdaLR: lr_lambda has 1 values but the optimizer has 2 param group\(s\)"),
    (lambda L, o: L.LambdaLR(o, 0.5), TypeError, "LambdaLR: lr_lambda must be a function"),
    (lambda L, o: L.MultiplicativeLR(o, "x"), TypeError, "MultiplicativeLR: lr_lambda must"),
    (lambda L, o: L.StepLR(o, 3, last_epoch=5), KeyError, r"param_groups\[0\]\['initial_lr'\]"),
    (lambda L, o: _NoGetLR(o), NotImplementedError, "_NoGetLR: a scheduler must define get_lr"),
    (lambda L, o: L.StepLR(o, 3).step(4), TypeError, r"StepLR.step\(epoch\).*call step\(\)"),
    (lambda L, o: L.SequentialLR(o, [], []), ValueError, "SequentialLR: needs at least one"),
    (lambda L, o: L.ChainedScheduler([]), ValueError, "ChainedScheduler: needs at least one"),
    (lambda L, o: L.SequentialLR(o, [L.StepLR(o, 2), object()], [2]), TypeError,
     r"SequentialLR: schedulers\[1\] is a object, not a learning-rate scheduler"),
    (_plateau_in_chain, ValueError, r"schedulers\[1\] is a ReduceLROnPlateau.*step\(val_loss\)"),
    (_two_optimizers, ValueError, r"schedulers\[1\] \(StepLR\) drives a different optimizer"),
    (lambda L, o: L.SequentialLR(o, [L.StepLR(o, 2), L.StepLR(o, 3)], [2, 4]), ValueError,
     r"SequentialLR: 2 schedulers need 1 milestone\(s\).*got 2"),
    (lambda L, o: L.ReduceLROnPlateau(o, factor=1.0), ValueError, r"factor must be in \[0, 1\)"),
    (lambda L, o: L.ReduceLROnPlateau(o, mode="best"), ValueError, "mode must be 'min'"),
    (lambda L, o: L.ReduceLROnPlateau(o, threshold_mode="x"), ValueError, "threshold_mode must"),
    (lambda L, o: L.ReduceLROnPlateau(o, patience=-1), ValueError, "patience must be an integer"),
    (lambda L, o: L.ReduceLROnPlateau(o, cooldown=0.5), ValueError, "cooldown must be an integ"),
    (lambda L, o: L.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError, "min_lr has 1 values"),
    (lambda L, o: L.ReduceLROnPlateau(o).step(1.0, 3), TypeError, r"call step\(metrics\)"),
    (lambda L, o: L.ReduceLROnPlateau(o).step("low"), TypeError, "metrics must be a number"),
    (_plateau_with_new_group, RuntimeError, "now has 3 param groups but min_lr had 2 values"),
    (lambda L, o: L.CyclicLR(o, 0.1, 1.0, mode="saw"), ValueError, "CyclicLR: mode must be"),
    (lambda L, o: L.CyclicLR(o, 0.1, 1.0, scale_mode="x", scale_fn=abs), ValueError,
     "scale_mode must be"),
    (lambda L, o: L.CyclicLR(o, 0.1, 1.0, step_size_up=0), ValueError, "step_size_up must"),
    (lambda L, o: L.CyclicLR(o, 0.1, 1.0, step_size_down=0), ValueError, "step_size_down must"),
    (lambda L, o: L.CyclicLR(no_momentum(), 0.1, 1.0), ValueError,
     "CyclicLR: cycle_momentum=True needs an optimizer with 'momentum' or 'betas'"),
    (lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=0), ValueError, "T_0 must be an integer"),
    (lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, T_mult=0), ValueError, "T_mult must be"),
    (lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, eta_min=-1), ValueError, "eta_min must"),
    (lambda L, o: L.CosineAnnealingWarmRestarts(o, 2).step(-1), ValueError, "epoch must be >= 0"),
    (lambda L, o: L.OneCycleLR(o, 0.1), ValueError, "OneCycleLR: say how long the cycle is"),
    (lambda L, o: L.OneCycleLR(o, 0.1, total_steps=0), ValueError, "total_steps must be"),
    (lambda L, o: L.OneCycleLR(o, 0.1, epochs=0, steps_per_epoch=3), ValueError, "epochs must"),
    (lambda L, o: L.OneCycleLR(o, 0.1, epochs=2, steps_per_epoch=-1), ValueError,
     "steps_per_epoch must be"),
    (lambda L, o: L.OneCycleLR(o, 0.1, 10, pct_start=1.5), ValueError, "pct_start must be"),
    (lambda L, o: L.OneCycleLR(o, 0.1, 10, anneal_strategy="exp"), ValueError,
     "anneal_strategy must be 'cos' or 'linear'"),
    (lambda L, o: L.OneCycleLR(o, 0.1, 10, div_factor=0), ValueError, "div_factor must be"),
    (lambda L, o: L.OneCycleLR(o, 0.1, 10, final_div_factor=-2), ValueError, "final_div_factor"),
    (lambda L, o: L.OneCycleLR(o, 0.1, 10, pct_start=0.1), ValueError,
     "makes phase 1 zero steps long"),
    (lambda L, o: L.OneCycleLR(o, 0.1, 10, pct_start=1.0), ValueError,
     "pct_start=1.0 with total_steps=10 makes phase 2 zero steps long"),
    (lambda L, o: L.OneCycleLR(o, [0.1, 0.2, 0.3], 10), ValueError, "max_lr has 3 values"),
    (lambda L, o: L.OneCycleLR(no_momentum(), 0.1, 10), ValueError, "pass cycle_momentum=False"),
    (_one_cycle_past_end, ValueError, "tried to step 4 times but total_steps is 3"),
]


@pytest.mark.parametrize("make,error,match", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_teach(make: Any, error: type, match: str) -> None:
    opt = make_optimizer(gradlab)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stepping a scheduler before its optimizer is fine here
        with pytest.raises(error, match=match):
            make(glr, opt)
