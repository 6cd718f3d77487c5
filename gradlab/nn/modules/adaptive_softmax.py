"""AdaptiveLogSoftmaxWithLoss: a softmax over a huge vocabulary, made cheap (Grave et al.,
"Efficient softmax approximation for GPUs", 2017).

A language model's softmax over 100k words costs a (hidden x 100k) matmul per token,
yet word frequencies follow Zipf's law: a few thousand words cover most tokens. The
adaptive softmax splits the classes at ``cutoffs`` into a shortlist [0, c₀) of
frequent classes and clusters [c₀, c₁), [c₁, c₂), ... of ever rarer ones:

* ``head``: one Linear from the input to c₀ + (number of clusters) logits, one per
  shortlist class plus one per cluster ("the class is somewhere in cluster i");
* ``tail[i]``: a Linear down to ``in_features // div_value**(i+1)`` features, then
  one up to the cluster's classes. Rarer clusters get narrower projections:
  capacity goes where the data is.

A class's log-probability is read off the head for the shortlist, and is the sum
``log softmax(head)[cluster i] + log softmax(tail[i])[class - cᵢ]`` for a class in
cluster i (the probabilities still sum to 1: each tail is a distribution over its
cluster). Training needs only each target's term, so every tail runs only on the
rows whose target falls in its cluster (one ``index_select``), which is the saving;
the loop is over clusters, never over rows.

* ``forward(input, target)`` -> ``(output, loss)``: output[n] = log p(target[n]) and
  loss = -output.mean() (a named tuple, as PyTorch's ``_ASMoutput``);
* ``log_prob(input)``: the whole (N, n_classes) table; ``predict(input)``: its
  argmax, running the tails only for rows whose best head logit is a cluster.

Parameters and ``state_dict`` keys are PyTorch's: ``head.weight`` (``head.bias``
with ``head_bias=True``), ``tail.0.0.weight``, ``tail.0.1.weight``, ...
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

from ... import dtypes as _dt
from ...ops.joining import cat
from ...ops.selection import where
from ...ops.softmax_family import log_softmax
from ...tensor import Tensor
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])
"""What forward returns: ``output`` (each target's log-probability) and ``loss``."""


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of ``n_classes`` classes through a head and per-cluster tails.

    ``cutoffs``: increasing class indices in [1, n_classes - 1] where the shortlist
    and each cluster end; ``div_value``: how much narrower each tail's projection is
    than the last; ``head_bias``: whether the head has a bias.
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0 (where the "
                             "shortlist of frequent classes ends, e.g. [n_classes // 10])")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError(
                f"cutoffs should be a sequence of unique, positive integers sorted in an "
                f"increasing order, where each value is between 1 and n_classes-1 "
                f"(= {n_classes - 1}), got {cutoffs}")
        factory = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            classes = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, classes, bias=False, **factory)))

    def reset_parameters(self) -> None:
        """Re-initialise every Linear as at construction."""
        self.head.reset_parameters()
        for down, up in self.tail:
            down.reset_parameters()
            up.reset_parameters()

    def _check(self, input: Tensor, target: Tensor) -> None:
        """PyTorch's shape rules: (N, in_features) with (N,) targets, or (in_features,)
        with one 0-d target."""
        name = type(self).__name__
        if target.ndim == 1:
            if input.shape[0] != target.shape[0]:
                raise RuntimeError(f"{name}: Input and target should have the same size in the "
                                   f"batch dimension, got input {tuple(input.shape)} and target "
                                   f"{tuple(target.shape)}")
            if input.ndim != 2:
                raise RuntimeError(f"{name}: 1D target tensor expects 2D input tensors, but "
                                   f"found inputs with size {tuple(input.shape)}")
        elif target.ndim == 0:
            if input.ndim != 1:
                raise RuntimeError(f"{name}: 0D target tensor expects 1D input tensors, but "
                                   f"found inputs with size {tuple(input.shape)}")
        else:
            raise RuntimeError(f"{name}: 0D or 1D target tensor expected, multi-target not "
                               f"supported (got target shape {tuple(target.shape)})")
        if target.dtype not in (_dt.int64, _dt.int32):
            raise RuntimeError(f"{name}: target must hold class indices (int64), got "
                               f"{target.dtype}. Fix: target.long()")

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        """Each target's log-probability (``output``) and their mean negative (``loss``)."""
        self._check(input_, target_)
        batched = target_.ndim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = (target_ if batched else target_.unsqueeze(0)).long()
        if target.numel() and (int(target.min()) < 0 or int(target.max()) >= self.n_classes):
            raise RuntimeError(
                f"{type(self).__name__}: Target values should be in [0, {self.n_classes - 1}], "
                f"but values in range [{int(target.min())}, {int(target.max())}] were found. "
                f"Fix: targets are class indices below n_classes={self.n_classes}")
        # which cluster each target is in (0: the shortlist), and so which head column it reads
        cluster = sum((target >= c).long() for c in self.cutoffs[:-1])
        head_column = where(cluster > 0, cluster + (self.shortlist_size - 1), target)
        head_logprob = log_softmax(self.head(input), dim=1)
        output = head_logprob.gather(1, head_column.unsqueeze(1)).squeeze(1)
        for i in range(1, self.n_clusters + 1):
            rows = (cluster == i).nonzero().squeeze(1)
            if rows.numel() == 0:
                continue
            low = self.cutoffs[i - 1]
            tail_logprob = log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            within = tail_logprob.gather(1, (target.index_select(0, rows) - low).unsqueeze(1))
            output = output.index_add(0, rows, within.squeeze(1))  # one add per row: exact
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        """The (N, n_classes) log-probabilities: the shortlist's from the head, each
        cluster's as its head log-probability plus its tail's log softmax."""
        head_logprob = log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i, tail in enumerate(self.tail):
            column = self.shortlist_size + i
            parts.append(log_softmax(tail(input), dim=1) + head_logprob[:, column:column + 1])
        return cat(parts, 1)

    def _check_2d(self, what: str, input: Tensor) -> None:
        if not isinstance(input, Tensor) or input.ndim != 2:
            shape = tuple(input.shape) if isinstance(input, Tensor) else type(input).__name__
            raise IndexError(f"{type(self).__name__}.{what}: expected a 2-D (N, in_features="
                             f"{self.in_features}) input, got {shape}. Fix: input.unsqueeze(0) "
                             f"for a single row")

    def log_prob(self, input: Tensor) -> Tensor:
        """log p(class | input) for every class: (N, in_features) -> (N, n_classes)."""
        self._check_2d("log_prob", input)
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row, (N,): the head's argmax where it is a
        shortlist class, else the argmax of the full log-probabilities (computed only
        for those rows)."""
        self._check_2d("predict", input)
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        not_in_shortlist = output >= self.shortlist_size
        if not bool(not_in_shortlist.any()):
            return output
        if bool(not_in_shortlist.all()):
            return self._get_full_log_prob(input, head_output).argmax(dim=1)
        log_prob = self._get_full_log_prob(input[not_in_shortlist],
                                           head_output[not_in_shortlist])
        output[not_in_shortlist] = log_prob.argmax(dim=1)
        return output
