"""How layers make their ``weight`` and ``bias``, written once for all of them.

PyTorch registers both names on every layer that could have them, as
``None`` where switched off (``Linear(..., bias=False).bias is None``), so
``state_dict`` keys and attribute access never depend on the options.
"""

from __future__ import annotations

import math

from ...ops.creation import empty
from .. import init
from ..parameter import Parameter


def register_weight_and_bias(module, weight_shape, bias_shape, *, weight: bool = True,
                             bias: bool = True, device=None, dtype=None) -> None:
    """Give ``module`` uninitialised ``weight`` and ``bias`` Parameters (or None)."""
    for name, shape, wanted in (("weight", weight_shape, weight), ("bias", bias_shape, bias)):
        param = Parameter(empty(*shape, device=device, dtype=dtype)) if wanted else None
        module.register_parameter(name, param)


def reset_fan_in_uniform(weight, bias) -> None:
    """PyTorch's default for Linear and Conv: W and b ~ U(±1/√fan_in).

    (PyTorch writes it as ``kaiming_uniform_(W, a=√5)``, which works out to
    that bound.) An empty layer (fan_in 0) gets a zero bias.
    """
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        init.uniform_(bias, -bound, bound)


def reset_affine(weight, bias) -> None:
    """Normalization layers start as the identity map: weight 1, bias 0."""
    if weight is not None:
        init.ones_(weight)
    if bias is not None:
        init.zeros_(bias)
