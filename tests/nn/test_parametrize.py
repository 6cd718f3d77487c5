"""torch.nn.utils.parametrize and parametrizations.orthogonal, against PyTorch."""

import copy
import pickle

import numpy as np
import pytest

import gradlab
from gradlab import nn
from gradlab.nn.utils import parametrize
from gradlab.nn.utils.parametrizations import _geqrf, orthogonal
from tests.oracle import needs_torch, torch


def host(t) -> np.ndarray:
    if isinstance(t, (np.ndarray, np.generic, float)):
        return np.asarray(t)
    return t.detach().cpu().numpy()


def close(a, b, tol=1e-10) -> None:
    np.testing.assert_allclose(host(a), host(b), rtol=tol, atol=tol)


def make_parametrizations(lib):
    """The same small parametrization classes written against either library."""

    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()

    class Scale(lib.nn.Module):
        def forward(self, X):
            return 2.0 * X

        def right_inverse(self, A):
            return A / 2.0

    class NoInverse(lib.nn.Module):
        def forward(self, X):
            return X * X

    return Symmetric, Scale, NoInverse


def linear_pair(n_in=4, n_out=4, seed=0):
    """A float64 gradlab Linear and a PyTorch Linear with the same weights."""
    rng = np.random.default_rng(seed)
    ours = nn.Linear(n_in, n_out).double()
    theirs = torch.nn.Linear(n_in, n_out).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(rng.standard_normal((n_out, n_in))))
        theirs.bias.copy_(torch.from_numpy(rng.standard_normal(n_out)))
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


# --- registering, reading, state_dict --------------------------------------------------
@needs_torch
def test_register_matches_torch_values_grads_and_keys():
    ours, theirs = linear_pair()
    SymG, _, _ = make_parametrizations(gradlab)
    SymT, _, _ = make_parametrizations(torch)
    parametrize.register_parametrization(ours, "weight", SymG())
    torch.nn.utils.parametrize.register_parametrization(theirs, "weight", SymT())
    assert type(ours).__name__ == type(theirs).__name__ == "ParametrizedLinear"
    assert isinstance(ours, nn.Linear)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == \
        ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    close(ours.weight, theirs.weight)
    close(ours.weight, ours.weight.mT)
    close(ours.parametrizations.weight.original, theirs.parametrizations.weight.original)
    x = np.random.default_rng(1).standard_normal((3, 4))
    out_g = ours(gradlab.tensor(x))
    out_t = theirs(torch.from_numpy(x))
    close(out_g, out_t)
    (out_g ** 2).sum().backward()
    (out_t ** 2).sum().backward()
    close(ours.parametrizations.weight.original.grad, theirs.parametrizations.weight.original.grad)
    close(ours.bias.grad, theirs.bias.grad)


@needs_torch
def test_repr_and_state_dict_round_trip_with_torch():
    ours, theirs = linear_pair()
    parametrize.register_parametrization(ours, "weight", make_parametrizations(gradlab)[0]())
    torch.nn.utils.parametrize.register_parametrization(theirs, "weight",
                                                        make_parametrizations(torch)[0]())
    assert "(parametrizations): ModuleDict(" in repr(ours)
    assert "(weight): ParametrizationList(" in repr(ours)
    assert repr(ours).startswith("ParametrizedLinear(")
    with torch.no_grad():
        theirs.parametrizations.weight.original.mul_(3.0)
    result = ours.load_state_dict(theirs.state_dict())
    assert not result.missing_keys and not result.unexpected_keys
    close(ours.weight, theirs.weight)


