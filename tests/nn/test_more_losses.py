"""soft_margin, multilabel_soft_margin, poisson_nll, gaussian_nll and triplet_margin losses
(and their modules): vs NumPy, gradcheck, PyTorch; reprs; the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
import gradlab.nn as nn
import gradlab.nn.functional as F
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch


def fn_of(lib):
    return lib.nn.functional


def const(lib, x, values):
    """A constant target on x's device and dtype (the rows run on every device and dtype)."""
    return lib.tensor(values, dtype=lib.float64).to(x)


def reduce_np(loss, reduction):
    return {"none": loss, "mean": np.mean(loss), "sum": np.sum(loss)}[reduction]


def softplus_np(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def positive_var(rng, dtype, shapes):
    """gaussian_nll inputs: mean, target anywhere; the variance in [0.5, 2]."""
    return [rng.uniform(-2, 2, shapes[0]).astype(dtype),
            rng.uniform(-2, 2, shapes[1]).astype(dtype),
            rng.uniform(0.5, 2, shapes[2]).astype(dtype)]


def triplets(rng, dtype, shapes):
    """anchor, a positive near it, a negative: margin + d(a,p) - d(a,n) stays away from 0."""
    a = rng.uniform(-1, 1, shapes[0])
    pos = a + rng.uniform(-0.3, 0.3, shapes[1])
    neg = a + rng.choice([-1, 1], shapes[2]) * rng.uniform(0.2, 1.0, shapes[2])
    return [a.astype(dtype), pos.astype(dtype), neg.astype(dtype)]


def dist_np(a, b, p=2.0, eps=1e-6):
    return np.sum(np.abs(a - b + eps) ** p, -1) ** (1 / p)


def triplet_np(a, pos, neg, margin, p=2.0, swap=False, eps=1e-6):
    d_neg = dist_np(a, neg, p, eps)
    if swap:
        d_neg = np.minimum(d_neg, dist_np(pos, neg, p, eps))
    return np.maximum(margin + dist_np(a, pos, p, eps) - d_neg, 0)


def stirling_np(y):
    safe = np.where(y > 1, y, 1.0)
    return np.where(y > 1, safe * np.log(safe) - safe + 0.5 * np.log(2 * np.pi * safe), 0.0)


def gaussian_np(x, y, v, full=False):
    return 0.5 * (np.log(v) + (x - y) ** 2 / v) + (0.5 * np.log(2 * np.pi) if full else 0)


PAIR = ((3, 4),)
SIGNS = np.array([[1.0, -1.0, 1.0, -1.0], [-1.0, -1.0, 1.0, 1.0], [1.0, 1.0, -1.0, -1.0]])
LABELS = (SIGNS > 0).astype(np.float64)
COUNTS = np.array([[0.0, 1.0, 2.0, 5.0], [3.0, 0.0, 1.0, 7.0], [2.0, 4.0, 0.0, 1.5]])
TRIPLE = ((4, 5), (4, 5), (4, 5))
GAUSS = ((3, 4), (3, 4), (3, 4))

CASES = []
for red in ("mean", "sum", "none"):
    CASES += [
        OpCase(f"soft_margin_{red}", lambda lib, x, r=red: fn_of(lib).soft_margin_loss(
            x, const(lib, x, SIGNS), reduction=r), PAIR,
               numpy=lambda np, x, r=red: reduce_np(softplus_np(-SIGNS * x), r)),
        OpCase(f"multilabel_soft_margin_{red}",
               lambda lib, x, r=red: fn_of(lib).multilabel_soft_margin_loss(
                   x, const(lib, x, LABELS), reduction=r), PAIR,
               numpy=lambda np, x, r=red: reduce_np(
                   np.mean(softplus_np(x) - LABELS * x, -1), r)),
        OpCase(f"poisson_nll_{red}", lambda lib, x, r=red: fn_of(lib).poisson_nll_loss(
            x, const(lib, x, COUNTS), reduction=r), PAIR,
               numpy=lambda np, x, r=red: reduce_np(np.exp(x) - COUNTS * x, r)),
        OpCase(f"gaussian_nll_{red}", lambda lib, x, y, v, r=red: fn_of(lib).gaussian_nll_loss(
            x, y, v, reduction=r), GAUSS, inputs=positive_var,
               numpy=lambda np, x, y, v, r=red: reduce_np(gaussian_np(x, y, v), r)),
        OpCase(f"triplet_margin_{red}", lambda lib, a, p, n, r=red: fn_of(lib).triplet_margin_loss(
            a, p, n, margin=0.5, reduction=r), TRIPLE, inputs=triplets,
               numpy=lambda np, a, p, n, r=red: reduce_np(triplet_np(a, p, n, 0.5), r)),
    ]

CASES += [
    OpCase("multilabel_soft_margin_weight", lambda lib, x: fn_of(lib).multilabel_soft_margin_loss(
        x, const(lib, x, LABELS), weight=const(lib, x, [0.5, 1.0, 2.0, 1.5]), reduction="sum"),
           PAIR, numpy=lambda np, x: np.sum(np.mean(
               (softplus_np(x) - LABELS * x) * [0.5, 1.0, 2.0, 1.5], -1))),
    OpCase("multilabel_soft_margin_1d", lambda lib, x: fn_of(lib).multilabel_soft_margin_loss(
        x, const(lib, x, LABELS[0]), reduction="none"), ((4,),)),
    OpCase("poisson_nll_rate_full", lambda lib, x: fn_of(lib).poisson_nll_loss(
        x, const(lib, x, COUNTS), log_input=False, full=True, eps=1e-3), PAIR, domain=(0.5, 3),
           numpy=lambda np, x: np.mean(x - COUNTS * np.log(x + 1e-3) + stirling_np(COUNTS))),
    OpCase("poisson_nll_log_full_sum", lambda lib, x: fn_of(lib).poisson_nll_loss(
        x, const(lib, x, COUNTS), full=True, reduction="sum"), PAIR,
           numpy=lambda np, x: np.sum(np.exp(x) - COUNTS * x + stirling_np(COUNTS))),
    OpCase("gaussian_nll_per_sample_var_full", lambda lib, x, y, v: fn_of(lib).gaussian_nll_loss(
        x, y, v, full=True, reduction="none"), ((3, 4), (3, 4), (3,)), inputs=positive_var,
           numpy=lambda np, x, y, v: gaussian_np(x, y, v[:, None], full=True)),
    OpCase("gaussian_nll_shared_dim_var", lambda lib, x, y, v: fn_of(lib).gaussian_nll_loss(
        x, y, v, reduction="sum"), ((3, 4), (3, 4), (3, 1)), inputs=positive_var,
           numpy=lambda np, x, y, v: np.sum(gaussian_np(x, y, v))),
    OpCase("triplet_margin_p1_swap", lambda lib, a, p, n: fn_of(lib).triplet_margin_loss(
        a, p, n, margin=1.0, p=1, swap=True, reduction="sum"), TRIPLE, inputs=triplets,
           numpy=lambda np, a, p, n: np.sum(triplet_np(a, p, n, 1.0, p=1, swap=True))),
    OpCase("triplet_margin_1d", lambda lib, a, p, n: fn_of(lib).triplet_margin_loss(
        a, p, n, margin=2.0, eps=1e-3), ((5,), (5,), (5,)), inputs=triplets,
           numpy=lambda np, a, p, n: triplet_np(a, p, n, 2.0, eps=1e-3)),
]

globals().update(standard_op_tests(CASES))


# --- values the table does not reach ----------------------------------------------------------

def test_gaussian_nll_clamps_var_for_the_value_but_not_the_gradient():
    x, y = gradlab.tensor([1.0]), gradlab.tensor([0.0])
    v = gradlab.tensor([0.0], requires_grad=True)
    loss = F.gaussian_nll_loss(x, y, v, eps=0.5, reduction="sum")
    assert loss.item() == pytest.approx(0.5 * (math.log(0.5) + 1 / 0.5))
    loss.backward()
    assert v.grad.item() == pytest.approx(0.5 * (1 / 0.5 - 1 / 0.25))  # the slope at eps


def test_gaussian_nll_takes_a_float_variance():
    x, y = gradlab.tensor([[1.0, 2.0]]), gradlab.tensor([[0.0, 0.0]])
    ours = F.gaussian_nll_loss(x, y, 2.0, reduction="none").numpy()
    np.testing.assert_allclose(ours, gaussian_np(x.numpy(), y.numpy(), 2.0))


def test_deprecated_size_average_and_reduce_warn_and_map():
    x = gradlab.tensor([[0.5, -1.0]])
    with pytest.warns(UserWarning, match="poisson_nll_loss: size_average and reduce are "):
        assert tuple(F.poisson_nll_loss(x, x.abs(), reduce=False).shape) == (1, 2)
    with pytest.warns(UserWarning, match="deprecated"):
        assert nn.TripletMarginLoss(size_average=False).reduction == "sum"


@needs_torch
def test_modules_match_pytorch():
    rng = np.random.default_rng(1)
    a, p, n = (rng.uniform(-1, 1, (4, 3)) for _ in range(3))
    v = rng.uniform(0.5, 2, (4, 1))
    w = rng.uniform(0.5, 2, 3)
    settings = [
        ("SoftMarginLoss", {"reduction": "sum"}, (a, np.sign(p))),
        ("MultiLabelSoftMarginLoss", {"weight": w}, (a, (p > 0) * 1.0)),
        ("PoissonNLLLoss", {"log_input": False, "full": True, "eps": 1e-4}, (a * a, 4 * p * p)),
        ("GaussianNLLLoss", {"full": True, "eps": 1e-3, "reduction": "none"}, (a, p, v)),
        ("TripletMarginLoss", {"margin": 0.7, "p": 1.5, "swap": True}, (a, p, n)),
    ]
    for name, kwargs, arrays in settings:
        ours_kw = {k: gradlab.tensor(v) if isinstance(v, np.ndarray) else v
                   for k, v in kwargs.items()}
        theirs_kw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v
                     for k, v in kwargs.items()}
        ours = getattr(nn, name)(**ours_kw)(*(gradlab.tensor(x) for x in arrays))
        theirs = getattr(torch.nn, name)(**theirs_kw)(*(torch.tensor(x) for x in arrays))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, err_msg=name)
        assert repr(getattr(nn, name)(**ours_kw)) == repr(getattr(torch.nn, name)(**theirs_kw))


