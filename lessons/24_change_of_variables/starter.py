"""Lesson 24: change of variables, densities through transforms (normalizing flows).

Three tasks, marked TODO:

1. log_density_of_exp(y, mu, sigma): the log-density of y = exp(x), x ~ Normal(mu, sigma),
   by the change of variables: log q(y) = log p(x) − log|dy/dx|.
2. log_det_by_autograd(transform, x): log|dy/dx| of an elementwise transform, from autograd.
3. fit_flow(data, steps, lr): a tiny normalizing flow fitted by maximum likelihood.

Check them with `gradlab check 24` (or press k in the app). Press r in the app to run
this file under the debugger.
"""

import gradlab
from gradlab import optim  # noqa: F401 - for fit_flow
from gradlab.distributions import (  # noqa: F401 - what the tasks need
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
    # TODO: x = log y is the one x that lands on y; log|dy/dx| = log eˣ = x;
    #       return Normal(mu, sigma).log_prob(x) minus that
    raise NotImplementedError("log_density_of_exp")


def log_det_by_autograd(transform, x):
    """log|dy_i/dx_i| for the elementwise transform ``transform`` at the 1-D tensor ``x``,
    from autograd (not from transform.log_abs_det_jacobian)."""
    # TODO: a copy of x that requires grad; y = transform(x); y.sum().backward();
    #       x.grad[i] is dy_i/dx_i: return log of its absolute value
    raise NotImplementedError("log_det_by_autograd")


def fit_flow(data, steps, lr):
    """A TransformedDistribution fitted to the positive 1-D float64 tensor ``data`` by
    maximum likelihood: ``steps`` Adam steps with learning rate ``lr`` on
    −mean(log q(data))."""
    # TODO: learnable float64 scalars loc and u (from 0, requires grad) and an Adam
    #       optimizer over them; each step: flow = TransformedDistribution(Normal(0, 1),
    #       [AffineTransform(loc, scale), ExpTransform()]) with scale = exp(u) (that is
    #       biject_to(constraints.positive)(u)), loss = −flow.log_prob(data).mean(),
    #       zero_grad, backward, step; return the flow
    raise NotImplementedError("fit_flow")


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
