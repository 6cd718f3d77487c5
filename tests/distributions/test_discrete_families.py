"""Geometric, Binomial, NegativeBinomial and Multinomial against torch.distributions (float64).

One table (CASES) drives the comparisons: each row is built with the same
parameters in gradlab and in PyTorch, then log_prob, entropy, the moments,
the shapes, expand and enumerate_support must agree, and so must the
gradients of a random weighted sum of all of them. Sampling is checked by
shape, support, seeding and sample means (within a few standard errors);
then come the closed-form KLs and the validation errors.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import gradlab
from gradlab.distributions.binomial import Binomial
from gradlab.distributions.geometric import Geometric
from gradlab.distributions.kl import kl_divergence
from gradlab.distributions.multinomial import Multinomial
from gradlab.distributions.negative_binomial import NegativeBinomial
from gradlab.distributions.poisson import Poisson
from tests.oracle import needs_torch, torch

pytestmark = needs_torch

MINE = {"Geometric": Geometric, "Binomial": Binomial, "NegativeBinomial": NegativeBinomial,
        "Multinomial": Multinomial, "Poisson": Poisson}


def _libs():
    """(D, lib) pairs: the classes by name, and the tensor library that goes with them."""
    return [(MINE, gradlab), (vars(torch.distributions), torch)]


@dataclass
class Case:
    name: str
    make: Callable  # make(D, *tensors) -> distribution, D a dict of classes by name
    params: Callable  # rng -> list of float64 arrays (each becomes a tensor needing grad)
    values: Callable  # (rng, params) -> array of values in the support
    batch_shape: tuple
    event_shape: tuple = ()
    props: tuple = ("mean", "mode", "variance", "stddev")
    entropy: bool = True
    enumerate: bool = False


def _counts(rng, n, size):
    """Count vectors of K categories adding up to n: rows of a multinomial draw."""
    *batch, k = size
    return rng.multinomial(n, np.full(k, 1.0 / k), size=tuple(batch)).astype(float)


CASES = [
    Case("Geometric_probs", lambda D, p: D["Geometric"](probs=p),
         lambda r: [r.uniform(0.1, 0.95, (3,))],
         lambda r, ps: r.integers(0, 8, (2, 3)).astype(float), (3,)),
    Case("Geometric_logits", lambda D, logit: D["Geometric"](logits=logit),
         lambda r: [r.normal(size=(2, 3)) * 2],
         lambda r, ps: r.integers(0, 8, (3,)).astype(float), (2, 3)),
    Case("Binomial_number_count_probs", lambda D, p: D["Binomial"](10, probs=p),
         lambda r: [r.uniform(0.05, 0.95, (3,))],
         lambda r, ps: r.integers(0, 11, (2, 3)).astype(float), (3,), enumerate=True),
    Case("Binomial_tensor_count_logits",  # counts (2, 1) broadcast with logits (3,)
         lambda D, n, logit: D["Binomial"](n, logits=logit),
         lambda r: [np.array([[4.0], [7.0]]), r.normal(size=(3,)) * 2],
         lambda r, ps: np.minimum(r.integers(0, 8, (2, 3)), ps[0]).astype(float), (2, 3),
         entropy=False),
    Case("Binomial_homogeneous_tensor_count",
         lambda D, n, p: D["Binomial"](total_count=n, probs=p),
         lambda r: [np.full((3,), 6.0), r.uniform(0.05, 0.95, (2, 1))],
         lambda r, ps: r.integers(0, 7, (4, 2, 3)).astype(float), (2, 3), enumerate=True),
    Case("NegativeBinomial_probs", lambda D, n, p: D["NegativeBinomial"](n, probs=p),
         lambda r: [r.uniform(0.5, 4.0, (3,)), r.uniform(0.05, 0.9, (2, 1))],
         lambda r, ps: r.integers(0, 10, (2, 3)).astype(float), (2, 3), entropy=False),
    Case("NegativeBinomial_number_count_logits",
         lambda D, logit: D["NegativeBinomial"](3.0, logits=logit),
         lambda r: [r.normal(size=(3,))],
         lambda r, ps: r.integers(0, 10, (4, 3)).astype(float), (3,), entropy=False),
    Case("Multinomial_probs", lambda D, p: D["Multinomial"](5, probs=p),
         lambda r: [r.uniform(0.1, 1.0, (2, 3))],  # unnormalised: normalised inside
         lambda r, ps: _counts(r, 5, (4, 2, 3)), (2,), (3,),
         props=("mean", "variance", "stddev")),
    Case("Multinomial_logits", lambda D, logit: D["Multinomial"](3, logits=logit),
         lambda r: [r.normal(size=(4,))], lambda r, ps: _counts(r, 3, (2, 4)), (), (4,),
         props=("mean", "variance", "stddev")),
]
ENTROPY_ATOL = {"Multinomial": 1e-7}  # PyTorch's lgamma(n + 1) is taken in float32


def _pair(case, seed=0):
    rng = np.random.default_rng(seed)
    arrays = case.params(rng)
    value = case.values(rng, arrays)
    out = []
    for classes, lib in _libs():
        params = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        out.append((case.make(classes, *params), params, lib.tensor(value, dtype=lib.float64)))
    return out


def _close(mine, theirs, atol=1e-9, rtol=1e-7):
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), atol=atol,
                               rtol=rtol, equal_nan=True)


def _outputs(case, dist, value):
    out = {"log_prob": dist.log_prob(value)}
    if case.entropy:
        out["entropy"] = dist.entropy()
    for prop in case.props:
        out[prop] = getattr(dist, prop)
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_values_shapes_and_gradients_match_torch(case):
    (mine, g_params, g_value), (theirs, t_params, t_value) = _pair(case)
    assert type(mine).__name__ == type(theirs).__name__
    assert tuple(mine.batch_shape) == tuple(theirs.batch_shape) == case.batch_shape
    assert tuple(mine.event_shape) == tuple(theirs.event_shape) == case.event_shape
    assert mine.has_rsample == theirs.has_rsample is False
    assert mine.has_enumerate_support == theirs.has_enumerate_support
    g_out, t_out = _outputs(case, mine, g_value), _outputs(case, theirs, t_value)
    rng = np.random.default_rng(1)
    g_loss, t_loss = 0, 0
    for key in g_out:
        assert tuple(g_out[key].shape) == tuple(t_out[key].shape), key
        atol = ENTROPY_ATOL.get(type(mine).__name__, 1e-9) if key == "entropy" else 1e-9
        _close(g_out[key], t_out[key], atol=atol)
        if g_out[key].requires_grad:
            w = rng.normal(size=tuple(t_out[key].shape))
            g_loss = g_loss + (g_out[key] * gradlab.tensor(w)).sum()
            t_loss = t_loss + (t_out[key] * torch.tensor(w)).sum()
    g_loss.backward()
    t_loss.backward()
    for g, t in zip(g_params, t_params):
        assert (g.grad is None) == (t.grad is None)
        if t.grad is not None:
            _close(g.grad, t.grad, atol=1e-8, rtol=1e-6)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_expand_matches_torch(case):
    (mine, _, _), (theirs, _, _) = _pair(case, seed=2)
    shape = (2,) + case.batch_shape
    g_big, t_big = mine.expand(shape), theirs.expand(shape)
    assert type(g_big) is type(mine) and g_big._validate_args == mine._validate_args
    assert tuple(g_big.batch_shape) == tuple(t_big.batch_shape) == shape
    assert tuple(g_big.event_shape) == case.event_shape
    torch.manual_seed(0)
    t_value = t_big.sample()
    g_value = gradlab.tensor(t_value.numpy(), dtype=gradlab.float64)
    _close(g_big.log_prob(g_value), t_big.log_prob(t_value))
    for prop in case.props:
        _close(getattr(g_big, prop), getattr(t_big, prop))
    assert tuple(g_big.sample((5,)).shape) == tuple(t_big.sample((5,)).shape)
    if case.entropy:  # (PyTorch's expanded Multinomial has lost its entropy's _binomial)
        _close(g_big.entropy(), theirs.entropy().expand(shape), atol=1e-7)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_samples_have_the_right_shape_support_seed_and_mean(case):
    (dist, params, _), _ = _pair(case)
    n = 4000
    gradlab.manual_seed(0)
    x = dist.sample((n,))
    assert tuple(x.shape) == (n,) + case.batch_shape + case.event_shape
    assert x.dtype == gradlab.float64 and not x.requires_grad
    assert bool(dist.support.check(x).all())  # every draw is a possible value
    assert bool((x == x.floor()).all())  # whole numbers
    assert tuple(dist.sample().shape) == case.batch_shape + case.event_shape
    gradlab.manual_seed(0)
    assert bool((dist.sample((n,)) == x).all())  # one seed, one stream
    standard_error = (dist.variance / n).sqrt().detach().numpy()
    error = np.abs(x.mean(0).numpy() - dist.mean.detach().numpy())
    assert np.all(error < 5 * standard_error + 1e-12)


@pytest.mark.parametrize("case", [c for c in CASES if c.enumerate], ids=lambda c: c.name)
def test_enumerate_support_matches_torch(case):
    (mine, _, _), (theirs, _, _) = _pair(case)
    for expand in (True, False):
        _close(mine.enumerate_support(expand), theirs.enumerate_support(expand))
    support = mine.enumerate_support()
    log_p = mine.log_prob(support)
    assert tuple(log_p.shape) == tuple(theirs.log_prob(theirs.enumerate_support()).shape)
    np.testing.assert_allclose(log_p.exp().sum(0).detach().numpy(), 1.0)  # P sums to 1


def test_binomial_with_several_total_counts_has_no_entropy_or_enumerate_support():
    for classes, lib in _libs():
        dist = classes["Binomial"](lib.tensor([2.0, 3.0], dtype=lib.float64), probs=lib.tensor(
            [0.3, 0.6], dtype=lib.float64))
        for method in (dist.entropy, dist.enumerate_support):
            with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
                method()


def test_number_parameters_give_an_empty_batch_shape():
    for classes, lib in _libs():
        for dist in (classes["Geometric"](0.3), classes["Geometric"](logits=-0.5),
                     classes["Binomial"](10, probs=0.3), classes["Binomial"](logits=0.2),
                     classes["NegativeBinomial"](2.5, logits=0.1)):
            assert tuple(dist.batch_shape) == () and tuple(dist.event_shape) == ()
            assert tuple(dist.sample((7,)).shape) == (7,)
            assert dist.mean.dtype == lib.get_default_dtype()


def test_multinomial_entropy_is_exact():
    """-Σ P(x) log P(x) over every count vector; PyTorch's agrees to ~1e-7 (float32 lgamma)."""
    p, n = np.array([0.2, 0.3, 0.5]), 5
    exact = 0.0
    for a in range(n + 1):
        for b in range(n + 1 - a):
            x = (a, b, n - a - b)
            log_p = math.lgamma(n + 1) + sum(k * math.log(q) - math.lgamma(k + 1)
                                             for k, q in zip(x, p))
            exact -= math.exp(log_p) * log_p
    mine = Multinomial(n, probs=gradlab.tensor(p, dtype=gradlab.float64)).entropy()
    assert abs(float(mine) - exact) < 1e-13
    theirs = torch.distributions.Multinomial(n, probs=torch.tensor(p)).entropy()
    assert abs(float(theirs) - exact) < 1e-7