MODULES = ["SoftMarginLoss", "MultiLabelSoftMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss",
           "TripletMarginLoss"]


@pytest.mark.parametrize("name", MODULES)
def test_module_repr_is_pytorchs(name):
    assert repr(getattr(nn, name)()) == f"{name}()"
    if torch is not None:
        assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)())


def test_multilabel_weight_is_a_buffer():
    w = gradlab.tensor([1.0, 2.0])
    assert list(nn.MultiLabelSoftMarginLoss(weight=w).state_dict()) == ["weight"]
    assert list(nn.PoissonNLLLoss().state_dict()) == []


# --- errors (each also raised, with this type, by PyTorch) ------------------------------------

X, WIDE = gradlab.zeros(3, 4), gradlab.zeros(3, 5)


@pytest.mark.parametrize("call", [
    lambda: F.soft_margin_loss(X, WIDE),
    lambda: F.multilabel_soft_margin_loss(X, WIDE),
    lambda: F.poisson_nll_loss(X, WIDE),
    lambda: F.triplet_margin_loss(X, X, WIDE),
], ids=["soft_margin", "multilabel", "poisson", "triplet"])
def test_shape_mismatch(call):
    with pytest.raises(RuntimeError, match=r"_loss: .* must broadcast together, got shapes "
                                           r"\(3, 4\) and \(3, 5\)"):
        call()


