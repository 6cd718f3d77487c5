"""More activations: the shrinks, softsign, softmin, glu, and the learned or random slopes of
prelu and rrelu (``gradlab.nn.functional``).

The shrinks push values toward 0 (denoising, sparse codes):

    hardshrink(x) = x where |x| > λ, else 0        d/dx = 1 outside [-λ, λ], else 0
    softshrink(x) = x - clamp(x, -λ, λ)            d/dx = 1 outside [-λ, λ], else 0
    tanhshrink(x) = x - tanh x                      d/dx = tanh² x

``softsign``, ``tanhshrink`` and ``softmin`` are compositions of other ops,
exactly as PyTorch writes them, so their graphs show the same nodes
(``DivBackward0``, ``SubBackward0``, ``SoftmaxBackward0``) and their
derivatives come from those ops. The others are one node each.

``prelu`` is leaky_relu whose negative slope is a weight the network learns
(one, or one per channel of dim 1), so it has a gradient for the weight too.
``rrelu`` (randomized leaky ReLU) draws a fresh slope in [lower, upper] for
every element while training, from the device's default generator, and uses
their mean slope at evaluation.
"""

from __future__ import annotations

import warnings

from ..autograd.function import Function
from ..random import get_generator
from ..tensor import Tensor
from ._util import autocast_inputs, check_float, wrap_dim, xp_for
from .activation import _check_tensor, _sigmoid_array
from .inplace import apply_inplace
from .joining import cat
from .selection import where
from .softmax_family import softmax
from .unary import sigmoid

# Exported as gradlab.<name>: only what PyTorch also has as torch.<name>.
__all__ = ["hardshrink", "prelu", "rrelu", "rrelu_"]
# Re-exported by gradlab.nn.functional.
FUNCTIONAL = ["softsign", "softshrink", "hardshrink", "tanhshrink", "softmin", "glu", "prelu",
              "rrelu", "rrelu_"]
TENSOR_METHODS = ["hardshrink", "prelu"]


# --- the shrinks --------------------------------------------------------------------------------

