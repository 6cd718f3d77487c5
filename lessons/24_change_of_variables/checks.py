"""Lesson 24's checks: the density of exp(x) against LogNormal and against the probability
of little intervals (differences of the cdf, in closed form); autograd's log|dy/dx| against
each transform's own log_abs_det_jacobian (and, composed, the sum of its parts'); a fitted
flow's average log-likelihood on held-out data against a Normal fit and the true density."""

import math

import numpy as np

import gradlab
from gradlab.distributions import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    LogNormal,
    Normal,
    PowerTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
    Transform,
    TransformedDistribution,
)
from lessons.expect import as_array, check, expect, expect_close, expect_tensor, show


def _f64(values) -> gradlab.Tensor:
    return gradlab.tensor(np.asarray(values, dtype=np.float64), dtype=gradlab.float64)


def _as_values(got, what: str, shape: tuple) -> np.ndarray:
    """The student's answer as a float64 array of ``shape`` (a failed expectation if not)."""
    expect_tensor(got, what)
    have = as_array(got).astype(np.float64)
    expect(tuple(have.shape) == shape, f"{what}: its shape", str(shape), str(tuple(have.shape)),
           "one value per element of the input")
    return have


# --- log_density_of_exp --------------------------------------------------------------------

class _Watch:
    """Counts the calls of TransformedDistribution.log_prob (LogNormal's too) while on."""

    def __init__(self) -> None:
        self.calls = 0
        self._original = TransformedDistribution.log_prob

    def __enter__(self):
        original = self._original

        def counted(dist, value):
            self.calls += 1
            return original(dist, value)

        TransformedDistribution.log_prob = counted
        return self

    def __exit__(self, *exc) -> None:
        TransformedDistribution.log_prob = self._original


def _normal_cdf(x, mu: float, sigma: float):
    return 0.5 * (1 + np.vectorize(math.erf)((np.asarray(x) - mu) / (sigma * math.sqrt(2))))


def _why_density(got: np.ndarray, y: np.ndarray, mu: float, sigma: float) -> str:
    """A word on the usual wrong answers, recognised by their values."""
    x = np.log(y)
    base = -((x - mu) ** 2) / (2 * sigma ** 2) - math.log(sigma) - 0.5 * math.log(2 * math.pi)
    known = [
        (base, "this is log p(x) at x = log y, the density of x: the change of variables "
               "subtracts log|dy/dx| = log eˣ = x = log y (where exp stretches space, the "
               "density thins)"),
        (base + x, "log|dy/dx| was added: stretching thins the density, so subtract it"),
        (base - np.exp(x), "log|dy/dx| = log eˣ = x (= log y), not eˣ = y"),
        (base - 2 * x, "log|dy/dx| was subtracted twice"),
        (-((y - mu) ** 2) / (2 * sigma ** 2) - math.log(sigma) - 0.5 * math.log(2 * math.pi),
         "this is the Normal density at y itself: evaluate p at x = f⁻¹(y) = log y"),
    ]
    for values, why in known:
        if np.allclose(got, values, rtol=1e-6, atol=1e-9):
            return why
    return "log q(y) = log p(x) − log|dy/dx| with x = log y and log|dy/dx| = x"