@needs_torch
def test_chain_of_two_parametrizations_and_assignment_through_right_inverse():
    ours, theirs = linear_pair()
    SymG, ScaleG, _ = make_parametrizations(gradlab)
    SymT, ScaleT, _ = make_parametrizations(torch)
    for reg, m, sym, scale in ((parametrize.register_parametrization, ours, SymG, ScaleG),
                               (torch.nn.utils.parametrize.register_parametrization, theirs,
                                SymT, ScaleT)):
        reg(m, "weight", sym())
        reg(m, "weight", scale())
    chain = ours.parametrizations.weight
    assert isinstance(chain, parametrize.ParametrizationList) and len(chain) == 2
    close(ours.weight, theirs.weight)
    target = np.random.default_rng(2).standard_normal((4, 4))
    target = target + target.T
    original = ours.parametrizations.weight.original
    ours.weight = gradlab.tensor(target)
    theirs.weight = torch.from_numpy(target)
    assert ours.parametrizations.weight.original is original  # the optimizer's object stays
    close(ours.parametrizations.weight.original, theirs.parametrizations.weight.original)
    close(ours.weight, target)


def test_buffer_parametrization_and_training_mode_follow_the_module():
    m = nn.BatchNorm1d(3).double()
    m.eval()
    sym_scale = make_parametrizations(gradlab)[1]()
    parametrize.register_parametrization(m, "running_var", sym_scale)
    assert not sym_scale.training  # takes the module's mode
    assert "parametrizations.running_var.original" in m.state_dict()
    assert isinstance(m.parametrizations.running_var.original, gradlab.Tensor)
    assert not isinstance(m.parametrizations.running_var.original, nn.Parameter)
    close(m.running_var, np.ones(3))  # original = right_inverse(1) = 0.5; forward: 2 * 0.5


def test_multi_tensor_right_inverse_makes_original0_original1():
    class Product(nn.Module):
        def forward(self, a, b):
            return a * b

        def right_inverse(self, w):
            return w / 2.0, gradlab.full_like(w, 2.0)

    m = nn.Linear(3, 2).double()
    w0 = m.weight.detach().clone()
    parametrize.register_parametrization(m, "weight", Product())
    keys = list(m.state_dict())
    assert keys == ["bias", "parametrizations.weight.original0",
                    "parametrizations.weight.original1"]
    close(m.weight, w0)
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(m, "weight")
    assert isinstance(m.weight, nn.Parameter) and type(m) is nn.Linear
    close(m.weight, w0)


# --- removing ---------------------------------------------------------------------------
@pytest.mark.parametrize("leave", [True, False])
def test_remove_restores_class_and_keeps_the_parameter_object(leave):
    m = nn.Linear(4, 4).double()
    Sym = make_parametrizations(gradlab)[0]
    parametrize.register_parametrization(m, "weight", Sym())
    original = m.parametrizations.weight.original
    original_values = original.detach().clone()
    parametrized = m.weight.detach().clone()
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=leave)
    assert type(m) is nn.Linear
    assert "parametrizations" not in m._modules
    assert m.weight is original
    close(m.weight, parametrized if leave else original_values)
    assert list(m.state_dict()) == ["bias", "weight"]
    assert not parametrize.is_parametrized(m)


def test_two_tensors_class_restored_only_after_the_last():
    m = nn.Linear(4, 4).double()
    Sym, Scale, _ = make_parametrizations(gradlab)
    parametrize.register_parametrization(m, "weight", Sym())
    parametrize.register_parametrization(m, "bias", Scale())
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "bias")
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    parametrize.remove_parametrizations(m, "weight")
    assert type(m).__name__ == "ParametrizedLinear" and not hasattr(type(m), "weight")
    parametrize.remove_parametrizations(m, "bias")
    assert type(m) is nn.Linear
    assert parametrize.type_before_parametrizations(m) is nn.Linear


def test_other_modules_of_the_same_class_are_untouched():
    a, b = nn.Linear(3, 3), nn.Linear(3, 3)
    parametrize.register_parametrization(a, "weight", make_parametrizations(gradlab)[0]())
    assert type(b) is nn.Linear and isinstance(b.weight, nn.Parameter)


