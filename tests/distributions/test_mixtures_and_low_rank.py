"""MixtureSameFamily, LowRankMultivariateNormal and OneHotCategoricalStraightThrough
against torch.distributions in float64: values, shapes, gradients, expand, sampling,
the low-rank KLs and the validation errors.

Each row's ``make(D, *params)`` runs unchanged with ``D`` = gradlab's namespace (``G``
below) and ``D = torch.distributions``; parameters are float64 arrays inside the
constraints, values arrays inside the support shaped to broadcast with the batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import gradlab
import gradlab.distributions as gd
from gradlab.distributions.kl import kl_divergence
from gradlab.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from gradlab.distributions.mixture_same_family import MixtureSameFamily
from gradlab.distributions.straight_through import OneHotCategoricalStraightThrough
from tests.oracle import needs_torch, torch

pytestmark = needs_torch

G = gd
assert (G.MixtureSameFamily, G.LowRankMultivariateNormal, G.OneHotCategoricalStraightThrough) == (
    MixtureSameFamily, LowRankMultivariateNormal, OneHotCategoricalStraightThrough)


@dataclass
class Row:
    name: str
    make: Callable  # make(D, *tensors) -> distribution
    params: Callable  # rng -> list of float64 arrays
    values: Callable  # rng -> array of values in the support
    batch_shape: tuple
    event_shape: tuple = ()
    props: tuple = ("mean", "variance", "stddev")
    entropy: bool = False
    cdf: bool = False
    torch_sample: bool = True  # PyTorch's MixtureSameFamily.sample fails for a broadcast mixture


def _pos(rng, shape, lo=0.5, hi=2.0):
    return rng.uniform(lo, hi, shape)


def _probs(rng, shape):
    p = rng.uniform(0.1, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


def _tril(rng, k, batch=()):
    a = np.tril(rng.normal(size=batch + (k, k)), -1)
    return a + np.eye(k) * rng.uniform(0.5, 1.5, batch + (k,))[..., None]


MIXTURES = [
    Row("gmm_1d", lambda D, w, mu, s: D.MixtureSameFamily(D.Categorical(probs=w),
                                                          D.Normal(mu, s)),
        lambda r: [_probs(r, (5,)), r.normal(size=(5,)) * 2, _pos(r, (5,))],
        lambda r: r.normal(size=(6,)) * 2, (), cdf=True),
    Row("gmm_batched_logits", lambda D, w, mu, s: D.MixtureSameFamily(
        D.Categorical(logits=w), D.Normal(mu, s)),
        lambda r: [r.normal(size=(3, 5)), r.normal(size=(3, 5)), _pos(r, (3, 5))],
        lambda r: r.normal(size=(4, 3)), (3,), cdf=True),
    Row("gmm_shared_weights_broadcast", lambda D, w, mu, s: D.MixtureSameFamily(
        D.Categorical(probs=w), D.Normal(mu, s)),
        lambda r: [_probs(r, (4,)), r.normal(size=(2, 3, 4)), _pos(r, (1, 3, 4))],
        lambda r: r.normal(size=(3,)), (2, 3), cdf=True, torch_sample=False),
    Row("gmm_size1_mixture_batch", lambda D, w, mu, s: D.MixtureSameFamily(
        D.Categorical(logits=w), D.Normal(mu, s)),
        lambda r: [r.normal(size=(1, 5)), r.normal(size=(3, 5)), _pos(r, (3, 5))],
        lambda r: r.normal(size=(2, 3)), (3,), cdf=True, torch_sample=False),
    Row("gmm_vector_events", lambda D, w, mu, s: D.MixtureSameFamily(
        D.Categorical(logits=w), D.Independent(D.Normal(mu, s), 1)),
        lambda r: [r.normal(size=(2, 4)), r.normal(size=(2, 4, 3)), _pos(r, (2, 4, 3))],
        lambda r: r.normal(size=(5, 2, 3)), (2,), (3,)),
    Row("gmm_vector_events_shared_weights", lambda D, w, mu, s: D.MixtureSameFamily(
        D.Categorical(probs=w), D.Independent(D.Normal(mu, s), 1)),
        lambda r: [_probs(r, (4,)), r.normal(size=(4, 3)), _pos(r, (4, 3))],
        lambda r: r.normal(size=(5, 3)), (), (3,)),
    Row("mixture_of_mvn", lambda D, w, mu, tril: D.MixtureSameFamily(
        D.Categorical(logits=w), D.MultivariateNormal(mu, scale_tril=tril)),
        lambda r: [r.normal(size=(3,)), r.normal(size=(3, 2)), _tril(r, 2, (3,))],
        lambda r: r.normal(size=(4, 2)), (), (2,)),
    Row("mixture_of_lowrank_mvn", lambda D, w, mu, f, d: D.MixtureSameFamily(
        D.Categorical(probs=w), D.LowRankMultivariateNormal(mu, f, d)),
        lambda r: [_probs(r, (2, 3)), r.normal(size=(2, 3, 4)), r.normal(size=(3, 4, 2)),
                   _pos(r, (4,))],
        lambda r: r.normal(size=(5, 2, 4)), (2,), (4,)),
    Row("mixture_of_exponentials", lambda D, w, rate: D.MixtureSameFamily(
        D.Categorical(probs=w), D.Exponential(rate)),
        lambda r: [_probs(r, (2, 3)), _pos(r, (2, 3))],
        lambda r: _pos(r, (4, 2), 0.1, 3.0), (2,), cdf=True),
    Row("mixture_of_laplace", lambda D, w, mu, s: D.MixtureSameFamily(
        D.Categorical(logits=w), D.Laplace(mu, s)),
        lambda r: [r.normal(size=(3,)), r.normal(size=(2, 3)), _pos(r, (2, 3))],
        lambda r: r.normal(size=(2,)), (2,), cdf=True, torch_sample=False),
]

LOW_RANK = [
    Row("lowrank", lambda D, mu, f, d: D.LowRankMultivariateNormal(mu, f, d),
        lambda r: [r.normal(size=(3,)), r.normal(size=(3, 2)), _pos(r, (3,))],
        lambda r: r.normal(size=(4, 3)), (), (3,), entropy=True),
    Row("lowrank_broadcast_batches", lambda D, mu, f, d: D.LowRankMultivariateNormal(mu, f, d),
        lambda r: [r.normal(size=(2, 4)), r.normal(size=(4, 1)), _pos(r, (3, 1, 4))],
        lambda r: r.normal(size=(5, 3, 2, 4)), (3, 2), (4,), entropy=True),
    Row("lowrank_batched_factor", lambda D, mu, f, d: D.LowRankMultivariateNormal(mu, f, d),
        lambda r: [r.normal(size=(4,)), r.normal(size=(2, 4, 3)), _pos(r, (4,))],
        lambda r: r.normal(size=(4,)), (2,), (4,), entropy=True),
    Row("lowrank_rank_exceeds_dim", lambda D, mu, f, d: D.LowRankMultivariateNormal(mu, f, d),
        lambda r: [r.normal(size=(2,)), r.normal(size=(2, 3)), _pos(r, (2,))],
        lambda r: r.normal(size=(3, 2)), (), (2,), entropy=True),
]
LOW_RANK_PROPS = ("mean", "mode", "variance", "stddev", "covariance_matrix",
                  "precision_matrix", "scale_tril")

STRAIGHT_THROUGH = [
    Row("straight_through_logits", lambda D, w: D.OneHotCategoricalStraightThrough(logits=w),
        lambda r: [r.normal(size=(4, 3))], lambda r: np.eye(3)[r.integers(0, 3, (2, 4))],
        (4,), (3,), entropy=True),
    Row("straight_through_probs", lambda D, p: D.OneHotCategoricalStraightThrough(probs=p),
        lambda r: [_probs(r, (3,))], lambda r: np.eye(3)[r.integers(0, 3, (5,))],
        (), (3,), entropy=True),
]
ALL = MIXTURES + LOW_RANK + STRAIGHT_THROUGH


def _ids(row):
    return row.name


def _build(lib, row, arrays):
    params = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    return row.make(G if lib is gradlab else torch.distributions, *params), params


def _pair(row, seed=0):
    rng = np.random.default_rng(seed)
    arrays = row.params(rng)
    value = row.values(rng)
    mine, g_params = _build(gradlab, row, arrays)
    theirs, t_params = _build(torch, row, arrays)
    return (mine, g_params, gradlab.tensor(value, dtype=gradlab.float64),
            theirs, t_params, torch.tensor(value, dtype=torch.float64))


def _close(mine, theirs, atol=1e-9, rtol=1e-7):
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), atol=atol,
                               rtol=rtol, equal_nan=True)


def _props(row):
    if row in LOW_RANK:
        return LOW_RANK_PROPS
    if row in STRAIGHT_THROUGH:
        return ("mean", "variance", "mode")
    return row.props


def _outputs(row, dist, value):
    out = {"log_prob": dist.log_prob(value)}
    if row.entropy:
        out["entropy"] = dist.entropy()
    if row.cdf:
        out["cdf"] = dist.cdf(value)
    for prop in _props(row):
        out[prop] = getattr(dist, prop)
    return out


# --- values, shapes, gradients ------------------------------------------------------------

@pytest.mark.parametrize("row", ALL, ids=_ids)
def test_values_shapes_and_gradients_match_torch(row):
    mine, g_params, g_value, theirs, t_params, t_value = _pair(row)
    assert tuple(mine.batch_shape) == tuple(theirs.batch_shape) == row.batch_shape
    assert tuple(mine.event_shape) == tuple(theirs.event_shape) == row.event_shape
    assert mine.has_rsample == theirs.has_rsample
    assert mine.has_enumerate_support == theirs.has_enumerate_support
    g_out, t_out = _outputs(row, mine, g_value), _outputs(row, theirs, t_value)
    rng = np.random.default_rng(1)
    g_loss, t_loss = 0, 0
    for key in g_out:
        assert tuple(g_out[key].shape) == tuple(t_out[key].shape), key
        _close(g_out[key], t_out[key])
        if g_out[key].dtype.is_floating_point and g_out[key].requires_grad:
            w = rng.normal(size=tuple(t_out[key].shape))
            g_loss = g_loss + (g_out[key] * gradlab.tensor(w)).sum()
            t_loss = t_loss + (t_out[key] * torch.tensor(w)).sum()
    g_loss.backward()
    t_loss.backward()
    for g, t in zip(g_params, t_params):
        assert g.grad is not None
        _close(g.grad, t.grad, atol=1e-8, rtol=1e-6)


@pytest.mark.parametrize("row", ALL, ids=_ids)
def test_expand_matches_torch(row):
    mine, _, _, theirs, _, _ = _pair(row, seed=2)
    shape = (2,) + row.batch_shape
    g_big, t_big = mine.expand(shape), theirs.expand(shape)
    assert type(g_big) is type(mine) and g_big._validate_args == mine._validate_args
    assert tuple(g_big.batch_shape) == tuple(t_big.batch_shape) == shape
    assert tuple(g_big.event_shape) == row.event_shape
    value = g_big.sample((3,))
    _close(g_big.log_prob(value), t_big.log_prob(torch.tensor(value.numpy())))
    for prop in _props(row):
        _close(getattr(g_big, prop), getattr(t_big, prop))
    assert tuple(g_big.sample((5,)).shape) == (5,) + shape + row.event_shape
    if row.entropy:
        _close(g_big.entropy(), t_big.entropy())


@pytest.mark.parametrize("row", ALL, ids=_ids)
def test_sample_shapes_and_support(row):
    mine, _, _, theirs, _, _ = _pair(row)
    for sample_shape in ((), (7,), (2, 3)):
        x = mine.sample(sample_shape)
        expected = tuple(sample_shape) + row.batch_shape + row.event_shape
        assert tuple(x.shape) == expected and not x.requires_grad
        if row.torch_sample:
            assert tuple(theirs.sample(sample_shape).shape) == expected
        assert bool(mine.support.check(x).all())
        assert tuple(mine.log_prob(x).shape) == tuple(sample_shape) + row.batch_shape
    if mine.has_rsample:
        x = mine.rsample((7,))
        assert tuple(x.shape) == tuple(theirs.rsample((7,)).shape) and x.requires_grad


def test_repr_names_the_distribution():
    rng = np.random.default_rng(0)
    assert repr(MIXTURES[0].make(G, *[gradlab.tensor(a) for a in MIXTURES[0].params(rng)])) \
        .startswith("MixtureSameFamily(\n  Categorical(")
    lowrank = LOW_RANK[0].make(G, *[gradlab.tensor(a) for a in LOW_RANK[0].params(rng)])
    assert repr(lowrank) == ("LowRankMultivariateNormal(loc: gradlab.Size([3]), cov_factor: "
                             "gradlab.Size([3, 2]), cov_diag: gradlab.Size([3]))")
    assert repr(OneHotCategoricalStraightThrough(logits=gradlab.zeros(3))).startswith(
        "OneHotCategoricalStraightThrough(logits")


# --- MixtureSameFamily ---------------------------------------------------------------------

def test_mixture_support_and_unimplemented_methods_match_torch():
    for lib, D in ((gradlab, G), (torch, torch.distributions)):
        mix = D.MixtureSameFamily(D.Categorical(probs=lib.ones(2, dtype=lib.float64)),
                                  D.Exponential(lib.ones(2, dtype=lib.float64)))
        assert mix.support.event_dim == 0 and not mix.support.is_discrete
        assert mix.support.check(lib.tensor([-1.0, 0.5], dtype=lib.float64)).tolist() == \
            [False, True]
        with pytest.raises(ValueError, match="support"):
            mix.log_prob(lib.tensor([-1.0, 1.0], dtype=lib.float64))
        for method in ("rsample", "entropy"):
            with pytest.raises(NotImplementedError):
                getattr(mix, method)()
        with pytest.raises(NotImplementedError):
            _ = mix.mode
    assert repr(MixtureSameFamily(G.Categorical(probs=gradlab.ones(2)),
                                  G.Exponential(gradlab.ones(2))).support) == \
        "MixtureSameFamilyConstraint(GreaterThanEq(lower_bound=0.0))"


def _error_cases(lib, D):
    def t(*shape):
        return lib.ones(*shape, dtype=lib.float64)
    return [
        ("component", lambda: D.MixtureSameFamily(D.Categorical(t(4)), D.Normal(t(5), t(5)))),
        ("compatible", lambda: D.MixtureSameFamily(D.Categorical(t(2, 5)),
                                                   D.Normal(t(3, 5), t(3, 5)))),
        ("Categorical", lambda: D.MixtureSameFamily(D.OneHotCategorical(t(5)),
                                                    D.Normal(t(5), t(5)))),
        ("Distribution", lambda: D.MixtureSameFamily(D.Categorical(t(5)), t(5))),
    ]


@pytest.mark.parametrize("index", range(4))
def test_mixture_validation_errors_match_torch(index):
    match, build = _error_cases(gradlab, G)[index]
    with pytest.raises(ValueError, match=match):
        build()
    with pytest.raises(ValueError, match=match):
        _error_cases(torch, torch.distributions)[index][1]()


def test_mixture_rejects_what_pytorch_gets_wrong():
    """Two cases PyTorch accepts but handles inconsistently: components without a batch dim
    (IndexError there) and a mixture with more batch dims than the components."""
    one = gradlab.ones(5, dtype=gradlab.float64)
    with pytest.raises(ValueError, match="at least one batch dim"):
        MixtureSameFamily(G.Categorical(one), G.Normal(0.0, 1.0))
    with pytest.raises(ValueError, match="not compatible"):
        MixtureSameFamily(G.Categorical(gradlab.ones(2, 3, 5)), G.Normal(gradlab.zeros(3, 5),
                                                                         gradlab.ones(3, 5)))
    vectors = gradlab.ones(2, 5, 3, dtype=gradlab.float64)
    mix = MixtureSameFamily(G.Categorical(one), G.Independent(G.Normal(vectors, vectors), 1))
    assert tuple(mix.batch_shape) == (2,) and tuple(mix.event_shape) == (3,)
    with pytest.raises(ValueError, match="event_shape"):
        mix.log_prob(gradlab.zeros(2, dtype=gradlab.float64))
    with pytest.raises(ValueError, match="broadcastable"):
        mix.log_prob(gradlab.zeros(2, 4, 3, dtype=gradlab.float64))


def test_gmm_samples_pick_components_with_the_mixture_weights():
    weights = gradlab.tensor([0.2, 0.5, 0.3], dtype=gradlab.float64)
    locs = gradlab.tensor([-10.0, 0.0, 10.0], dtype=gradlab.float64)
    gmm = MixtureSameFamily(G.Categorical(probs=weights),
                            G.Normal(locs, gradlab.full((3,), 0.1, dtype=gradlab.float64)))
    n = 20000
    gradlab.manual_seed(0)
    x = gmm.sample((n,))
    freq = np.array([((x - loc).abs() < 1.0).double().mean().item() for loc in locs.tolist()])
    se = np.sqrt(weights.numpy() * (1 - weights.numpy()) / n)
    assert np.all(np.abs(freq - weights.numpy()) < 5 * se)
    for stat, expected, var in ((x.mean(), gmm.mean, gmm.variance),):
        assert abs(stat.item() - expected.item()) < 5 * np.sqrt(var.item() / n)
    assert abs(x.var().item() / gmm.variance.item() - 1) < 0.05
    gradlab.manual_seed(0)
    assert bool((gmm.sample((n,)) == x).all())  # one seed, one stream


def test_broadcast_mixture_picks_components_independently_per_batch_member():
    """Shared weights (mixture batch ()) with components batch (2,): each batch member
    draws its own component index (PyTorch's sample fails here)."""
    locs = gradlab.tensor([[-10.0, 10.0], [-10.0, 10.0]], dtype=gradlab.float64)
    gmm = MixtureSameFamily(G.Categorical(probs=gradlab.tensor([0.5, 0.5])),
                            G.Normal(locs, gradlab.full((2, 2), 0.1, dtype=gradlab.float64)))
    gradlab.manual_seed(1)
    x = gmm.sample((4000,))
    same = ((x[:, 0] > 0) == (x[:, 1] > 0)).double().mean().item()
    assert abs(same - 0.5) < 0.05
    assert abs((x > 0).double().mean().item() - 0.5) < 0.05


def test_vector_mixture_sample_statistics():
    rng = np.random.default_rng(5)
    row = MIXTURES[4]  # gmm_vector_events, batch (2,), event (3,)
    gmm = row.make(G, *[gradlab.tensor(a, dtype=gradlab.float64) for a in row.params(rng)])
    n = 20000
    gradlab.manual_seed(2)
    x = gmm.sample((n,))
    se = (gmm.variance / n).sqrt().numpy()
    assert np.all(np.abs(x.mean(0).numpy() - gmm.mean.numpy()) < 5 * se)
    np.testing.assert_allclose(x.var(0).numpy(), gmm.variance.numpy(), rtol=0.08)


# --- LowRankMultivariateNormal -------------------------------------------------------------

def _low_rank_error_cases(lib, D):
    def t(*shape, value=1.0):
        return lib.full(shape, value, dtype=lib.float64)
    return [
        ("loc must be at least one-dimensional", lambda: D.LowRankMultivariateNormal(
            t(), t(3, 2), t(3))),
        ("cov_factor must be at least two-dimensional", lambda: D.LowRankMultivariateNormal(
            t(3), t(3), t(3))),
        ("cov_factor must be a batch of matrices", lambda: D.LowRankMultivariateNormal(
            t(3), t(4, 2), t(3))),
        ("cov_diag must be a batch of vectors", lambda: D.LowRankMultivariateNormal(
            t(3), t(3, 2), t(2))),
        ("Incompatible batch shapes", lambda: D.LowRankMultivariateNormal(
            t(2, 3), t(4, 3, 2), t(3))),
        ("cov_diag", lambda: D.LowRankMultivariateNormal(
            t(3), t(3, 2, value=0.1), lib.tensor([-1.0, 1.0, 1.0], dtype=lib.float64))),
        ("loc", lambda: D.LowRankMultivariateNormal(t(3, value=float("nan")), t(3, 2), t(3))),
    ]


@pytest.mark.parametrize("index", range(7))
def test_low_rank_validation_errors_match_torch(index):
    match, build = _low_rank_error_cases(gradlab, G)[index]
    with pytest.raises(ValueError, match=match):
        build()
    with pytest.raises(ValueError, match=match):
        _low_rank_error_cases(torch, torch.distributions)[index][1]()


def test_low_rank_validation_catches_bad_values_before_the_cholesky():
    """A cov_diag that makes the capacitance matrix indefinite still fails as the
    parameter's ValueError (PyTorch's Cholesky fails first there)."""
    with pytest.raises(ValueError, match="cov_diag"):
        LowRankMultivariateNormal(gradlab.zeros(2), gradlab.ones(2, 1) * 3,
                                  gradlab.tensor([-1.0, 1.0]))
    with pytest.raises(ValueError, match="cov_factor"):
        LowRankMultivariateNormal(gradlab.zeros(2), gradlab.full((2, 1), float("nan")),
                                  gradlab.ones(2))
    lowrank = LowRankMultivariateNormal(gradlab.zeros(2), gradlab.ones(2, 1), gradlab.ones(2))
    with pytest.raises(ValueError, match="event_shape"):
        lowrank.log_prob(gradlab.zeros(3))
    off = LowRankMultivariateNormal(gradlab.zeros(2), gradlab.ones(2, 1) / 4, -gradlab.ones(2),
                                    validate_args=False)
    assert off.batch_shape == ()  # validation off: built as asked


def test_low_rank_matches_the_full_multivariate_normal():
    rng = np.random.default_rng(7)
    loc, f, d = rng.normal(size=(2, 5)), rng.normal(size=(5, 2)), _pos(rng, (5,))
    lowrank = LowRankMultivariateNormal(*[gradlab.tensor(a) for a in (loc, f, d)])
    full = gd.MultivariateNormal(gradlab.tensor(loc), gradlab.tensor(f @ f.T + np.diag(d)))
    x = gradlab.tensor(rng.normal(size=(3, 2, 5)))
    _close(lowrank.log_prob(x), full.log_prob(x))
    _close(lowrank.entropy(), full.entropy())
    _close(lowrank.scale_tril, full.scale_tril)
    _close(lowrank.precision_matrix, full.precision_matrix)


def test_low_rank_rsample_moments_and_pathwise_gradients():
    """E[x] = loc, Cov[x] = W Wᵀ + D, and the pathwise gradient of E[x²]
    (= loc² + Σ_j W²_ij + D_i) is 2 loc, 2 W and 1, estimated through rsample."""
    rng = np.random.default_rng(8)
    arrays = [rng.normal(size=(3,)), rng.normal(size=(3, 2)) * 0.7, _pos(rng, (3,))]
    loc, f, d = [gradlab.tensor(a, dtype=gradlab.float64, requires_grad=True) for a in arrays]
    dist = LowRankMultivariateNormal(loc, f, d)
    n = 40000
    gradlab.manual_seed(3)
    x = dist.rsample((n,))
    xn = x.detach().numpy()
    cov = arrays[1] @ arrays[1].T + np.diag(arrays[2])
    se = np.sqrt(np.diag(cov) / n)
    assert np.all(np.abs(xn.mean(0) - arrays[0]) < 5 * se)
    np.testing.assert_allclose(np.cov(xn.T), cov, atol=0.08)
    x.pow(2).mean(0).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), 2 * arrays[0], atol=0.05)
    np.testing.assert_allclose(f.grad.numpy(), 2 * arrays[1], atol=0.08)
    np.testing.assert_allclose(d.grad.numpy(), np.ones(3), atol=0.08)
    loc.grad = None
    dist.rsample((5,)).sum().backward()  # d/dloc of a sum of 5 draws: exactly 5 per entry
    np.testing.assert_allclose(loc.grad.numpy(), np.full(3, 5.0))
    gradlab.manual_seed(3)
    assert bool((dist.rsample((n,)) == x).all())


