"""All parameters as one flat vector, and back: for optimisers that think in vectors
(L-BFGS, evolution strategies) and for measuring how far a model moved."""

from __future__ import annotations

from collections.abc import Iterable

from ...autograd.grad_mode import no_grad
from ...ops.joining import cat
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_same_device(parameters) -> list:
    parameters = list(parameters)
    devices = {p.device for p in parameters}
    if len(devices) > 1:
        raise TypeError(f"Found parameters on different devices ({sorted(map(str, devices))}); "
                        "move the model to one device first (model.to(device))")
    return parameters


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated, in order (differentiable)."""
    parameters = _check_same_device(parameters)
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` into the parameters (the inverse of the above)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected vec to be a Tensor, but got: {type(vec).__name__}")
    parameters = _check_same_device(parameters)
    needed = sum(p.numel() for p in parameters)
    if vec.ndim != 1 or vec.numel() != needed:
        raise RuntimeError(f"vector_to_parameters: vec must be 1-D with {needed} values (the "
                           f"parameters' total), got shape {tuple(vec.shape)}")
    offset = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[offset:offset + n].reshape(p.shape))
            offset += n
