"""What tutorials use that gradlab lacks or does differently, kept honest by tests."""

from __future__ import annotations

import pytest

import gradlab
from tests.oracle import needs_torch, torch

# --- what tutorials use that gradlab lacks or does differently ---------------------------------
# Each row: (what a tutorial writes, where it comes from, the call on the library). On gradlab
# the call fails today (xfail, strict: once it works, the row must go); on PyTorch it works,
# which keeps this list honest. The programs above avoid these calls.

KNOWN_GAPS = [
    ("torch.uint8", "image tutorials: images stored as torch.uint8, then .float() / 255",
     lambda torch: torch.zeros(2, dtype=torch.uint8)),
]


@pytest.mark.parametrize("tutorial_call", [
    pytest.param(call, id=name,
                 marks=pytest.mark.xfail(strict=True, raises=(AttributeError, TypeError,
                                                               AssertionError),
                                         reason="not in gradlab yet (see KNOWN_GAPS)"))
    for name, usage, call in KNOWN_GAPS])
def test_known_gap_in_gradlab(tutorial_call):
    tutorial_call(gradlab)


@needs_torch
@pytest.mark.parametrize("tutorial_call", [pytest.param(call, id=name)
                                           for name, _, call in KNOWN_GAPS])
def test_known_gap_works_in_pytorch(tutorial_call):
    tutorial_call(torch)


def test_from_torch_import_after_import_gradlab_as_torch_is_not_gradlab():
    """``import gradlab as torch`` then ``from torch import nn`` does NOT give gradlab.nn.

    ``from X import Y`` and ``import X.Y`` look X up by its module name, not in your
    variables, so after ``import gradlab as torch`` they import real PyTorch (or fail
    when it isn't installed). Tutorials that write ``import torch.nn as nn`` need
    ``import gradlab.nn as nn``; the programs above write ``nn = torch.nn``.
    """
    namespace: dict = {}
    try:
        exec("import gradlab as torch\nfrom torch import nn", namespace)
    except ImportError:
        assert torch is None  # no PyTorch: the import fails
    else:
        assert namespace["torch"] is gradlab
        assert namespace["nn"] is torch.nn and namespace["nn"] is not gradlab.nn
