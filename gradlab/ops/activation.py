"""Activation functions beyond the elementwise basics (``gradlab.nn.functional``).

(Being written: leaky_relu, elu, gelu, silu, softplus.)
"""

from __future__ import annotations

__all__: list[str] = []
TENSOR_METHODS: list = []
