"""Utilities: ``gradlab.utils.data`` (datasets and loaders), hooks' handles, progress bars."""

from . import data, hooks, progress