def test_multinomial_draws_add_up_to_total_count_and_skip_impossible_categories():
    probs = gradlab.tensor([[0.0, 0.5, 0.0, 0.5], [0.25, 0.25, 0.5, 0.0]], dtype=gradlab.float64)
    gradlab.manual_seed(3)
    x = Multinomial(1000, probs=probs).sample((50,))
    assert tuple(x.shape) == (50, 2, 4)
    assert bool((x.sum(-1) == 1000).all())
    assert bool((x[..., 0, 0] == 0).all()) and bool((x[..., 0, 2] == 0).all())
    assert bool((x[..., 1, 3] == 0).all())
    x0 = Multinomial(0, logits=gradlab.zeros(3, dtype=gradlab.float64)).sample((4,))
    assert bool((x0 == 0).all())


EDGE_CASES = [  # (name, make(D, lib), value): limits where a naive formula gives NaN
    ("Geometric_probs_1_at_0", lambda D, lib: D["Geometric"](lib.tensor([1.0, 0.5])), [0.0, 0.0]),
    ("Binomial_probs_0_and_1", lambda D, lib: D["Binomial"](4, lib.tensor([0.0, 1.0])),
     [0.0, 4.0]),
    ("Binomial_large_logits", lambda D, lib: D["Binomial"](6, logits=lib.tensor([-40.0, 40.0])),
     [0.0, 6.0]),
    ("NegativeBinomial_count_0", lambda D, lib: D["NegativeBinomial"](
        lib.tensor([0.0, 0.0]), lib.tensor([0.3, 0.3])), [0.0, 2.0]),
    ("Multinomial_impossible_category", lambda D, lib: D["Multinomial"](
        3, logits=lib.tensor([-math.inf, 0.0, 1.0])), [0.0, 1.0, 2.0]),
]


