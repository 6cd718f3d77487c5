"""Lesson 23's checks: finite-difference gradients of real losses of a complex variable
against gradlab's autograd (and closed forms); a complex gain trained by gradient descent
against the exact iterates and the least-squares answer; a frequency-domain filter
against a circular convolution done sample by sample, and its training against the
iterates and the per-bin least-squares answer, all in NumPy."""

import cmath
import math

import numpy as np

import gradlab
from lessons.expect import as_array, check, expect, expect_close, expect_tensor, show


def _text(value: complex) -> str:
    """A complex number as 2.5 − 1.25i (parts below 1e-12 of it, rounding noise, as 0)."""
    tiny = 1e-12 * max(1.0, abs(value))
    value = complex(0.0 if abs(value.real) < tiny else value.real,
                    0.0 if abs(value.imag) < tiny else value.imag)
    sign = "−" if value.imag < 0 else "+"
    return f"{value.real:.6g} {sign} {abs(value.imag):.6g}i".replace("-", "−")


def _one_complex(value, what: str) -> complex:
    """The student's answer as one Python complex (a complex tensor or number)."""
    if value is None:
        expect(False, what, "a complex number", "None", "did the function forget to return?")
    try:
        array = as_array(value)
        ok = array.size == 1 and array.dtype.kind in "iufc"
    except (TypeError, ValueError, RuntimeError):
        ok = False
    if not ok:
        expect(False, what, "one complex number", repr(value)[:80],
               "return dx + 1j * dy: one number, not a pair")
    return complex(array.reshape(()).item())


def _expect_complex(got: complex, want: complex, what: str, *, rtol: float,
                    atol: float) -> None:
    off = abs(got - want)
    allowed = atol + rtol * abs(want)
    expect(off <= allowed, what, _text(want), _text(got),
           f"off by {off:.3g}, allowed {allowed:.3g}")


# --- plane_gradient ------------------------------------------------------------------------

class _Recorded:
    """A loss that remembers where it was evaluated."""

    def __init__(self, fn) -> None:
        self.fn, self.points = fn, []

    def __call__(self, w):
        if not isinstance(w, gradlab.Tensor):  # a Python complex is fine too
            w = gradlab.tensor(w, dtype=gradlab.complex128)
        self.points.append(complex(w.detach().numpy().item()))
        return self.fn(w)


def _losses(rng):
    """(text, loss of a complex tensor, its gradient in closed form) for a few real losses."""
    t = complex(*rng.uniform(-2, 2, size=2).round(2))
    c = complex(*rng.uniform(-1, 1, size=2).round(2))
    return [
        ("|z|²", lambda w: w.abs() ** 2, lambda z: 2 * z),
        ("Re(z²) = x² − y²", lambda w: (w * w).real, lambda z: 2 * z.conjugate()),
        ("|exp(z)| = eˣ", lambda w: w.exp().abs(), lambda z: math.exp(z.real)),
        ("angle(z)", lambda w: w.angle(), lambda z: 1j * z / abs(z) ** 2),
        (f"|z³ − ({_text(t)})|²", lambda w: (w ** 3 - t).abs() ** 2,
         lambda z: 2 * (z ** 3 - t) * (3 * z * z).conjugate()),
        (f"Im(({_text(c)})·z²)", lambda w: (c * w * w).imag,
         lambda z: 1j * (2 * c * z).conjugate()),
    ]


def _step(d: complex) -> str:
    """Where the loss was evaluated, as a step from z: +1e-06, −1e-06i, 0."""
    if d == 0:
        return "z itself"
    if d.imag == 0:
        return f"z {'−' if d.real < 0 else '+'} {abs(d.real):.2g}"
    if d.real == 0:
        return f"z {'−' if d.imag < 0 else '+'} {abs(d.imag):.2g}i"
    return f"z + ({_text(d)})"