@check("log_density_of_exp")
def log_density_of_exp(student, rng):
    mu = round(float(rng.uniform(-1, 1)), 3)
    sigma = round(float(rng.uniform(0.3, 1.5)), 3)
    y = np.sort(np.exp(rng.normal(mu, sigma, size=int(rng.integers(5, 9))))).round(4)
    with _Watch() as watch:
        got = student.log_density_of_exp(_f64(y), mu, sigma)
    have = _as_values(got, "log_density_of_exp returns log q(y) as a tensor", y.shape)
    want = as_array(LogNormal(_f64(mu), _f64(sigma)).log_prob(_f64(y)))
    ok = bool(np.allclose(have, want, rtol=1e-6, atol=1e-6))  # Normal(mu, sigma): float32
    expect(ok, f"log q(y) of y = exp(x), x ~ Normal({mu}, {sigma}), at y = {show(y)}, "
           "against LogNormal's log_prob", show(want), show(have),
           "" if ok else _why_density(have, y, mu, sigma))
    expect(watch.calls == 0, "log_density_of_exp does the change of variables itself",
           "no call of LogNormal / TransformedDistribution.log_prob",
           f"{watch.calls} call{'s' if watch.calls != 1 else ''}",
           "write it out: Normal(mu, sigma).log_prob(x) − log|dy/dx|, with x = log y")

    # A density is probability per unit length: P(y − h < Y < y + h) / 2h, from the cdf
    # P(Y < y) = P(X < log y) = Φ((log y − μ) / σ).
    points = np.exp(mu + sigma * rng.uniform(-1.5, 1.5, size=3)).round(3)
    h = 1e-4 * points
    per_length = (_normal_cdf(np.log(points + h), mu, sigma) -
                  _normal_cdf(np.log(points - h), mu, sigma)) / (2 * h)
    density = np.exp(_as_values(student.log_density_of_exp(_f64(points), mu, sigma),
                                "log_density_of_exp returns log q(y) as a tensor",
                                points.shape))
    expect_close(density, per_length, f"exp(log q(y)) at y = {show(points)} against the "
                 "probability of (y − h, y + h) divided by its length 2h (h = y/10⁴), from "
                 "P(Y < y) = Φ((log y − μ)/σ)", rtol=1e-5)


# --- log_det_by_autograd -------------------------------------------------------------------

class _Sealed(Transform):
    """A transform that lets itself be applied but counts who asks for its log-det."""

    def __init__(self, inner: Transform) -> None:
        super().__init__()
        self.inner, self.asked = inner, 0

    @property
    def domain(self):
        return self.inner.domain

    @property
    def codomain(self):
        return self.inner.codomain

    @property
    def bijective(self):
        return self.inner.bijective

    @property
    def sign(self):
        return self.inner.sign

    def _call(self, x):
        return self.inner(x)

    def _inverse(self, y):
        return self.inner.inv(y)

    def log_abs_det_jacobian(self, x, y):
        self.asked += 1
        return self.inner.log_abs_det_jacobian(x, y)

    def __repr__(self) -> str:
        return repr(self.inner).replace("\n", " ")


def _name(t: Transform) -> str:
    if isinstance(t, ComposeTransform):
        return "Compose[" + ", ".join(_name(p) for p in t.parts) + "]"
    if isinstance(t, AffineTransform):
        return f"Affine({t.loc:g}, {t.scale:g})"
    if isinstance(t, PowerTransform):
        return f"Power({t.exponent:g})"
    if type(t).__name__ == "_InverseTransform":
        return _name(t.inv) + ".inv"
    return type(t).__name__.replace("Transform", "")


def _transforms(rng):
    """(transform, where its inputs live as (low, high)) for a few elementwise transforms."""
    r = lambda lo, hi: round(float(rng.uniform(lo, hi)), 2)  # noqa: E731
    sign = float(rng.choice([-1.0, 1.0]))
    return [
        (ExpTransform(), (-2, 2)),
        (AffineTransform(r(-2, 2), -r(0.3, 3)), (-3, 3)),     # falls: dy/dx < 0
        (SigmoidTransform(), (-4, 4)),
        (TanhTransform(), (-2.5, 2.5)),
        (SoftplusTransform(), (-3, 3)),
        (PowerTransform(sign * r(0.5, 2.5)), (0.2, 3)),     # on the positive numbers
        (ExpTransform().inv, (0.1, 5)),                     # log: log|dy/dx| = −log x
        (ComposeTransform([AffineTransform(r(-1, 1), r(0.5, 2)), TanhTransform(),
                           AffineTransform(r(-1, 1), -r(0.5, 3))]), (-1.5, 1.5)),
    ]


