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
    ("torch.accelerator", "Quickstart (current): device = torch.accelerator."
     "current_accelerator().type if torch.accelerator.is_available() else 'cpu'",
     lambda torch: torch.accelerator.is_available()),
    ("torch.backends.mps", "Quickstart (2.0-2.5): 'cuda' if torch.cuda.is_available() else "
     "'mps' if torch.backends.mps.is_available() else 'cpu'",
     lambda torch: torch.backends.mps.is_available()),
    ("grad_fn class name", "autograd tutorial, torchviz: type(z.grad_fn).__name__ == "
     "'AddBackward0' (gradlab's repr says AddBackward0, but its class is Node)",
     lambda torch: _check(type((torch.ones(2, requires_grad=True) + 1).grad_fn).__name__
                          == "AddBackward0")),
    ("loss.grad_fn of BCE with logits", "autograd tutorial prints loss.grad_fn: PyTorch "
     "shows <BinaryCrossEntropyWithLogitsBackward0>, gradlab composes the loss from "
     "primitives and shows <MeanBackward0>",
     lambda torch: _check(repr(torch.nn.functional.binary_cross_entropy_with_logits(
         torch.ones(3, requires_grad=True), torch.zeros(3)).grad_fn).startswith(
             "<BinaryCrossEntropyWithLogitsBackward0"))),
    ("Tensor.topk / torch.topk", "char-RNN and nanoGPT sampling: topv, topi = output.topk(1)",
     lambda torch: torch.tensor([0.1, 0.7, 0.2]).topk(1)),
    ("torch.multinomial", "char-RNN / nanoGPT generation: torch.multinomial(probs, "
     "num_samples=1)", lambda torch: torch.multinomial(torch.tensor([0.2, 0.8]), 1)),
    ("F.relu(x, inplace=True)", "many CNNs: x = F.relu(self.bn1(x), inplace=True)",
     lambda torch: torch.nn.functional.relu(torch.ones(2), inplace=True)),
    ("nn.utils.rnn", "NLP tutorials: pad_sequence(batch, batch_first=True), "
     "pack_padded_sequence", lambda torch: torch.nn.utils.rnn.pad_sequence(
         [torch.ones(2), torch.ones(3)], batch_first=True)),
    ("F.one_hot", "labels to targets: F.one_hot(y, num_classes=10)",
     lambda torch: torch.nn.functional.one_hot(torch.tensor([0, 2]), num_classes=3)),
    ("torch.uint8", "image tutorials: images stored as torch.uint8, then .float() / 255",
     lambda torch: torch.zeros(2, dtype=torch.uint8)),
    ("torch.autograd.Variable", "pre-0.4 tutorials (still widely copied): Variable(x)",
     lambda torch: torch.autograd.Variable(torch.ones(2))),
    ("torch.FloatTensor / LongTensor", "older tutorials: torch.LongTensor(idxs)",
     lambda torch: torch.LongTensor([1, 2])),
    ("Tensor.new_zeros / new_ones / new_full", "models that allocate like an input: "
     "x.new_zeros(batch, hidden)", lambda torch: torch.ones(2).new_zeros(3)),
    ("sum(axis=...)", "NumPy-style keyword that torch accepts as an alias of dim",
     lambda torch: torch.ones(2, 3).sum(axis=0)),
    ("torch.allclose / equal / isclose", "checking a result: torch.allclose(out, expected)",
     lambda torch: torch.allclose(torch.ones(2), torch.ones(2))),
    ("torch.testing.assert_close", "tests in tutorials and recipes",
     lambda torch: torch.testing.assert_close(torch.ones(2), torch.ones(2))),
    ("torch.unique / torch.sort", "class counts, ranking: torch.unique(y, return_counts=True)",
     lambda torch: (torch.unique(torch.tensor([1, 1, 2])), torch.sort(torch.ones(2)))),
    ("torch.meshgrid", "plotting decision boundaries: torch.meshgrid(xs, ys, indexing='ij')",
     lambda torch: torch.meshgrid(torch.ones(2), torch.ones(3), indexing="ij")),
    ("F.interpolate / nn.Upsample", "U-Net, super-resolution, GAN generators",
     lambda torch: torch.nn.functional.interpolate(torch.ones(1, 1, 2, 2), scale_factor=2)),
    ("F.normalize / torch.linalg.norm", "embeddings, contrastive losses",
     lambda torch: torch.nn.functional.normalize(torch.ones(2, 2), dim=1)),
    ("torch.addmm", "hand-written layers: torch.addmm(b, x, W.t())",
     lambda torch: torch.addmm(torch.ones(2), torch.ones(3, 2), torch.ones(2, 2))),
    ("torch.set_printoptions", "tutorials that print tensors: torch.set_printoptions("
     "precision=2)", lambda torch: torch.set_printoptions(precision=4)),
    ("torch.set_num_threads / get_rng_state", "CPU benchmarking and reproducibility recipes",
     lambda torch: (torch.set_num_threads, torch.get_rng_state())),
    ("torch.compile", "PyTorch 2 tutorials: model = torch.compile(model)",
     lambda torch: torch.compile),
    ("attention", "Transformer tutorials: nn.MultiheadAttention, nn.TransformerEncoderLayer, "
     "F.scaled_dot_product_attention", lambda torch: torch.nn.MultiheadAttention(8, 2)),
]


def _check(condition: bool) -> None:
    if not condition:
        raise AssertionError("gradlab differs from PyTorch here")


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
