"""Check a gradient against finite differences: ``gradcheck`` and ``gradgradcheck``.

The analytic Jacobian comes from backward, one row per output element
(a vector-Jacobian product with a one-hot vector). The numerical Jacobian
comes from central differences, one column per input element:

    J[:, j] ≈ (f(x + eps·e_j) - f(x - eps·e_j)) / (2·eps)

Central differences are accurate to O(eps²), so in float64 with eps = 1e-6
the two should agree to about 1e-8 unless the function is not smooth at x.
Run checks in float64 (complex128): float32 rounding swamps the difference.

Complex numbers are checked as pairs of reals: each complex input element is
two columns (a step of its real part, then of its imaginary part) and each
complex output element two rows (its real part, then its imaginary part).
Backward gives the rows of Re y with a gradient of 1 and those of Im y with
a gradient of 1j, since ``z.grad = ∂L/∂Re z + i·∂L/∂Im z`` (see
``gradlab/ops/complex_parts.py``).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..tensor import Tensor
from .engine import grad as _grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """The analytic and numerical Jacobians disagree."""


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable_outputs(outputs):
    return [o for o in outputs if isinstance(o, Tensor) and o.requires_grad]


def _differentiable_positions(outputs) -> list[int]:
    return [k for k, o in enumerate(outputs) if isinstance(o, Tensor) and o.requires_grad]


def _parts(t: Tensor) -> tuple:
    """The real directions of one element: (1,) for a real tensor, (1, 1j) for complex."""
    return (1, 1j) if t.dtype.is_complex else (1,)


def _as_reals(array: np.ndarray) -> np.ndarray:
    """A flat float64 vector of the values; complex values as (real, imaginary) pairs."""
    if array.dtype.kind == "c":
        return np.stack([array.real, array.imag], -1).astype(np.float64).reshape(-1)
    return array.astype(np.float64).reshape(-1)


def _jacobians(outputs, wrt) -> list:
    return [[np.zeros((o.numel() * len(_parts(o)), t.numel() * len(_parts(t))))
             for o in outputs] for t in wrt]


def _numerical_jacobian(func, inputs, wrt, outputs, positions, eps):
    """Per (input, output) pair, a (numel_out, numel_in) matrix of central differences
    (twice as many rows or columns for complex outputs or inputs)."""
    jac = _jacobians(outputs, wrt)
    for i, t in enumerate(wrt):
        data = t._data
        parts = _parts(t)
        for j in range(t.numel()):
            idx = np.unravel_index(j, data.shape) if data.ndim else ()
            orig = data[idx].item() if data.ndim else data.item()
            for p, direction in enumerate(parts):
                values = []
                for delta in (eps, -eps):
                    data[idx] = orig + delta * direction
                    outs = _as_tuple(func(*inputs))  # grad mode on: func may differentiate
                    outs = [outs[q] for q in positions]
                    values.append([_as_reals(o._host()) for o in outs])
                data[idx] = orig
                for k in range(len(outputs)):
                    jac[i][k][:, j * len(parts) + p] = (values[0][k] - values[1][k]) / (2 * eps)
    return jac


def _analytic_jacobian(outputs, wrt):
    from ..ops.creation import zeros_like

    jac = _jacobians(outputs, wrt)
    for k, o in enumerate(outputs):
        parts = _parts(o)
        for r in range(o.numel()):
            for p, direction in enumerate(parts):
                onehot = zeros_like(o)
                onehot._data.reshape(-1)[r] = direction
                grads = _grad([o], wrt, grad_outputs=[onehot], retain_graph=True,
                              allow_unused=True)
                for i, g in enumerate(grads):
                    if g is not None:
                        values = g._host()
                        if wrt[i].dtype.is_complex and values.dtype.kind != "c":
                            values = values.astype(np.complex128)
                        jac[i][k][r * len(parts) + p, :] = _as_reals(values)
    return jac


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, **_ignored) -> bool:
    """True if backward's gradients of ``func(*inputs)`` match finite differences.

    Only inputs with ``requires_grad=True`` are checked. On a mismatch, raises
    :class:`GradcheckError` naming the input, output and first bad element (or
    returns False with ``raise_exception=False``).
    """
    return _check("gradcheck", func, inputs, eps, atol, rtol, raise_exception)


_HINTS = {
    "gradcheck": "Fix: check the derivative formula in the op's backward.",
    "gradgradcheck": "Second derivatives are wrong (run gradcheck to rule out the first): "
                     "backward must be built from tensor ops on ctx.saved_tensors, without "
                     ".detach(), raw arrays or .item().",
}


def _check(what, func, inputs, eps, atol, rtol, raise_exception) -> bool:
    inputs = _as_tuple(inputs)
    wrt = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    if not wrt:
        raise ValueError(f"{what}: no input requires grad; mark the ones to check with "
                         "requires_grad=True")
    for t in wrt:
        if t.dtype.name not in ("float64", "complex128"):
            warnings.warn(f"{what}: input of dtype {t.dtype} is not float64; finite "
                          "differences will be too coarse to be trusted", stacklevel=3)
    all_outputs = _as_tuple(func(*inputs))
    positions = _differentiable_positions(all_outputs)
    outputs = [all_outputs[p] for p in positions]
    if not outputs:
        raise GradcheckError(f"{what}: the function returned no output that requires grad")
    analytic = _analytic_jacobian(outputs, wrt)
    numerical = _numerical_jacobian(func, inputs, wrt, outputs, positions, eps)
    for i in range(len(wrt)):
        for k in range(len(outputs)):
            a, n = analytic[i][k], numerical[i][k]
            bad = np.abs(a - n) > atol + rtol * np.abs(n)
            if bad.any():
                r, c = np.argwhere(bad)[0]
                message = (
                    f"{what}: Jacobian mismatch for output {k} with respect to input {i} "
                    f"(shape {tuple(wrt[i].shape)}): at output element {r}, input element "
                    f"{c}, backward gives {a[r, c]:.10g} but finite differences give "
                    f"{n[r, c]:.10g} ({int(bad.sum())} of {bad.size} entries differ)."
                )
                if what == "gradgradcheck":
                    message += (" (outputs are the first derivatives; inputs are the "
                                "original inputs, then the output gradients)")
                message += " " + _HINTS[what]
                if a.size <= 36:
                    message += f"\nanalytic:\n{a}\nnumerical:\n{n}"
                if raise_exception:
                    raise GradcheckError(message)
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, raise_exception: bool = True, **_ignored) -> bool:
    """Check second derivatives: gradcheck the gradient of ``func`` (built with create_graph)."""
    from ..ops.sampling import randn_like
    from ..random import Generator

    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(_as_tuple(func(*inputs)))
    if grad_outputs is None:  # random, from a private generator: the global stream is untouched
        gen = Generator(outputs[0].device).manual_seed(0) if outputs else None
        grad_outputs = [randn_like(o, generator=gen).requires_grad_() for o in outputs]
    grad_outputs = list(_as_tuple(grad_outputs))
    n_in = len(inputs)

    def first_derivatives(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = _differentiable_outputs(_as_tuple(func(*ins)))
        wrt = [t for t in ins if isinstance(t, Tensor) and t.requires_grad]
        grads = _grad(outs, wrt, grad_outputs=list(gos), create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None and g.requires_grad)

    return _check("gradgradcheck", first_derivatives, tuple(inputs) + tuple(grad_outputs), eps,
                  atol, rtol, raise_exception)