@pytest.mark.parametrize("make,value", [c[1:] for c in EDGE_CASES],
                         ids=[c[0] for c in EDGE_CASES])
def test_log_prob_at_the_edges_matches_torch(make, value):
    results = [make(classes, _F64(lib)).log_prob(lib.tensor(value, dtype=lib.float64))
               for classes, lib in _libs()]
    assert results[0].isfinite().tolist() == results[1].isfinite().tolist()
    _close(*results)


class _F64:
    """``lib`` whose ``tensor`` makes float64 tensors (so one lambda serves both libraries)."""

    def __init__(self, lib) -> None:
        self.lib = lib

    def tensor(self, data):
        return self.lib.tensor(data, dtype=self.lib.float64)


# --- KL divergences ------------------------------------------------------------------------

KL_CASES = [
    ("Geometric_Geometric", lambda D, a, b: (D["Geometric"](probs=a), D["Geometric"](logits=b)),
     lambda r: [r.uniform(0.1, 0.9, (3,)), r.normal(size=(2, 1))]),
    ("Binomial_Binomial", lambda D, a, b: (D["Binomial"](5, probs=a), D["Binomial"](5, logits=b)),
     lambda r: [r.uniform(0.1, 0.9, (2, 3)), r.normal(size=(3,))]),
]