# --- cached -----------------------------------------------------------------------------
def test_cached_computes_once_per_block():
    calls = []

    class Counting(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X * 1.0

    m = nn.Linear(2, 2)
    parametrize.register_parametrization(m, "weight", Counting())
    calls.clear()
    _ = m.weight, m.weight
    assert len(calls) == 2
    with parametrize.cached():
        first = m.weight
        with parametrize.cached():
            assert m.weight is first
        assert m.weight is first
    assert len(calls) == 3
    assert m.weight is not first  # the cache emptied with the outer block
    assert parametrize._cache == {}


# --- errors -----------------------------------------------------------------------------
def test_errors_teach():
    Sym, _, NoInverse = make_parametrizations(gradlab)
    m = nn.Linear(3, 3)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        parametrize.register_parametrization(m, "nope", Sym())
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(m, "weight")

    class Shrink(nn.Module):
        def forward(self, X):
            return X[:1]

    class ToFloat32(nn.Module):
        def forward(self, X):
            return X.float()

    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(m, "weight", Shrink())
    with pytest.raises(ValueError, match="may not change the dtype"):
        parametrize.register_parametrization(nn.Linear(2, 2).double(), "weight", ToFloat32())
    parametrize.register_parametrization(m, "weight", Shrink(), unsafe=True)
    assert tuple(m.weight.shape) == (1, 3)

    m = nn.Linear(3, 3)
    parametrize.register_parametrization(m, "weight", Sym())
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(m, "weight", Shrink())
    parametrize.register_parametrization(m, "weight", NoInverse())
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        m.weight = gradlab.zeros(3, 3)
    with pytest.raises(RuntimeError, match="Serialization of parametrized modules"):
        pickle.dumps(m)
    with pytest.raises(ValueError, match="ParametrizationList requires one or more"):
        parametrize.ParametrizationList([], gradlab.zeros(2))


def test_deepcopy_of_a_parametrized_module_is_independent():
    m = nn.Linear(3, 3).double()
    parametrize.register_parametrization(m, "weight", make_parametrizations(gradlab)[0]())
    c = copy.deepcopy(m)
    assert type(c) is type(m)
    close(c.weight, m.weight)
    with gradlab.no_grad():
        c.parametrizations.weight.original.add_(1.0)
    assert not np.allclose(host(c.weight), host(m.weight))


# --- training ---------------------------------------------------------------------------
@needs_torch
def test_sgd_trajectory_matches_torch():
    ours, theirs = linear_pair()
    parametrize.register_parametrization(ours, "weight", make_parametrizations(gradlab)[0]())
    torch.nn.utils.parametrize.register_parametrization(theirs, "weight",
                                                        make_parametrizations(torch)[0]())
    opt_g = gradlab.optim.SGD(ours.parameters(), lr=0.05, momentum=0.9)
    opt_t = torch.optim.SGD(theirs.parameters(), lr=0.05, momentum=0.9)
    rng = np.random.default_rng(3)
    for _ in range(5):
        x = rng.standard_normal((8, 4))
        for m, opt, lib in ((ours, opt_g, gradlab), (theirs, opt_t, torch)):
            opt.zero_grad()
            xt = lib.tensor(x)
            with lib.nn.utils.parametrize.cached():
                loss = (m(xt) ** 2).mean() + m.weight.abs().sum() * 0.01
            loss.backward()
            opt.step()
    close(ours.weight, theirs.weight)
    close(ours.bias, theirs.bias)


# --- orthogonal -------------------------------------------------------------------------
def orthogonal_pair(shape, orth_map, use_trivialization=True, seed=0):
    """Both libraries' Linear with ``orthogonal`` registered, in the same state (the
    non-square base is random, so it is copied from PyTorch)."""
    n_out, n_in = shape
    ours, theirs = linear_pair(n_in, n_out, seed)
    torch.nn.utils.parametrizations.orthogonal(theirs, orthogonal_map=orth_map,
                                               use_trivialization=use_trivialization)
    orthogonal(ours, orthogonal_map=orth_map, use_trivialization=use_trivialization)
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


@needs_torch
@pytest.mark.parametrize("orth_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_matches_torch(orth_map, shape):
    ours, theirs = orthogonal_pair(shape, orth_map)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    w = host(ours.weight)
    small = min(shape)
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-10)
    close(ours.weight, theirs.weight)
    with torch.no_grad(), gradlab.no_grad():  # move away from the identity correction
        delta = np.random.default_rng(5).standard_normal(shape) * 0.3
        ours.parametrizations.weight.original.add_(gradlab.tensor(delta))
        theirs.parametrizations.weight.original.add_(torch.from_numpy(delta))
    close(ours.weight, theirs.weight)
    x = np.random.default_rng(6).standard_normal((2, shape[1]))
    (ours(gradlab.tensor(x)) ** 3).sum().backward()
    (theirs(torch.from_numpy(x)) ** 3).sum().backward()
    close(ours.parametrizations.weight.original.grad, theirs.parametrizations.weight.original.grad,
          1e-8)


@needs_torch
@pytest.mark.parametrize("orth_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_sgd_steps_stay_orthogonal_and_match(orth_map):
    ours, theirs = orthogonal_pair((4, 4), orth_map, seed=1)
    opt_g = gradlab.optim.SGD(ours.parameters(), lr=0.1)
    opt_t = torch.optim.SGD(theirs.parameters(), lr=0.1)
    rng = np.random.default_rng(7)
    for _ in range(4):
        x, y = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
        for m, opt, lib in ((ours, opt_g, gradlab), (theirs, opt_t, torch)):
            opt.zero_grad()
            ((m(lib.tensor(x)) - lib.tensor(y)) ** 2).mean().backward()
            opt.step()
    close(ours.weight, theirs.weight, 1e-8)
    w = host(ours.weight)
    np.testing.assert_allclose(w.T @ w, np.eye(4), atol=1e-10)


@needs_torch
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_householder_without_trivialization_matches_torch(shape):
    ours, theirs = linear_pair(shape[1], shape[0], seed=4)
    orthogonal(ours, orthogonal_map="householder", use_trivialization=False)
    torch.nn.utils.parametrizations.orthogonal(theirs, orthogonal_map="householder",
                                               use_trivialization=False)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    close(ours.parametrizations.weight.original, theirs.parametrizations.weight.original, 1e-9)
    close(ours.weight, theirs.weight, 1e-9)


@needs_torch
@pytest.mark.parametrize("orth_map", ["matrix_exp", "cayley"])
def test_orthogonal_without_trivialization_keeps_the_weight_as_original(orth_map):
    ours, theirs = orthogonal_pair((4, 4), orth_map, use_trivialization=False)
    close(ours.parametrizations.weight.original, theirs.parametrizations.weight.original)
    close(ours.weight, theirs.weight)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        ours.weight = gradlab.eye(4, dtype=gradlab.float64)


@needs_torch
def test_orthogonal_assignment_and_batched_weights():
    ours, theirs = orthogonal_pair((4, 4), "matrix_exp")
    q = np.linalg.qr(np.random.default_rng(8).standard_normal((4, 4)))[0]
    ours.weight = gradlab.tensor(q)
    theirs.weight = torch.from_numpy(q)
    close(ours.weight, q)
    close(ours.parametrizations.weight.original, theirs.parametrizations.weight.original)
    close(ours.parametrizations.weight[0].base, theirs.parametrizations.weight[0].base)

    a = np.random.default_rng(9).standard_normal((2, 5, 3))
    ours_h = gradlab.linalg.householder_product(gradlab.tensor(a),
                                                gradlab.tensor(np.full((2, 3), 0.7)))
    theirs_h = torch.linalg.householder_product(torch.from_numpy(a),
                                                torch.full((2, 3), 0.7, dtype=torch.float64))
    close(ours_h, theirs_h)
    A_g, tau_g = _geqrf(gradlab.tensor(a))
    A_t, tau_t = torch.geqrf(torch.from_numpy(a))
    close(A_g, A_t)
    close(tau_g, tau_t)


def test_orthogonal_errors():
    with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp"'):
        orthogonal(nn.Linear(3, 3), orthogonal_map="svd")
    with pytest.raises(ValueError, match="Got a tensor of 1 dimensions"):
        orthogonal(nn.Linear(3, 3), name="bias")
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
        orthogonal(nn.Linear(3, 3), name="nope")
    m = orthogonal(nn.Linear(3, 3))
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices of shape"):
        m.parametrizations.weight[0].right_inverse(gradlab.zeros(2, 2))
