"""Transforms, TransformedDistribution and biject_to / transform_to.

Each transform's log-det is checked against the Jacobian itself (autograd's,
through gradlab.autograd.functional.jacobian), so a wrong formula fails even
where PyTorch is absent; where it is present, values and log-dets match it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
import gradlab.distributions as gd
from gradlab.autograd.functional import jacobian
from gradlab.distributions import constraints
from gradlab.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    StickBreakingTransform,
    TanhTransform,
)
from tests.oracle import needs_torch, torch


def _t(values):
    return gradlab.tensor(np.asarray(values, dtype=np.float64))


# (name, make(lib's transforms module, lib), input values): elementwise, event_dim 0
ELEMENTWISE = [
    ("exp", lambda T, L: T.ExpTransform(), [-1.5, 0.2, 2.0]),
    ("sigmoid", lambda T, L: T.SigmoidTransform(), [-3.0, 0.1, 2.5]),
    ("tanh", lambda T, L: T.TanhTransform(), [-2.0, 0.3, 1.2]),
    ("softplus", lambda T, L: T.SoftplusTransform(), [-2.0, 0.3, 4.0]),
    ("power", lambda T, L: T.PowerTransform(L.tensor(2.5, dtype=L.float64)), [0.3, 1.0, 2.0]),
    ("affine", lambda T, L: T.AffineTransform(0.5, -2.0), [-1.0, 0.0, 3.0]),
    ("affine_tensor", lambda T, L: T.AffineTransform(L.tensor([1.0, 2.0, 3.0],
                                                               dtype=L.float64),
                                                      L.tensor([0.5, -1.5, 2.0],
                                                               dtype=L.float64)),
     [-1.0, 0.0, 3.0]),
]


@pytest.mark.parametrize("name, make, values", ELEMENTWISE, ids=[e[0] for e in ELEMENTWISE])
def test_elementwise_log_det_is_the_log_of_the_derivative(name, make, values):
    t = make(gd.transforms, gradlab)
    x = _t(values)
    y = t(x)
    jac = jacobian(lambda v: t(v), x)  # diagonal for an elementwise map
    np.testing.assert_allclose(t.log_abs_det_jacobian(x, y).numpy(),
                               np.log(np.abs(np.diag(jac.numpy()))), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-10, atol=1e-12)
    assert t.bijective and t.event_dim == 0


@needs_torch
@pytest.mark.parametrize("name, make, values", ELEMENTWISE, ids=[e[0] for e in ELEMENTWISE])
def test_elementwise_transforms_match_torch(name, make, values):
    ours, theirs = make(gd.transforms, gradlab), make(torch.distributions.transforms, torch)
    x_ours, x_theirs = _t(values), torch.tensor(values, dtype=torch.float64)
    y_ours, y_theirs = ours(x_ours), theirs(x_theirs)
    np.testing.assert_allclose(y_ours.numpy(), y_theirs.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.log_abs_det_jacobian(x_ours, y_ours).numpy(),
                               theirs.log_abs_det_jacobian(x_theirs, y_theirs).numpy(),
                               rtol=1e-12, atol=1e-14)
    sign_ours, sign_theirs = ours.sign, theirs.sign
    np.testing.assert_array_equal(np.asarray(getattr(sign_ours, "numpy", lambda: sign_ours)()),
                                  np.asarray(sign_theirs))


def test_stick_breaking_maps_onto_the_simplex_one_to_one_with_its_log_det():
    t = StickBreakingTransform()
    x = _t([0.3, -1.2, 2.0])
    y = t(x)
    assert tuple(y.shape) == (4,) and abs(float(y.sum()) - 1) < 1e-12 and bool((y > 0).all())
    np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-10)
    # On the simplex the map is onto K of the K+1 coordinates: the log-det is that of the
    # square Jacobian of the first K outputs.
    jac = jacobian(lambda v: t(v)[:3], x).numpy()
    np.testing.assert_allclose(float(t.log_abs_det_jacobian(x, y)),
                               np.log(abs(np.linalg.det(jac))), rtol=1e-10)
    assert t.forward_shape((5, 3)) == (5, 4) and t.inverse_shape((5, 4)) == (5, 3)


@needs_torch
def test_stick_breaking_softmax_and_cholesky_transforms_match_torch():
    T = torch.distributions.transforms
    x = np.random.default_rng(0).normal(size=(2, 3))
    for mine, theirs in [(StickBreakingTransform(), T.StickBreakingTransform()),
                         (SoftmaxTransform(), T.SoftmaxTransform())]:
        y_ours, y_theirs = mine(_t(x)), theirs(torch.tensor(x))
        np.testing.assert_allclose(y_ours.numpy(), y_theirs.numpy(), rtol=1e-12)
        np.testing.assert_allclose(mine.inv(y_ours).numpy(), theirs.inv(y_theirs).numpy(),
                                   rtol=1e-10)
    y_ours = StickBreakingTransform()(_t(x))
    np.testing.assert_allclose(
        StickBreakingTransform().log_abs_det_jacobian(_t(x), y_ours).numpy(),
        T.StickBreakingTransform().log_abs_det_jacobian(
            torch.tensor(x), T.StickBreakingTransform()(torch.tensor(x))).numpy(), rtol=1e-10)
    m = np.random.default_rng(1).normal(size=(3, 3))
    for mine, theirs in [(LowerCholeskyTransform(), T.LowerCholeskyTransform()),
                         (PositiveDefiniteTransform(), T.PositiveDefiniteTransform())]:
        y_ours, y_theirs = mine(_t(m)), theirs(torch.tensor(m))
        np.testing.assert_allclose(y_ours.numpy(), y_theirs.numpy(), rtol=1e-12)
        np.testing.assert_allclose(mine.inv(y_ours).numpy(), theirs.inv(y_theirs).numpy(),
                                   rtol=1e-8)


def test_compose_adds_the_log_dets_and_inverts_in_reverse():
    t = ComposeTransform([AffineTransform(0.5, 2.0), ExpTransform(), PowerTransform(_t(0.5))])
    x = _t([-0.5, 0.1, 1.0])
    y = t(x)
    np.testing.assert_allclose(y.numpy(), np.exp(0.5 + 2 * x.numpy()) ** 0.5)
    jac = jacobian(lambda v: t(v), x).numpy()
    np.testing.assert_allclose(t.log_abs_det_jacobian(x, y).numpy(),
                               np.log(np.abs(np.diag(jac))), rtol=1e-10)
    np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-10)
    assert t.inv.inv is t and t.inv.parts[0] == t.parts[-1].inv


def test_compose_counts_event_dims_as_its_parts_need():
    t = ComposeTransform([ExpTransform(), StickBreakingTransform()])
    assert t.domain.event_dim == 1 and t.codomain.event_dim == 1
    x = _t([[0.1, 0.4], [-0.3, 0.2]])
    assert tuple(t.log_abs_det_jacobian(x, t(x)).shape) == (2,)  # one number per vector


def test_independent_and_reshape_transforms():
    t = IndependentTransform(ExpTransform(), 1)
    x = _t([[0.1, 0.2], [0.3, -0.4]])
    np.testing.assert_allclose(t.log_abs_det_jacobian(x, t(x)).numpy(), x.numpy().sum(-1))
    assert t.domain.event_dim == 1
    r = ReshapeTransform((4,), (2, 2))
    y = r(_t(np.arange(8.0).reshape(2, 4)))
    assert tuple(y.shape) == (2, 2, 2) and tuple(r.inv(y).shape) == (2, 4)
    assert r.log_abs_det_jacobian(_t(np.zeros((2, 4))), y).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="hold different numbers of values"):
        ReshapeTransform((3,), (2, 2))


def test_a_cached_transform_returns_the_very_input_it_saw():
    """atanh of a tanh that rounded to 1 is inf; with cache_size=1 the inverse of the last
    output is the input itself (why SAC uses TanhTransform(cache_size=1))."""
    x = _t([30.0])
    plain, cached = TanhTransform(), TanhTransform(cache_size=1)
    assert math.isinf(float(plain.inv(plain(x))))
    y = cached(x)
    assert cached.inv(y) is x
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        TanhTransform(cache_size=2)


def test_abs_softmax_and_cdf_transforms():
    assert AbsTransform()(_t([-2.0, 3.0])).tolist() == [2.0, 3.0]
    assert not AbsTransform().bijective
    y = SoftmaxTransform()(_t([1.0, 2.0, 3.0]))
    assert abs(float(y.sum()) - 1) < 1e-12
    normal = gd.Normal(_t(0.0), _t(1.0))
    t = CumulativeDistributionTransform(normal)
    x = _t([-1.0, 0.5])
    np.testing.assert_allclose(t(x).numpy(), normal.cdf(x).numpy())
    np.testing.assert_allclose(t.inv(t(x)).numpy(), x.numpy(), rtol=1e-10)
    np.testing.assert_allclose(t.log_abs_det_jacobian(x, t(x)).numpy(),
                               normal.log_prob(x).numpy())


def test_transform_equality_and_repr():
    assert ExpTransform() == ExpTransform() and ExpTransform() != SigmoidTransform()
    assert AffineTransform(1.0, 2.0) == AffineTransform(1.0, 2.0)
    assert AffineTransform(1.0, 2.0) != AffineTransform(1.0, 3.0)
    assert ExpTransform().inv == ExpTransform().inv
    assert repr(ExpTransform()) == "ExpTransform()"
    assert repr(ExpTransform().inv) == "_InverseTransform(ExpTransform())"


# --- TransformedDistribution -------------------------------------------------------------

@needs_torch
def test_a_tanh_squashed_gaussian_policy_matches_torch():
    """SAC's policy: tanh of a Normal, log-probability of its own rsample."""
    rng = np.random.default_rng(0)
    mu, sigma = rng.normal(size=(4, 2)), rng.uniform(0.3, 1.0, (4, 2))
    results = []
    for lib in (gradlab, torch):
        m = lib.tensor(mu, requires_grad=True)
        s = lib.tensor(sigma, requires_grad=True)
        D = gd if lib is gradlab else torch.distributions
        policy = D.TransformedDistribution(D.Normal(m, s),
                                           [D.transforms.TanhTransform(cache_size=1)])
        action = lib.tensor(np.tanh(rng.normal(size=(4, 2)) * 0 + mu * 0.5))
        log_prob = policy.log_prob(action).sum(-1)
        log_prob.sum().backward()
        results.append((log_prob.detach().numpy(), m.grad.numpy(), s.grad.numpy(),
                        tuple(policy.batch_shape), tuple(policy.event_shape)))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10)


