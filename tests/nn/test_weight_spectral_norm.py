"""Weight norm and spectral norm, as parametrizations and as hooks, against PyTorch."""

import warnings

import numpy as np
import pytest

import gradlab
from gradlab import nn
from gradlab.nn.utils import (
    parametrizations,
    parametrize,
    remove_spectral_norm,
    remove_weight_norm,
    spectral_norm,
    weight_norm,
)
from tests.oracle import needs_torch, torch


def host(t) -> np.ndarray:
    if isinstance(t, (np.ndarray, np.generic, float)):
        return np.asarray(t)
    return t.detach().cpu().numpy()


def close(a, b, tol=1e-10) -> None:
    np.testing.assert_allclose(host(a), host(b), rtol=tol, atol=tol)


LAYERS = {  # name: (constructor arguments, input shape)
    "Linear": ((5, 4), (3, 5)),
    "Conv2d": ((2, 3, 3), (2, 2, 5, 5)),
    "ConvTranspose2d": ((3, 2, 3), (2, 3, 4, 4)),
}


def layer_pair(kind="Linear", seed=0):
    """The same float64 layer in gradlab and PyTorch (weights drawn here, then copied)."""
    args, _ = LAYERS[kind]
    theirs = getattr(torch.nn, kind)(*args).double()
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape))))
    ours = getattr(nn, kind)(*args).double()
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def input_for(kind, seed=1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(LAYERS[kind][1])


def sgd_steps(ours, theirs, kind, steps=4, lr=0.05):
    """A few identical SGD steps on both; returns nothing, the modules hold the result."""
    opt_g = gradlab.optim.SGD(ours.parameters(), lr=lr)
    opt_t = torch.optim.SGD(theirs.parameters(), lr=lr)
    for step in range(steps):
        x = input_for(kind, seed=10 + step)
        for m, opt, lib in ((ours, opt_g, gradlab), (theirs, opt_t, torch)):
            opt.zero_grad()
            (m(lib.tensor(x)) ** 2).mean().backward()
            opt.step()


# --- parametrizations.weight_norm -------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("kind", ["Linear", "Conv2d"])
@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_parametrized_weight_norm_matches_torch(kind, dim):
    ours, theirs = layer_pair(kind)
    parametrizations.weight_norm(ours, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(theirs, dim=dim)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == \
        ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    close(ours.parametrizations.weight.original0, theirs.parametrizations.weight.original0)
    close(ours.weight, theirs.weight)
    x = input_for(kind)
    out_g, out_t = ours(gradlab.tensor(x)), theirs(torch.from_numpy(x))
    close(out_g, out_t)
    (out_g ** 2).sum().backward()
    (out_t ** 2).sum().backward()
    for i in (0, 1):
        close(getattr(ours.parametrizations.weight, f"original{i}").grad,
              getattr(theirs.parametrizations.weight, f"original{i}").grad, 1e-9)
    sgd_steps(ours, theirs, kind)
    close(ours.weight, theirs.weight, 1e-9)
    parametrize.remove_parametrizations(ours, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    close(ours.weight, theirs.weight, 1e-9)


# --- the old weight_norm hook -----------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("kind", ["Linear", "Conv2d"])
@pytest.mark.parametrize("dim", [0, 1, None])
def test_hook_weight_norm_matches_torch(kind, dim):
    ours, theirs = layer_pair(kind)
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        weight_norm(ours, dim=dim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(theirs, dim=dim)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert not isinstance(ours.weight, nn.Parameter)
    close(ours.weight_g, theirs.weight_g)
    x = input_for(kind)
    out_g, out_t = ours(gradlab.tensor(x)), theirs(torch.from_numpy(x))
    close(out_g, out_t)
    (out_g ** 2).sum().backward()
    (out_t ** 2).sum().backward()
    close(ours.weight_g.grad, theirs.weight_g.grad, 1e-9)
    close(ours.weight_v.grad, theirs.weight_v.grad, 1e-9)
    sgd_steps(ours, theirs, kind)
    remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(theirs)
    assert isinstance(ours.weight, nn.Parameter)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight"]
    close(ours.weight, theirs.weight, 1e-9)


def test_hook_weight_norm_errors():
    m = nn.Linear(3, 2)
    with pytest.warns(FutureWarning):
        weight_norm(m)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"), \
            pytest.warns(FutureWarning):
        weight_norm(m)
    with pytest.raises(ValueError, match="weight_norm of 'bias' not found"):
        remove_weight_norm(m, "bias")


# --- parametrizations.spectral_norm -----------------------------------------------------
def torch_spectral_pair(kind, n_power_iterations=1, dim=None, seed=0):
    ours, theirs = layer_pair(kind, seed)
    torch.nn.utils.parametrizations.spectral_norm(theirs, n_power_iterations=n_power_iterations,
                                                  dim=dim)
    parametrizations.spectral_norm(ours, n_power_iterations=n_power_iterations, dim=dim)
    ours.load_state_dict(theirs.state_dict())  # the same u, v (they start random)
    return ours, theirs


@needs_torch
@pytest.mark.parametrize("kind", ["Linear", "Conv2d", "ConvTranspose2d"])
@pytest.mark.parametrize("n_power_iterations", [1, 3])
def test_parametrized_spectral_norm_trains_like_torch(kind, n_power_iterations):
    ours, theirs = torch_spectral_pair(kind, n_power_iterations)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == \
        ["bias", "parametrizations.weight.original", "parametrizations.weight.0._u",
         "parametrizations.weight.0._v"]
    assert ours.parametrizations.weight[0].dim == theirs.parametrizations.weight[0].dim
    close(ours.weight, theirs.weight)  # training mode: one more power step, in both
    close(ours.parametrizations.weight[0]._u, theirs.parametrizations.weight[0]._u)
    sgd_steps(ours, theirs, kind)
    for name in ("_u", "_v"):
        close(getattr(ours.parametrizations.weight[0], name),
              getattr(theirs.parametrizations.weight[0], name), 1e-9)
    close(ours.parametrizations.weight.original, theirs.parametrizations.weight.original, 1e-9)
    # the spectral norm of the result is ~1 (power iteration has converged by now)
    w = host(ours.weight)
    mat = np.moveaxis(w, ours.parametrizations.weight[0].dim, 0).reshape(w.shape[
        ours.parametrizations.weight[0].dim], -1)
    assert abs(np.linalg.norm(mat, 2) - 1) < 0.05


@needs_torch
def test_parametrized_spectral_norm_eval_keeps_u_and_v():
    ours, theirs = torch_spectral_pair("Linear", dim=1)
    ours.eval()
    theirs.eval()
    u, v = (host(ours.parametrizations.weight[0]._u).copy(),
            host(ours.parametrizations.weight[0]._v).copy())
    close(ours.weight, theirs.weight)
    close(ours.weight, theirs.weight)
    close(ours.parametrizations.weight[0]._u, u)
    close(ours.parametrizations.weight[0]._v, v)
    x = input_for("Linear")
    (ours(gradlab.tensor(x)) ** 2).sum().backward()
    (theirs(torch.from_numpy(x)) ** 2).sum().backward()
    close(ours.parametrizations.weight.original.grad, theirs.parametrizations.weight.original.grad)


@needs_torch
def test_parametrized_spectral_norm_of_a_vector_normalises_it():
    ours, theirs = layer_pair("Linear")
    parametrizations.spectral_norm(ours, name="bias")
    torch.nn.utils.parametrizations.spectral_norm(theirs, name="bias")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    close(ours.bias, theirs.bias)
    close(np.linalg.norm(host(ours.bias)), 1.0)


def test_parametrized_spectral_norm_errors():
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        parametrizations.spectral_norm(nn.Linear(3, 2), n_power_iterations=0)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range"):
        parametrizations.spectral_norm(nn.Linear(3, 2), dim=2)
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        parametrizations.spectral_norm(nn.Linear(3, 2), name="w")


# --- the old spectral_norm hook ---------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("kind", ["Linear", "Conv2d", "ConvTranspose2d"])
def test_hook_spectral_norm_trains_like_torch(kind):
    ours, theirs = layer_pair(kind)
    torch.nn.utils.spectral_norm(theirs, n_power_iterations=2)
    spectral_norm(ours, n_power_iterations=2)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == \
        ["bias", "weight_orig", "weight_u", "weight_v"]
    ours.load_state_dict(theirs.state_dict())  # the same random start for u and v
    close(ours.weight, theirs.weight)  # the plain attribute before any call: weight_orig
    sgd_steps(ours, theirs, kind)
    for name in ("weight_orig", "weight_u", "weight_v", "weight"):
        close(getattr(ours, name), getattr(theirs, name), 1e-9)
    ours.eval()
    theirs.eval()
    u = host(ours.weight_u).copy()
    x = input_for(kind)
    close(ours(gradlab.tensor(x)), theirs(torch.from_numpy(x)), 1e-9)
    close(ours.weight_u, u)  # eval: no power iteration
    remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight"]
    assert isinstance(ours.weight, nn.Parameter)
    close(ours.weight, theirs.weight, 1e-9)


def test_hook_spectral_norm_errors():
    m = spectral_norm(nn.Linear(3, 2))
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        spectral_norm(m)
    with pytest.raises(ValueError, match="spectral_norm of 'bias' not found"):
        remove_spectral_norm(m, "bias")
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        spectral_norm(nn.Linear(3, 2), n_power_iterations=0)
    with pytest.raises(ValueError, match="cannot be applied as parameter `bias` is None"):
        spectral_norm(nn.Linear(3, 2, bias=False), name="bias")


@needs_torch
@pytest.mark.filterwarnings("ignore:.*weight_norm.*is deprecated:FutureWarning")
def test_an_old_weight_norm_checkpoint_loads_into_the_parametrized_form_as_in_torch():
    """weight_g/weight_v keys (the hook form) are renamed by a load pre-hook."""
    results = []
    for lib in (gradlab, torch):
        lib.manual_seed(0)
        old = lib.nn.utils.weight_norm(lib.nn.Linear(3, 2))
        new = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 2))
        new.load_state_dict(old.state_dict())
        results.append(new.weight.detach().numpy().tolist() == old.weight.detach().numpy().tolist())
    assert results == [True, True]