# --- the KL rules ---------------------------------------------------------------------------

def _lowrank(D, lib, r, batch=(), n=3, rank=2):
    params = [r.normal(size=batch + (n,)), r.normal(size=(n, rank)), _pos(r, (n,))]
    params = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in params]
    return D.LowRankMultivariateNormal(*params), params


def _mvn(D, lib, r, batch=(), n=3):
    params = [r.normal(size=(n,)), _tril(r, n, batch)]
    params = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in params]
    return D.MultivariateNormal(params[0], scale_tril=params[1]), params


KL_PAIRS = [
    ("lowrank_lowrank", lambda D, lib, r: _lowrank(D, lib, r, (2,)),
     lambda D, lib, r: _lowrank(D, lib, r, (), rank=1)),
    ("mvn_lowrank", lambda D, lib, r: _mvn(D, lib, r, (2,)),
     lambda D, lib, r: _lowrank(D, lib, r)),
    ("lowrank_mvn", lambda D, lib, r: _lowrank(D, lib, r, (), rank=1),
     lambda D, lib, r: _mvn(D, lib, r, (2,))),
    ("lowrank_mvn_batched_p", lambda D, lib, r: _lowrank(D, lib, r, (2,)),
     lambda D, lib, r: _mvn(D, lib, r)),
]


