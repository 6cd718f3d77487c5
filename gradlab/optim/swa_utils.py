"""Weight averaging: SWA and EMA copies of a model, BatchNorm refresh, and the SWA schedule.

Averaging the weights a model passes through late in training lands in a
flatter, better-generalizing spot than any single iterate (Izmailov et al.,
2018, "Averaging weights leads to wider optima"). The loop, as in PyTorch::

    swa_model = AveragedModel(model)                # a deep copy; n_averaged = 0
    swa_scheduler = SWALR(optimizer, swa_lr=0.05)   # anneal lr to a constant
    for epoch in ...:
        train(model, optimizer)
        if epoch >= swa_start:
            swa_model.update_parameters(model)      # W ← W + (W_model - W)/(n+1)
            swa_scheduler.step()
    update_bn(loader, swa_model)                    # BatchNorm stats for the averaged weights

Averages: SWA (equal weights, the default) ``W ← W + (W_model - W)/(n+1)``;
EMA (``get_ema_multi_avg_fn(decay)``) ``W ← decay·W + (1-decay)·W_model``.
The first ``update_parameters`` copies the model's weights (n = 0).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from ..ops.creation import tensor
from ..tensor import Tensor
from .lr_scheduler import LRScheduler
from .lr_scheduler._base import _per_group

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


# --- averaging functions --------------------------------------------------------------------

def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range (the weight kept from the average each update; 0.999 "
                         "is usual).")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """An in-place EMA over lists of tensors: ``W ← W + (1-decay)(W_model - W)``."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _) -> None:
        with no_grad():
            if ema_param_list[0].is_floating_point():
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.lerp_(p_model, 1 - decay)
            else:  # integer buffers (a BatchNorm's num_batches_tracked): rounded on copy
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """An in-place running mean over lists of tensors: ``W ← W + (W_model - W)/(n+1)``.

    Integer tensors get the mean truncated to their dtype (PyTorch raises there).
    """

    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        count = int(num_averaged)
        with no_grad():
            if averaged_param_list[0].is_floating_point():
                for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                    p_avg.lerp_(p_model, 1 / (count + 1))
            else:
                for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                    p_avg.copy_(p_avg + (p_model - p_avg) / (count + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """EMA of one tensor, returned (not in place): ``decay·W + (1-decay)·W_model``."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """Running mean of one tensor, returned (not in place): ``W + (W_model - W)/(n+1)``."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


# --- the averaged model ---------------------------------------------------------------------

class AveragedModel(Module):
    """A deep copy of ``model`` whose parameters are a running average (SWA or EMA) of it.

    ``avg_fn(W, W_model, n) -> new W`` works on one tensor; ``multi_avg_fn(Ws, W_models, n)``
    updates lists in place (one call per device and dtype). Neither given: SWA's equal-weight
    mean. ``use_buffers=True`` averages the buffers too; otherwise they are copied from
    ``model`` at each update. Neither function is saved in ``state_dict()``.
    """

    def __init__(self, model: Module, device=None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided "
                                 "(avg_fn returns one averaged tensor, multi_avg_fn updates "
                                 "lists in place).")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=dtypes.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s current weights in (the first call copies them)."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        pairs = [(p_avg.detach(), p_model.detach().to(p_avg.device))
                 for p_avg, p_model in zip(mine, theirs)]
        count = int(self.n_averaged.item())
        with no_grad():
            if count == 0:
                for p_avg, p_model in pairs:
                    p_avg.copy_(p_model)
            elif self.avg_fn is not None:
                for p_avg, p_model in pairs:
                    p_avg.copy_(self.avg_fn(p_avg, p_model, self.n_averaged.to(p_avg.device)))
            elif self.multi_avg_fn is not None:
                for group in _by_device_and_dtype(pairs):
                    self.multi_avg_fn([a for a, _ in group], [m for _, m in group],
                                      self.n_averaged.to(group[0][0].device))
            else:  # SWA: the running mean, one tensor at a time (PyTorch's CPU path)
                for p_avg, p_model in pairs:
                    p_avg.copy_(p_avg + (p_model - p_avg) / (count + 1))
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_avg.copy_(b_model.detach().to(b_avg.device))
            self.n_averaged.add_(1)


def _by_device_and_dtype(pairs: list) -> list[list]:
    """The (averaged, model) pairs in groups of one device and dtype, in first-seen order."""
    groups: dict[tuple, list] = {}
    for pair in pairs:
        groups.setdefault((str(pair[0].device), pair[0].dtype), []).append(pair)
    return list(groups.values())


def update_bn(loader: Iterable[Any], model: Module, device=None) -> None:
    """Recompute every BatchNorm's running statistics with one pass over ``loader``.

    Averaged weights never produced the running means the BatchNorms hold,
    so they are reset and re-estimated as the plain average over all batches
    (``momentum=None`` during the pass). A batch that is a list or tuple
    gives its first element to the model.
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


# --- the SWA learning-rate schedule ----------------------------------------------------------

class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` epochs, then hold it.

    ``anneal_strategy="cos"``: ``lr_t = swa_lr·a + lr_0·(1-a)`` with ``a = (1 - cos(π·t/T))/2``;
    ``"linear"``: ``a = t/T``. Written incrementally, from each group's current lr, so it
    composes with another scheduler that ran before SWA started.
    """

    def __init__(self, optimizer: Any, swa_lr: float | list[float], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        swa_lrs = _per_group("SWALR", "swa_lr", optimizer, swa_lr)
        for value, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy!r}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or isinstance(anneal_epochs, bool) \
                or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs!r} (the number of epochs to reach swa_lr; an int)")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        """The lr before annealing, recovered from ``lr = swa_lr·alpha + lr_0·(1-alpha)``."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" \
            else self._linear_anneal

    def get_lr(self) -> list[float]:
        self._warn_if_called_directly()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        groups = self.optimizer.param_groups
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        start_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, start_lrs)]

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer and the anneal function (rebuilt from its name)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
