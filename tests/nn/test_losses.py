"""Regression, binary, KL and margin losses (and the loss modules): vs NumPy, gradcheck, PyTorch.

cross_entropy and nll_loss have their own file, test_cross_entropy.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradlab
import gradlab.nn as nn
import gradlab.nn.functional as F
import tests.oracle as oracle
from tests.oracle import OpCase, index_tensor, needs_torch, standard_op_tests, torch

# kl_div(reduction='mean') warns on purpose (both here and in PyTorch); one test checks that.
pytestmark = pytest.mark.filterwarnings("ignore:.*batchmean:UserWarning")


def fn_of(lib):
    return lib.nn.functional


def apart(rng, dtype, shapes):
    """x, y with |x - y| in [0.1, 2]: away from the kink of |x - y| at 0."""
    y = rng.uniform(-2, 2, shapes[1])
    gap = rng.uniform(0.1, 2.0, shapes[0]) * rng.choice([-1, 1], shapes[0])
    return [(y + gap).astype(dtype), y.astype(dtype), *[rng.uniform(0.5, 2, s).astype(dtype)
                                                        for s in shapes[2:]]]


def probabilities(rng, dtype, shapes):
    """bce inputs: predictions in (0.05, 0.95), targets in [0, 1], then positive weights."""
    return [rng.uniform(0.05, 0.95, shapes[0]).astype(dtype),
            rng.uniform(0, 1, shapes[1]).astype(dtype),
            *[rng.uniform(0.5, 2, s).astype(dtype) for s in shapes[2:]]]


def log_probs(rng, dtype, shapes):
    """kl_div inputs: log-probabilities and positive target probabilities."""
    return [np.log(rng.uniform(0.05, 1, shapes[0])).astype(dtype),
            rng.uniform(0.05, 1, shapes[1]).astype(dtype)]


def signs(lib, values):
    return lib.tensor(values, dtype=lib.float64)


def labels(lib, x, values):
    """Class indices on x's device (the rows run on every device)."""
    return index_tensor(lib, values).to(x.device)


def softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def smooth_l1_np(d, beta):
    a = np.abs(d)
    return np.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)


def reduce_np(loss, reduction):
    return {"none": loss, "mean": np.mean(loss), "sum": np.sum(loss)}[reduction]


PAIR = ((3, 4), (3, 4))
Y_ROWS = [1.0, -1.0, 1.0]
Y_GRID = [[1.0, -1.0, 1.0, -1.0], [-1.0, -1.0, 1.0, 1.0], [1.0, 1.0, -1.0, -1.0]]
MM_TARGET = [1, 0, 3]

CASES = []
for red in ("mean", "sum", "none"):
    CASES += [
        OpCase(f"mse_{red}", lambda lib, x, y, r=red: fn_of(lib).mse_loss(x, y, reduction=r),
               PAIR, numpy=lambda np, x, y, r=red: reduce_np((x - y) ** 2, r)),
        OpCase(f"l1_{red}", lambda lib, x, y, r=red: fn_of(lib).l1_loss(x, y, reduction=r),
               PAIR, numpy=lambda np, x, y, r=red: reduce_np(np.abs(x - y), r), inputs=apart,
               gradgrad=False),
        OpCase(f"smooth_l1_{red}",
               lambda lib, x, y, r=red: fn_of(lib).smooth_l1_loss(x, y, reduction=r, beta=0.7),
               PAIR, numpy=lambda np, x, y, r=red: reduce_np(smooth_l1_np(x - y, 0.7), r),
               inputs=apart),
        OpCase(f"huber_{red}",
               lambda lib, x, y, r=red: fn_of(lib).huber_loss(x, y, reduction=r, delta=0.8),
               PAIR, numpy=lambda np, x, y, r=red: reduce_np(0.8 * smooth_l1_np(x - y, 0.8), r),
               inputs=apart),
        OpCase(f"bce_{red}",
               lambda lib, x, y, r=red: fn_of(lib).binary_cross_entropy(x, y, reduction=r),
               PAIR, inputs=probabilities,
               numpy=lambda np, x, y, r=red: reduce_np(-(y * np.log(x) + (1 - y) * np.log(1 - x)),
                                                       r)),
        OpCase(f"bce_logits_{red}",
               lambda lib, x, y, r=red: fn_of(lib).binary_cross_entropy_with_logits(
                   x, y, reduction=r), PAIR, domain=[(-4, 4), (0, 1)],
               numpy=lambda np, x, y, r=red: reduce_np(softplus(x) - x * y, r)),
        OpCase(f"kl_div_{red}", lambda lib, x, y, r=red: fn_of(lib).kl_div(x, y, reduction=r),
               PAIR, inputs=log_probs,
               numpy=lambda np, x, y, r=red: reduce_np(y * (np.log(y) - x), r)),
        OpCase(f"margin_ranking_{red}",
               lambda lib, a, b, r=red: fn_of(lib).margin_ranking_loss(
                   a, b, signs(lib, Y_GRID).to(a), margin=0.3, reduction=r), PAIR,
               numpy=lambda np, a, b, r=red: reduce_np(
                   np.maximum(0, -np.array(Y_GRID) * (a - b) + 0.3), r)),
        OpCase(f"hinge_embedding_{red}",
               lambda lib, x, r=red: fn_of(lib).hinge_embedding_loss(
                   x, signs(lib, Y_GRID).to(x), margin=0.5, reduction=r), ((3, 4),),
               numpy=lambda np, x, r=red: reduce_np(
                   np.where(np.array(Y_GRID) == 1, x, np.maximum(0, 0.5 - x)), r)),
        OpCase(f"cosine_embedding_{red}",
               lambda lib, a, b, r=red: fn_of(lib).cosine_embedding_loss(
                   a, b, signs(lib, Y_ROWS).to(a), margin=0.1, reduction=r),
               ((3, 5), (3, 5))),
        OpCase(f"multi_margin_{red}",
               lambda lib, x, r=red: fn_of(lib).multi_margin_loss(
                   x, labels(lib, x, MM_TARGET), reduction=r), ((3, 4),),
               jvp=False),  # see test_multi_margin_jvp_matches_finite_differences
    ]

