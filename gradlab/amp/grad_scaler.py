"""``GradScaler``: keep small float16 gradients from rounding to zero.

float16 has 5 exponent bits: gradients below about 6e-8 become 0. Scaling
the loss by S scales every gradient by S (backward is linear in the output
gradient), which lifts them into range. Before the optimizer uses them,
``unscale_`` divides by S again. A scale too large makes some gradient
overflow to inf: then the step is skipped and S is halved. After
``growth_interval`` steps in a row without overflow, S doubles, so it
settles just below the largest safe value::

    scaler = GradScaler("cuda")
    with autocast("cuda"):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)      # unscale, then step unless a gradient is inf/NaN
    scaler.update()             # shrink or grow the scale

Each ``update`` reports the scale (and how many steps were skipped so far)
as a ``Metric`` event, so the debugger's training view plots it; ``scale``
reports the loss it was given, so the loss curve shows the loss, not
loss × scale (the root that backward sees).
"""

from __future__ import annotations

import warnings

from .. import dtypes as _dt
from .. import events
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"
_NO_SCALE_FIX = ("This may mean the script did not call scaler.scale(loss) earlier in the "
                 "iteration. Fix: scaler.scale(loss).backward() before scaler.step(optimizer)")


class GradScaler:
    """Dynamic loss scaling, as ``torch.amp.GradScaler``.

    ``device`` is where the loss lives; "cuda" without a GPU warns and
    disables the scaler (every method then passes through).
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device == "cuda":
            from .. import cuda

            if not cuda.is_available():
                warnings.warn("GradScaler is enabled, but CUDA is not available. Disabling. "
                              "Fix: GradScaler('cpu') scales a loss on the CPU", stacklevel=2)
                self._enabled = False
        if growth_factor <= 1.0:
            raise ValueError(f"GradScaler: growth_factor must be > 1.0, got {growth_factor}")
        if backoff_factor >= 1.0:
            raise ValueError(f"GradScaler: backoff_factor must be < 1.0, got {backoff_factor}")
        self._init_scale = float(init_scale)
        self._scale: float | None = None  # set by the first scale(); None before
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0  # steps in a row without inf/NaN gradients
        self._skipped = 0  # steps skipped so far, for the debugger
        self._per_optimizer: dict = {}  # id(optimizer) -> {"stage", "found_inf"}

    # --- the loss ---------------------------------------------------------------------------

    def scale(self, outputs):
        """``outputs`` times the scale: a tensor, or tensors in (nested) lists and tuples."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = self._init_scale
        if isinstance(outputs, Tensor):
            if outputs.numel() == 1 and (events.listeners or events.light_listeners):
                # backward's root will be loss x scale: tell the debugger the real loss
                events.emit(events.Metric(events.next_seq(), {"loss": float(outputs.item())}))
            return outputs * self._scale_tensor(outputs)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise TypeError(f"GradScaler.scale: expected a tensor or a list/tuple of tensors, got "
                        f"{type(outputs).__name__}. Fix: scaler.scale(loss)")

    def _scale_tensor(self, like: Tensor) -> Tensor:
        """The scale as a 0-d float32 tensor: a float16 loss times 65536 becomes float32
        (two 0-d tensors promote normally), instead of overflowing float16."""
        from ..ops.creation import tensor

        return tensor(self._scale, dtype=_dt.float32, device=like.device)

    # --- the gradients ----------------------------------------------------------------------

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place, and note any inf/NaN.

        Call it before clipping gradients (``clip_grad_norm_`` must see true
        sizes); ``step`` then does not unscale again.
        """
        if not self._enabled:
            return
        self._check_scaled("unscale_")
        state = self._state(optimizer)
        if state["stage"] is _UNSCALED:
            raise RuntimeError("GradScaler.unscale_() has already been called on this optimizer "
                               "since the last update(). Fix: call it once per iteration")
        if state["stage"] is _STEPPED:
            raise RuntimeError("GradScaler.unscale_() is being called after step(). Fix: "
                               "unscale_ (then clip) before scaler.step(optimizer)")
        inv_scale = float(_dt.float32.np.type(1.0 / self._scale))  # as PyTorch: 1/S, in float32
        found_inf = False
        with no_grad():
            for i, p in enumerate(_params(optimizer)):
                g = p.grad
                if g is None:
                    continue
                if g.dtype is _dt.float16:
                    raise ValueError(
                        f"GradScaler.unscale_: parameter {i} (shape {tuple(p.shape)}) has a "
                        "float16 gradient, which unscaling would round again. Fix: keep the "
                        "parameters in float32 and let autocast cast them for each op")
                data = g._data
                xp = g._device.backend.xp
                if not bool(xp.isfinite(data).all()):
                    found_inf = True
                g.mul_(inv_scale)
        state["found_inf"] = found_inf
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale if not done yet, then ``optimizer.step()`` unless a gradient is inf/NaN.

        Returns what ``optimizer.step`` returned, or None for a skipped step.
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("GradScaler.step: a closure is not supported while the scaler "
                               "is enabled. Fix: compute the loss, scale(loss).backward(), then "
                               "step(optimizer) without a closure")
        self._check_scaled("step")
        state = self._state(optimizer)
        if state["stage"] is _STEPPED:
            raise RuntimeError("GradScaler.step() has already been called since the last "
                               "update(). Fix: call scaler.update() once per iteration")
        if state["stage"] is _READY:
            self.unscale_(optimizer)
        result = None
        if state["found_inf"]:
            self._skipped += 1
        else:
            result = optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """Shrink the scale after an overflow, grow it after ``growth_interval`` clean steps.

        ``new_scale`` (a float or a one-element tensor) sets it instead.
        """
        if not self._enabled:
            return
        self._check_scaled("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise ValueError("GradScaler.update: new_scale must be a float or a "
                                     "one-element tensor that does not require grad, got shape "
                                     f"{tuple(new_scale.shape)}")
                new_scale = new_scale.item()
            self._scale = float(new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values()
                     if s["found_inf"] is not None]
            if not found:
                raise RuntimeError("GradScaler.update: no inf/NaN checks were recorded since "
                                   "the last update. Fix: call scaler.step(optimizer) (or "
                                   "unscale_) before update()")
            if any(found):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    grown = self._scale * self._growth_factor
                    if grown != float("inf"):
                        self._scale = float(_dt.float32.np.type(grown))
                    self._growth_tracker = 0
            self._scale = float(_dt.float32.np.type(self._scale))  # PyTorch keeps it in float32
        self._per_optimizer = {}
        if events.listeners or events.light_listeners:
            events.emit(events.Metric(events.next_seq(), {"grad_scale": self._scale,
                                                          "skipped_steps": self._skipped}))

    # --- settings and checkpoints -----------------------------------------------------------

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict:
        """The scale and its schedule (empty when disabled), as PyTorch's keys."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("GradScaler.load_state_dict: the state dict is empty, probably "
                               "saved from a disabled GradScaler. Fix: save it from an enabled "
                               "one, or skip loading")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = self._init_scale
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])

    # --- helpers ----------------------------------------------------------------------------

    def _check_scaled(self, what: str) -> None:
        if self._scale is None:
            raise RuntimeError(f"GradScaler.{what}: the scale was never used. {_NO_SCALE_FIX}")

    def _state(self, optimizer) -> dict:
        return self._per_optimizer.setdefault(id(optimizer),
                                              {"stage": _READY, "found_inf": None})


def _params(optimizer):
    for group in optimizer.param_groups:
        yield from group["params"]
