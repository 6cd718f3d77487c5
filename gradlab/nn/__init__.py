"""Neural-network building blocks (``gradlab.nn``); functional ops live in ``functional``."""

from . import functional

__all__ = ["functional"]