@pytest.mark.parametrize("make,params", [c[1:] for c in KL_CASES], ids=[c[0] for c in KL_CASES])
def test_kl_matches_torch_with_gradients(make, params):
    arrays = params(np.random.default_rng(5))
    results = []
    for (classes, lib), kl in zip(_libs(), (kl_divergence, torch.distributions.kl_divergence)):
        tensors = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        value = kl(*make(classes, *tensors))
        value.sum().backward()
        results.append([value] + [t.grad for t in tensors])
    for mine, theirs in zip(*results):
        _close(mine, theirs, atol=1e-10)
    assert bool((results[0][0] >= -1e-12).all())


def test_binomial_kl_is_infinite_where_p_has_more_trials_and_not_implemented_for_fewer():
    for (classes, lib), kl in zip(_libs(), (kl_divergence, torch.distributions.kl_divergence)):
        probs = lib.tensor([0.3, 0.4], dtype=lib.float64)
        p = classes["Binomial"](lib.tensor([5.0, 6.0], dtype=lib.float64), probs)
        q = classes["Binomial"](lib.tensor([5.0, 5.0], dtype=lib.float64), probs.flip(0))
        value = kl(p, q).tolist()
        assert value[0] > 0 and value[1] == math.inf
        with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
            kl(q, p)
        poisson = classes["Poisson"](lib.tensor([1.0, 2.0], dtype=lib.float64))
        assert kl(poisson, q).tolist() == [math.inf, math.inf]


# --- validation ----------------------------------------------------------------------------

def _t(lib, data):
    return lib.tensor(data, dtype=lib.float64)


INVALID = [  # (name, build(D, lib), error): raises the same error type in both libraries
    ("Geometric_neither", lambda D, lib: D["Geometric"](), ValueError),
    ("Geometric_both", lambda D, lib: D["Geometric"](_t(lib, [0.5]), _t(lib, [0.0])), ValueError),
    ("Geometric_probs_0", lambda D, lib: D["Geometric"](_t(lib, [0.5, 0.0])), ValueError),
    ("Geometric_probs_above_1", lambda D, lib: D["Geometric"](_t(lib, [1.5])), ValueError),
    ("Geometric_logits_nan", lambda D, lib: D["Geometric"](logits=_t(lib, [math.nan])),
     ValueError),
    ("Geometric_negative_value", lambda D, lib: D["Geometric"](_t(lib, [0.5])).log_prob(
        _t(lib, [-1.0])), ValueError),
    ("Geometric_fractional_value", lambda D, lib: D["Geometric"](_t(lib, [0.5])).log_prob(
        _t(lib, [1.5])), ValueError),
    ("Binomial_negative_count", lambda D, lib: D["Binomial"](-1, _t(lib, [0.5])), ValueError),
    ("Binomial_fractional_count", lambda D, lib: D["Binomial"](_t(lib, [2.5]), _t(lib, [0.5])),
     ValueError),
    ("Binomial_probs_above_1", lambda D, lib: D["Binomial"](3, _t(lib, [1.2])), ValueError),
    ("Binomial_no_probs", lambda D, lib: D["Binomial"](3), ValueError),
    ("Binomial_value_above_count", lambda D, lib: D["Binomial"](
        _t(lib, [3.0, 5.0]), _t(lib, [0.5, 0.5])).log_prob(_t(lib, [2.0, 6.0])), ValueError),
    ("Binomial_fractional_value", lambda D, lib: D["Binomial"](3, _t(lib, [0.5])).log_prob(
        _t(lib, [0.5])), ValueError),
    ("Binomial_bad_value_shape", lambda D, lib: D["Binomial"](3, _t(lib, [0.5, 0.5])).log_prob(
        _t(lib, [1.0, 1.0, 1.0])), ValueError),
    ("NegativeBinomial_negative_count", lambda D, lib: D["NegativeBinomial"](
        -0.5, _t(lib, [0.5])), ValueError),
    ("NegativeBinomial_probs_1", lambda D, lib: D["NegativeBinomial"](2.0, _t(lib, [1.0])),
     ValueError),
    ("NegativeBinomial_negative_value", lambda D, lib: D["NegativeBinomial"](
        2.0, _t(lib, [0.5])).log_prob(_t(lib, [-2.0])), ValueError),
    ("NegativeBinomial_fractional_value", lambda D, lib: D["NegativeBinomial"](
        2.0, logits=_t(lib, [0.5])).log_prob(_t(lib, [0.5])), ValueError),
    ("Multinomial_float_count", lambda D, lib: D["Multinomial"](2.0, _t(lib, [0.5, 0.5])),
     NotImplementedError),
    ("Multinomial_tensor_count", lambda D, lib: D["Multinomial"](
        _t(lib, [2.0]), _t(lib, [0.5, 0.5])), NotImplementedError),
    ("Multinomial_negative_count", lambda D, lib: D["Multinomial"](-1, _t(lib, [0.5, 0.5])),
     ValueError),
    ("Multinomial_negative_probs", lambda D, lib: D["Multinomial"](2, _t(lib, [-0.5, 1.5])),
     ValueError),
    ("Multinomial_0d_probs", lambda D, lib: D["Multinomial"](2, _t(lib, 0.5)), ValueError),
    ("Multinomial_too_many_counts", lambda D, lib: D["Multinomial"](2, _t(lib, [0.5, 0.5]))
     .log_prob(_t(lib, [2.0, 1.0])), ValueError),
    ("Multinomial_negative_counts", lambda D, lib: D["Multinomial"](2, _t(lib, [0.5, 0.5]))
     .log_prob(_t(lib, [-1.0, 1.0])), ValueError),
    ("Multinomial_bad_event_shape", lambda D, lib: D["Multinomial"](2, _t(lib, [0.5, 0.5]))
     .log_prob(_t(lib, [1.0, 0.0, 1.0])), ValueError),
]