@pytest.mark.parametrize("name,make_p,make_q", KL_PAIRS, ids=[k[0] for k in KL_PAIRS])
def test_low_rank_kls_match_torch_values_and_gradients(name, make_p, make_q):
    results = []
    for lib, D, kl in ((gradlab, G, kl_divergence), (torch, torch.distributions,
                                                     torch.distributions.kl_divergence)):
        r = np.random.default_rng(11)
        p, p_params = make_p(D, lib, r)
        q, q_params = make_q(D, lib, r)
        value = kl(p, q)
        w = np.random.default_rng(3).normal(size=tuple(value.shape))
        (value * lib.tensor(w)).sum().backward()
        results.append((value, [t.grad for t in p_params + q_params]))
    (g_kl, g_grads), (t_kl, t_grads) = results
    assert tuple(g_kl.shape) == tuple(t_kl.shape) == (2,)
    assert bool((g_kl > 0).all())
    _close(g_kl, t_kl)
    for g, t in zip(g_grads, t_grads):
        _close(g, t, atol=1e-8, rtol=1e-6)


def test_low_rank_kl_is_zero_to_itself_and_agrees_with_the_full_form():
    r = np.random.default_rng(12)
    p, _ = _lowrank(G, gradlab, r, (2,))
    q, _ = _lowrank(G, gradlab, r)
    np.testing.assert_allclose(kl_divergence(p, p).detach().numpy(), 0.0, atol=1e-12)
    full_p = gd.MultivariateNormal(p.loc, p.covariance_matrix)
    full_q = gd.MultivariateNormal(q.loc, q.covariance_matrix)
    expected = kl_divergence(full_p, full_q)
    for a, b in ((p, q), (full_p, q), (p, full_q)):
        _close(kl_divergence(a, b), expected, atol=1e-10)
    assert gd.kl_divergence is kl_divergence