@check("log_det_by_autograd")
def log_det_by_autograd(student, rng):
    for transform, (low, high) in _transforms(rng):
        name = _name(transform)
        x = rng.uniform(low, high, size=int(rng.integers(4, 8))).round(3)
        xt = _f64(x)
        want = as_array(transform.log_abs_det_jacobian(xt, transform(xt)))
        sealed = _Sealed(transform)
        got = student.log_det_by_autograd(sealed, _f64(x))
        expect(sealed.asked == 0, f"log_det_by_autograd({name}, x) found dy/dx with autograd",
               "no call of transform.log_abs_det_jacobian", f"{sealed.asked} call(s)",
               "differentiate instead: x.requires_grad_(), y = transform(x), "
               "y.sum().backward(), then x.grad")
        have = _as_values(got, f"log_det_by_autograd({name}, x) returns a tensor", x.shape)
        detail = ""
        if np.isnan(have).any() and not np.isnan(want).any():
            detail = ("NaN where dy/dx < 0 (this map falls there): the log of a negative "
                      "number. Stretching by −2 stretches by 2: take log|dy/dx|")
        elif not np.allclose(have, want, rtol=1e-8, atol=1e-10):
            if np.allclose(have, np.exp(want), rtol=1e-6, atol=1e-9):
                detail = "that is |dy/dx| itself: return its log"
            else:
                detail = "x.grad after y.sum().backward() holds dy_i/dx_i; return its log|·|"
        what = f"log|dy/dx| of {name} at x = {show(x)}, against its log_abs_det_jacobian"
        if isinstance(transform, ComposeTransform):
            what += " (the parts' log-dets, added)"
        if detail:
            expect(False, what, show(want), show(have), detail)
        expect_close(have, want, what, rtol=1e-8, atol=1e-10)


# --- fit_flow ------------------------------------------------------------------------------

def _held_out_ll(dist, data: gradlab.Tensor) -> float:
    with gradlab.no_grad():
        return float(dist.log_prob(data).mean().item())


@check("fit_flow")
def fit_flow(student, rng):
    # Skewed, positive data: sizes (or waiting times, or incomes) whose log is Normal.
    mu = round(float(rng.uniform(0.5, 2.0)), 2)
    sigma = round(float(rng.uniform(0.45, 0.8)), 2)
    train = np.exp(rng.normal(mu, sigma, size=400))
    test = np.exp(rng.normal(mu, sigma, size=2000))
    steps, lr = 300, 0.05
    flow = student.fit_flow(_f64(train), steps, lr)
    expect(isinstance(flow, TransformedDistribution), "fit_flow returns a "
           "TransformedDistribution", "a TransformedDistribution", type(flow).__name__,
           "return TransformedDistribution(Normal(0, 1), [your transforms]) with the "
           "fitted parameters")

    test_t = _f64(test)
    normal = Normal(_f64(train.mean()), _f64(train.std()))
    truth = LogNormal(_f64(mu), _f64(sigma))
    normal_ll, true_ll = _held_out_ll(normal, test_t), _held_out_ll(truth, test_t)
    flow_ll = _held_out_ll(flow, test_t)
    expect(math.isfinite(flow_ll), "the flow's log q at 2000 held-out points is finite",
           "a finite number", f"{flow_ll}", "does the flow's support cover the data (all "
           "positive)? are its parameters finite after training?")
    need = normal_ll + 0.75 * (true_ll - normal_ll)
    only_affine = all(isinstance(t, AffineTransform) for t in flow.transforms)
    why = "" if flow_ll >= need else (
        "the flow's transforms are all AffineTransforms: they move and stretch the Normal "
        "without bending it, so the result is a Normal again. Add a transform that bends, "
        "such as ExpTransform (these data are skewed and positive)" if only_affine else
        "train all `steps` Adam steps with `lr` on loss = −flow.log_prob(data).mean(), and "
        "return the flow with the trained parameters")
    expect(flow_ll >= need, f"average log q on 2000 held-out points after {steps} steps with "
           f"lr = {lr} (a Normal fit gets {normal_ll:.4f}, the true density {true_ll:.4f}): "
           "at least three quarters of the way from the Normal to the truth",
           f"≥ {need:.4f}", f"{flow_ll:.4f}", why)
