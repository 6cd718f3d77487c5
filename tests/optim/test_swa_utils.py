"""swa_utils against PyTorch: AveragedModel (SWA, EMA, avg_fn, multi_avg_fn, use_buffers),
update_bn and SWALR, on the same model and the same sequence of weights in both libraries."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import gradlab
from gradlab.optim import swa_utils
from tests.oracle import needs_torch, torch


def make_model(lib, seed=0):
    """Linear -> BatchNorm1d -> Linear in float64, with the same weights in either library."""
    nn = lib.nn
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)).double()
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    return model


def batch(lib, k):
    rng = np.random.default_rng(100 + k)
    return lib.tensor(rng.standard_normal((8, 3)) * (1 + 0.1 * k) + 0.2 * k)


def train_step(lib, model, k):
    """A fake training step: move every weight, and run a batch (BatchNorm buffers move)."""
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.mul_(0.9).add_(0.3 * math.sin(k + i))
    model.train()
    model(batch(lib, k))


def averaged_state(lib, make_averaged, updates=6):
    model = make_model(lib)
    averaged = make_averaged(lib, model)
    for k in range(updates):
        train_step(lib, model, k)
        averaged.update_parameters(model)
    return averaged, {k: v.detach().numpy().copy() for k, v in averaged.state_dict().items()}


AVERAGINGS = {
    "swa": lambda lib, m: lib.optim.swa_utils.AveragedModel(m),
    "swa-use_buffers": lambda lib, m: lib.optim.swa_utils.AveragedModel(m, use_buffers=True),
    "ema-multi": lambda lib, m: lib.optim.swa_utils.AveragedModel(
        m, multi_avg_fn=lib.optim.swa_utils.get_ema_multi_avg_fn(0.8)),
    "ema-multi-use_buffers": lambda lib, m: lib.optim.swa_utils.AveragedModel(
        m, multi_avg_fn=lib.optim.swa_utils.get_ema_multi_avg_fn(0.7), use_buffers=True),
    "swa-multi": lambda lib, m: lib.optim.swa_utils.AveragedModel(
        m, multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn()),
    "ema-avg_fn": lambda lib, m: lib.optim.swa_utils.AveragedModel(
        m, avg_fn=lib.optim.swa_utils.get_ema_avg_fn(0.9)),
    "swa-avg_fn-use_buffers": lambda lib, m: lib.optim.swa_utils.AveragedModel(
        m, avg_fn=lib.optim.swa_utils.get_swa_avg_fn(), use_buffers=True),
}


@needs_torch
@pytest.mark.parametrize("kind", list(AVERAGINGS))
def test_averaged_model_matches_torch(kind):
    ours, state = averaged_state(gradlab, AVERAGINGS[kind])
    _, tstate = averaged_state(torch, AVERAGINGS[kind])
    assert list(state) == list(tstate)  # n_averaged, then module.* as in PyTorch
    assert state["n_averaged"] == 6 and state["n_averaged"].dtype == np.int64
    # PyTorch's swa multi_avg_fn lerps with 1/(n+1) computed from the long n_averaged tensor,
    # a float32 weight; gradlab's weight is exact, so that one agrees to float32 precision
    rtol = 1e-7 if kind == "swa-multi" else 1e-12
    for key, value in state.items():
        assert value.dtype == tstate[key].dtype, key
        np.testing.assert_allclose(value, tstate[key], rtol=rtol, atol=1e-14, err_msg=key)
    # the average differs from the last weights (it really averaged)
    last = make_model(gradlab)
    for k in range(6):
        train_step(gradlab, last, k)
    assert not np.allclose(state["module.0.weight"], last[0].weight.detach().numpy())


def test_swa_is_the_mean_and_the_first_update_copies():
    model = gradlab.nn.Linear(2, 1).double()
    averaged = swa_utils.AveragedModel(model)
    assert averaged.module is not model
    seen = []
    for k in range(4):
        with gradlab.no_grad():
            model.weight.fill_(float(k * k))
        seen.append(k * k)
        averaged.update_parameters(model)
        np.testing.assert_allclose(averaged.module.weight.detach().numpy(),
                                   np.full((1, 2), np.mean(seen)), rtol=1e-15)
    assert averaged.n_averaged.item() == 4
    assert averaged.module.weight is not model.weight
    assert averaged.module.weight.requires_grad  # a deep copy with its own parameters


def test_swa_multi_avg_fn_averages_integer_buffers_like_the_default():
    """PyTorch's get_swa_multi_avg_fn raises on integer buffers (addcdiv refuses integers);
    gradlab's averages them as the default SWA does (a mean, truncated to the dtype)."""
    states = []
    for multi_avg_fn in (swa_utils.get_swa_multi_avg_fn(), None):
        model = make_model(gradlab)
        averaged = swa_utils.AveragedModel(model, multi_avg_fn=multi_avg_fn, use_buffers=True)
        for k in range(5):
            train_step(gradlab, model, k)
            averaged.update_parameters(model)
        states.append({k: v.numpy() for k, v in averaged.state_dict().items()})
    for key, value in states[0].items():
        np.testing.assert_allclose(value, states[1][key], rtol=1e-13, err_msg=key)
    # 1, then 1 + (k - 1)/k truncated, which stays 1 (as PyTorch's default SWA gives)
    assert states[0]["module.1.num_batches_tracked"] == 1
    assert states[0]["module.1.num_batches_tracked"].dtype == np.int64