CASES += [
    OpCase("mse_weight", lambda lib, x, y, w: fn_of(lib).mse_loss(x, y, weight=w),
           ((3, 4), (3, 4), (3, 4)), inputs=apart,
           numpy=lambda np, x, y, w: np.sum(w * (x - y) ** 2) / np.sum(w)),
    OpCase("l1_weight_sum", lambda lib, x, y, w: fn_of(lib).l1_loss(x, y, weight=w,
                                                                     reduction="sum"),
           ((3, 4), (3, 4), (3, 4)), inputs=apart, gradgrad=False),
    OpCase("huber_weight", lambda lib, x, y, w: fn_of(lib).huber_loss(x, y, weight=w),
           ((3, 4), (3, 4), (3, 4)), inputs=apart,
           numpy=lambda np, x, y, w: np.mean(w * smooth_l1_np(x - y, 1.0))),
    OpCase("smooth_l1_beta0", lambda lib, x, y: fn_of(lib).smooth_l1_loss(x, y, beta=0.0), PAIR,
           inputs=apart, gradgrad=False,
           numpy=lambda np, x, y: np.mean(np.abs(x - y))),
    OpCase("mse_0d", lambda lib, x, y: fn_of(lib).mse_loss(x, y), ((), ()),
           numpy=lambda np, x, y: (x - y) ** 2),
    OpCase("bce_weight", lambda lib, x, y: fn_of(lib).binary_cross_entropy(
        x, y, weight=lib.tensor([0.5, 1.0, 2.0, 1.5]).to(x)), PAIR, inputs=probabilities),
    OpCase("bce_logits_weight_pos_weight",
           lambda lib, x, y: fn_of(lib).binary_cross_entropy_with_logits(
               x, y, weight=lib.tensor([[0.5], [1.0], [2.0]]).to(x),
               pos_weight=lib.tensor([0.5, 1.0, 2.0, 3.0]).to(x), reduction="sum"),
           PAIR, domain=[(-4, 4), (0, 1)]),
    OpCase("kl_div_batchmean", lambda lib, x, y: fn_of(lib).kl_div(x, y, reduction="batchmean"),
           PAIR, inputs=log_probs,
           numpy=lambda np, x, y: np.sum(y * (np.log(y) - x)) / 3),
    OpCase("kl_div_log_target", lambda lib, x, y: fn_of(lib).kl_div(
        x, y, reduction="sum", log_target=True), PAIR, domain=(-3, -0.1),
           numpy=lambda np, x, y: np.sum(np.exp(y) * (y - x))),
    OpCase("cosine_embedding_1d", lambda lib, a, b: fn_of(lib).cosine_embedding_loss(
        a, b, lib.tensor(-1.0).to(a), margin=-0.5), ((5,), (5,))),
    OpCase("multi_margin_p2_weight", lambda lib, x: fn_of(lib).multi_margin_loss(
        x, labels(lib, x, MM_TARGET), p=2, margin=0.7,
        weight=lib.tensor([0.5, 1.0, 2.0, 1.5]).to(x)), ((3, 4),), jvp=False),
    OpCase("multi_margin_1d", lambda lib, x: fn_of(lib).multi_margin_loss(
        x, labels(lib, x, 2), reduction="none"), ((4,),), jvp=False),
]

