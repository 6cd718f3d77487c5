"""``gradlab.nn.functional``: the functional forms of activations and layers."""

from ..ops.elementwise import relu, sigmoid, tanh

__all__ = ["relu", "sigmoid", "tanh"]