def test_buffers_are_copied_unless_use_buffers():
    model = make_model(gradlab)
    copied = swa_utils.AveragedModel(model)
    averaged = swa_utils.AveragedModel(model, use_buffers=True)
    for k in range(3):
        train_step(gradlab, model, k)
        copied.update_parameters(model)
        averaged.update_parameters(model)
    running = model[1].running_mean.numpy()
    np.testing.assert_array_equal(copied.module[1].running_mean.numpy(), running)
    assert not np.allclose(averaged.module[1].running_mean.numpy(), running)
    assert copied.module[1].num_batches_tracked.item() == 3


def test_avg_fn_gets_the_tensors_and_the_count():
    calls = []

    def keep_max(averaged, current, num_averaged):
        calls.append(int(num_averaged))
        return gradlab.maximum(averaged, current)

    model = gradlab.nn.Linear(2, 2).double()
    averaged = swa_utils.AveragedModel(model, avg_fn=keep_max)
    peak = None
    for k in range(3):
        with gradlab.no_grad():
            model.weight.copy_(gradlab.tensor([[k, -k], [1.0, 2 - k]], dtype=gradlab.float64))
        value = model.weight.detach().numpy()
        peak = value.copy() if peak is None else np.maximum(peak, value)
        averaged.update_parameters(model)
    assert calls == [1, 1, 2, 2]  # weight and bias, at n = 1 and n = 2 (n = 0 copies)
    np.testing.assert_array_equal(averaged.module.weight.detach().numpy(), peak)


def test_forward_runs_the_averaged_copy():
    model = gradlab.nn.Linear(3, 2).double()
    averaged = swa_utils.AveragedModel(model)
    averaged.update_parameters(model)
    x = gradlab.ones(4, 3, dtype=gradlab.float64)
    np.testing.assert_array_equal(averaged(x).detach().numpy(), model(x).detach().numpy())


def test_averaged_model_errors():
    model = gradlab.nn.Linear(2, 2)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        swa_utils.AveragedModel(model, avg_fn=swa_utils.get_swa_avg_fn(),
                                multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
    for make in (swa_utils.get_ema_multi_avg_fn, swa_utils.get_ema_avg_fn):
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided. Please provide "
                                             r"a value in \[0,1\] range"):
            make(1.5)
        with pytest.raises(ValueError, match="Invalid decay value -0.1"):
            make(-0.1)


@needs_torch
def test_all_names_match_torch():
    assert sorted(swa_utils.__all__) == sorted(torch.optim.swa_utils.__all__)
    assert gradlab.optim.swa_utils is swa_utils


# --- update_bn ---------------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("as_tuples", [False, True])
def test_update_bn_matches_torch_and_restores_mode_and_momentum(as_tuples):
    results = []
    for lib in (gradlab, torch):
        model = make_model(lib)
        train_step(lib, model, 0)
        model[1].momentum = 0.3
        model.eval()
        batches = [batch(lib, k) for k in range(4)]
        loader = [(b, lib.zeros(8)) for b in batches] if as_tuples else batches
        lib.optim.swa_utils.update_bn(loader, model)
        assert not model.training and model[1].momentum == 0.3
        results.append({k: v.detach().numpy().copy() for k, v in model[1].state_dict().items()
                        if k.startswith(("running", "num"))})
    ours, theirs = results
    for key in theirs:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-12, err_msg=key)
    # momentum=None during the pass: the plain mean of the four batches' means
    model = make_model(gradlab)
    train_step(gradlab, model, 0)
    means = [model[0](batch(gradlab, k)).detach().numpy().mean(axis=0) for k in range(4)]
    np.testing.assert_allclose(ours["running_mean"], np.mean(means, axis=0), rtol=1e-12)
    assert ours["num_batches_tracked"] == 4