@check("plane_gradient")
def plane_gradient(student, rng):
    for text, fn, closed in _losses(rng):
        while True:
            z0 = complex(*rng.uniform(-1.5, 1.5, size=2).round(3))
            if abs(z0) > 0.3 and not (text.startswith("angle") and z0.real < 0
                                      and abs(z0.imag) < 0.1):  # angle jumps at the cut
                break
        z = gradlab.tensor(z0, dtype=gradlab.complex128, requires_grad=True)
        fn(z).backward()
        want = complex(z.grad.item())
        assert cmath.isclose(want, closed(z0), rel_tol=1e-9, abs_tol=1e-12), (text, z0)
        loss = _Recorded(fn)
        got = _one_complex(student.plane_gradient(loss, z.detach()),
                           f"plane_gradient of L = {text}")
        _expect_complex(got, want, f"∂L/∂x + i·∂L/∂y of L = {text} at z = {_text(z0)}, "
                        "against autograd's z.grad", rtol=1e-7, atol=1e-8)
        stepped_up = any(p.real == z0.real and p.imag != z0.imag for p in loss.points)
        steps = ", ".join(_step(p - z0) for p in loss.points[:6]) or "no call of the loss"
        expect(stepped_up, "the loss was evaluated straight above or below z (z ± i·h): a "
               "finite difference along y", "a step of ±i·h among the points", steps,
               "step along each axis: loss(z + 1j * h) − loss(z − 1j * h) for ∂L/∂y")


# --- fit_gain ------------------------------------------------------------------------------

def _gain_data(rng):
    n = int(rng.integers(20, 60))
    x = (rng.normal(size=n) + 1j * rng.normal(size=n)) / math.sqrt(2)
    gain = cmath.rect(float(rng.uniform(0.5, 3)), float(rng.uniform(-math.pi, math.pi)))
    y = gain * x + 0.1 * (rng.normal(size=n) + 1j * rng.normal(size=n))
    return x, y


def _run_fit_gain(student, x, y, lr, steps, what):
    got = student.fit_gain(gradlab.tensor(x, dtype=gradlab.complex128),
                           gradlab.tensor(y, dtype=gradlab.complex128), lr, steps)
    expect_tensor(got, "fit_gain returns g as a tensor")
    expect(got.dtype == gradlab.complex128, "g is complex128 (an amplification and a phase, "
           "in double precision)", "gradlab.complex128", str(got.dtype),
           "start from gradlab.zeros((), dtype=gradlab.complex128, requires_grad=True)")
    return _one_complex(got, what)


@check("fit_gain")
def fit_gain(student, rng):
    x, y = _gain_data(rng)
    m = float(np.mean(np.abs(x) ** 2))          # L(g) = m|g|² − 2 Re(conj(g)·c) + const
    c = complex(np.mean(np.conj(x) * y))        # so g.grad = 2(m·g − c)
    lr = round(float(rng.uniform(0.15, 0.35)) / m, 4)

    few = int(rng.integers(2, 5))
    g = 0j
    for _ in range(few):
        g -= lr * 2 * (m * g - c)
    got = _run_fit_gain(student, x, y, lr, few, "fit_gain's g")
    _expect_complex(got, g, f"g after {few} steps from 0 with lr = {lr} (each step "
                    "g −= lr·g.grad on mean |g·x − y|²)", rtol=1e-9, atol=1e-12)

    best = complex(np.sum(np.conj(x) * y) / np.sum(np.abs(x) ** 2))
    got = _run_fit_gain(student, x, y, lr, 80, "fit_gain's g")
    _expect_complex(got, best, f"g after 80 steps: the least-squares gain Σ conj(x)·y / Σ|x|² "
                    f"(|g| = {abs(best):.4f}, angle {math.degrees(cmath.phase(best)):.2f}°)"
                    .replace("-", "−"),
                    rtol=1e-7, atol=1e-9)


# --- learn_filter --------------------------------------------------------------------------