class Hardshrink(Function):
    """x where x < -λ or x > λ, else 0.   d/dx = 1 there, 0 on [-λ, λ] (PyTorch's choice at ±λ)."""

    raw = True
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x, lambd):
        ctx.save_for_backward(x)
        ctx.lambd = lambd
        inside = (x >= -lambd) & (x <= lambd)
        return xp_for(x).where(inside, x.dtype.type(0), x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return where((x >= -ctx.lambd) & (x <= ctx.lambd), 0.0, grad), None


class Softshrink(Hardshrink):
    """x - λ above λ, x + λ below -λ, 0 between: x - clamp(x, -λ, λ).   d/dx is hardshrink's."""

    @staticmethod
    def forward(ctx, x, lambd):
        ctx.save_for_backward(x)
        ctx.lambd = lambd
        return x - xp_for(x).clip(x, -lambd, lambd).astype(x.dtype, copy=False)


def hardshrink(input, lambd: float = 0.5) -> Tensor:
    """Zero the values in [-λ, λ] and keep the rest as they are."""
    _check_tensor("hardshrink", input)
    check_float("hardshrink", input)
    return Hardshrink.apply(input, lambd)


def softshrink(input, lambd: float = 0.5) -> Tensor:
    """Move every value λ toward 0, stopping at 0: the proximal step of the L1 penalty."""
    _check_tensor("softshrink", input)
    check_float("softshrink", input)
    if not lambd >= 0:
        raise ValueError(f"softshrink: lambd must be >= 0 (it is how far values move toward "
                         f"0), got {lambd}")
    return Softshrink.apply(input, lambd)


def tanhshrink(input) -> Tensor:
    """x - tanh x: near 0 like x³/3, far out like x ∓ 1."""
    _check_tensor("tanhshrink", input)
    return input - input.tanh()


def softsign(input) -> Tensor:
    """x / (1 + |x|): a tanh-like squash whose tails approach ±1 slowly (like 1/x).

    d/dx = 1 / (1 + |x|)², through the div and abs nodes.
    """
    _check_tensor("softsign", input)
    return input / (input.abs() + 1)


def softmin(input, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x) along ``dim``: the smallest values get the largest weights."""
    _check_tensor("softmin", input)
    if dtype is None:
        check_float("softmin", input)
    if dim is None:  # PyTorch's deprecated guess: 0 for 0-, 1- and 3-D input, else 1
        warnings.warn("Implicit dimension choice for softmin has been deprecated. Change the "
                      "call to include dim=X as an argument.", stacklevel=_stacklevel - 1)
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return softmax(-input, dim, dtype=dtype)


# --- glu ----------------------------------------------------------------------------------------

class Glu(Function):
    """a·σ(b), where a and b are x's first and second halves along ``dim``.

    d/da = σ(b),   d/db = a·σ(b)·(1 - σ(b)); the two halves of the gradient are joined
    back along ``dim``.
    """

    raw = True

    @staticmethod
    def forward(ctx, x, dim):
        a, b = xp_for(x).split(x, 2, axis=dim)
        ctx.save_for_backward(x)
        ctx.dim = dim
        return a * _sigmoid_array(b).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        a, b = x.chunk(2, ctx.dim)
        s = sigmoid(b)
        return cat([grad * s, grad * a * s * (1 - s)], ctx.dim), None

    @staticmethod
    def jvp(ctx, t, _):
        """jvp: ẏ = ȧ·σ(b) + a·σ(b)·(1 - σ(b))·ḃ, the tangent split into halves like x."""
        a, b = ctx.primals[0].chunk(2, ctx.dim)
        ta, tb = t.chunk(2, ctx.dim)
        s = sigmoid(b)
        return ta * s + a * s * (1 - s) * tb


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: split ``dim`` in halves a, b and let σ(b) gate a (half the size)."""
    _check_tensor("glu", input)
    check_float("glu", input)
    if input.ndim == 0:
        raise RuntimeError("glu: a 0-d tensor has no dim to split in halves; give it one, "
                           "e.g. x.reshape(1, 2) for two values")
    axis = wrap_dim(dim, input.ndim, "glu")
    if input.shape[axis] % 2:
        raise RuntimeError(f"glu: dim {dim} has odd size {input.shape[axis]} (shape "
                           f"{tuple(input.shape)}), but it is split into two equal halves; "
                           f"make that dim's size even, or pick another dim")
    return Glu.apply(input, axis)


# --- prelu: a learned slope ---------------------------------------------------------------------

class Prelu(Function):
    """x if x > 0 else w·x, w broadcast from ``weight`` (one value, or one per channel).

    d/dx = 1 if x > 0 else w (w at 0, as in PyTorch);
    d/dw = x where x <= 0, else 0, summed over everything a weight value was used for.
    """

    raw = True
    node_name = "PreluKernelBackward0"

    @staticmethod
    def forward(ctx, x, weight, slope_shape):
        w = weight.reshape(slope_shape)
        ctx.save_for_backward(x, weight)
        ctx.slope_shape = slope_shape
        return xp_for(x).where(x > 0, x, w * x)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        w = weight.reshape(ctx.slope_shape)
        need_x, need_w = ctx.needs_input_grad[:2]
        grad_x = where(x > 0, grad, grad * w) if need_x else None
        grad_w = None
        if need_w:
            per_element = where(x > 0, 0.0, grad * x)
            if weight.numel() == 1:
                grad_w = per_element.sum().reshape(weight.shape)
            else:  # one slope per channel (dim 1): sum over every other dim
                others = tuple(d for d in range(x.ndim) if d != 1)
                grad_w = per_element.sum(others).reshape(weight.shape)
        return grad_x, grad_w, None

    @staticmethod
    def jvp(ctx, tx, tw, _):
        """jvp: ẏ = (ẋ if x > 0 else w·ẋ) + (0 if x > 0 else x·ẇ)."""
        x, weight = ctx.primals[:2]
        positive = x > 0
        total = None
        if tx is not None:
            total = where(positive, tx, tx * weight.reshape(ctx.slope_shape))
        if tw is not None:
            term = where(positive, 0.0, x * tw.reshape(ctx.slope_shape))
            total = term if total is None else total + term
        return total


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """leaky_relu with a learned negative slope: ``weight`` has 1 value, or one per channel
    (dim 1 of the input)."""
    _check_tensor("prelu", input)
    _check_tensor("prelu", weight)
    input, weight = autocast_inputs("prelu", input, weight)
    check_float("prelu", input)
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"prelu: weight is {weight.dtype} but input is {input.dtype}; "
                           f"convert one, e.g. weight.to(input.dtype)")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: weight must be 0-d or 1-D (one slope, or one per channel), "
                           f"got shape {tuple(weight.shape)}; flatten it with weight.reshape(-1)")
    count = weight.numel()
    channels = input.shape[1] if input.ndim >= 2 else 1
    if count == 1:
        slope_shape = ()
    elif count == channels:
        slope_shape = (1, channels) + (1,) * (input.ndim - 2)
    else:
        raise RuntimeError(
            f"prelu: weight has {count} values but the input (shape {tuple(input.shape)}) has "
            f"{channels} channel(s) in dim 1; give one slope, or one per channel "
            f"(nn.PReLU(num_parameters={channels}))")
    return Prelu.apply(input, weight, slope_shape)


# --- rrelu: a random slope ----------------------------------------------------------------------

class RreluWithNoise(Function):
    """y = x · r, r the slope each element got: 1 where x > 0; where x <= 0 a fresh draw from
    U(lower, upper) when training, (lower + upper)/2 at evaluation.   d/dx = r (the same draws).
    """

    raw = True
    name = "rrelu"
    node_name = "RreluWithNoiseBackward0"
    tangent_rule = "elementwise"

    @staticmethod
    def forward(ctx, x, lower, upper, training, generator):
        xp = xp_for(x)
        if training:
            draw_dtype = x.dtype if x.dtype.itemsize >= 4 else "float32"
            u = generator.rng.random(x.shape, dtype=draw_dtype)
            negative_slope = (lower + (upper - lower) * u).astype(x.dtype, copy=False)
        else:
            negative_slope = x.dtype.type((lower + upper) / 2)
        slope = xp.where(x > 0, x.dtype.type(1), negative_slope)
        ctx.save_for_backward(slope)
        return x * slope

    @staticmethod
    def backward(ctx, grad):
        (slope,) = ctx.saved_tensors
        return grad * slope, None, None, None, None


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """Leaky ReLU with a random slope per element while training (a regulariser), and the
    mean slope (lower + upper)/2 at evaluation."""
    _check_tensor("rrelu", input)
    check_float("rrelu", input)
    if lower > upper:
        raise RuntimeError(f"rrelu: lower ({lower}) must be <= upper ({upper}): the slopes are "
                           f"drawn from U(lower, upper); swap them")
    generator = get_generator(input.device) if training else None
    args = (float(lower), float(upper), bool(training), generator)
    if inplace:
        return apply_inplace(RreluWithNoise, input, *args, convert=False)
    return RreluWithNoise.apply(input, *args)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """rrelu written into ``input``'s memory."""
    return rrelu(input, lower, upper, training, inplace=True)