def test_transformed_distribution_shapes_support_and_sampling():
    base = gd.Normal(_t(np.zeros(3)), _t(np.ones(3)))
    d = gd.TransformedDistribution(base, [ExpTransform()])
    assert tuple(d.batch_shape) == (3,) and d.has_rsample and d.support is constraints.positive
    gradlab.manual_seed(0)
    x = d.sample((1000,))
    assert tuple(x.shape) == (1000, 3) and bool((x > 0).all())
    np.testing.assert_allclose(d.log_prob(x).numpy(),
                               gd.LogNormal(0.0, 1.0).log_prob(x).numpy(), rtol=1e-12)
    simplex = gd.TransformedDistribution(base, StickBreakingTransform())
    assert tuple(simplex.batch_shape) == () and tuple(simplex.event_shape) == (4,)
    wider = simplex.expand((5,))
    assert tuple(wider.sample().shape) == (5, 4)


def test_cdf_through_a_falling_transform():
    """y = -x: P(Y <= y) = 1 - P(X <= -y), and icdf inverts it."""
    d = gd.TransformedDistribution(gd.Normal(_t(0.5), _t(2.0)), AffineTransform(0.0, -1.0))
    y = _t([-1.0, 0.0, 2.0])
    normal = gd.Normal(_t(0.5), _t(2.0))
    np.testing.assert_allclose(d.cdf(y).numpy(), 1 - normal.cdf(-y).numpy(), rtol=1e-12)
    np.testing.assert_allclose(d.icdf(d.cdf(y)).numpy(), y.numpy(), rtol=1e-10, atol=1e-12)


