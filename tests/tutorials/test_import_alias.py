"""What tutorial code meets after ``import gradlab as torch`` that gradlab cannot change.

(The calls tutorials use that gradlab lacked were listed here as strict
xfails while this session's work filled them; every one now works and is
tested with its feature. The one difference left is Python's, below.)
"""

from __future__ import annotations

import gradlab
from tests.oracle import torch


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
