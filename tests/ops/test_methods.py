"""The op families are all registered: as gradlab.<name>, as Tensor methods, in the ops table."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import gradlab
from gradlab import ops

FAMILY_NAMES = sorted(m.name for m in pkgutil.iter_modules(ops.__path__)
                      if not m.name.startswith("_") and m.name != "methods")


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_every_ops_module_is_a_registered_family(name):
    module = importlib.import_module(f"gradlab.ops.{name}")
    for public in module.__all__:
        assert getattr(gradlab, public) is getattr(module, public), f"gradlab.{public}"
    assert f"``{name}``" in ops.__doc__, f"{name} is missing from the table in gradlab/ops"
    assert module in ops.FAMILIES, f"{name} is missing from gradlab.ops.FAMILIES"
    for entry in module.TENSOR_METHODS:
        method, function = entry if isinstance(entry, tuple) else (entry, entry)
        assert getattr(gradlab.Tensor, method) is getattr(module, function), method


def test_no_family_is_hidden_by_a_function_of_the_same_name():
    """``from .softmax import *`` would make gradlab.ops.softmax the function, not the module."""
    for name in FAMILY_NAMES:
        assert type(getattr(ops, name)).__name__ == "module", name