globals().update(standard_op_tests(CASES))


# PyTorch has no forward-mode formula for multi_margin_loss (torch.func.jvp raises
# NotImplementedError), so those rows have jvp=False in the table, whose check also asks
# PyTorch. gradlab composes the loss from ops that have tangent rules, so here its tangent is
# checked against finite differences alone.
@oracle.cases_by_id([c for c in CASES if c.name.startswith("multi_margin")])
def test_multi_margin_jvp_matches_finite_differences(case, device, monkeypatch):
    monkeypatch.setattr(oracle, "torch", None)
    oracle.check_jvp(case, device)


# --- values at the edges ----------------------------------------------------------------------

def test_bce_clamps_the_log_at_minus_100():
    x = gradlab.tensor([0.0, 1.0, 0.0, 1.0], requires_grad=True)
    y = gradlab.tensor([1.0, 0.0, 0.0, 1.0])
    loss = F.binary_cross_entropy(x, y, reduction="none")
    assert loss.tolist() == [100.0, 100.0, 0.0, 0.0]
    loss.sum().backward()
    assert np.all(np.isfinite(x.grad.numpy()))
    np.testing.assert_allclose(x.grad.numpy(), [-1e12, 1e12, 0.0, 0.0])


def test_bce_with_logits_is_finite_for_huge_logits():
    x = gradlab.tensor([1e4, -1e4, 1e4, -1e4, 0.0], requires_grad=True)
    y = gradlab.tensor([1.0, 0.0, 0.0, 1.0, 0.5])
    loss = F.binary_cross_entropy_with_logits(x, y, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [0.0, 0.0, 1e4, 1e4, np.log(2)])
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0, 1.0, -1.0, 0.0])


def test_bce_with_logits_gradient_at_zero_logit_is_sigmoid_minus_target():
    x = gradlab.zeros(3, requires_grad=True)
    F.binary_cross_entropy_with_logits(x, gradlab.tensor([0.0, 1.0, 0.25]),
                                       reduction="sum").backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5, -0.5, 0.25])


def test_kl_div_zero_target_contributes_nothing():
    x = gradlab.tensor([-1.0, -2.0], requires_grad=True)
    loss = F.kl_div(x, gradlab.tensor([0.0, 0.5]), reduction="sum")
    np.testing.assert_allclose(loss.item(), 0.5 * (np.log(0.5) + 2.0))
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, -0.5])


def test_kl_div_mean_warns_and_batchmean_divides_by_batch():
    x = gradlab.log(gradlab.full((4, 5), 0.2))
    y = gradlab.full((4, 5), 0.1)
    with pytest.warns(UserWarning, match="batchmean"):
        mean = F.kl_div(x, y)
    total = F.kl_div(x, y, reduction="sum").item()
    np.testing.assert_allclose(mean.item(), total / 20)
    np.testing.assert_allclose(F.kl_div(x, y, reduction="batchmean").item(), total / 4)


def test_empty_mean_is_nan_and_sum_is_zero():
    x = gradlab.zeros(0, 3)
    assert np.isnan(F.mse_loss(x, x).item())
    assert F.l1_loss(x, x, reduction="sum").item() == 0.0


def test_hinge_embedding_targets_other_than_plus_minus_one_add_both_terms():
    x = gradlab.tensor([0.3, -0.5])
    got = F.hinge_embedding_loss(x, gradlab.tensor([0.0, 2.0]), reduction="none")
    np.testing.assert_allclose(got.numpy(), [0.3 + 0.7, -0.5 + 1.5])


def test_legacy_size_average_and_reduce_map_to_reduction():
    x, y = gradlab.tensor([1.0, 3.0]), gradlab.tensor([0.0, 0.0])
    with pytest.warns(UserWarning, match="reduction='sum'"):
        assert F.mse_loss(x, y, size_average=False).item() == 10.0
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert F.l1_loss(x, y, reduce=False).tolist() == [1.0, 3.0]