def test_update_bn_without_batchnorm_does_nothing():
    model = gradlab.nn.Linear(3, 2).double().eval()
    consumed = []

    def loader():
        consumed.append(True)
        yield gradlab.ones(1, 3, dtype=gradlab.float64)

    swa_utils.update_bn(loader(), model)
    assert consumed == [] and not model.training  # returns before reading any batch


# --- SWALR -------------------------------------------------------------------------------------

def lr_path(lib, steps=8, **kwargs):
    w = lib.zeros(2, requires_grad=True)
    b = lib.zeros(1, requires_grad=True)
    opt = lib.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=1.0)
    scheduler = lib.optim.swa_utils.SWALR(opt, **kwargs)
    path = [scheduler.get_last_lr()]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        path.append(scheduler.get_last_lr())
    return path, scheduler, opt


SCHEDULES = [
    dict(swa_lr=0.05),
    dict(swa_lr=[0.05, 0.2], anneal_epochs=3, anneal_strategy="linear"),
    dict(swa_lr=0.1, anneal_epochs=0),
    dict(swa_lr=0.1, anneal_epochs=1, anneal_strategy="linear"),
    dict(swa_lr=2.0, anneal_epochs=4, anneal_strategy="cos"),
]


@needs_torch
@pytest.mark.parametrize("kwargs", SCHEDULES, ids=str)
def test_swalr_path_matches_torch(kwargs):
    ours, scheduler, opt = lr_path(gradlab, 14, **kwargs)
    theirs, tscheduler, topt = lr_path(torch, 14, **kwargs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13)
    swa_lrs = kwargs["swa_lr"] if isinstance(kwargs["swa_lr"], list) else [kwargs["swa_lr"]] * 2
    np.testing.assert_allclose(ours[-1], swa_lrs, rtol=1e-13)  # annealed to swa_lr
    assert [g["swa_lr"] for g in opt.param_groups] == [g["swa_lr"] for g in topt.param_groups]
    saved, tsaved = scheduler.state_dict(), tscheduler.state_dict()
    assert "anneal_func" not in saved and "optimizer" not in saved
    for key in ("_anneal_strategy", "anneal_epochs", "base_lrs", "last_epoch", "_step_count"):
        assert saved[key] == tsaved[key], key


def test_swalr_cosine_halfway_is_the_midpoint():
    path, _, _ = lr_path(gradlab, 4, swa_lr=0.0, anneal_epochs=4)
    assert path[0] == [1.0, 0.5]
    np.testing.assert_allclose(path[2], [0.5, 0.25], rtol=1e-12)  # (1 - cos(pi/2)) / 2 = 1/2
    assert path[4] == pytest.approx([0.0, 0.0], abs=1e-15)


def test_swalr_state_dict_round_trip_continues_the_schedule():
    expected, _, _ = lr_path(gradlab, 8, swa_lr=0.05, anneal_epochs=6)
    _, scheduler, first_opt = lr_path(gradlab, 3, swa_lr=0.05, anneal_epochs=6)
    saved = scheduler.state_dict()
    _, resumed, opt = lr_path(gradlab, 0, swa_lr=0.9, anneal_epochs=2,
                              anneal_strategy="linear")
    opt.load_state_dict(first_opt.state_dict())  # the lrs and swa_lrs live in the groups
    resumed.load_state_dict(saved)
    assert resumed.anneal_func is resumed._cosine_anneal
    path = []
    for _ in range(5):
        opt.step()
        resumed.step()
        path.append(resumed.get_last_lr())
    np.testing.assert_allclose(path, expected[4:], rtol=1e-13)


def test_swalr_errors():
    opt = gradlab.optim.SGD([gradlab.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', "
                                         "instead got 'exp'"):
        swa_utils.SWALR(opt, swa_lr=0.05, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
        swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=-1)
    with pytest.raises(ValueError, match="anneal_epochs must be .* got 2.5"):
        swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=2.5)
    with pytest.raises(ValueError, match=r"swa_lr has 2 values but the optimizer has 1 param "
                                         r"group"):
        swa_utils.SWALR(opt, swa_lr=[0.1, 0.2])


def test_swalr_get_lr_outside_step_warns():
    _, scheduler, _ = lr_path(gradlab, 1, swa_lr=0.05)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scheduler.get_lr()
    assert any("get_last_lr()" in str(w.message) for w in caught)
