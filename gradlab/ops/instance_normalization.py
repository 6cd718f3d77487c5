"""instance_norm and local_response_norm (compositions of existing ops).

``instance_norm`` standardises every (sample, channel) slice over its spatial
positions on its own: it is ``group_norm`` with one group per channel, so it
reuses that op (and its closed-form derivative)::

    y[n, c] = (x[n, c] - mean(x[n, c])) / sqrt(var(x[n, c]) + eps) · weight[c] + bias[c]

Style transfer uses it: the contrast of each image's feature maps is removed,
whatever the batch holds. With ``use_input_stats=False`` it normalises with
given running statistics instead, which is ``batch_norm`` in evaluation mode.
When running statistics are given while training, they move toward the
per-channel average over the batch of each instance's mean and unbiased
variance, in place and outside the graph (as batch_norm does).

``local_response_norm`` (AlexNet) divides each value by a power of the sum of
squares of its neighbours across channels, a window of ``size`` channels::

    y[n, c] = x[n, c] / (k + alpha / size · Σ_{c' in window(c)} x[n, c']²) ** beta

The window holds channels c - size//2 .. c + (size-1)//2, with zeros past the
edges. It is built from mul, pad, narrow, add, pow and div, so its graph
shows those nodes and its gradient is theirs.

``cross_map_lrn2d`` is ``nn.CrossMapLRN2d``'s op (no ``F`` name, as in PyTorch):
the same normalization as PyTorch's legacy port of Lua Torch's
SpatialCrossMapLRN computes it, value for value. It differs from
local_response_norm in three ways: the input must be 4-D; the window is
symmetric, h = (size - 1) // 2 channels each side (``size`` channels for an
odd size, one fewer for an even one, where local_response_norm takes
``size``, more of them before c); and, because that port forgets to subtract
channel 0 from its running window sum, every channel c > h also counts
channel 0's square. Its gradient here is the true derivative of
those values, composed of ops; PyTorch's hand-written legacy backward is not
(it reads its window one channel off and ignores the channel-0 term: it fails
``torch.autograd.gradcheck``, and raises for size 1).
"""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._util import check_float
from .activation import _check_tensor
from .normalization import _check_channel_vector, batch_norm, group_norm

__all__: list = []  # torch.instance_norm has ATen's arguments: see functional_aliases.py
# Re-exported by gradlab.nn.functional.
FUNCTIONAL = ["instance_norm", "local_response_norm"]
TENSOR_METHODS: list = []


# --- instance_norm ------------------------------------------------------------------------------