def test_triplet_needs_inputs_of_one_ndim():
    with pytest.raises(RuntimeError, match=r"triplet_margin_loss: the anchor, positive, and "
                                           r"negative tensors .* \(3, 4\), \(3, 4\) and \(4,\)"):
        F.triplet_margin_loss(X, X, gradlab.zeros(4))


def test_triplet_margin_must_be_positive():
    with pytest.raises(ValueError, match="triplet_margin_loss: margin must be greater than 0, "
                                         "got 0"):
        F.triplet_margin_loss(X, X, X, margin=0)
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater than "
                                         "0, got -1.0 instead"):
        nn.TripletMarginLoss(margin=-1.0)


def test_gaussian_nll_rejects_negative_var():
    with pytest.raises(ValueError, match="gaussian_nll_loss: var has negative entry/entries; "):
        F.gaussian_nll_loss(X, X, gradlab.full((3, 4), -0.1))
    with pytest.raises(ValueError, match=r"gaussian_nll_loss: var has negative entry/entries "
                                         r"\(-1.0\)"):
        F.gaussian_nll_loss(X, X, -1.0)


@pytest.mark.parametrize("shape", [(4,), (3, 2), (1, 1), (3, 4, 1)])
def test_gaussian_nll_rejects_var_of_the_wrong_size(shape):
    with pytest.raises(ValueError, match=r"gaussian_nll_loss: var is of incorrect size "
                                         rf"\({shape[0]}, ?"):
        F.gaussian_nll_loss(X, X, gradlab.ones(shape))
    if torch is not None:  # PyTorch rejects the same shapes
        with pytest.raises(ValueError, match="var is of incorrect size"):
            torch.nn.functional.gaussian_nll_loss(torch.zeros(3, 4), torch.zeros(3, 4),
                                                  torch.ones(shape))


@pytest.mark.parametrize("loss", ["soft_margin_loss", "multilabel_soft_margin_loss",
                                  "poisson_nll_loss", "triplet_margin_loss"])
def test_bad_reduction(loss):
    args = (X, X, X) if loss == "triplet_margin_loss" else (X, X)
    with pytest.raises(ValueError, match=rf"{loss}: 'avg' is not a valid reduction"):
        getattr(F, loss)(*args, reduction="avg")


def test_gaussian_nll_bad_reduction():
    with pytest.raises(ValueError, match="gaussian_nll_loss: 'avg' is not valid"):
        F.gaussian_nll_loss(X, X, gradlab.ones(3, 4), reduction="avg")
