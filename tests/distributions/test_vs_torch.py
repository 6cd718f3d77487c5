"""Every distribution against torch.distributions in float64: values, shapes, gradients.

One table (cases.py) drives the tests: each row is built with the same
parameters in gradlab and in PyTorch, then log_prob, entropy, cdf/icdf,
the moments, the shapes, expand and enumerate_support must agree, and so
must the gradients of a loss built from all of them.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
import gradlab.distributions as gd
from tests.oracle import needs_torch, torch

from .cases import DISTS

pytestmark = needs_torch


@pytest.fixture(autouse=True)
def _torch_default_dtype(request):
    """float64 as PyTorch's default dtype for the rows that need it: PyTorch 2.13's
    GeneralizedPareto.log_prob compares its float64 parameters with torch.tensor(0.0) and
    fails ("Double did not match Float") under the float32 default."""
    callspec = getattr(request.node, "callspec", None)
    case = callspec.params.get("case") if callspec else None
    if not getattr(case, "torch_float64", False):
        yield
        return
    saved = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(saved)


def _pair(case, seed=0):
    rng = np.random.default_rng(seed)
    arrays = case.params(rng)
    g_params = [gradlab.tensor(a, dtype=gradlab.float64, requires_grad=True) for a in arrays]
    t_params = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    value = case.values(rng)
    return (case.make(gd, *g_params), g_params, gradlab.tensor(value, dtype=gradlab.float64),
            case.make(torch.distributions, *t_params), t_params,
            torch.tensor(value, dtype=torch.float64))


def _close(mine, theirs, atol=1e-9, rtol=1e-7):
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), atol=atol,
                               rtol=rtol, equal_nan=True)


def _outputs(case, dist, value, lib):
    """Every quantity the row defines, by name."""
    out = {"log_prob": dist.log_prob(value)}
    if case.entropy:
        out["entropy"] = dist.entropy()
        out["perplexity"] = dist.perplexity()
    if case.cdf:
        out["cdf"] = dist.cdf(value)
        probs = lib.tensor(np.linspace(0.05, 0.95, 3), dtype=lib.float64)
        out["icdf"] = dist.icdf(probs)
    for prop in case.props:
        out[prop] = getattr(dist, prop)
    return out


@pytest.mark.parametrize("case", DISTS, ids=lambda c: c.name)
def test_values_shapes_and_gradients_match_torch(case):
    mine, g_params, g_value, theirs, t_params, t_value = _pair(case)
    assert tuple(mine.batch_shape) == tuple(theirs.batch_shape) == case.batch_shape
    assert tuple(mine.event_shape) == tuple(theirs.event_shape) == case.event_shape
    assert mine.has_rsample == theirs.has_rsample
    assert mine.has_enumerate_support == theirs.has_enumerate_support
    g_out = _outputs(case, mine, g_value, gradlab)
    t_out = _outputs(case, theirs, t_value, torch)
    rng = np.random.default_rng(1)
    g_loss, t_loss = 0, 0
    for key in g_out:
        assert tuple(g_out[key].shape) == tuple(t_out[key].shape), key
        _close(g_out[key], t_out[key], rtol=case.rtol)
        if g_out[key].dtype.is_floating_point and g_out[key].requires_grad:
            w = rng.normal(size=tuple(t_out[key].shape))
            finite = np.isfinite(t_out[key].detach().numpy())
            w = np.where(finite, w, 0.0)
            g_loss = g_loss + (g_out[key].nan_to_num() * gradlab.tensor(w)).sum()
            t_loss = t_loss + (t_out[key].nan_to_num() * torch.tensor(w)).sum()
    g_loss.backward()
    t_loss.backward()
    for g, t in zip(g_params, t_params):
        _close(g.grad, t.grad, atol=1e-8, rtol=max(1e-6, 10 * case.rtol))


@pytest.mark.filterwarnings("ignore:Singular sample detected:UserWarning")  # PyTorch's Wishart
@pytest.mark.parametrize("case", DISTS, ids=lambda c: c.name)  # warns on every draw (#122021)
def test_expand_matches_torch(case):
    mine, _, _, theirs, _, _ = _pair(case, seed=2)
    shape = (2,) + case.batch_shape
    g_big, t_big = mine.expand(shape), theirs.expand(shape)
    t_value = t_big.sample()
    g_value = gradlab.tensor(t_value.numpy(), dtype=gradlab.float64)
    assert tuple(g_big.batch_shape) == tuple(t_big.batch_shape) == shape
    assert tuple(g_big.event_shape) == case.event_shape
    assert type(g_big) is type(mine) and g_big._validate_args == mine._validate_args
    _close(g_big.log_prob(g_value), t_big.log_prob(t_value), rtol=case.rtol)
    assert tuple(g_big.sample((5,)).shape) == tuple(t_big.sample((5,)).shape)
    if case.entropy:
        _close(g_big.entropy(), t_big.entropy())


@pytest.mark.parametrize("case", [d for d in DISTS if d.discrete and d.name != "Poisson"],
                         ids=lambda c: c.name)
def test_enumerate_support_matches_torch(case):
    mine, _, _, theirs, _, _ = _pair(case)
    for expand in (True, False):
        _close(mine.enumerate_support(expand).double(), theirs.enumerate_support(expand).double())
    support = mine.enumerate_support()
    assert tuple(mine.log_prob(support).shape) == tuple(theirs.log_prob(
        theirs.enumerate_support()).shape)


def test_repr_matches_torch_for_parameters_given():
    loc, scale = gradlab.zeros(2), gradlab.ones(2)
    assert repr(gd.Normal(loc, scale)) == "Normal(loc: gradlab.Size([2]), scale: gradlab.Size([2]))"
    assert repr(gd.Normal(0.0, 1.0)) == repr(torch.distributions.Normal(0.0, 1.0))
    assert repr(gd.Independent(gd.Normal(loc, scale), 1)).startswith("Independent(Normal(")


CONSTRAINT_CASES = [
    ("real", lambda C: C.real, [0.0, float("nan"), float("inf")]),
    ("positive", lambda C: C.positive, [-1.0, 0.0, 2.0]),
    ("nonnegative", lambda C: C.nonnegative, [-1.0, 0.0, 2.0]),
    ("unit_interval", lambda C: C.unit_interval, [-0.1, 0.0, 1.0, 1.5]),
    ("boolean", lambda C: C.boolean, [0.0, 1.0, 0.5]),
    ("nonnegative_integer", lambda C: C.nonnegative_integer, [-1.0, 0.0, 3.0, 2.5]),
    ("integer_interval", lambda C: C.integer_interval(1, 3), [0.0, 1.0, 3.0, 2.5, 4.0]),
    ("interval", lambda C: C.interval(-1.0, 1.0), [-2.0, -1.0, 1.0, 1.5]),
    ("greater_than", lambda C: C.greater_than(1.0), [0.0, 1.0, 2.0]),
    ("simplex", lambda C: C.simplex, [[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1]]),
    ("real_vector", lambda C: C.real_vector, [[0.0, 1.0], [float("nan"), 1.0]]),
    ("independent", lambda C: C.independent(C.positive, 1), [[1.0, 2.0], [1.0, -2.0]]),
    ("lower_cholesky", lambda C: C.lower_cholesky,
     [[[1.0, 0.0], [2.0, 3.0]], [[1.0, 1.0], [0.0, 1.0]], [[-1.0, 0.0], [0.0, 1.0]]]),
    ("corr_cholesky", lambda C: C.corr_cholesky,
     [[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.6, 0.7]], [[1.0, 0.0], [-0.8, -0.6]],
      [[1.0, 0.3], [0.0, 1.0]]]),
    ("positive_definite", lambda C: C.positive_definite,
     [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]],
      [[2000.0, 1000.001], [1000.0, 2000.0]]]),  # (symmetric within isclose's rtol 1e-5;
    # torch skips the Cholesky test of a batch with any non-symmetric matrix: checked
    # without torch elsewhere)
]


@pytest.mark.parametrize("name,build,values", CONSTRAINT_CASES, ids=[c[0] for c in
                                                                      CONSTRAINT_CASES])
def test_constraint_checks_match_torch(name, build, values):
    mine = build(gd.constraints).check(gradlab.tensor(values, dtype=gradlab.float64))
    theirs = build(torch.distributions.constraints).check(torch.tensor(values,
                                                                       dtype=torch.float64))
    assert mine.tolist() == theirs.tolist()
    assert build(gd.constraints).event_dim == build(torch.distributions.constraints).event_dim
    assert repr(build(gd.constraints)) == repr(build(torch.distributions.constraints))


def test_gamma_cdf_matches_torch_with_gradients_in_rate_and_value():
    rng = np.random.default_rng(4)
    a, b, x = rng.uniform(0.5, 4.0, 3), rng.uniform(0.5, 2.0, 3), rng.uniform(0.1, 5.0, (2, 3))
    results = []
    for lib in (gradlab, torch):
        rate = lib.tensor(b, dtype=lib.float64, requires_grad=True)
        value = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        cdf = lib.distributions.Gamma(lib.tensor(a, dtype=lib.float64), rate).cdf(value)
        cdf.sum().backward()
        results.append((cdf, rate.grad, value.grad))
    for mine, theirs in zip(*results):
        _close(mine, theirs, atol=1e-12)
