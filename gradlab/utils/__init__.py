"""Utilities: ``gradlab.utils.data`` (datasets and loaders), hooks' handles, progress bars,
``gradlab.utils.checkpoint`` (activation checkpointing)."""

from . import checkpoint, data, hooks, progress
