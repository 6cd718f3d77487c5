"""Complex parameters: every elementwise optimizer updates them as real (re, im) pairs, as
PyTorch does, so its steps match PyTorch's; the others refuse them by name."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.oracle import needs_torch, torch

OPTIONS = {  # name -> options, chosen so that every branch of the update runs
    "SGD": dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "Adam": dict(lr=0.1, amsgrad=True, weight_decay=0.1),
    "AdamW": dict(lr=0.1, weight_decay=0.1),
    "RMSprop": dict(lr=0.01, momentum=0.5, centered=True),
    "Adagrad": dict(lr=0.1, initial_accumulator_value=0.1),
    "Adadelta": dict(lr=1.0),
    "Adamax": dict(lr=0.1),
    "NAdam": dict(lr=0.1),
    "RAdam": dict(lr=0.1),
    "ASGD": dict(lr=0.1, t0=1),
    "Rprop": dict(lr=0.1),
}
TARGET = [0.3 - 1j, 2 + 0.5j, -1j]


def _train(lib, name, steps=6):
    z = lib.tensor([1 + 2j, -0.5 + 0.25j, 0.1 - 0.3j], dtype=lib.complex128,
                   requires_grad=True)
    target = lib.tensor(TARGET, dtype=lib.complex128)
    opt = getattr(lib.optim, name)([z], **OPTIONS[name])
    for _ in range(steps):
        opt.zero_grad()
        loss = ((z - target) * (z - target).conj()).real.sum() + (z * z * 0.1).real.sum()
        loss.backward()
        opt.step()
    return z, opt


@needs_torch
@pytest.mark.parametrize("name", OPTIONS)
def test_steps_on_a_complex_parameter_match_torch(name):
    ours, _ = _train(gradlab, name)
    theirs, _ = _train(torch, name)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().resolve_conj().numpy(),
                               rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", OPTIONS)
def test_a_complex_parameter_descends(name):
    """Without PyTorch: the loss |z - t|² + Re(0.1 z²) goes down under every optimizer."""
    z0 = gradlab.tensor([1 + 2j, -0.5 + 0.25j, 0.1 - 0.3j], dtype=gradlab.complex128)
    target = gradlab.tensor(TARGET, dtype=gradlab.complex128)

    def loss(z):
        return float(((z - target) * (z - target).conj()).real.sum() + (z * z * 0.1).real.sum())

    z, _ = _train(gradlab, name, steps=20)
    assert loss(z.detach()) < loss(z0)


def test_state_is_kept_as_real_pairs_and_survives_a_checkpoint(tmp_path):
    z, opt = _train(gradlab, "Adam")
    assert opt.state[z]["exp_avg"].shape == (3, 2) and opt.state[z]["exp_avg"].dtype is \
        gradlab.float64
    gradlab.save(opt.state_dict(), tmp_path / "opt.safetensors")
    again = gradlab.optim.Adam([z], **OPTIONS["Adam"])
    again.load_state_dict(gradlab.load(tmp_path / "opt.safetensors"))
    assert again.state[z]["exp_avg"].dtype is gradlab.float64
    np.testing.assert_array_equal(again.state[z]["exp_avg_sq"].numpy(),
                                  opt.state[z]["exp_avg_sq"].numpy())


@pytest.mark.parametrize("name, make", [
    ("Adafactor", lambda z: gradlab.optim.Adafactor([z])),
    ("LBFGS", lambda z: gradlab.optim.LBFGS([z])),
    ("Muon", lambda z: gradlab.optim.Muon([z])),
])
def test_optimizers_that_are_not_elementwise_refuse_complex_parameters(name, make):
    z = gradlab.zeros(2, 2, dtype=gradlab.complex64, requires_grad=True)
    with pytest.raises(TypeError, match=f"{name} does not support complex parameters.*"
                                        r"shape \(2, 2\)"):
        make(z)


def test_the_debugger_sees_complex_updates():
    """With a listener, OptimizerStep events carry the parameter itself (not its view)."""
    events = []
    with gradlab.events.subscribe(lambda e: events.append(e)
                                  if isinstance(e, gradlab.events.OptimizerStep) else None):
        z, _ = _train(gradlab, "Adam", steps=2)
    assert len(events) == 2 and events[0].param.shape == (3,)
    assert events[-1].update_norm > 0


@needs_torch
@pytest.mark.filterwarnings("ignore:Complex modules are a new feature")  # PyTorch's note
def test_a_complex_linear_model_trains_like_torch():
    """nn.Linear in complex64 (as PyTorch's, from Module.to), trained with Adam on |y - t|²:
    the same weights as PyTorch's after a few steps."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((16, 3)) + 1j * rng.standard_normal((16, 3))).astype(np.complex64)
    t = (rng.standard_normal((16, 2)) + 1j * rng.standard_normal((16, 2))).astype(np.complex64)
    w0 = rng.standard_normal((2, 3)).astype(np.float32)
    weights = []
    for lib in (gradlab, torch):
        layer = lib.nn.Linear(3, 2)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(w0))
            layer.bias.zero_()
        layer = layer.to(lib.complex64)
        opt = lib.optim.Adam(layer.parameters(), lr=0.05)
        for _ in range(5):
            opt.zero_grad()
            ((layer(lib.tensor(x)) - lib.tensor(t)).abs() ** 2).mean().backward()
            opt.step()
        weights.append(layer.weight.detach().resolve_conj().numpy())
    assert weights[0].dtype == np.complex64
    np.testing.assert_allclose(weights[0], weights[1], rtol=1e-4, atol=1e-5)