def _circular(h: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Σ_k h[k]·x[t − k], indices round the end: the filter h, sample by sample."""
    return sum(h[k] * np.roll(x, k, axis=-1) for k in range(h.shape[-1]))


def _taps(rng, n: int) -> np.ndarray:
    """A short random filter: a few taps near the start (an echo, a blur)."""
    h = np.zeros(n)
    h[:4] = rng.normal(size=4).round(2)
    h[0] += 1.0
    return h


@check("learn_filter")
def learn_filter(student, rng):
    # apply_filter: a product of spectra is a circular convolution (even and odd n).
    for n in (2 * int(rng.integers(8, 20)), 2 * int(rng.integers(8, 20)) + 1):
        batch = int(rng.integers(2, 5))
        h = _taps(rng, n)
        x = rng.normal(size=(batch, n))
        w = gradlab.tensor(np.fft.rfft(h), dtype=gradlab.complex128)
        got = student.apply_filter(w, gradlab.tensor(x, dtype=gradlab.float64))
        expect_tensor(got, f"apply_filter returns a tensor (n = {n})")
        shape = tuple(got.shape)
        expect(shape == (batch, n), f"the shape of apply_filter(w, x) for x of shape "
               f"({batch}, {n}) (n is {'odd' if n % 2 else 'even'}: {n // 2 + 1} bins)",
               str((batch, n)), str(shape), "" if shape == (batch, n) else
               "irfft(spectrum) alone makes 2·(bins − 1) samples: pass n=x.shape[-1]")
        expect(not got.dtype.is_complex, "apply_filter gives real signals", "a real dtype",
               str(got.dtype), "irfft turns a half spectrum back into real samples")
        want = _circular(h, x)
        close = np.allclose(as_array(got), want, rtol=1e-9, atol=1e-12)
        expect(close, f"apply_filter with w = rfft(h), n = {n}, against the circular "
               f"convolution Σ h[k]·x[t − k] (h = {h[:4]} …)", show(want), show(got),
               "" if close else "multiplying bin k by w[k] must filter: rfft, times w, irfft")

    # learn_filter: gradient descent per bin, on signals through an unknown filter.
    n = int(rng.integers(24, 65))
    batch = int(rng.integers(16, 33))
    h = _taps(rng, n)
    x = rng.normal(size=(batch, n))
    y = _circular(h, x) + 0.05 * rng.normal(size=(batch, n))
    X, Y = np.fft.rfft(x), np.fft.rfft(y)
    energy = (np.abs(X) ** 2).sum(0)
    cross = (np.conj(X) * Y).sum(0)
    twice = np.full(n // 2 + 1, 2.0)  # bins 0 < k < n/2 stand for k and n − k
    twice[0] = 1.0
    if n % 2 == 0:
        twice[-1] = 1.0
    # L = (1/B)Σ_b Σ_t (ŷ − y)² = (1/(B·n))Σ_k twice_k·Σ_b|w_k·X_bk − Y_bk|² (Parseval), so
    # w.grad = a_k·(w_k·E_k − C_k), a_k = 2·twice_k/(B·n): each bin its own fit_gain.
    curvature = 2 * twice / (batch * n) * energy
    lr = round(0.8 / float(curvature.max()), 4)
    slowest = float(np.max(np.abs(1 - lr * curvature)))
    long = min(2000, math.ceil(math.log(1e-12) / math.log(slowest)))

    few = int(rng.integers(2, 5))
    w = np.zeros(n // 2 + 1, dtype=complex)
    for _ in range(few):
        w -= lr * 2 * twice / (batch * n) * (w * energy - cross)
    xt, yt = (gradlab.tensor(a, dtype=gradlab.float64) for a in (x, y))
    got = student.learn_filter(xt, yt, lr, few)
    expect_tensor(got, "learn_filter returns w as a tensor")
    expect(got.dtype == gradlab.complex128, "w is complex128 (a gain and a phase per bin, in "
           "double precision)", "gradlab.complex128", str(got.dtype),
           "start from gradlab.zeros(n // 2 + 1, dtype=gradlab.complex128, requires_grad=True)")
    expect_close(got, w, f"w after {few} steps from 0 with lr = {lr} (batch {batch}, n = {n}: "
                 "loss = squared error summed over samples, averaged over signals)",
                 rtol=1e-8, atol=1e-10)

    got = student.learn_filter(xt, yt, lr, long)
    expect_close(got, cross / energy, f"w after {long} steps: per bin, the least-squares "
                 "gain Σ conj(X)·Y / Σ|X|² over the signals", rtol=1e-6, atol=1e-8)
