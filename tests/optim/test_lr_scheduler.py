"""Learning-rate schedulers: the lr (and momentum) sequence of every scheduler and option set.

One table of cases drives the comparisons: each row's ``make(L, opt)`` runs unchanged on
``gradlab.optim.lr_scheduler`` and ``torch.optim.lr_scheduler`` (tinygrad style), and the
sequences of ``get_last_lr()`` must agree to rel 1e-12. Without torch, closed forms and
state_dict round trips still check the schedules. ReduceLROnPlateau has its own file
(test_lr_scheduler_plateau.py), and so have the errors (test_lr_scheduler_errors.py).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any

import pytest

import gradlab
from gradlab.optim import lr_scheduler as glr
from tests.optim._schedulers import GROUP_LRS, REL, make_optimizer, sched_module
from tests.oracle import needs_torch, torch

ABS = 1e-15


def momentum_of(group: dict) -> float | None:
    if "betas" in group:
        return group["betas"][0]
    return group.get("momentum")


def snapshot(opt: Any, scheds: tuple) -> tuple:
    lrs = list(scheds[-1].get_last_lr())
    assert lrs == [g["lr"] for g in opt.param_groups]  # get_last_lr is what the optimizer uses
    return lrs, [momentum_of(g) for g in opt.param_groups]


def as_tuple(made: Any) -> tuple:
    return made if isinstance(made, tuple) else (made,)


def run(lib: Any, case: Case, steps: int | None = None) -> list[tuple]:
    """The (lrs, momenta) after construction and after each of ``steps`` epochs."""
    opt = make_optimizer(lib, case.kind, case.n_groups)
    scheds = as_tuple(case.make(sched_module(lib), opt))
    seq = [snapshot(opt, scheds)]
    for _ in range(case.steps if steps is None else steps):
        opt.step()
        for s in scheds:
            s.step()
        seq.append(snapshot(opt, scheds))
    return seq


def assert_close_seq(got: list, want: list) -> None:
    assert len(got) == len(want)
    for t, ((lrs, moms), (want_lrs, want_moms)) in enumerate(zip(got, want)):
        for a, b in zip(lrs + moms, want_lrs + want_moms, strict=True):
            if a is None or b is None:
                assert a is b, f"step {t}"
            else:
                assert math.isclose(a, b, rel_tol=REL, abs_tol=ABS), f"step {t}: {a} != {b}"


@dataclass
class Case:
    id: str
    make: Any  # make(L, optimizer) -> scheduler or tuple of schedulers stepped in order
    kind: str = "sgd"
    steps: int = 40
    n_groups: int = 2


def _resume_cosine(L: Any, opt: Any) -> Any:
    for group in opt.param_groups:
        group["initial_lr"] = group["lr"]
    return L.CosineAnnealingLR(opt, T_max=10, last_epoch=4)


def _halving(L: Any) -> type:
    class Halving(L._LRScheduler):  # an old-style user subclass
        def get_lr(self):
            return [base * 0.5 ** self.last_epoch for base in self.base_lrs]
    return Halving


class Warmup:
    """A callable object: its state is saved by state_dict, unlike a lambda's."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self, epoch: int) -> float:
        return min(1.0, (epoch + 1) / self.n)


