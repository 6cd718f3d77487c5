"""``gradlab.backends.cudnn``: PyTorch's cuDNN switches, kept as plain settings with no effect.

Training scripts set ``torch.backends.cudnn.benchmark = True`` (let cuDNN time
several convolution algorithms and keep the fastest) or ``deterministic =
True`` (only reproducible algorithms). gradlab does not call cuDNN: its
convolutions are one matrix product each (``ops/convolution.py``), the same
algorithm every run, so there is nothing to choose and the results are already
deterministic. The attributes exist so such scripts run unchanged; setting
them changes nothing.
"""

from __future__ import annotations

__all__ = ["is_available", "version", "enabled", "benchmark", "deterministic",
           "allow_tf32"]

enabled = True
"""PyTorch: use cuDNN at all. No effect in gradlab."""
benchmark = False
"""PyTorch: time the convolution algorithms and keep the fastest. No effect in gradlab."""
deterministic = False
"""PyTorch: allow only deterministic algorithms. No effect (gradlab's are deterministic)."""
allow_tf32 = True
"""PyTorch: let convolutions use TF32 on Ampere GPUs. No effect in gradlab."""


def is_available() -> bool:
    """False: gradlab never calls cuDNN (its convolutions are matrix products)."""
    return False


def version() -> None:
    """None, as PyTorch answers when cuDNN is not available."""
    return None
