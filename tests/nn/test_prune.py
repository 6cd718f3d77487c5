"""nn.utils.prune: masks, reparametrization, iterative and global pruning, remove."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import gradlab
from gradlab import nn
from gradlab.nn.utils import prune
from tests.oracle import needs_torch, torch

torch_prune = None if torch is None else importlib.import_module("torch.nn.utils.prune")


def _weights(shape, seed=0):
    """Distinct magnitudes, so no two entries tie for a place in the ranking."""
    rng = np.random.default_rng(seed)
    values = rng.permutation(np.prod(shape)).reshape(shape) + 1.0
    return values * rng.choice([-1, 1], size=shape) / values.size


def _linear(lib, out_features=6, in_features=5, seed=0):
    layer = lib.nn.Linear(in_features, out_features).double()
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(_weights((out_features, in_features), seed)))
        layer.bias.copy_(lib.tensor(_weights((out_features,), seed + 10)))
    return layer


def test_l1_unstructured_reparametrizes_the_weight():
    layer = _linear(gradlab)
    weight = layer.weight
    prune.l1_unstructured(layer, "weight", amount=0.4)
    assert [n for n, _ in layer.named_parameters()] == ["bias", "weight_orig"]
    assert layer.weight_orig is weight  # the very Parameter, still what the optimizer sees
    assert [n for n, _ in layer.named_buffers()] == ["weight_mask"]
    assert list(layer.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    mask = layer.weight_mask.numpy()
    assert mask.sum() == 30 - 12  # round(0.4 * 30) pruned
    magnitudes = np.abs(weight.detach().numpy())
    assert magnitudes[mask == 0].max() < magnitudes[mask == 1].min()  # the smallest went
    assert not isinstance(layer.weight, nn.Parameter)
    np.testing.assert_array_equal(layer.weight.detach().numpy(), weight.detach().numpy() * mask)
    assert prune.is_pruned(nn.Sequential(layer)) and not prune.is_pruned(nn.Linear(2, 2))


def test_pruned_weights_get_no_gradient_and_stay_pruned_through_training():
    layer = _linear(gradlab)
    prune.l1_unstructured(layer, "weight", amount=10)
    opt = gradlab.optim.SGD(layer.parameters(), lr=0.5)
    x = gradlab.randn(8, 5, dtype=gradlab.float64)
    for _ in range(3):
        opt.zero_grad()
        layer(x).pow(2).sum().backward()
        mask = layer.weight_mask.numpy()
        assert (layer.weight_orig.grad.numpy()[mask == 0] == 0).all()
        opt.step()
    out = layer(x)  # the pre-hook recomputed weight from the trained weight_orig
    np.testing.assert_array_equal(layer.weight.detach().numpy()[mask == 0], 0)
    np.testing.assert_allclose(out.detach().numpy(),
                               x.numpy() @ (layer.weight_orig.detach().numpy() * mask).T +
                               layer.bias.detach().numpy())


def test_pruning_again_chooses_among_what_is_left():
    layer = _linear(gradlab)
    prune.l1_unstructured(layer, "weight", amount=0.5)  # 15 left
    prune.l1_unstructured(layer, "weight", amount=0.2)  # 20 % of those 15: 3 more
    assert layer.weight_mask.sum().item() == 12
    hooks = [h for h in layer._forward_pre_hooks.values()
             if isinstance(h, prune.BasePruningMethod)]
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer)
    assert len(hooks[0]) == 2
    prune.ln_structured(layer, "weight", amount=2, n=2, dim=0)
    rows = layer.weight_mask.numpy().sum(1)
    assert (rows == 0).sum() >= 2


def test_remove_makes_it_permanent():
    layer = _linear(gradlab)
    prune.ln_structured(layer, "weight", amount=0.5, n=1, dim=0)
    pruned = layer.weight.detach().numpy().copy()
    prune.remove(layer, "weight")
    assert [n for n, _ in layer.named_parameters()] == ["bias", "weight"]
    assert isinstance(layer.weight, nn.Parameter) and not list(layer.named_buffers())
    np.testing.assert_array_equal(layer.weight.detach().numpy(), pruned)
    assert not prune.is_pruned(layer)
    with pytest.raises(ValueError, match="has to be pruned before"):
        prune.remove(layer, "weight")


def test_global_unstructured_ranks_all_layers_together():
    a, b = _linear(gradlab, 4, 3, seed=1), _linear(gradlab, 3, 4, seed=2)
    with gradlab.no_grad():
        b.weight.mul_(100)  # b's weights all outrank a's
    prune.global_unstructured([(a, "weight"), (b, "weight")],
                              pruning_method=prune.L1Unstructured, amount=12)
    assert a.weight_mask.sum().item() == 0 and b.weight_mask.sum().item() == 12


def test_random_methods_are_seeded_and_count_right():
    def masks():
        gradlab.manual_seed(5)
        conv = nn.Conv2d(2, 6, 3)
        prune.random_unstructured(conv, "bias", amount=2)
        prune.random_structured(conv, "weight", amount=0.5, dim=0)
        return conv.bias_mask.numpy(), conv.weight_mask.numpy()
    (bias, weight), (bias2, weight2) = masks(), masks()
    np.testing.assert_array_equal(bias, bias2)
    np.testing.assert_array_equal(weight, weight2)
    assert bias.sum() == 4
    per_channel = weight.reshape(6, -1).sum(1)
    assert sorted(per_channel) == [0, 0, 0, 18, 18, 18]


def test_custom_from_mask_and_identity():
    layer = nn.Linear(3, 2)
    mask = gradlab.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    prune.custom_from_mask(layer, "weight", mask)
    np.testing.assert_array_equal(layer.weight_mask.numpy(), mask.numpy())
    prune.identity(layer, "bias")
    assert layer.bias_mask.tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="mask has shape"):
        prune.custom_from_mask(nn.Linear(3, 2), "weight", gradlab.ones(3))


def test_bad_amounts_and_shapes_explain():
    with pytest.raises(ValueError, match="amount=1.5 should either be a float"):
        prune.l1_unstructured(nn.Linear(2, 2), "weight", amount=1.5)
    with pytest.raises(ValueError, match="amount=-1"):
        prune.l1_unstructured(nn.Linear(2, 2), "weight", amount=-1)
    with pytest.raises(ValueError, match="smaller than the number of parameters to prune=4"):
        prune.l1_unstructured(nn.Linear(2, 2), "weight", amount=5)
    with pytest.raises(ValueError, match="multidimensional"):
        prune.ln_structured(nn.Linear(2, 2), "bias", amount=1, n=2, dim=0)
    with pytest.raises(AttributeError, match="no tensor 'wieght'.*weight, bias"):
        prune.l1_unstructured(nn.Linear(2, 2), "wieght", amount=1)
    with pytest.raises(TypeError, match="only unstructured"):
        prune.global_unstructured([(nn.Linear(2, 2), "weight")],
                                  pruning_method=prune.LnStructured, amount=1, n=2, dim=0)


@needs_torch
@pytest.mark.parametrize("steps", [
    [("l1_unstructured", dict(amount=0.3))],
    [("l1_unstructured", dict(amount=7))],
    [("ln_structured", dict(amount=2, n=2, dim=0))],
    [("ln_structured", dict(amount=0.4, n=1, dim=1))],
    [("ln_structured", dict(amount=2, n=float("inf"), dim=-1))],
    [("l1_unstructured", dict(amount=0.5)), ("l1_unstructured", dict(amount=0.3))],
    [("l1_unstructured", dict(amount=0.3)), ("ln_structured", dict(amount=2, n=2, dim=0))],
    [("ln_structured", dict(amount=1, n=2, dim=0)), ("l1_unstructured", dict(amount=6))],
], ids=lambda steps: "+".join(f"{n}{sorted(k.values(), key=str)}" for n, k in steps))
def test_masks_match_pytorch(steps):
    ours, theirs = _linear(gradlab), _linear(torch)
    for name, kwargs in steps:
        getattr(prune, name)(ours, "weight", **kwargs)
        getattr(torch_prune, name)(theirs, "weight", **kwargs)
        np.testing.assert_array_equal(ours.weight_mask.numpy(), theirs.weight_mask.numpy())
    x = np.random.default_rng(0).normal(size=(4, 5))
    np.testing.assert_allclose(ours(gradlab.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    assert list(ours.state_dict()) == list(theirs.state_dict())


@needs_torch
def test_global_pruning_matches_pytorch():
    layers = {lib: (_linear(lib, 4, 3, 1), _linear(lib, 3, 5, 2)) for lib in (gradlab, torch)}
    for lib, (a, b) in layers.items():
        module = prune if lib is gradlab else torch_prune
        module.l1_unstructured(a, "weight", amount=3)
        module.global_unstructured([(a, "weight"), (b, "weight"), (b, "bias")],
                                   pruning_method=module.L1Unstructured, amount=0.4)
    for ours, theirs in zip(layers[gradlab], layers[torch]):
        for name in ("weight_mask", "bias_mask"):
            if hasattr(theirs, name):
                np.testing.assert_array_equal(getattr(ours, name).numpy(),
                                              getattr(theirs, name).numpy())