CASES = [
    Case("step", lambda L, o: L.StepLR(o, step_size=3, gamma=0.5)),
    Case("step_adam", lambda L, o: L.StepLR(o, 4), kind="adam", steps=30),
    Case("multistep", lambda L, o: L.MultiStepLR(o, [2, 5, 5, 9], gamma=0.3), steps=30),
    Case("exponential", lambda L, o: L.ExponentialLR(o, 0.9)),
    Case("cosine", lambda L, o: L.CosineAnnealingLR(o, T_max=10, eta_min=0.001), steps=60),
    Case("cosine_zero_min", lambda L, o: L.CosineAnnealingLR(o, T_max=7), steps=50),
    Case("cosine_resumed", _resume_cosine, steps=30),
    Case("lambda", lambda L, o: L.LambdaLR(o, lambda e: 1.0 / (1.0 + e))),
    Case("lambda_per_group", lambda L, o: L.LambdaLR(o, [lambda e: 0.9 ** e, Warmup(5)])),
    Case("multiplicative", lambda L, o: L.MultiplicativeLR(o, lambda e: 0.95 if e < 20 else 1.0)),
    Case("linear", lambda L, o: L.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=8)),
    Case("linear_default", lambda L, o: L.LinearLR(o), steps=30),
    Case("constant", lambda L, o: L.ConstantLR(o, factor=0.5, total_iters=4), steps=30),
    Case("polynomial", lambda L, o: L.PolynomialLR(o, total_iters=12, power=2.0), steps=30),
    Case("onecycle_cos", lambda L, o: L.OneCycleLR(o, max_lr=1.0, total_steps=50), steps=50),
    Case("onecycle_linear_adam", lambda L, o: L.OneCycleLR(
        o, max_lr=[0.5, 0.2], epochs=5, steps_per_epoch=10, anneal_strategy="linear",
        base_momentum=0.8, max_momentum=0.92), kind="adam", steps=50),
    Case("onecycle_three_phase", lambda L, o: L.OneCycleLR(
        o, max_lr=0.3, total_steps=60, pct_start=0.25, three_phase=True, div_factor=10.0,
        final_div_factor=100.0), steps=60),
    Case("onecycle_no_momentum", lambda L, o: L.OneCycleLR(
        o, max_lr=0.3, total_steps=40, cycle_momentum=False), kind="adam", steps=40),
    Case("cyclic_triangular", lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=4), steps=40),
    Case("cyclic_triangular2_adam", lambda L, o: L.CyclicLR(
        o, [0.01, 0.001], [0.1, 0.05], step_size_up=3, step_size_down=5, mode="triangular2"),
        kind="adam", steps=50),
    Case("cyclic_exp_range", lambda L, o: L.CyclicLR(
        o, 0.01, 0.1, step_size_up=5, mode="exp_range", gamma=0.97, cycle_momentum=False)),
    Case("cyclic_custom_fn", lambda L, o: L.CyclicLR(
        o, 0.01, 0.1, step_size_up=4, scale_fn=lambda x: 0.9 ** x, scale_mode="iterations")),
    Case("warm_restarts", lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=5), steps=30),
    Case("warm_restarts_mult", lambda L, o: L.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001), steps=50),
    Case("sequential", lambda L, o: L.SequentialLR(o, [
        L.LinearLR(o, start_factor=0.1, total_iters=5), L.CosineAnnealingLR(o, T_max=20)],
        milestones=[5])),
    Case("sequential_three", lambda L, o: L.SequentialLR(o, [
        L.ConstantLR(o, factor=0.5, total_iters=10), L.ExponentialLR(o, 0.9),
        L.StepLR(o, 3, gamma=0.5)], milestones=[4, 12])),
    Case("chained_scheduler", lambda L, o: L.ChainedScheduler(
        [L.ConstantLR(o, factor=0.2, total_iters=6), L.ExponentialLR(o, 0.95)])),
    Case("two_on_one_optimizer", lambda L, o: (
        L.LinearLR(o, start_factor=0.2, total_iters=6), L.CosineAnnealingLR(o, T_max=25)),
        steps=50),
    Case("exp_and_multistep", lambda L, o: (
        L.ExponentialLR(o, 0.9), L.MultiStepLR(o, [10, 20], gamma=0.5))),
    Case("user_subclass", lambda L, o: _halving(L)(o), steps=30),
]


@needs_torch
@pytest.mark.filterwarnings("error")  # normal use (optimizer.step, then scheduler.step) is quiet
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_sequence_matches_torch(case: Case) -> None:
    assert_close_seq(run(gradlab, case), run(torch, case))


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_state_dict_keys_and_group_entries_match_torch(case: Case) -> None:
    got, want = [], []
    for lib, out in ((gradlab, got), (torch, want)):
        opt = make_optimizer(lib, case.kind, case.n_groups)
        scheds = as_tuple(case.make(sched_module(lib), opt))
        out.append([sorted(s.state_dict()) for s in scheds])
        out.append([sorted(k for k in g if k in _SCHEDULER_GROUP_KEYS) for g in opt.param_groups])
        out.append([getattr(s, "base_lrs", None) for s in scheds])
    assert got == want


_SCHEDULER_GROUP_KEYS = {"initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum"}


