"""Counts drawn per element: ``bernoulli``, ``poisson``, ``binomial``.

Each output element is one draw from a distribution whose parameter is the
matching element of a tensor: ``bernoulli(p)`` is 1 with probability
``p[i]``, ``poisson(rate)`` counts events of rate ``rate[i]``, and
``binomial(count, prob)`` counts successes in ``count[i]`` trials of
chance ``prob[i]``. The results are whole numbers stored in the input's
float dtype (as in PyTorch), drawn from the device's generator (or
``generator``), so ``gradlab.manual_seed`` repeats them.

Gradients: a draw is a step function of its parameter (a small change of
``p`` flips the outcome or leaves it be), so its derivative is 0 almost
everywhere. ``bernoulli(p)`` and ``poisson(rate)`` record that, as PyTorch
does: ``p.grad`` becomes zeros. ``binomial`` and ``bernoulli(x, p=0.3)``
are not differentiable at all (PyTorch gives them no derivative either), so
their results don't require grad. For gradients *through* a sample, use a
reparameterised draw (``mean + std * randn_like(std)``) instead.
"""

from __future__ import annotations

from ..autograd.function import Function
from ..random import get_generator
from ..tensor import Tensor
from ._util import xp_for
from .creation import zeros_like
from .repetition import broadcast_tensors

__all__ = ["bernoulli", "poisson", "binomial"]
TENSOR_METHODS = ["bernoulli"]


class _Draw(Function):
    """A draw from a per-element parameter: ``forward(ctx, param, generator, ...)``.
    d(draw)/d(param) = 0 (a step function), so the parameter's gradient is zeros."""

    raw = True

    @staticmethod
    def backward(ctx, grad):
        grad_param = zeros_like(grad) if ctx.needs_input_grad[0] else None
        return (grad_param,) + (None,) * (len(ctx.input_shapes) - 1)

    @staticmethod
    def jvp(ctx, *tangents):
        """ẏ = 0: the draw doesn't move with its parameter."""
        return None


class Bernoulli(_Draw):
    """1 where u < p (u uniform on [0, 1)), else 0: P(1) = p."""

    @staticmethod
    def forward(ctx, probs, generator):
        return (generator.rng.random(probs.shape) < probs.astype("float64")).astype(probs.dtype)


class BernoulliConstant(_Draw):
    """1 with the same probability ``p`` everywhere, in input's shape and dtype."""

    name = "bernoulli"
    differentiable = False

    @staticmethod
    def forward(ctx, a, generator, p):
        return (generator.rng.random(a.shape) < p).astype(a.dtype)


class Poisson(_Draw):
    """k >= 0 with P(k) = rate^k e^(-rate) / k!  (NumPy's / CuPy's sampler, in float64)."""

    @staticmethod
    def forward(ctx, rates, generator):
        draws = generator.rng.poisson(rates.astype("float64"))
        return xp_for(rates).asarray(draws).astype(rates.dtype)  # (0-d: NumPy gives an int)


class Binomial(_Draw):
    """k successes of ``count`` trials, P(k) = C(count, k) p^k (1 - p)^(count - k)."""

    differentiable = False

    @staticmethod
    def forward(ctx, count, prob, generator):
        draws = generator.rng.binomial(count.astype("int64"), prob.astype("float64"))
        return xp_for(count).asarray(draws).astype(count.dtype)  # (0-d: NumPy gives an int)


def _generator_for(op: str, t: Tensor, generator):
    gen = generator if generator is not None else get_generator(t.device)
    if gen.device is not t._device:
        raise RuntimeError(f"{op}: the generator is for {gen.device} but the tensor is on "
                           f"{t.device}; use a Generator of the same device")
    return gen


def _check_float(op: str, name: str, t) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: expected {name} as a Tensor, got {type(t).__name__}")
    if not t.dtype.is_floating_point:
        raise RuntimeError(f"{op}: {name} must be a floating point tensor (the draws are "
                           f"stored in its dtype), got {t.dtype}. Fix: {name}.float()")


def _all(condition: Tensor) -> bool:
    return bool(condition.all())


def bernoulli(input: Tensor, p: float | None = None, *, generator=None) -> Tensor:
    """0/1 draws: 1 with probability ``input[i]`` (a float tensor of probabilities); with a
    number ``p``, 1 with probability ``p`` everywhere, in input's shape and dtype."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli: expected a Tensor, got {type(input).__name__}")
    gen = _generator_for("bernoulli", input, generator)
    if p is not None:
        if isinstance(p, Tensor) or not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli: expects p to be a number in [0, 1], got {p!r}. "
                               "For probabilities per element, pass them as the input: "
                               "bernoulli(probs)")
        return BernoulliConstant.apply(input, gen, float(p))
    _check_float("bernoulli", "input (the probabilities)", input)
    probs = input.detach()
    if not _all((probs >= 0) & (probs <= 1)):  # NaN fails too
        raise RuntimeError("bernoulli: expects all probabilities in [0, 1] (input holds values "
                           "outside it, or NaN). Fix: clamp(0, 1), or sigmoid() for logits")
    return Bernoulli.apply(input, gen)


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson draws (whole numbers, in input's float dtype) with rates ``input[i]`` >= 0."""
    _check_float("poisson", "input (the rates)", input)
    rates = input.detach().double()  # (1e18 is beyond the half types)
    if not _all((rates >= 0) & (rates < 1e18)):  # NaN fails too
        raise RuntimeError("poisson: invalid Poisson rate, expected every rate to be "
                           "non-negative and finite (below 1e18), but input holds a negative, "
                           "NaN or too large value")
    return Poisson.apply(input, _generator_for("poisson", input, generator))


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """Binomial draws: successes in ``count[i]`` trials (whole numbers >= 0) that each
    succeed with probability ``prob[i]``; ``count`` and ``prob`` broadcast together."""
    _check_float("binomial", "count", count)
    _check_float("binomial", "prob", prob)
    if count.dtype is not prob.dtype:
        raise RuntimeError(f"binomial: count ({count.dtype}) and prob ({prob.dtype}) must have "
                           f"the same dtype. Fix: prob.to({count.dtype})")
    count, prob = broadcast_tensors(count.detach(), prob.detach().to(count.device))
    if not _all((count >= 0) & (count == count.floor()) & (count < 2 ** 62)):
        raise RuntimeError("binomial: count must hold whole numbers >= 0 (numbers of trials); "
                           "it has a negative, fractional, NaN or infinite value")
    if not _all((prob >= 0) & (prob <= 1)):
        raise RuntimeError("binomial: prob must hold probabilities in [0, 1]; it has a value "
                           "outside that range, or NaN")
    return Binomial.apply(count.contiguous(), prob.contiguous(),
                          _generator_for("binomial", count, generator))
