"""Sampling (statistics, seeding, pathwise gradients) and argument validation.

These need no PyTorch: sample statistics are checked against each
distribution's own mean and variance (already compared with PyTorch in
test_vs_torch.py), within a few standard errors, under a fixed seed.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradlab
import gradlab.distributions as gd
from gradlab.distributions import Distribution, Normal
from gradlab.distributions.utils import broadcast_all, logits_to_probs, probs_to_logits
from tests.oracle import needs_torch, torch

from .cases import DISTS

N = 4000


def _make(case, seed=0, requires_grad=False):
    arrays = case.params(np.random.default_rng(seed))
    params = [gradlab.tensor(a, dtype=gradlab.float64, requires_grad=requires_grad)
              for a in arrays]
    return case.make(gd, *params), params


@pytest.mark.parametrize("case", DISTS, ids=lambda c: c.name)
def test_sample_statistics_shapes_and_seeding(case):
    dist, _ = _make(case)
    gradlab.manual_seed(0)
    x = dist.sample((N,))
    assert tuple(x.shape) == (N,) + case.batch_shape + case.event_shape
    assert not x.requires_grad
    assert bool(dist.support.check(x).all())  # every draw is a possible value
    gradlab.manual_seed(0)
    assert bool((dist.sample((N,)) == x).all())  # one seed, one stream
    if not case.moments:  # (a Cauchy has no mean; a VonMises's variance is circular)
        return
    if case.name.startswith("Categorical"):  # category frequencies vs probabilities
        freq = gradlab.nn.functional.one_hot(x, 3).double().mean(0)
        mean, var = dist.probs, dist.probs * (1 - dist.probs)
    else:
        freq, mean, var = x.double().mean(0), dist.mean, dist.variance
    standard_error = (var / N).sqrt().numpy()
    assert np.all(np.abs(freq.numpy() - mean.detach().numpy()) < 5 * standard_error + 1e-12)


@pytest.mark.parametrize("case", [d for d in DISTS if d.rsample and d.moments],
                         ids=lambda c: c.name)
def test_rsample_pathwise_gradient_estimates_the_gradient_of_moments(case):
    """d/dθ E[x + x²] two ways: averaged through rsample, and from mean and variance."""
    dist, params = _make(case, requires_grad=True)
    gradlab.manual_seed(1)
    x = dist.rsample((20000,))
    (x + x * x).mean(0).sum().backward()
    estimates = [p.grad.clone() for p in params]
    for p in params:
        p.grad = None
    exact_dist, exact_params = _make(case, requires_grad=True)
    mean, var = exact_dist.mean, exact_dist.variance
    (mean + var + mean * mean).sum().backward()
    for est, p in zip(estimates, exact_params):
        np.testing.assert_allclose(est.numpy(), p.grad.numpy(), rtol=0.08, atol=0.08)


def test_normal_rsample_is_loc_plus_scale_times_the_noise():
    loc = gradlab.tensor([0.5, -1.0], dtype=gradlab.float64, requires_grad=True)
    scale = gradlab.tensor([2.0, 0.3], dtype=gradlab.float64, requires_grad=True)
    gradlab.manual_seed(3)
    x = Normal(loc, scale).rsample((5,))
    gradlab.manual_seed(3)
    eps = gradlab.randn(5, 2, dtype=gradlab.float64)  # the same draws rsample used
    assert np.allclose(x.detach().numpy(), (loc + scale * eps).detach().numpy())
    x.sum().backward()
    assert np.allclose(loc.grad.numpy(), 5.0)
    assert np.allclose(scale.grad.numpy(), eps.sum(0).numpy())


@pytest.mark.parametrize("name", ["Gamma", "Beta", "Dirichlet"])
def test_gamma_family_rsample_draws_what_sample_draws_and_carries_a_gradient(name):
    case = next(d for d in DISTS if d.name == name)
    dist, params = _make(case, requires_grad=True)
    assert dist.has_rsample is True
    gradlab.manual_seed(4)
    x = dist.rsample((3,))
    gradlab.manual_seed(4)
    assert bool((dist.sample((3,)) == x).all())  # sample is rsample without the graph
    x.sum().backward()
    assert all(p.grad is not None and bool(p.grad.isfinite().all()) for p in params)


def test_lazy_probs_and_logits_are_computed_once_and_differentiate():
    logits = gradlab.tensor([[0.1, 2.0, -1.0]], dtype=gradlab.float64, requires_grad=True)
    cat = gd.Categorical(logits=logits)
    assert "probs" not in cat.__dict__
    with gradlab.no_grad():
        cat.sample()  # first use of probs, inside no_grad
    assert cat.probs is cat.__dict__["probs"] and cat.probs.requires_grad
    cat.probs[0, 1].backward()
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0


@needs_torch
def test_probs_logits_helpers_match_torch():
    from torch.distributions import utils as tu

    p = np.array([[0.0, 0.25, 0.75], [1.0, 0.5, 0.5]])
    for binary in (False, True):
        mine = probs_to_logits(gradlab.tensor(p), is_binary=binary).numpy()
        theirs = tu.probs_to_logits(torch.tensor(p), is_binary=binary).numpy()
        np.testing.assert_allclose(mine, theirs)
        mine = logits_to_probs(gradlab.tensor(p), is_binary=binary).numpy()
        theirs = tu.logits_to_probs(torch.tensor(p), is_binary=binary).numpy()
        np.testing.assert_allclose(mine, theirs)
    a, b = broadcast_all(gradlab.zeros(2, 1, dtype=gradlab.float64), 3.0)
    assert tuple(b.shape) == (2, 1) and b.dtype == gradlab.float64


T = gradlab.tensor
BAD_PARAMETERS = [
    (lambda: Normal(T([0.0, 1.0]), T([1.0, -1.0])),
     r"parameter scale \(Tensor of shape \(2,\)\) of distribution Normal.*GreaterThan"
     r"\(lower_bound=0.0\).*1 of 2 entries fail"),
    (lambda: gd.Bernoulli(probs=T([0.2, 1.5])), r"parameter probs .*Interval"),
    (lambda: gd.Categorical(probs=T([-1.0, 3.0])), r"parameter probs .*Simplex\(\)"),
    (lambda: gd.Dirichlet(T([1.0, 0.0])), r"parameter concentration .*IndependentConstraint"),
    (lambda: gd.Beta(1.0, -2.0), r"parameter concentration0 .* of distribution Beta"),
    (lambda: gd.Uniform(T([2.0]), T([1.0])), r"parameter low .*LessThan"),
    (lambda: gd.Poisson(T([-1.0])), r"parameter rate .*GreaterThanEq"),
    (lambda: gd.MultivariateNormal(T([0.0, 0.0]), T([[1.0, 2.0], [2.0, 1.0]])),
     r"parameter covariance_matrix .*PositiveDefinite"),
    (lambda: gd.MultivariateNormal(T([0.0, 0.0]), scale_tril=T([[1.0, 1.0], [0.0, 1.0]])),
     r"parameter scale_tril .*LowerCholesky"),
]


@pytest.mark.parametrize("build,match", BAD_PARAMETERS)
def test_invalid_parameters_name_the_distribution_parameter_and_constraint(build, match):
    with pytest.raises(ValueError, match=match):
        build()


BAD_CALLS = [
    (lambda: gd.Exponential(T([1.0])).log_prob(T([-1.0])), ValueError,
     r"Expected value argument \(Tensor of shape \(1,\)\) to be within the support "
     r"\(GreaterThanEq\(lower_bound=0.0\)\) of the distribution Exponential"),
    (lambda: gd.Bernoulli(T([0.3])).log_prob(T([0.5])), ValueError, r"support \(Boolean\(\)\)"),
    (lambda: gd.Categorical(T([0.3, 0.7])).log_prob(T(2)), ValueError,
     r"IntegerInterval\(lower_bound=0, upper_bound=1\)"),
    (lambda: gd.Dirichlet(T([1.0, 2.0, 3.0])).log_prob(T([0.5, 0.5])), ValueError,
     r"right-most size of value must match event_shape: \(2,\) vs \(3,\)"),
    (lambda: Normal(T([0.0, 1.0]), 1.0).log_prob(T([0.0, 1.0, 2.0])), ValueError,
     r"not broadcastable with batch_shape\+event_shape: \(3,\) vs \(2,\)"),
    (lambda: Normal(0.0, 1.0).log_prob(0.5), ValueError, "must be a Tensor, got float"),
    (lambda: gd.Bernoulli(probs=T([0.5]), logits=T([0.0])), ValueError,
     r"Either `probs` or `logits` must be specified, but not both"),
    (lambda: gd.Categorical(probs=T(1.0)), ValueError, r"`probs` parameter must be at least "
                                                       r"one-dimensional"),
    (lambda: gd.MultivariateNormal(T([0.0]), T([[1.0]]), scale_tril=T([[1.0]])), ValueError,
     r"Exactly one of covariance_matrix or precision_matrix or scale_tril"),
    (lambda: gd.MultivariateNormal(T([0.0, 0.0]), T([[1.0]])), ValueError,
     r"covariance_matrix must be \(2, 2\) to match loc"),
    (lambda: gd.Independent(Normal(T([0.0]), 1.0), 2), ValueError,
     r"reinterpreted_batch_ndims <= len\(base_distribution.batch_shape\), actual 2 vs 1"),
    (lambda: Normal(0.0, 1.0).enumerate_support(), NotImplementedError,
     "Normal does not implement enumerate_support"),
    (lambda: gd.Independent(gd.Bernoulli(T([[0.5]])), 1).enumerate_support(),
     NotImplementedError, "cartesian product"),
    (lambda: gd.Poisson(1.0).entropy(), NotImplementedError, "Poisson does not implement entropy"),
    (lambda: broadcast_all(T([1.0]), "2"), ValueError, r"numbers.Number or gradlab.Tensor"),
    (lambda: Distribution.set_default_validate_args("yes"), ValueError, "True or False"),
    (lambda: Normal(0.0, 1.0).sample("10"), TypeError, "sample_shape must be a tuple of ints"),
]


@pytest.mark.parametrize("call,error,match", BAD_CALLS)
def test_bad_calls_raise_errors_that_say_what_is_wrong(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_validation_can_be_switched_off_per_distribution_and_by_default():
    assert Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    assert gd.Exponential(1.0, validate_args=False).log_prob(T(-1.0)).item() == 1.0
    Distribution.set_default_validate_args(False)
    try:
        assert Normal(0.0, -1.0).scale.item() == -1.0
    finally:
        Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="scale"):
        Normal(0.0, -1.0)


def test_positive_definite_rejects_a_non_symmetric_matrix_in_any_batch():
    check = gd.constraints.positive_definite.check(T([[[2.0, 1.0], [1.0, 2.0]],
                                                      [[1.0, 0.5], [0.0, 1.0]]]))
    assert check.tolist() == [True, False]


def test_a_subclass_with_its_own_init_must_define_expand():
    class Shifted(Normal):
        def __init__(self, loc):
            super().__init__(loc, 1.0)

    with pytest.raises(NotImplementedError, match="custom __init__ method must also define a "
                                                  "custom .expand"):
        Shifted(T([0.0])).expand((3,))


GRADCHECKS = [
    ("MultivariateNormal.log_prob", lambda loc, tril: gd.MultivariateNormal(
        loc, scale_tril=tril.tril(-1) + tril.diagonal().abs().add(0.5).diag_embed()).log_prob(
        gradlab.ones(3, dtype=gradlab.float64)), [(2, 3), (3, 3)]),
    ("Gamma.log_prob+entropy", lambda a, b: (lambda d: d.log_prob(
        gradlab.full((2,), 0.7, dtype=gradlab.float64)) + d.entropy())(
        gd.Gamma(a.abs() + 0.5, b.abs() + 0.5)), [(2,), (2,)]),
    ("Dirichlet.entropy", lambda a: gd.Dirichlet(a.abs() + 0.5).entropy(), [(2, 3)]),
    ("Categorical.entropy", lambda w: gd.Categorical(logits=w).entropy(), [(2, 4)]),
]


@pytest.mark.parametrize("name,fn,shapes", GRADCHECKS, ids=[g[0] for g in GRADCHECKS])
def test_gradcheck_float64(name, fn, shapes):
    rng = np.random.default_rng(5)
    inputs = [gradlab.tensor(rng.uniform(-1.5, 1.5, s), dtype=gradlab.float64,
                             requires_grad=True) for s in shapes]
    assert gradlab.autograd.gradcheck(fn, inputs)


@settings(max_examples=15, deadline=None)
@given(loc_shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3),
       scale_shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3),
       sample_shape=st.lists(st.integers(1, 3), max_size=2))
def test_parameters_broadcast_into_the_batch_shape(loc_shape, scale_shape, sample_shape):
    try:
        batch = np.broadcast_shapes(loc_shape, scale_shape)
    except ValueError:
        with pytest.raises(RuntimeError, match="broadcast"):
            Normal(gradlab.zeros(loc_shape), gradlab.ones(scale_shape))
        return
    dist = gd.Laplace(gradlab.zeros(loc_shape), gradlab.ones(scale_shape))
    assert tuple(dist.batch_shape) == batch
    x = dist.sample(tuple(sample_shape))
    assert tuple(x.shape) == tuple(sample_shape) + batch
    assert tuple(dist.log_prob(x).shape) == tuple(x.shape)
    assert tuple(dist.expand((2,) + batch).entropy().shape) == (2,) + batch
    independent = gd.Independent(dist, len(batch))
    assert tuple(independent.log_prob(x).shape) == tuple(sample_shape)