@pytest.mark.parametrize("build,error", [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_arguments_raise_like_torch(build, error):
    for classes, lib in _libs():
        with pytest.raises(error):
            build(classes, lib)


def test_validate_args_false_skips_the_checks():
    for classes, lib in _libs():
        classes["Geometric"](_t(lib, [0.0]), validate_args=False)
        classes["Binomial"](-1, _t(lib, [0.5]), validate_args=False)
        dist = classes["NegativeBinomial"](2.0, _t(lib, [0.5]), validate_args=False)
        dist.log_prob(_t(lib, [0.5]))  # off the support, but no error
    for value in (-1, 2):
        with pytest.raises(ValueError, match="total_count|support"):
            Multinomial(value, gradlab.tensor([0.5, 0.5])).log_prob(gradlab.tensor([2.0, 1.0]))
    Multinomial(-1, gradlab.tensor([0.5, 0.5]), validate_args=False)


def test_error_messages_name_the_parameter_and_the_fix():
    with pytest.raises(ValueError, match="probs.*positive"):
        Geometric(gradlab.tensor([0.0]))
    with pytest.raises(ValueError, match="total_count.*IntegerGreaterThan"):
        Binomial(gradlab.tensor([2.5]), gradlab.tensor([0.5]))
    with pytest.raises(ValueError, match="within the support.*IntegerInterval"):
        Binomial(3, gradlab.tensor([0.5])).log_prob(gradlab.tensor([4.0]))
    with pytest.raises(NotImplementedError, match="Python int"):
        Multinomial(gradlab.tensor(3), gradlab.tensor([0.5, 0.5]))


def test_constraints_match_torch():
    for name in ("Geometric", "Binomial", "NegativeBinomial", "Multinomial"):
        mine, theirs = MINE[name], getattr(torch.distributions, name)
        assert list(mine.arg_constraints) == list(theirs.arg_constraints)
        for key, constraint in mine.arg_constraints.items():
            assert repr(constraint) == repr(theirs.arg_constraints[key]), (name, key)
    assert repr(Geometric.support) == repr(torch.distributions.Geometric.support)
    assert repr(NegativeBinomial.support) == repr(torch.distributions.NegativeBinomial.support)
    g_support = Binomial(gradlab.tensor([3.0, 4.0]), probs=gradlab.tensor([0.5, 0.5])).support
    values = gradlab.tensor([[0.0, 4.0], [3.0, 4.5], [-1.0, 5.0]])
    t_support = torch.distributions.Binomial(torch.tensor([3.0, 4.0]), torch.tensor([0.5, 0.5]))
    assert g_support.check(values).tolist() == t_support.support.check(
        torch.tensor(values.numpy())).tolist()
    assert Binomial.support.is_discrete and Multinomial.support.event_dim == 1


def test_negative_binomial_with_no_failures_to_wait_for_has_a_finite_count_gradient():
    """r = 0: log P(0) = r log(1 - p) = 0, and d/dr = log(1 - p) (PyTorch's gradient is NaN)."""
    r = gradlab.tensor([0.0, 2.0], dtype=gradlab.float64, requires_grad=True)
    p = gradlab.tensor([0.3, 0.3], dtype=gradlab.float64)
    log_p = NegativeBinomial(r, p).log_prob(gradlab.tensor([0.0, 0.0], dtype=gradlab.float64))
    log_p.sum().backward()
    np.testing.assert_allclose(log_p.detach().numpy(), [0.0, 2 * math.log(0.7)], atol=1e-15)
    np.testing.assert_allclose(r.grad.numpy(), [math.log(0.7)] * 2, rtol=1e-12)