def test_transformed_distribution_errors_teach():
    with pytest.raises(ValueError, match="transforms must be a Transform or a list"):
        gd.TransformedDistribution(gd.Normal(0.0, 1.0), "exp")
    with pytest.raises(TypeError, match="base_distribution must be a Distribution"):
        gd.TransformedDistribution("normal", ExpTransform())
    with pytest.raises(ValueError, match="fewer dims than the transforms' event dims"):
        gd.TransformedDistribution(gd.Normal(0.0, 1.0), StickBreakingTransform())


# --- biject_to / transform_to ------------------------------------------------------------

@pytest.mark.parametrize("constraint, inside", [
    (constraints.positive, lambda y: bool((y > 0).all())),
    (constraints.greater_than(2.0), lambda y: bool((y > 2).all())),
    (constraints.less_than(-1.0), lambda y: bool((y < -1).all())),
    (constraints.interval(-2.0, 3.0), lambda y: bool(((y > -2) & (y < 3)).all())),
    (constraints.unit_interval, lambda y: bool(((y > 0) & (y < 1)).all())),
    (constraints.real, lambda y: True),
], ids=["positive", "greater_than", "less_than", "interval", "unit_interval", "real"])
def test_biject_to_lands_in_the_constraint_and_inverts(constraint, inside):
    for registry in (gd.biject_to, gd.transform_to):
        t = registry(constraint)
        x = _t([-3.0, 0.0, 2.5])
        y = t(x)
        assert inside(y)
        np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-9, atol=1e-9)


def test_simplex_and_matrix_constraints():
    x = _t([0.2, -0.7])
    assert tuple(gd.biject_to(constraints.simplex)(x).shape) == (3,)  # one-to-one: K -> K+1
    assert tuple(gd.transform_to(constraints.simplex)(x).shape) == (2,)  # softmax
    m = gd.transform_to(constraints.positive_definite)(_t(np.eye(2) * 0.3))
    assert bool(constraints.positive_definite.check(m))
    independent = gd.biject_to(constraints.independent(constraints.positive, 1))
    assert isinstance(independent, IndependentTransform)
    with pytest.raises(NotImplementedError, match="no transform is registered for _Boolean"):
        gd.biject_to(constraints.boolean)


def test_an_unconstrained_parameter_fits_a_positive_scale():
    """The reason for biject_to: plain gradient steps on u, a scale exp(u) > 0 always."""
    data = gradlab.tensor(np.random.default_rng(2).normal(0.0, 3.0, 500))
    u = gradlab.zeros((), dtype=gradlab.float64, requires_grad=True)
    opt = gradlab.optim.Adam([u], lr=0.1)
    to_positive = gd.biject_to(gd.Normal.arg_constraints["scale"])
    for _ in range(200):
        opt.zero_grad()
        loss = -gd.Normal(0.0, to_positive(u)).log_prob(data).mean()
        loss.backward()
        opt.step()
    assert abs(float(to_positive(u)) - float(data.std(correction=0))) < 0.05
