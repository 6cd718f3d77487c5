"""Lesson 24: change of variables, densities through transforms (the reference solution)."""

import gradlab
from gradlab import optim
from gradlab.distributions import (
    AffineTransform,
    ExpTransform,
    Normal,
    TransformedDistribution,
    biject_to,
    constraints,
)


def log_density_of_exp(y, mu, sigma):
    """log q(y), the log-density of y = exp(x) for x ~ Normal(mu, sigma), at the positive
    values ``y`` (a float64 tensor), by the change of variables (no LogNormal, no
    TransformedDistribution)."""
    x = y.log()                           # the one x that lands on y: x = f⁻¹(y)
    log_stretch = x                       # dy/dx = eˣ, so log|dy/dx| = x
    return Normal(mu, sigma).log_prob(x) - log_stretch


def log_det_by_autograd(transform, x):
    """log|dy_i/dx_i| for the elementwise transform ``transform`` at the 1-D tensor ``x``,
    from autograd (not from transform.log_abs_det_jacobian)."""
    x = x.detach().requires_grad_(True)
    y = transform(x)
    y.sum().backward()  # y_i depends on x_i only: x.grad[i] = dy_i/dx_i, the diagonal of J
    return x.grad.abs().log()


def make_flow(loc, u):
    """Normal(0, 1) through y = exp(loc + scale·z), scale = exp(u) > 0."""
    base = Normal(gradlab.zeros((), dtype=gradlab.float64),
                  gradlab.ones((), dtype=gradlab.float64))
    scale = biject_to(constraints.positive)(u)  # ExpTransform: any u gives a scale > 0
    return TransformedDistribution(base, [AffineTransform(loc, scale), ExpTransform()])


def fit_flow(data, steps, lr):
    """A TransformedDistribution fitted to the positive 1-D float64 tensor ``data`` by
    maximum likelihood: ``steps`` Adam steps with learning rate ``lr`` on
    −mean(log q(data))."""
    loc = gradlab.zeros((), dtype=gradlab.float64, requires_grad=True)
    u = gradlab.zeros((), dtype=gradlab.float64, requires_grad=True)
    opt = optim.Adam([loc, u], lr=lr)
    for _ in range(steps):
        flow = make_flow(loc, u)  # anew each step: scale = exp(u) must be recomputed
        loss = -flow.log_prob(data).mean()
        opt.zero_grad()
        loss.backward()  # through the inverse transforms and their log-dets
        opt.step()
    with gradlab.no_grad():
        return make_flow(loc.detach(), u.detach())


if __name__ == "__main__":
    # What the app runs when you press r.
    gradlab.manual_seed(0)

    # 1. y = exp(x), x ~ Normal(0, 1): the density at y = 1 and y = e.
    y = gradlab.tensor([1.0, 2.718281828], dtype=gradlab.float64)
    print("q(y) at y = 1 and e:", log_density_of_exp(y, 0.0, 1.0).exp())  # 0.3989, 0.0890

    # 2. Autograd's log|dy/dx| against the transforms' own formulas.
    x = gradlab.tensor([-1.0, 0.5, 2.0], dtype=gradlab.float64)
    tanh_after_affine = gradlab.distributions.ComposeTransform(
        [AffineTransform(0.5, -2.0), gradlab.distributions.TanhTransform()])
    for t in (ExpTransform(), AffineTransform(1.0, -3.0), tanh_after_affine):
        print(f"{type(t).__name__:16s} autograd {log_det_by_autograd(t, x)}")
        print(f"{'':16s} formula  {t.log_abs_det_jacobian(x, t(x))}")

    # 3. Skewed data: sizes whose logarithm is Normal(1, 0.6). A Normal fit, then a flow.
    data = (1.0 + 0.6 * gradlab.randn(500, dtype=gradlab.float64)).exp()
    flow = fit_flow(data, steps=200, lr=0.05)
    normal = Normal(data.mean(), data.std())
    print(f"average log-likelihood: Normal {normal.log_prob(data).mean().item():.3f}, "
          f"flow {flow.log_prob(data).mean().item():.3f}")