def test_integer_reduction_codes_work_as_at_torch_level():
    x, y = gradlab.tensor([-1.0, -2.0]), gradlab.tensor([0.5, 0.5])
    assert gradlab.kl_div(x, y, reduction=2).item() == pytest.approx(
        F.kl_div(x, y, reduction="sum").item())
    assert tuple(gradlab.kl_div(x, y, reduction=0).shape) == (2,)


def test_losses_are_exported_where_torch_has_them():
    from gradlab.ops import losses

    assert set(losses.__all__) == {"binary_cross_entropy_with_logits", "kl_div",
                                   "hinge_embedding_loss", "margin_ranking_loss",
                                   "cosine_embedding_loss"}
    for name in losses.FUNCTIONAL:
        assert getattr(F, name) is getattr(losses, name)
    for name in losses.__all__:
        assert getattr(gradlab, name) is getattr(losses, name)
    assert not hasattr(gradlab, "mse_loss")


@needs_torch
def test_torch_has_exactly_the_exported_names():
    from gradlab.ops import losses

    for name in losses.FUNCTIONAL:
        assert hasattr(torch, name) == (name in losses.__all__), name


@needs_torch
def test_mse_broadcasting_warns_and_matches_torch():
    x, y = np.random.default_rng(0).standard_normal((2, 3, 4))[0], np.arange(4.0)
    with pytest.warns(UserWarning, match="different to the input size"):
        got = F.mse_loss(gradlab.tensor(x), gradlab.tensor(y)).item()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.nn.functional.mse_loss(torch.tensor(x), torch.tensor(y)).item()
    assert got == pytest.approx(want)


# --- errors that teach ------------------------------------------------------------------------

def test_bad_reduction_names_the_op_and_the_choices():
    x = gradlab.zeros(3)
    with pytest.raises(ValueError, match=r"mse_loss: 'avg' is not a valid reduction.*'mean'"):
        F.mse_loss(x, x, reduction="avg")
    with pytest.raises(ValueError, match=r"kl_div: 'avg' .*'batchmean'"):
        F.kl_div(x, x, reduction="avg")


def test_shape_errors_name_both_shapes():
    with pytest.raises(RuntimeError, match=r"mse_loss: input \(3,\) and target \(2,\) can't be "
                                           r"broadcast"):
        F.mse_loss(gradlab.zeros(3), gradlab.zeros(2))
    with pytest.raises(ValueError, match=r"binary_cross_entropy: target shape \(3, 1\) must "
                                         r"equal input shape \(3,\)"):
        F.binary_cross_entropy(gradlab.full((3,), 0.5), gradlab.zeros(3, 1))
    with pytest.raises(ValueError, match=r"binary_cross_entropy_with_logits: target shape"):
        F.binary_cross_entropy_with_logits(gradlab.zeros(3), gradlab.zeros(2))
    with pytest.raises(ValueError, match=r"mse_loss: weight must have the input's shape"):
        F.mse_loss(gradlab.zeros(3), gradlab.zeros(3), weight=gradlab.ones(2))
    with pytest.raises(RuntimeError, match=r"margin_ranking_loss: .*same number of dims"):
        F.margin_ranking_loss(gradlab.zeros(3), gradlab.zeros(3), gradlab.ones(3, 1))
    with pytest.raises(RuntimeError, match=r"cosine_embedding_loss: expected inputs of one "
                                           r"shape"):
        F.cosine_embedding_loss(gradlab.zeros(3, 2), gradlab.zeros(3, 2), gradlab.ones(2))


def test_weight_shape_errors():
    x = gradlab.zeros(3, 2)
    with pytest.raises(ValueError, match=r"binary_cross_entropy_with_logits: pos_weight of "
                                         r"shape \(3,\) must broadcast"):
        F.binary_cross_entropy_with_logits(x, x, pos_weight=gradlab.ones(3))
    with pytest.raises(ValueError, match=r"binary_cross_entropy: weight of shape \(4, 3, 2\) "
                                         r"must broadcast to the input's shape \(3, 2\)"):
        F.binary_cross_entropy(x, x, weight=gradlab.ones(4, 3, 2))
    with pytest.raises(ValueError, match=r"multi_margin_loss: weight must be one-dimensional"):
        F.multi_margin_loss(x, gradlab.tensor([0, 1, 1]), weight=gradlab.ones(2, 1))