def _continue_from_state(case: Case, saved_after: int) -> list[tuple]:
    """Run ``saved_after`` steps, save, rebuild everything fresh, load, and run the rest."""
    opt = make_optimizer(gradlab, case.kind, case.n_groups)
    scheds = as_tuple(case.make(glr, opt))
    for _ in range(saved_after):
        opt.step()
        for s in scheds:
            s.step()
    saved_groups = copy.deepcopy([{k: v for k, v in g.items() if k != "params"}
                                  for g in opt.param_groups])
    saved = copy.deepcopy([s.state_dict() for s in scheds])

    opt = make_optimizer(gradlab, case.kind, case.n_groups)
    scheds = as_tuple(case.make(glr, opt))
    for group, saved_group in zip(opt.param_groups, saved_groups):
        group.update(saved_group)
    for s, state in zip(scheds, saved):
        s.load_state_dict(state)
    seq = [snapshot(opt, scheds)]
    for _ in range(case.steps - saved_after):
        opt.step()
        for s in scheds:
            s.step()
        seq.append(snapshot(opt, scheds))
    return seq


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_state_dict_round_trip_mid_schedule_continues_identically(case: Case) -> None:
    k = case.steps // 2 + 1
    assert _continue_from_state(case, k) == run(gradlab, case)[k:]


def test_state_dict_saves_callable_objects_but_not_lambdas() -> None:
    opt = make_optimizer(gradlab)
    warmup = Warmup(5)
    sched = glr.LambdaLR(opt, [lambda e: 1.0, warmup])
    state = sched.state_dict()
    assert "optimizer" not in state
    assert state["lr_lambdas"] == [None, {"n": 5}]
    state["lr_lambdas"][1]["n"] = 7
    sched.load_state_dict(state)
    assert warmup.n == 7
    assert state["lr_lambdas"] == [None, {"n": 7}]  # loading leaves the dict as it was


# ---------------------------------------------------------------- closed forms (no torch needed)


def lrs_over(make: Any, steps: int, kind: str = "sgd") -> list[list[float]]:
    return [lrs for lrs, _ in run(gradlab, Case("closed", make, kind, steps))]


def assert_matches(got: list[list[float]], formula: Any) -> None:
    for t, lrs in enumerate(got):
        for base, lr in zip(GROUP_LRS, lrs):
            want = formula(base, t)
            assert math.isclose(lr, want, rel_tol=REL, abs_tol=ABS), f"epoch {t}: {lr} != {want}"