@pytest.mark.parametrize("name,make_p,make_q", KL_PAIRS[:3], ids=[k[0] for k in KL_PAIRS[:3]])
def test_low_rank_kl_event_shape_mismatch(name, make_p, make_q):
    r = np.random.default_rng(0)
    p, _ = make_p(G, gradlab, r)
    q = LowRankMultivariateNormal(gradlab.zeros(4), gradlab.ones(4, 1), gradlab.ones(4))
    if isinstance(p, LowRankMultivariateNormal) and name != "lowrank_lowrank":
        q = gd.MultivariateNormal(gradlab.zeros(4), gradlab.eye(4))
    with pytest.raises(ValueError, match="different event shapes"):
        kl_divergence(p, q)


# --- OneHotCategoricalStraightThrough --------------------------------------------------------

def test_straight_through_gradient_is_the_gradient_of_probs():
    rng = np.random.default_rng(9)
    logits = rng.normal(size=(4, 3))
    w = rng.normal(size=(5, 4, 3))
    grads = []
    for lib, D in ((gradlab, G), (torch, torch.distributions)):
        theta = lib.tensor(logits, dtype=lib.float64, requires_grad=True)
        x = D.OneHotCategoricalStraightThrough(logits=theta).rsample((5,))
        assert x.requires_grad and tuple(x.shape) == (5, 4, 3)
        xn = x.detach().numpy()
        assert np.all(xn.sum(-1) == 1) and np.all((xn == 0) | (xn == 1))  # exactly one-hot
        (x * lib.tensor(w)).sum().backward()
        grads.append(theta.grad)
        # the same loss with x replaced by its expectation probs gives the same gradient
        theta2 = lib.tensor(logits, dtype=lib.float64, requires_grad=True)
        probs = D.OneHotCategorical(logits=theta2).probs
        (probs * lib.tensor(w)).sum().backward()
        _close(theta.grad, theta2.grad, atol=1e-12)
    _close(grads[0], grads[1], atol=1e-12)


def test_straight_through_is_a_one_hot_categorical():
    probs = gradlab.tensor([0.2, 0.3, 0.5], dtype=gradlab.float64)
    st = OneHotCategoricalStraightThrough(probs=probs)
    assert isinstance(st, gd.OneHotCategorical)
    assert st.has_rsample and not gd.OneHotCategorical(probs=probs).has_rsample
    q = gd.OneHotCategorical(probs=gradlab.tensor([0.4, 0.4, 0.2], dtype=gradlab.float64))
    _close(kl_divergence(st, q), kl_divergence(gd.OneHotCategorical(probs=probs), q))
    assert type(st.expand((2,))) is OneHotCategoricalStraightThrough
    n = 20000
    gradlab.manual_seed(4)
    x = st.rsample((n,))
    se = np.sqrt(probs.numpy() * (1 - probs.numpy()) / n)
    assert np.all(np.abs(x.detach().mean(0).numpy() - probs.numpy()) < 5 * se)
    with pytest.raises(ValueError, match="Simplex"):
        OneHotCategoricalStraightThrough(probs=gradlab.tensor([0.5, -0.5, 1.0]))
    with pytest.raises(ValueError):
        OneHotCategoricalStraightThrough(probs=probs, logits=probs)