def test_bce_out_of_range_input_suggests_logits():
    with pytest.raises(ValueError, match=r"between 0 and 1.*binary_cross_entropy_with_logits"):
        F.binary_cross_entropy(gradlab.tensor([1.5]), gradlab.tensor([1.0]))


def test_parameter_errors():
    x = gradlab.zeros(3)
    with pytest.raises(ValueError, match=r"smooth_l1_loss: beta must be >= 0"):
        F.smooth_l1_loss(x, x, beta=-1.0)
    with pytest.raises(ValueError, match=r"huber_loss: delta must be > 0"):
        F.huber_loss(x, x, delta=0.0)
    with pytest.raises(ValueError, match=r"multi_margin_loss: only p = 1 and p = 2"):
        F.multi_margin_loss(gradlab.zeros(2, 3), gradlab.tensor([0, 1]), p=3)
    with pytest.raises(IndexError, match=r"multi_margin_loss: target has class 3 but input has 3 "
                                         r"classes"):
        F.multi_margin_loss(gradlab.zeros(2, 3), gradlab.tensor([0, 3]))


# --- modules ----------------------------------------------------------------------------------

MODULES = ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss",
           "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiMarginLoss", "KLDivLoss",
           "MarginRankingLoss", "CosineEmbeddingLoss"]


@pytest.mark.parametrize("name", MODULES)
def test_module_repr_is_pytorchs(name):
    assert repr(getattr(nn, name)()) == f"{name}()"


def test_weights_are_buffers_in_the_state_dict():
    w = gradlab.tensor([1.0, 2.0, 3.0])
    ce = nn.CrossEntropyLoss(weight=w)
    assert list(ce.state_dict()) == ["weight"] and ce.weight is w
    assert list(nn.CrossEntropyLoss().state_dict()) == []
    bce = nn.BCEWithLogitsLoss(pos_weight=w)
    assert list(bce.state_dict()) == ["pos_weight"] and bce.weight is None
    assert list(dict(nn.NLLLoss(weight=w).named_buffers())) == ["weight"]
    assert list(nn.MultiMarginLoss(weight=w).state_dict()) == ["weight"]


def test_modules_call_their_functional_form():
    rng = np.random.default_rng(0)
    x = gradlab.tensor(rng.standard_normal((4, 3)))
    y = gradlab.tensor(rng.uniform(0, 1, (4, 3)))
    labels = gradlab.tensor([0, 2, 1, 2])
    w = gradlab.tensor([0.5, 1.0, 2.0])
    pairs = [
        (nn.MSELoss(reduction="sum")(x, y), F.mse_loss(x, y, reduction="sum")),
        (nn.L1Loss()(x, y), F.l1_loss(x, y)),
        (nn.SmoothL1Loss(beta=0.5)(x, y), F.smooth_l1_loss(x, y, beta=0.5)),
        (nn.HuberLoss(delta=0.5)(x, y), F.huber_loss(x, y, delta=0.5)),
        (nn.CrossEntropyLoss(w, ignore_index=1, label_smoothing=0.1)(x, labels),
         F.cross_entropy(x, labels, w, ignore_index=1, label_smoothing=0.1)),
        (nn.NLLLoss(w, reduction="none")(x, labels), F.nll_loss(x, labels, w, reduction="none")),
        (nn.BCELoss(w)(y, y), F.binary_cross_entropy(y, y, w)),
        (nn.BCEWithLogitsLoss(pos_weight=w)(x, y),
         F.binary_cross_entropy_with_logits(x, y, pos_weight=w)),
        (nn.HingeEmbeddingLoss(margin=0.5)(x, y), F.hinge_embedding_loss(x, y, margin=0.5)),
        (nn.MultiMarginLoss(p=2, weight=w)(x, labels), F.multi_margin_loss(x, labels, 2,
                                                                          weight=w)),
        (nn.KLDivLoss(reduction="batchmean", log_target=True)(x, x),
         F.kl_div(x, x, reduction="batchmean", log_target=True)),
        (nn.MarginRankingLoss(0.2)(x, y, y), F.margin_ranking_loss(x, y, y, 0.2)),
        (nn.CosineEmbeddingLoss(0.1)(x, y, gradlab.ones(4)),
         F.cosine_embedding_loss(x, y, gradlab.ones(4), 0.1)),
    ]
    for got, want in pairs:
        np.testing.assert_allclose(got.numpy(), want.numpy())