def _update_running_stats(input: Tensor, running_mean: Tensor, running_var: Tensor,
                          momentum: float) -> None:
    """running = (1 - momentum) · running + momentum · stat, where stat is each instance's
    mean (or unbiased variance) averaged over the batch. In place, without a graph."""
    spatial = tuple(range(2, input.ndim))
    n = input.numel() // (input.shape[0] * input.shape[1])
    with no_grad():
        x = input.detach()
        mean = x.mean(spatial).mean(0)
        var = x.var(spatial, correction=1 if n > 1 else 0).mean(0)
        running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype), alpha=momentum)
        running_var.mul_(1 - momentum).add_(var.to(running_var.dtype), alpha=momentum)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial dims: input (N, C, *).

    ``use_input_stats=True`` uses each instance's own statistics (and updates
    ``running_mean``/``running_var`` in place if given); ``False`` uses the
    running ones. The derivative is group_norm's with C groups.
    """
    _check_tensor("instance_norm", input)
    check_float("instance_norm", input)
    if input.ndim < 2:
        raise ValueError(
            f"instance_norm: expected an input of shape (N, C, *) with at least 2 dims, got "
            f"shape {tuple(input.shape)}. Fix: add a batch dim with input.unsqueeze(0)")
    channels = input.shape[1]
    if (running_mean is None) != (running_var is None):
        raise RuntimeError("instance_norm: give both running_mean and running_var, or neither")
    for what, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_channel_vector("instance_norm", what, t, channels, input)
    if not use_input_stats:
        if running_mean is None:
            raise RuntimeError(
                "instance_norm: running_mean and running_var must be given when "
                "use_input_stats=False: they are the statistics it normalises with. Fix: pass "
                "them, or use_input_stats=True to use each instance's own statistics")
        return batch_norm(input, running_mean, running_var, weight, bias, False,
                          momentum, eps)
    spatial = input.numel() // (input.shape[0] * channels) if input.numel() else 0
    if spatial == 1 or input.ndim == 2:
        raise ValueError(
            f"instance_norm: expected more than 1 spatial element per channel when using the "
            f"input's statistics, got input of shape {tuple(input.shape)}: the variance of one "
            f"value is 0. Fix: give (N, C, L) or (N, C, H, W) input, or use_input_stats=False "
            f"with running statistics")
    if input.numel() == 0:
        return group_norm(input, max(channels, 1), weight, bias, eps)
    if running_mean is not None:
        _update_running_stats(input, running_mean, running_var, float(momentum))
    return group_norm(input, channels, weight, bias, eps)


# --- local_response_norm ------------------------------------------------------------------------

def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha/size · Σ of x² over ``size`` neighbouring channels) ** beta,
    input (N, C, *). Composed of ops, so its derivative is theirs."""
    from .arithmetic import add, div
    from .padding import narrow, pad

    _check_tensor("local_response_norm", input)
    if input.ndim < 3:
        raise ValueError(
            f"local_response_norm: expected an input of shape (N, C, *) with at least 3 dims, "
            f"got shape {tuple(input.shape)} ({input.ndim} dims). Fix: add a spatial dim with "
            f"input.unsqueeze(-1)")
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ValueError(f"local_response_norm: size must be a positive int (the number of "
                         f"channels in the window), got {size!r}")
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    # Pad dim 1 with zeros: size//2 before and (size-1)//2 after, then add the `size`
    # shifted views of x², each C channels long.
    pads = [0, 0] * (input.ndim - 2) + [size // 2, (size - 1) // 2]
    squares = pad(input * input, pads)
    window = narrow(squares, 1, 0, channels)
    for start in range(1, size):
        window = add(window, narrow(squares, 1, start, channels))
    return div(input, (window * (alpha / size) + k) ** beta)


def cross_map_lrn2d(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                    k: float = 1.0) -> Tensor:
    """PyTorch's legacy CrossMapLRN2d, value for value: x · (k + alpha/size · S)^-beta with
    S the sum of x² over channels c - h .. c + h (h = (size - 1) // 2, clipped to the
    channels), plus channel 0's square for every c > h (the legacy running sum's slip).
    Input (N, C, H, W). Composed of ops, so its derivative is theirs."""
    from .joining import cat
    from .padding import narrow, pad

    name = "CrossMapLRN2d"
    _check_tensor(name, input)
    if input.ndim != 4:
        raise ValueError(f"{name}: Expected input to be 4D, got {input.ndim}D instead (shape "
                         f"{tuple(input.shape)}). Fix: it takes (N, C, H, W); "
                         f"nn.LocalResponseNorm takes any (N, C, *)")
    check_float(name, input)
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ValueError(f"{name}: size must be a positive int (the number of channels in the "
                         f"window), got {size!r}")
    channels, reach = input.shape[1], (size - 1) // 2  # reach: channels on each side
    squares = input * input
    padded = pad(squares, [0, 0, 0, 0, reach, reach])
    window = narrow(padded, 1, 0, channels)
    for start in range(1, 2 * reach + 1):
        window = window + narrow(padded, 1, start, channels)
    if channels > reach + 1:  # channels past the first window keep channel 0's square
        window = cat([narrow(window, 1, 0, reach + 1),
                      narrow(window, 1, reach + 1, channels - reach - 1)
                      + narrow(squares, 1, 0, 1)], 1)
    return input * (window * (alpha / size) + k) ** -beta
