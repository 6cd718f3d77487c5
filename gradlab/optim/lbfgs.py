"""L-BFGS: a quasi-Newton method that learns the curvature from the last few steps.

Newton's method steps by -H⁻¹g (H the Hessian). L-BFGS never forms H: it
keeps the last ``history_size`` pairs

    s = θ_new - θ_old      (where it stepped)
    y = g_new - g_old      (how the gradient changed along the way)

and the *two-loop recursion* turns them into the product H⁻¹g of an
approximate inverse Hessian with g, in O(history · n) work::

    q ← -g
    for i = newest … oldest:  αᵢ ← ρᵢ sᵢ·q;  q ← q - αᵢ yᵢ        (ρᵢ = 1 / yᵢ·sᵢ)
    r ← (y·s / y·y) q                       the newest pair's curvature as the initial H⁻¹
    for i = oldest … newest:  βᵢ ← ρᵢ yᵢ·r;  r ← r + (αᵢ - βᵢ) sᵢ
    d ← r                                   the search direction

A pair is kept only if y·s > 1e-10 (the function curved upwards along s),
so the approximation stays positive definite. The step length is ``lr``
(the very first step: min(1, 1/|g|₁)·lr), or, with
``line_search_fn="strong_wolfe"``, found by a line search (``strong_wolfe``
at the end of this file) that ensures enough decrease and a flatter slope.

The algorithm re-evaluates the loss many times per ``step``, so it needs a
``closure`` that recomputes it, and works on all parameters as one flat
vector (hence one parameter group).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from .. import events
from ..autograd.grad_mode import enable_grad, no_grad
from ..ops.creation import zeros
from ..ops.joining import cat
from ..tensor import Tensor
from .optimizer import Optimizer, check_option, snapshot, state_tensor

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    """Limited-memory BFGS, with PyTorch's options, defaults and iterates."""

    complex_params = False  # its flat vectors are written for real parameters (PyTorch views
    # complex ones as real pairs there; not done here yet)

    def __init__(self, params: Iterable, lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, param_group: dict) -> None:
        if self.param_groups:
            raise ValueError(
                "LBFGS doesn't support per-parameter options (parameter groups): it treats all "
                "parameters as one vector. Fix: pass one list with every parameter.")
        super().add_param_group(param_group)

    def _check_group(self, group: dict) -> None:
        check_option("LBFGS", "lr", group["lr"])
        for option in ("max_iter", "max_eval", "history_size"):
            check_option("LBFGS", option, group[option], 1)
        for option in ("tolerance_grad", "tolerance_change"):
            check_option("LBFGS", option, group[option])
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                             f"{group['line_search_fn']!r}")

    # --- the parameters as one flat vector ------------------------------------------------------
    def _flat_grad(self) -> Tensor:
        parts = [zeros(p.numel(), dtype=p.dtype, device=p.device) if p.grad is None
                 else p.grad.reshape(-1) for p in self._params]
        return cat(parts)

    def _add_to_params(self, step: float, direction: Tensor) -> None:
        """θ ← θ + step · direction, the flat direction cut back into each parameter's shape."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(direction[offset:offset + n].reshape(p.shape), alpha=step)
            offset += n

    def _evaluate_at(self, closure, start: list[Tensor], step: float, direction: Tensor):
        """Loss and flat gradient at start + step · direction (the parameters are put back)."""
        self._add_to_params(step, direction)
        with enable_grad():
            loss = float(closure())
        flat_grad = self._flat_grad()
        for p, value in zip(self._params, start):
            p.copy_(value)
        return loss, flat_grad

    # --- one step: up to max_iter iterations ------------------------------------------------
    def _step(self, closure: Callable | None):
        if closure is None:
            raise RuntimeError(
                "LBFGS.step needs a closure: it evaluates the loss several times per step. "
                "Fix:\n    def closure():\n        optimizer.zero_grad()\n"
                "        loss = loss_fn(model(x), y)\n        loss.backward()\n"
                "        return loss\n    optimizer.step(closure)")
        listening = events.listeners
        before = [(snapshot(self.state.get(p, {})), p._data.copy()) for p in self._params] \
            if listening else None
        with no_grad():
            loss = self._iterate(closure)
        if listening:
            group = self.param_groups[0]
            for p, (was, old) in zip(self._params, before):
                self._emit_update(0, group, p, was, snapshot(self.state.get(p, {})), old, p.grad)
        return loss

    def _iterate(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        state = self.state[self._params[0]]  # the whole state lives with the first parameter
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if float(flat_grad.abs().max()) <= tolerance_grad:
            return orig_loss  # already at a stationary point

        d, t = state.get("d"), _number(state.get("t"))
        old_dirs, old_stps = state.get("old_dirs"), state.get("old_stps")
        ro, h_diag = state.get("ro"), _number(state.get("H_diag"))
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:  # the first direction ever: steepest descent
                d = -flat_grad
                old_dirs, old_stps, ro, h_diag = [], [], [], 1.0
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = float(y.dot(s))
                if ys > 1e-10:  # curvature along s is positive: remember the pair
                    if len(old_dirs) == group["history_size"]:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(state_tensor(y))
                    old_stps.append(state_tensor(s))
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y.dot(y))
                d = _two_loop(flat_grad, old_dirs, old_stps, ro, h_diag)
            state_tensor(d)
            prev_flat_grad = state_tensor(flat_grad.clone())
            prev_loss = loss

            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / float(flat_grad.abs().sum())) * lr
            else:
                t = lr
            gtd = float(flat_grad.dot(d))  # slope along d; must be negative to descend
            if gtd > -tolerance_change:
                break

            if group["line_search_fn"] is None:
                self._add_to_params(t, d)
                ls_evals = 0
                if n_iter != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._flat_grad()
                    ls_evals = 1
            else:
                start = [p.clone() for p in self._params]
                loss, flat_grad, t, ls_evals = strong_wolfe(
                    lambda step, start=start, d=d: self._evaluate_at(closure, start, step, d),
                    t, d, loss, flat_grad, gtd, max_ls=max_eval - evals)
                self._add_to_params(t, d)
            evals += ls_evals
            state["func_evals"] += ls_evals

            # stopping rules
            if n_iter == max_iter or evals >= max_eval:
                break
            if float(flat_grad.abs().max()) <= tolerance_grad:
                break
            if float(d.abs().max()) * abs(t) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss


def _number(value):
    """A state value as a float (a loaded state may hold 0-d tensors or arrays)."""
    return None if value is None else float(value)


def _two_loop(flat_grad: Tensor, old_dirs, old_stps, ro, h_diag: float) -> Tensor:
    """The direction -H⁻¹g from the stored (s, y) pairs (the recursion in the module docstring)."""
    q = -flat_grad
    alphas = [0.0] * len(old_dirs)
    for i in reversed(range(len(old_dirs))):
        alphas[i] = float(old_stps[i].dot(q)) * ro[i]
        q.sub_(old_dirs[i], alpha=alphas[i])
    r = q.mul_(h_diag)
    for i in range(len(old_dirs)):
        beta = float(old_dirs[i].dot(r)) * ro[i]
        r.add_(old_stps[i], alpha=alphas[i] - beta)
    return r


# --- the strong-Wolfe line search --------------------------------------------------------------

def cubic_minimizer(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                    bounds: tuple[float, float] | None = None) -> float:
    """Where the cubic through (x1, f1) and (x2, f2) with slopes g1, g2 has its minimum.

    With d₁ = g₁ + g₂ - 3(f₁ - f₂)/(x₁ - x₂) and d₂ = √(d₁² - g₁g₂), for x_lo < x_hi:
    x* = x_hi - (x_hi - x_lo)(g_hi + d₂ - d₁)/(g_hi - g_lo + 2d₂)   (Nocedal & Wright, 3.59),
    clipped to ``bounds`` (default: between the two points). If the cubic has no
    minimum (d₁² < g₁g₂), the middle of the bounds.
    """
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(d2_square)
    (x_lo, g_lo), (x_hi, g_hi) = ((x1, g1), (x2, g2)) if x1 <= x2 else ((x2, g2), (x1, g1))
    x = x_hi - (x_hi - x_lo) * ((g_hi + d2 - d1) / (g_hi - g_lo + 2 * d2))
    return min(max(x, low), high)


def strong_wolfe(evaluate: Callable, t: float, d: Tensor, f: float, g: Tensor, gtd: float,
                 c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                 max_ls: int = 25):
    """A step length t along d meeting the strong Wolfe conditions (Nocedal & Wright, 3.5-3.6).

    ``evaluate(t)`` gives (loss, flat gradient) at θ + t·d. The conditions:

        f(t) ≤ f(0) + c₁ t f'(0)        enough decrease (Armijo)
        |f'(t)| ≤ c₂ |f'(0)|            the slope has flattened (curvature)

    Phase 1 grows t until a bracket [a, b] must contain such a point; phase 2
    ("zoom") shrinks the bracket by cubic interpolation. Returns
    (loss, flat gradient, t, number of evaluations).
    """
    d_norm = float(d.abs().max())
    g = g.clone()
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = float(g_new.dot(d))
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    bracket = bracket_f = bracket_g = bracket_gtd = None
    while ls_iter < max_ls:  # phase 1: find a bracket
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:  # both conditions hold: done
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:  # the slope turned: a minimum lies between
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        # still descending: extrapolate, at least a little further, at most 10 times as far
        t_next = cubic_minimizer(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                 bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.clone(), gtd_new
        t = t_next
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(g_new.dot(d))
        ls_iter += 1
    if ls_iter == max_ls:  # out of evaluations: settle for the better end
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]

    # phase 2: zoom into the bracket; `low` is the end with the lower loss
    insufficient_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break  # the bracket is too small to matter
        t = cubic_minimizer(bracket[0], bracket_f[0], bracket_gtd[0],
                            bracket[1], bracket_f[1], bracket_gtd[1])
        # keep t away from the ends, or the bracket would barely shrink
        lo, hi = min(bracket), max(bracket)
        margin = 0.1 * (hi - lo)
        if min(hi - t, t - lo) < margin:
            if insufficient_progress or t >= hi or t <= lo:
                t = hi - margin if abs(t - hi) < abs(t - lo) else lo + margin
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(g_new.dot(d))
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            # not enough decrease: t becomes the high end
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new.clone(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                # the minimum lies on the other side of t: the old low end becomes high
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new.clone(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals
