"""GradScaler: the scale's schedule, skipped steps, unscaling, checkpoints, errors.

The schedule is compared step for step with PyTorch's GradScaler on the CPU,
with overflowing gradients injected at chosen steps.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradlab
from gradlab import events
from tests.oracle import needs_torch, torch


def _model(lib, w0):
    w = lib.tensor(w0, requires_grad=True)
    return w, lib.optim.SGD([w], lr=0.1)


def _schedule(lib, overflow_at, steps=8):
    """Scales after each update, whether each step moved the weight, and the final state."""
    w, opt = _model(lib, np.array([1.0, -2.0, 0.5], dtype=np.float32))
    scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    scales, moved = [], []
    for step in range(steps):
        opt.zero_grad()
        loss = (w * w).sum()
        scaler.scale(loss).backward()
        if step in overflow_at:
            with lib.no_grad():
                w.grad[1] = float("inf") if step % 2 else float("nan")
        before = w.detach().clone()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        moved.append(not bool((w.detach() == before).all()))
    return scales, moved, w.detach().numpy().copy(), scaler.state_dict()


@needs_torch
def test_schedule_matches_torch():
    ours = _schedule(gradlab, overflow_at={1, 4, 5})
    theirs = _schedule(torch, overflow_at={1, 4, 5})
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    assert ours[3] == theirs[3]


def test_schedule_without_oracle():
    scales, moved, _, state = _schedule(gradlab, overflow_at={1})
    # 8 (grow after 2 clean) -> step 0 clean: 8; step 1 overflow: 4; then doubles every 2.
    assert scales == [8.0, 4.0, 4.0, 8.0, 8.0, 16.0, 16.0, 32.0]
    assert moved == [True, False, True, True, True, True, True, True]
    assert state == {"scale": 32.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                     "growth_interval": 2, "_growth_tracker": 0}


def test_unscale_then_clip_then_step_unscales_once():
    w, opt = _model(gradlab, np.array([3.0, 4.0], dtype=np.float32))
    scaler = gradlab.amp.GradScaler("cpu", init_scale=1024.0)
    scaler.scale((w * w).sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), 1024 * np.array([6.0, 8.0]))
    scaler.unscale_(opt)
    np.testing.assert_allclose(w.grad.numpy(), [6.0, 8.0])
    gradlab.nn.utils.clip_grad_norm_([w], 5.0)  # sees the true norm, 10
    scaler.step(opt)
    np.testing.assert_allclose(w.detach().numpy(), [3.0 - 0.1 * 3.0, 4.0 - 0.1 * 4.0],
                               rtol=1e-6)


def test_scale_keeps_structure_and_lifts_half_losses_to_float32():
    scaler = gradlab.amp.GradScaler("cpu")
    loss = gradlab.tensor(2.0, dtype=gradlab.float16)
    scaled = scaler.scale(loss)
    assert scaled.dtype is gradlab.float32 and scaled.item() == 2.0 * 65536  # no float16 inf
    a, (b,) = scaler.scale((gradlab.tensor(1.0), [gradlab.tensor(3.0)]))
    assert (a.item(), b.item()) == (65536.0, 3 * 65536.0)
    with pytest.raises(TypeError, match=r"scaler.scale\(loss\)"):
        scaler.scale(1.0)


def test_disabled_scaler_passes_through():
    w, opt = _model(gradlab, np.array([1.0], dtype=np.float32))
    scaler = gradlab.amp.GradScaler("cpu", enabled=False)
    loss = (w * w).sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    assert w.item() == pytest.approx(0.8)
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {} and not scaler.is_enabled()


def test_cuda_scaler_without_a_gpu_warns_and_disables():
    if gradlab.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.warns(UserWarning, match=r"GradScaler\('cpu'\)"):
        scaler = gradlab.amp.GradScaler()
    assert not scaler.is_enabled()


def test_state_dict_round_trip_and_settings():
    scaler = gradlab.amp.GradScaler("cpu", init_scale=4.0, growth_interval=3)
    scaler.set_growth_factor(4.0)
    scaler.set_backoff_factor(0.25)
    scaler.set_growth_interval(5)
    assert (scaler.get_growth_factor(), scaler.get_backoff_factor(),
            scaler.get_growth_interval()) == (4.0, 0.25, 5)
    other = gradlab.amp.GradScaler("cpu")
    other.load_state_dict(scaler.state_dict())
    assert other.state_dict() == scaler.state_dict()
    assert other.get_scale() == 4.0
    with pytest.raises(RuntimeError, match="disabled GradScaler"):
        other.load_state_dict({})


def test_update_reports_the_scale_to_the_debugger():
    w, opt = _model(gradlab, np.array([1.0], dtype=np.float32))
    scaler = gradlab.amp.GradScaler("cpu", init_scale=2.0)
    metrics = []
    with events.subscribe(lambda e: metrics.append(e.values)
                          if isinstance(e, events.Metric) else None, light=True):
        scaler.scale((w * w).sum()).backward()
        with gradlab.no_grad():
            w.grad[0] = float("inf")
        scaler.step(opt)
        scaler.update()
    assert metrics == [{"loss": 1.0}, {"grad_scale": 1.0, "skipped_steps": 1}]


def test_update_with_a_new_scale():
    w, opt = _model(gradlab, np.array([1.0], dtype=np.float32))
    scaler = gradlab.amp.GradScaler("cpu")
    scaler.scale((w * w).sum()).backward()
    scaler.step(opt)
    scaler.update(new_scale=gradlab.tensor(128.0))
    assert scaler.get_scale() == 128.0
    with pytest.raises(ValueError, match="one-element tensor"):
        scaler.update(new_scale=gradlab.ones(2))


def test_misuse_raises_with_the_fix():
    w, opt = _model(gradlab, np.array([1.0], dtype=np.float32))
    scaler = gradlab.amp.GradScaler("cpu")
    with pytest.raises(RuntimeError, match=r"scaler.scale\(loss\).backward\(\)"):
        scaler.step(opt)
    scaler.scale((w * w).sum()).backward()
    with pytest.raises(RuntimeError, match="closure"):
        scaler.step(opt, closure=lambda: 0.0)
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="update"):
        scaler.step(opt)
    scaler.update()
    with pytest.raises(RuntimeError, match="no inf/NaN checks"):
        scaler.update()
    with pytest.raises(ValueError, match="growth_factor"):
        gradlab.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(ValueError, match="backoff_factor"):
        gradlab.amp.GradScaler("cpu", backoff_factor=1.0)


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # 65536 in float16: inf
def test_float16_parameters_are_refused():
    w = gradlab.ones(2, dtype=gradlab.float16, requires_grad=True)
    opt = gradlab.optim.SGD([w], lr=0.1)
    scaler = gradlab.amp.GradScaler("cpu")
    scaler.scale(w.float().sum()).backward()
    with pytest.raises(ValueError, match="keep the parameters in float32"):
        scaler.step(opt)


@needs_torch
def test_mixed_precision_training_matches_torch():
    """A few steps of float16 autocast with loss scaling: same weights as PyTorch's."""
    rng = np.random.default_rng(3)
    w1, w2 = rng.normal(size=(8, 6)) * 0.5, rng.normal(size=(3, 8)) * 0.5
    x, y = rng.normal(size=(16, 6)), rng.integers(0, 3, 16)
    finals, losses = [], []
    for lib in (gradlab, torch):
        nn = lib.nn
        model = nn.Sequential(nn.Linear(6, 8, bias=False), nn.Tanh(), nn.Linear(8, 3, bias=False))
        with lib.no_grad():
            model[0].weight.copy_(lib.tensor(w1, dtype=lib.float32))
            model[2].weight.copy_(lib.tensor(w2, dtype=lib.float32))
        opt = lib.optim.SGD(model.parameters(), lr=0.5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 10)
        xs, ys = lib.tensor(x, dtype=lib.float32), lib.tensor(y)
        run = []
        for _ in range(5):
            opt.zero_grad()
            with lib.autocast("cpu", dtype=lib.float16):
                loss = nn.functional.cross_entropy(model(xs), ys)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            run.append(loss.item())
        losses.append(run)
        finals.append([p.detach().numpy().copy() for p in model.parameters()])
    np.testing.assert_allclose(losses[0], losses[1], rtol=5e-3)
    assert losses[0][-1] < losses[0][0]
    for a, b in zip(*finals):
        np.testing.assert_allclose(a, b, rtol=1e-2, atol=1e-3)