def test_step_lr_closed_form() -> None:
    got = lrs_over(lambda L, o: L.StepLR(o, step_size=4, gamma=0.3), 30)
    assert_matches(got, lambda base, t: base * 0.3 ** (t // 4))


def test_multistep_lr_closed_form() -> None:
    got = lrs_over(lambda L, o: L.MultiStepLR(o, [3, 7, 7]), 20)
    assert_matches(got, lambda base, t: base * 0.1 ** ((t >= 3) + 2 * (t >= 7)))


def test_exponential_lr_closed_form() -> None:
    got = lrs_over(lambda L, o: L.ExponentialLR(o, 0.93), 40)
    assert_matches(got, lambda base, t: base * 0.93 ** t)


@pytest.mark.parametrize("T_max,eta_min", [(10, 0.0), (7, 0.002)])
def test_cosine_recursive_form_equals_closed_form_through_restarts(T_max, eta_min) -> None:
    got = lrs_over(lambda L, o: L.CosineAnnealingLR(o, T_max, eta_min), 3 * T_max + 2)
    assert_matches(got, lambda base, t: eta_min + (base - eta_min)
                   * (1 + math.cos(math.pi * t / T_max)) / 2)


def test_linear_constant_polynomial_closed_forms() -> None:
    got = lrs_over(lambda L, o: L.LinearLR(o, 0.2, 0.8, total_iters=6), 12)
    assert_matches(got, lambda base, t: base * (0.2 + 0.6 * min(t, 6) / 6))
    got = lrs_over(lambda L, o: L.ConstantLR(o, 0.25, total_iters=3), 8)
    assert_matches(got, lambda base, t: base * (0.25 if t < 3 else 1.0))
    got = lrs_over(lambda L, o: L.PolynomialLR(o, total_iters=8, power=3.0), 12)
    assert_matches(got, lambda base, t: base * (1 - min(t, 8) / 8) ** 3)


def test_sequential_restarts_each_scheduler_at_its_milestone() -> None:
    got = lrs_over(lambda L, o: L.SequentialLR(o, [L.ConstantLR(o, 0.1, total_iters=9),
                                                   L.ExponentialLR(o, 0.5)], milestones=[3]), 10)
    assert_matches(got, lambda base, t: base * (0.1 if t < 3 else 0.5 ** (t - 3)))


def test_two_schedulers_on_one_optimizer_multiply() -> None:
    got = lrs_over(lambda L, o: (L.StepLR(o, 2, gamma=0.5), L.ExponentialLR(o, 0.9)), 12)
    assert_matches(got, lambda base, t: base * 0.5 ** (t // 2) * 0.9 ** t)


def test_warm_restarts_closed_form() -> None:
    got = lrs_over(lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2), 14)

    def formula(base: float, t: int) -> float:
        T_i, T_cur = 2, t
        while T_cur >= T_i:  # restarts at 2, 6, 14
            T_cur, T_i = T_cur - T_i, 2 * T_i
        return base * (1 + math.cos(math.pi * T_cur / T_i)) / 2

    assert_matches(got, formula)


def test_warm_restarts_fractional_epoch_steps() -> None:
    opt = make_optimizer(gradlab)
    sched = glr.CosineAnnealingWarmRestarts(opt, T_0=4)
    for epoch in (0.5, 1.25, 5.0, 6.5):
        sched.step(epoch)
        t = epoch % 4
        want = [base * (1 + math.cos(math.pi * t / 4)) / 2 for base in GROUP_LRS]
        assert sched.get_last_lr() == pytest.approx(want, rel=REL)
        assert sched.last_epoch == math.floor(epoch)


def test_cyclic_triangle_closed_form() -> None:
    got = lrs_over(lambda L, o: L.CyclicLR(o, 0.01, 0.11, step_size_up=5), 25)
    tri = [1 - abs((t % 10) - 5) / 5 for t in range(26)]
    for t, lrs in enumerate(got):
        assert lrs == pytest.approx([0.01 + 0.1 * tri[t]] * 2, rel=REL)


@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_onecycle_landmarks_and_inverse_momentum(kind: str) -> None:
    opt = make_optimizer(gradlab, kind, n_groups=1)
    sched = glr.OneCycleLR(opt, max_lr=2.0, total_steps=21, pct_start=0.5, div_factor=20.0,
                           final_div_factor=50.0)
    seq = [snapshot(opt, (sched,))]
    for _ in range(21):
        opt.step()
        sched.step()
        seq.append(snapshot(opt, (sched,)))
    peak = 21 * 0.5 - 1  # a phase ends at step pct_start * total_steps - 1 = 9.5
    assert seq[0] == ([pytest.approx(0.1, rel=REL)], [0.95])
    assert all(seq[t][0][0] < seq[t + 1][0][0] for t in range(9))
    assert all(seq[t][0][0] > seq[t + 1][0][0] for t in range(10, 20))
    assert seq[20][0][0] == pytest.approx(0.1 / 50, rel=REL)  # the end of the run
    c = (1 + math.cos(math.pi * (9 - 0) / peak)) / 2
    assert seq[9][0][0] == pytest.approx(2.0 + (0.1 - 2.0) * c, rel=REL)
    assert seq[9][1][0] == pytest.approx(0.85 + (0.95 - 0.85) * c, rel=REL)
    if kind == "adam":
        assert opt.param_groups[0]["betas"][1] == 0.999  # only beta1 is cycled


# ---------------------------------------------------------------- with a real optimizer


def test_optimizer_uses_the_scheduled_lr_and_still_updates() -> None:
    p = gradlab.zeros(2, requires_grad=True)
    opt = gradlab.optim.SGD([p], lr=1.0)
    sched = glr.StepLR(opt, step_size=1, gamma=0.5)
    moved = []
    for _ in range(3):
        opt.zero_grad()
        (p * 1.0).sum().backward()  # d/dp sum(p) = 1, so each step moves p by -lr
        before = p.detach().numpy().copy()
        opt.step()
        sched.step()
        moved.append(float(before[0] - p.detach().numpy()[0]))
    assert moved == pytest.approx([1.0, 0.5, 0.25], rel=REL)
    assert getattr(opt, "_opt_called", False)  # the wrapped step told the scheduler it ran


# ---------------------------------------------------------------- warnings


def test_get_lr_outside_step_warns() -> None:
    sched = glr.StepLR(make_optimizer(gradlab), 3)
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


def test_scheduler_step_before_optimizer_step_warns() -> None:
    sched = glr.StepLR(make_optimizer(gradlab), 3)
    with pytest.warns(UserWarning, match=r"before `optimizer.step\(\)`"):
        sched.step()


def test_underscore_alias_is_the_base_class() -> None:
    assert issubclass(glr._LRScheduler, glr.LRScheduler)
    assert "_LRScheduler" not in glr.__all__