def test_module_settings_and_legacy_arguments():
    ce = nn.CrossEntropyLoss(ignore_index=3, label_smoothing=0.2, reduction="sum")
    assert (ce.ignore_index, ce.label_smoothing, ce.reduction) == (3, 0.2, "sum")
    with pytest.warns(UserWarning, match="deprecated"):
        assert nn.MSELoss(size_average=False).reduction == "sum"
    assert nn.SmoothL1Loss(beta=0.3).beta == 0.3 and nn.HuberLoss(delta=2).delta == 2
    assert nn.KLDivLoss(log_target=True).log_target is True


def test_module_constructor_errors():
    with pytest.raises(ValueError, match=r"MultiMarginLoss: only p = 1 and p = 2"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match=r"MultiMarginLoss: expected weight to be None or a "
                                         r"1-D tensor"):
        nn.MultiMarginLoss(weight=gradlab.ones(2, 2))
    with pytest.raises(TypeError, match=r"HuberLoss: delta must be a float or int"):
        nn.HuberLoss(delta="1")


@needs_torch
def test_weighted_module_state_dict_loads_into_torch():
    w = np.array([0.5, 1.0, 2.0])
    ours = nn.CrossEntropyLoss(weight=gradlab.tensor(w))
    theirs = torch.nn.CrossEntropyLoss(weight=torch.zeros(3, dtype=torch.float64))
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    np.testing.assert_array_equal(theirs.weight.numpy(), w)


# --- the node a student sees: PyTorch's grad_fn for every loss and reduction ------------------

def _node_calls(lib):
    F = lib.nn.functional
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.uniform(0.1, 0.9, (3, 4)), requires_grad=True)
    y, w = lib.tensor(rng.uniform(0, 1, (3, 4))), lib.tensor(rng.uniform(0.5, 1, (3, 4)))
    s = lib.tensor(np.sign(rng.standard_normal((3, 4))))
    return {
        "mse": lambda r: F.mse_loss(x, y, reduction=r),
        "mse_weight": lambda r: F.mse_loss(x, y, reduction=r, weight=w),
        "l1": lambda r: F.l1_loss(x, y, reduction=r),
        "l1_weight": lambda r: F.l1_loss(x, y, reduction=r, weight=w),
        "smooth_l1": lambda r: F.smooth_l1_loss(x, y, reduction=r),
        "smooth_l1_beta0": lambda r: F.smooth_l1_loss(x, y, reduction=r, beta=0.0),
        "huber": lambda r: F.huber_loss(x, y, reduction=r),
        "huber_weight": lambda r: F.huber_loss(x, y, reduction=r, weight=w),
        "bce": lambda r: F.binary_cross_entropy(x, y, reduction=r),
        "bce_weight": lambda r: F.binary_cross_entropy(x, y, w, reduction=r),
        "bce_logits": lambda r: F.binary_cross_entropy_with_logits(x, y, reduction=r),
        "bce_logits_pos_weight": lambda r: F.binary_cross_entropy_with_logits(
            x, y, w, reduction=r, pos_weight=lib.tensor([1.0, 2.0, 3.0, 4.0])),
        "kl_div": lambda r: F.kl_div(x, y, reduction=r),
        "kl_div_log_target": lambda r: F.kl_div(x, y, reduction=r, log_target=True),
        "kl_div_batchmean": lambda r: F.kl_div(x, y, reduction="batchmean"),
        "hinge_embedding": lambda r: F.hinge_embedding_loss(x, s, reduction=r),
        "cosine_embedding": lambda r: F.cosine_embedding_loss(x, y, s[:, 0], reduction=r),
        "margin_ranking": lambda r: F.margin_ranking_loss(x, y, s, reduction=r),
    }


def _node_name(lib, loss):
    return type(loss.grad_fn).__name__ if lib is torch else repr(loss.grad_fn)[1:].split(" ")[0]


@needs_torch
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("loss", list(_node_calls(gradlab)))
def test_loss_node_names_match_torch(loss, reduction):
    ours = _node_name(gradlab, _node_calls(gradlab)[loss](reduction))
    theirs = _node_name(torch, _node_calls(torch)[loss](reduction))
    assert ours == theirs


def test_bce_with_logits_is_one_node_with_the_reduction_inside():
    x = gradlab.ones(3, requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(x, gradlab.zeros(3))
    assert repr(loss.grad_fn).startswith("<BinaryCrossEntropyWithLogitsBackward0")
    assert loss.grad_fn.next_functions[0][0] is not None  # straight to x's accumulator
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 1 / (1 + np.exp(-1)) / 3))
