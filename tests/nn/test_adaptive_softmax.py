"""AdaptiveLogSoftmaxWithLoss against PyTorch with copied weights: repr, state_dict keys,
forward's (output, loss), every gradient, log_prob, predict; gradcheck; errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradlab
import gradlab.nn as nn
from tests.oracle import needs_torch, torch

CONFIGS = [
    dict(in_features=8, n_classes=10, cutoffs=[3, 6]),
    dict(in_features=16, n_classes=20, cutoffs=[5, 10, 15], div_value=2.0, head_bias=True),
    dict(in_features=6, n_classes=5, cutoffs=[2], div_value=1.0),
]


def twins(config):
    """A PyTorch module and a gradlab one holding its float64 weights."""
    with warnings.catch_warnings():  # div_value 4 gives a 0-wide tail projection in config 0
        warnings.simplefilter("ignore", UserWarning)
        theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(**config).double()
        ours = nn.AdaptiveLogSoftmaxWithLoss(**config).double()
    ours.load_state_dict({k: gradlab.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def targets_for(config, rng, n):
    """Targets in every cluster (and so every tail runs), in random order."""
    bounds = [0] + config["cutoffs"] + [config["n_classes"]]
    picks = [rng.integers(lo, hi) for lo, hi in zip(bounds, bounds[1:])]
    return rng.permutation(np.concatenate([picks, rng.integers(0, config["n_classes"],
                                                               n - len(picks))]))


@needs_torch
@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_structure_matches_torch(config):
    ours, theirs = twins(config)
    assert repr(ours) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    for name in ("in_features", "n_classes", "cutoffs", "div_value", "head_bias",
                 "shortlist_size", "n_clusters", "head_size"):
        assert getattr(ours, name) == getattr(theirs, name), name


@needs_torch
@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_forward_and_every_gradient_match_torch(config):
    ours, theirs = twins(config)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((9, config["in_features"]))
    target = targets_for(config, rng, 9)
    xg, xt = gradlab.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = ours(xg, gradlab.tensor(target)), theirs(xt, torch.tensor(target))
    assert type(got).__name__ == "_ASMoutput" and got._fields == ("output", "loss")
    np.testing.assert_allclose(got.output.detach().numpy(), want.output.detach().numpy(),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got.loss.item(), want.loss.item(), rtol=1e-12)
    cot = rng.standard_normal(9)
    ((got.output * gradlab.tensor(cot)).sum() + got.loss).backward()
    ((want.output * torch.tensor(cot)).sum() + want.loss).backward()
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-14)
    ours_params = dict(ours.named_parameters())
    for key, p in theirs.named_parameters():
        np.testing.assert_allclose(ours_params[key].grad.numpy(), p.grad.numpy(), rtol=1e-10,
                                   atol=1e-14, err_msg=key)


@needs_torch
def test_unbatched_single_row_and_clusters_without_rows():
    ours, theirs = twins(CONFIGS[1])
    rng = np.random.default_rng(1)
    x = rng.standard_normal(16)
    for t in (0, 7, 19):  # the shortlist, a middle cluster, the last one
        got = ours(gradlab.tensor(x), gradlab.tensor(t))
        want = theirs(torch.tensor(x), torch.tensor(t))
        assert tuple(got.output.shape) == tuple(want.output.shape) == ()
        np.testing.assert_allclose(got.output.item(), want.output.item(), rtol=1e-12)
    x2 = rng.standard_normal((4, 16))
    only_shortlist = np.array([0, 4, 2, 1])
    got = ours(gradlab.tensor(x2), gradlab.tensor(only_shortlist))
    want = theirs(torch.tensor(x2), torch.tensor(only_shortlist))
    np.testing.assert_allclose(got.output.detach().numpy(), want.output.detach().numpy(),
                               rtol=1e-12)
    one = ours(gradlab.tensor(x2[:1]), gradlab.tensor([12]))
    assert tuple(one.output.shape) == (1,)
    np.testing.assert_allclose(one.output.item(), theirs(torch.tensor(x2[:1]),
                                                         torch.tensor([12])).output.item())


@needs_torch
@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_log_prob_matches_torch_and_is_a_distribution(config):
    ours, theirs = twins(config)
    x = np.random.default_rng(2).standard_normal((5, config["in_features"]))
    got = ours.log_prob(gradlab.tensor(x))
    np.testing.assert_allclose(got.detach().numpy(),
                               theirs.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(np.exp(got.detach().numpy()).sum(1), 1.0, rtol=1e-12)
    target = targets_for(config, np.random.default_rng(3), 5)  # forward reads the same table
    output = ours(gradlab.tensor(x), gradlab.tensor(target)).output.detach()
    np.testing.assert_allclose(output.numpy(), got.detach().numpy()[np.arange(5), target],
                               rtol=1e-12)


@needs_torch
@pytest.mark.parametrize("head_columns", ["shortlist", "clusters", "mixed"])
def test_predict_matches_torch_on_each_of_its_paths(head_columns):
    """predict takes the head's argmax where it is a shortlist class and looks into the tails
    only for rows whose best head logit is a cluster: all, none or some rows. The head is
    set so that x[:, 0] = 100 picks class 0 and x[:, 0] = 0 a cluster (biases 50, 51, 52)."""
    ours, theirs = twins(CONFIGS[1])
    weight = np.zeros((theirs.head_size, 16))
    weight[0, 0] = 1.0
    bias = np.zeros(theirs.head_size)
    bias[theirs.shortlist_size:] = [50.0, 51.0, 52.0]
    with torch.no_grad():
        theirs.head.weight.copy_(torch.tensor(weight))
        theirs.head.bias.copy_(torch.tensor(bias))
    ours.load_state_dict({k: gradlab.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(4).standard_normal((8, 16))
    x[:, 0] = {"shortlist": 100.0, "clusters": 0.0, "mixed": [100.0, 0.0] * 4}[head_columns]
    want = theirs.predict(torch.tensor(x))
    got = ours.predict(gradlab.tensor(x))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert got.dtype is gradlab.int64
    assert (want.numpy() >= theirs.shortlist_size).any() == (head_columns != "shortlist")


def test_loss_and_log_prob_gradcheck():
    from gradlab.autograd import gradcheck, gradgradcheck

    model = nn.AdaptiveLogSoftmaxWithLoss(6, 9, [2, 5], div_value=2.0).double()
    x = gradlab.tensor(np.random.default_rng(6).standard_normal((4, 6)), requires_grad=True)
    target = gradlab.tensor([0, 4, 8, 3])
    assert gradcheck(lambda t: model(t, target).loss, (x,))
    assert gradgradcheck(lambda t: model(t, target).output, (x,))
    assert gradcheck(lambda t: model.log_prob(t), (x,))


def test_empty_batch_gives_an_empty_output_and_a_nan_loss():
    model = nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2])
    out = model(gradlab.randn(0, 4), gradlab.zeros(0, dtype=gradlab.int64))
    assert tuple(out.output.shape) == (0,) and np.isnan(out.loss.item())


def test_factory_kwargs_and_reset_parameters():
    model = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4], div_value=2.0, dtype=gradlab.float64)
    assert all(p.dtype is gradlab.float64 for p in model.parameters())
    before = model.tail[0][1].weight.detach().clone()
    model.reset_parameters()
    assert not np.array_equal(before.numpy(), model.tail[0][1].weight.detach().numpy())


# --- errors -------------------------------------------------------------------------------------

def _model(lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6])


ERRORS = [
    (lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, []), ValueError,
     "cutoffs should be a sequence of length larger than 0"),
    (lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 10]), ValueError,
     r"between 1 and n_classes-1 \(= 9\), got \[3, 10\]"),
    (lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3]), ValueError,
     "sorted in an increasing order"),
    (lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 3]), ValueError, "unique"),
    (lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2.5]), ValueError, "integers"),
    (lambda lib: _model(lib)(lib.randn(2, 8), lib.tensor([0, 10])), RuntimeError,
     r"Target values should be in \[0, 9\], but values in range \[0, 10\] were found"),
    (lambda lib: _model(lib)(lib.randn(2, 8), lib.tensor([-1, 3])), RuntimeError,
     r"values in range \[-1, 3\]"),
    (lambda lib: _model(lib)(lib.randn(2, 8), lib.tensor([[0, 1]])), RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    (lambda lib: _model(lib)(lib.randn(3, 8), lib.tensor([0, 1])), RuntimeError,
     "Input and target should have the same size in the batch dimension"),
    (lambda lib: _model(lib)(lib.randn(2, 2, 8), lib.tensor([0, 1])), RuntimeError,
     "1D target tensor expects 2D input tensors"),
    (lambda lib: _model(lib)(lib.randn(2, 8), lib.tensor(1)), RuntimeError,
     "0D target tensor expects 1D input tensors"),
    (lambda lib: _model(lib)(lib.randn(2, 8), lib.tensor([0.0, 1.0])), RuntimeError,
     r"target must hold class indices \(int64\), got gradlab.float32. Fix: target.long\(\)"),
    (lambda lib: _model(lib).log_prob(lib.randn(8)), IndexError,
     r"log_prob: expected a 2-D \(N, in_features=8\) input, got \(8,\)"),
    (lambda lib: _model(lib).predict(lib.randn(8)), IndexError, "predict: expected a 2-D"),
]


@pytest.mark.parametrize("call, error, match", ERRORS)
def test_errors_teach_and_have_torchs_type(call, error, match):
    with pytest.raises(error, match=match):
        call(gradlab)
    if torch is not None:
        with pytest.raises(error):
            call(torch)
