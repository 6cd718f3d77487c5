"""CTC, the connectionist temporal classification loss: ``ctc_loss``.

A speech or handwriting model emits, at each of T time steps, log-probabilities
over C symbols, one of them a *blank* ("nothing here"). The target is a shorter
label sequence l of S labels, and nobody says which frames belong to which
label. CTC sums the probability of every alignment: every path π of T symbols
that collapses to l once repeats are merged and blanks dropped::

    loss = -log Σ_{π → l} Π_t y_t(π_t)          (y = exp(log_probs))

There are exponentially many paths, but they share prefixes, so the sum is a
dynamic programme over the *extended* target l' = (blank, l1, blank, l2, ...,
lS, blank) of length 2S+1. α_t(s) is the probability of all path prefixes
that end at time t in position s::

    α_t(s) = y_t(l'_s) · (α_{t-1}(s) + α_{t-1}(s-1) + skip_s · α_{t-1}(s-2))

where a path may jump over a blank (skip_s = 1) only into a label that differs
from the one before it: between two equal labels a blank is required, or they
would merge. loss = -log(α_{T-1}(2S) + α_{T-1}(2S-1)): a path ends on the last
label or the blank after it. Products of many probabilities underflow, so
everything is in log space (sums become ``logaddexp``), vectorized over the
batch and over s: the only Python loop runs over time.

The backward recursion β_t(s) (all path suffixes from s at time t, emission at
t included) runs the same way from the end. α_t(s) β_t(s) / y_t(l'_s) is then
the probability of all paths through position s at time t, and dividing by
the total, the posterior that frame t emits class c is::

    γ_t(c) = Σ_{s: l'_s = c} exp(α_t(s) + β_t(s) - log y_t(c) + loss)

The derivative of the loss w.r.t. ``log_probs[t, c]`` is -γ_t(c). PyTorch
returns ``exp(log_probs) - γ`` instead (Graves' eq. 16, the gradient w.r.t.
the logits before a log_softmax), and so does gradlab, so that numbers ported
from PyTorch agree. The two differ by y_t(c)·ḡ, which log_softmax's backward
(g - softmax · Σ_c g) removes exactly: for log-probabilities made by
log_softmax, as CTC requires, the logits' gradient is the same either way.
(It also means a gradcheck must include that log_softmax, as in PyTorch.)

The gradient is computed in forward, with the loss, and saved; ctc_loss's
backward only scales it. Like PyTorch's, that backward has no derivative of
its own: a double backward through ctc_loss raises.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..backends import backend_for_array
from ..tensor import Tensor
from ._loss_reduction import reduction_mode
from ._util import add_at, keep_where, xp_for
from .creation import as_tensor
from .reduction import quietly

__all__ = ["ctc_loss"]  # torch.ctc_loss exists too (reduction as 0/1/2 or a string)
FUNCTIONAL = ["ctc_loss"]
TENSOR_METHODS: list = []


class _Alignment:
    """The targets as the recursion needs them, built on the host (NumPy) while checking
    them: small (N, L) integer and bool arrays, moved to the log_probs' device by ``on``.

    ``ext`` is each extended target l' (L = 2·max(target_lengths) + 1, blanks
    beyond a sample's own 2·S_n + 1 positions); ``skip`` where the jump
    s-2 → s is allowed; ``last`` the positions where a path may end (2 S_n and
    2 S_n - 1); ``input_lengths``/``target_lengths`` one per sample.
    """

    __slots__ = ("ext", "skip", "last", "input_lengths", "target_lengths")

    def __init__(self, targets: np.ndarray, il: np.ndarray, tl: np.ndarray, blank: int):
        n = il.shape[0]
        max_len = int(tl.max()) if n else 0
        pos = np.arange(max_len)
        inside = pos[None, :] < tl[:, None]  # (N, S): which target slots are real labels
        if targets.ndim == 2:  # padded (N, S_max)
            labels = targets[:, :max_len]
        else:  # concatenated: sample n's labels start where the earlier ones end
            starts = np.cumsum(tl) - tl
            labels = targets[np.minimum(starts[:, None] + pos, max(targets.shape[0] - 1, 0))] \
                if targets.shape[0] else np.zeros((n, max_len), np.int64)
        length = 2 * max_len + 1
        ext = np.full((n, length), blank, dtype=np.int64)
        ext[:, 1::2] = np.where(inside, labels, blank)
        s = np.arange(length)[None, :]
        before = np.full((n, length), -1, dtype=np.int64)
        before[:, 2:] = ext[:, :-2]
        self.ext = ext
        self.skip = (s % 2 == 1) & (ext != before) & (s >= 2)
        self.last = (s == 2 * tl[:, None]) | ((s == 2 * tl[:, None] - 1) & (tl[:, None] > 0))
        self.input_lengths, self.target_lengths = il, tl

    def labels(self) -> np.ndarray:
        """Every sample's real labels, concatenated."""
        real = np.arange(self.ext.shape[1] // 2)[None, :] < self.target_lengths[:, None]
        return self.ext[:, 1::2][real]

    def on(self, xp) -> tuple:
        """ext, skip, last, input_lengths, target_lengths on the device of ``xp``."""
        return tuple(xp.asarray(a) for a in (self.ext, self.skip, self.last,
                                              self.input_lengths, self.target_lengths))


def _shifted(a, by: int, fill):
    """``a`` moved ``by`` places along the last axis (right if by > 0), ``fill`` let in."""
    xp = xp_for(a)
    out = xp.full(a.shape, fill, dtype=a.dtype)
    if by > 0:
        out[..., by:] = a[..., :-by]
    else:
        out[..., :by] = a[..., -by:]
    return out


def _forward_backward(lp, ext, skip, last, il, tl):
    """α and β (T, N, L) in log space, the emissions y (T, N, L) and -log p(l | x) (N,)."""
    xp = xp_for(lp)
    steps, n = lp.shape[:2]
    y = lp[:, xp.arange(n)[:, None], ext]  # y[t, n, s] = log y_t(l'_s)
    neg_inf = -np.inf
    alpha = xp.full(y.shape, neg_inf, dtype=lp.dtype)
    beta = xp.full(y.shape, neg_inf, dtype=lp.dtype)
    skip_next = _shifted(skip, -2, False)  # from s, the jump to s + 2 is allowed
    if steps:
        alpha[0, :, 0] = y[0, :, 0]  # a path starts with a blank ...
        if ext.shape[1] > 1:  # ... or with the first label, if there is one
            alpha[0, :, 1] = xp.where(tl > 0, y[0, :, 1], neg_inf)
    for t in range(1, steps):
        prev = alpha[t - 1]
        stay_or_step = xp.logaddexp(prev, _shifted(prev, 1, neg_inf))
        jump = xp.where(skip, _shifted(prev, 2, neg_inf), neg_inf)
        alpha[t] = xp.logaddexp(stay_or_step, jump) + y[t]
    for t in range(steps - 1, -1, -1):
        after = beta[t + 1] if t + 1 < steps else beta[t]  # (all -inf at the last step)
        stay_or_step = xp.logaddexp(after, _shifted(after, -1, neg_inf))
        jump = xp.where(skip_next, _shifted(after, -2, neg_inf), neg_inf)
        recurse = xp.logaddexp(stay_or_step, jump) + y[t]
        begin = xp.where(last, y[t], neg_inf)  # at a sample's last frame, β starts afresh
        beta[t] = xp.where((il == t + 1)[:, None], begin, recurse)
    if steps:
        final = xp.where(last, alpha[xp.maximum(il - 1, 0), xp.arange(n)], neg_inf)
        log_likelihood = _logsumexp_rows(final)
    else:
        log_likelihood = xp.full((n,), neg_inf, dtype=lp.dtype)
    nothing = xp.where(tl == 0, 0.0, neg_inf).astype(lp.dtype)  # from no frames at all
    return alpha, beta, y, -xp.where(il == 0, nothing, log_likelihood)


def _logsumexp_rows(a):
    """log Σ exp along the last axis, -inf for a row of -inf."""
    xp = xp_for(a)
    top = a.max(axis=-1, keepdims=True)
    safe = xp.where(xp.isfinite(top), top, 0.0)
    return (safe + xp.log(xp.exp(a - safe).sum(axis=-1, keepdims=True)))[..., 0]


def _gradient(lp, ext, il, alpha, beta, y, nll, zero_infinity: bool):
    """PyTorch's gradient of each sample's loss w.r.t. log_probs, exp(lp) - γ, and where it
    may be nonzero (T, N, 1): before each sample's input length (and not for an infinite
    loss that zero_infinity zeroes)."""
    xp = xp_for(lp)
    steps, n, _ = lp.shape
    posterior = xp.exp(alpha + beta - y + nll[None, :, None])  # per extended position
    gamma = xp.zeros(lp.shape, dtype=lp.dtype)
    add_at(gamma, (xp.arange(steps)[:, None, None], xp.arange(n)[None, :, None], ext[None]),
           posterior)  # the positions of one class add up
    # No alignment at all (loss inf), or y_t(c) = 0: γ is 0/0, NaN for every class, as in
    # PyTorch (whose log-space sum starts each class at log 0 and adds loss - log y).
    undefined = xp.isinf(nll)[None, :, None] | (lp == -np.inf)
    gamma = xp.where(undefined, np.nan, gamma)
    keep = xp.arange(steps)[:, None] < il[None, :]
    if zero_infinity:
        keep = keep & ~xp.isinf(nll)[None, :]
    keep = keep[:, :, None]
    return keep_where(xp, xp.exp(lp) - gamma, xp.broadcast_to(keep, lp.shape)), keep


class CtcLoss(Function):
    """-log p(targets | log_probs) by the α recursion; the α-β gradient is made here too.

    forward(log_probs (T, N, C), targets (shown in the graph only), alignment,
    reduction, zero_infinity). 'mean' divides each loss by its target length
    (at least 1), then averages over the batch, as PyTorch.
    jvp: losṡ_n = Σ_{t,c} G_{t,n,c} l̇p_{t,n,c}, G the saved gradient, reduced alike.
    """

    raw = True
    name = "ctc_loss"

    @staticmethod
    def forward(ctx, log_probs, targets, align, reduction, zero_infinity):
        xp = xp_for(log_probs)
        lp = log_probs if log_probs.dtype.itemsize >= 4 else log_probs.astype(np.float32)
        ext, skip, last, il, tl = align.on(xp)
        with np.errstate(divide="ignore", invalid="ignore"):  # -inf - -inf: impossible paths
            alpha, beta, y, nll = _forward_backward(lp, ext, skip, last, il, tl)
            grad, keep = _gradient(lp, ext, il, alpha, beta, y, nll, zero_infinity)
        if zero_infinity:
            nll = xp.where(xp.isinf(nll), 0.0, nll).astype(lp.dtype)
        n = nll.shape[0]
        # d out / d loss_n for 'mean': 1 / (N · max(S_n, 1))
        ctx.divisor = (np.maximum(align.target_lengths, 1) * max(n, 1)).astype(np.float64)
        ctx.save_for_backward(log_probs, grad.astype(log_probs.dtype, copy=False), keep)
        ctx.reduction = reduction
        if reduction == "sum":
            out = nll.sum()
        elif reduction == "mean":
            out = quietly(lambda: (nll / xp.maximum(tl, 1)).mean())  # N = 0: nan, as PyTorch
        else:
            out = nll
        return xp.asarray(out).astype(log_probs.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad_out):
        log_probs, grad, keep = ctx.saved_tensors
        return (CtcLossBackward.apply(_per_sample(grad_out, ctx), log_probs, grad, keep), None,
                None, None, None)

    @staticmethod
    def jvp(ctx, t_log_probs, *_):
        log_probs, grad, keep = ctx.saved_tensors
        ones = as_tensor(np.ones(grad.shape[1]), dtype=grad.dtype, device=grad.device)
        per_sample = (CtcLossBackward.apply(ones, log_probs, grad, keep) * t_log_probs).sum(
            (0, 2))
        if ctx.reduction == "none":
            return per_sample
        if ctx.reduction == "mean":
            per_sample = per_sample / as_tensor(ctx.divisor, dtype=grad.dtype,
                                                device=grad.device)
        return per_sample.sum()


def _per_sample(grad_out: Tensor, ctx) -> Tensor:
    """The weight of each sample's loss gradient: grad_out · d out / d loss_n, shape (N,)."""
    if ctx.reduction == "none":
        return grad_out
    if ctx.reduction == "mean":
        return grad_out / as_tensor(ctx.divisor, dtype=grad_out.dtype, device=grad_out.device)
    return grad_out.expand(ctx.divisor.shape)


class CtcLossBackward(Function):
    """ctc_loss's input gradient: the saved G (T, N, C) times each sample's weight (N,),
    exactly 0 where G is known to be 0 (past an input length), even for a NaN weight.

    An op of its own so that it can refuse to be differentiated, as PyTorch's does:
    G was computed by the α-β recursion on raw arrays, so no graph leads from it
    back to ``log_probs`` (an argument here only so that this refusal is reached).
    """

    raw = True
    name = "ctc_loss_backward"

    @staticmethod
    def forward(ctx, scale, log_probs, grad, keep):
        xp = xp_for(grad)
        weighted = grad * scale.astype(grad.dtype, copy=False)[None, :, None]
        return keep_where(xp, weighted, xp.broadcast_to(keep, grad.shape))

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(_NO_DOUBLE_BACKWARD)

    @staticmethod
    def jvp(ctx, *tangents):
        raise RuntimeError(_NO_DOUBLE_BACKWARD)


_NO_DOUBLE_BACKWARD = (
    "ctc_loss: the gradient of ctc_loss can't be differentiated again (double backward after "
    "create_graph=True, or forward mode over reverse): the alpha-beta recursion computes it "
    "on raw arrays, as PyTorch's does (PyTorch says 'derivative for aten::_ctc_loss_backward "
    "is not implemented'). Fix: leave ctc_loss out of what you differentiate twice, e.g. "
    "compute a gradient penalty from the other terms of the loss only")


def _host(a) -> np.ndarray:
    """A raw array (NumPy or CuPy) as a NumPy array, for checks and bookkeeping."""
    return backend_for_array(a)[1].to_numpy(a)


def _lengths(op: str, lengths, name: str) -> np.ndarray:
    """Lengths as a host int64 array: from a tensor (integral), a list/tuple or an int."""
    if isinstance(lengths, Tensor):
        if lengths.dtype.is_floating_point or lengths.dtype.is_complex or \
                lengths.dtype is _dt.bool:
            raise RuntimeError(f"{op}: {name} must be integral, got {lengths.dtype}. Fix: pass "
                               f"{name}.long() or a tuple of ints")
        return _host(lengths._data).astype(np.int64).reshape(-1)
    values = np.asarray(lengths).reshape(-1)
    if values.size and values.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: {name} must hold ints (one length per sample), got "
                           f"{values.tolist()[:4]}")
    return values.astype(np.int64)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss of ``log_probs`` (T, N, C) (or (T, C) for one sequence) against
    ``targets``: padded (N, S) or all concatenated (sum(target_lengths),).

    ``input_lengths``/``target_lengths``: one per sample (tensors or tuples).
    An impossible alignment (a target too long for its input) has loss inf,
    and 0 with zero gradient if ``zero_infinity``. 'mean' divides each loss by
    its target length, then averages over the batch.
    """
    op = "ctc_loss"
    reduction = reduction_mode(op, reduction)
    if not isinstance(log_probs, Tensor) or not log_probs.dtype.is_floating_point:
        what = log_probs.dtype if isinstance(log_probs, Tensor) else type(log_probs).__name__
        raise TypeError(f"{op}: log_probs must be a floating point tensor of log-probabilities, "
                        f"got {what}. Fix: log_probs = logits.float().log_softmax(-1)")
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"{op}: log_probs must be (T, N, C), or (T, C) for one sequence; "
                           f"got shape {tuple(log_probs.shape)}. Time comes first: a (N, T, C) "
                           f"batch needs log_probs.transpose(0, 1)")
    if not isinstance(targets, Tensor) or targets.dtype is _dt.bool or \
            targets.dtype.is_complex:
        what = targets.dtype if isinstance(targets, Tensor) else type(targets).__name__
        raise TypeError(f"{op}: targets must be a tensor of class indices (int64), got {what}")
    batched = log_probs.ndim == 3
    if not batched:
        if targets.ndim != 1:
            raise RuntimeError(f"{op}: for unbatched log_probs {tuple(log_probs.shape)}, "
                               f"targets must be 1-D (S,), got {tuple(targets.shape)}")
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
    il = _lengths(op, input_lengths, "input_lengths")
    tl = _lengths(op, target_lengths, "target_lengths")
    _check_shapes(op, tuple(log_probs.shape), tuple(targets.shape), il, tl, blank)
    align = _Alignment(_host(targets._data).astype(np.int64), il, tl, int(blank))
    _check_labels(op, align.labels(), log_probs.shape[2], int(blank))
    # targets ride along only to be shown in the graph; on the CPU beside CUDA log_probs
    # (allowed, as in PyTorch) they stay out of it
    shown = targets if targets.device == log_probs.device else None
    out = CtcLoss.apply(log_probs, shown, align, reduction, bool(zero_infinity))
    return out if batched or reduction != "none" else out.reshape(())


def _check_shapes(op: str, shape: tuple, target_shape: tuple, il, tl, blank: int) -> None:
    steps, n, classes = shape
    if not 0 <= blank < classes:
        raise RuntimeError(f"{op}: blank must be in label range [0, {classes - 1}] (log_probs "
                           f"has C={classes} classes), got blank={blank}")
    for name, lengths in (("input_lengths", il), ("target_lengths", tl)):
        if lengths.shape[0] != n:
            raise RuntimeError(f"{op}: {name} must be of size batch_size: one length per "
                               f"sample, N={n} (log_probs {shape}), got {lengths.shape[0]}")
        if n and lengths.min() < 0:
            raise RuntimeError(f"{op}: {name} must be >= 0, got {int(lengths.min())}")
    if n and il.max() > steps:
        raise RuntimeError(f"{op}: input_lengths must be at most T={steps} (log_probs "
                           f"{shape}), got {int(il.max())}")
    longest = int(tl.max()) if n else 0
    if len(target_shape) == 2:
        if target_shape[0] != n or target_shape[1] < longest:
            raise RuntimeError(f"{op}: padded targets must be (N, S) with N={n} and S >= "
                               f"max(target_lengths)={longest}, got {target_shape}")
    elif len(target_shape) == 1:
        if target_shape[0] != int(tl.sum()):
            raise RuntimeError(
                f"{op}: concatenated 1-D targets must hold sum(target_lengths)={int(tl.sum())} "
                f"labels, got {target_shape[0]}. Fix: check target_lengths, or pass padded "
                f"(N, S) targets")
    else:
        raise RuntimeError(f"{op}: targets must be padded (N, S) or concatenated "
                           f"(sum(target_lengths),), got shape {target_shape}")


def _check_labels(op: str, labels: np.ndarray, classes: int, blank: int) -> None:
    """Every real label is a class in [0, C) other than blank. (PyTorch's CPU kernel
    does not check, and quietly computes a meaningless loss.)"""
    if not labels.size:
        return
    bad = labels[(labels < 0) | (labels >= classes)]
    if bad.size:
        raise IndexError(f"{op}: targets hold class {int(bad[0])}, but log_probs has C="
                         f"{classes} classes; labels must be in [0, {classes - 1}]")
    if (labels == blank).any():
        raise ValueError(f"{op}: targets contain the blank class {blank}, which means 'no "
                         f"label' and may not appear in a target sequence. Fix: number the "
                         f"labels around it (e.g. blank=0, labels 1..C-1), or pass blank=<a "
                         f"class no target uses>")
