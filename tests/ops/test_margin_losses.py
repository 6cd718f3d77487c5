"""multilabel_margin_loss and triplet_margin_with_distance_loss (and nn.MultiLabelMarginLoss,
nn.TripletMarginWithDistanceLoss): vs NumPy, gradcheck, PyTorch; the hinge's slope at 0;
reprs; the errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
import gradlab.nn as nn
import gradlab.nn.functional as F
from tests.oracle import OpCase, check_module_against_torch, needs_torch, standard_op_tests, torch


def reduce_np(loss, reduction):
    return {"none": loss, "mean": np.mean(loss), "sum": np.sum(loss)}[reduction]


# --- multilabel_margin_loss -------------------------------------------------------------------

def multilabel_np(x, y):
    """The definition, loop by loop: targets up to the first -1 against every other class."""
    x2, y2 = np.atleast_2d(x), np.atleast_2d(y)
    losses = []
    for xs, ys in zip(x2, y2):
        targets = []
        for c in ys:
            if c < 0:
                break
            targets.append(int(c))
        others = [i for i in range(len(xs)) if i not in targets]
        losses.append(sum(max(0.0, 1 - (xs[j] - xs[i])) for j in targets for i in others)
                      / len(xs))
    return np.array(losses) if np.ndim(x) == 2 else np.array(losses[0])


# a -1 ends each list; after it anything in range; a class listed twice counts twice; a
# list that names every class leaves nothing to beat
LISTS = np.array([[3, 0, -1, 1], [1, 1, 2, -1], [2, 0, 3, 1], [-1, 2, 2, 2]])


def multilabel(lib, x, targets, **kw):
    return lib.nn.functional.multilabel_margin_loss(x, lib.tensor(targets).to(x.device), **kw)


# jvp: PyTorch has no forward mode for multilabel_margin_loss (test_forward_mode_* below)
ML_CASES = [OpCase(f"multilabel_{r}", lambda lib, x, r=r: multilabel(lib, x, LISTS, reduction=r),
                   ((4, 4),), numpy=lambda np, x, r=r: reduce_np(multilabel_np(x, LISTS), r),
                   jvp=False) for r in ("mean", "sum", "none")]
ML_CASES += [
    OpCase("multilabel_1d", lambda lib, x: multilabel(lib, x, LISTS[1]), ((4,),),
           numpy=lambda np, x: multilabel_np(x, LISTS[1]), jvp=False),
    OpCase("multilabel_1d_none", lambda lib, x: multilabel(lib, x, LISTS[0], reduction="none"),
           ((4,),), numpy=lambda np, x: multilabel_np(x, LISTS[0]), jvp=False),
]

# --- triplet_margin_with_distance_loss --------------------------------------------------------


def triplets(rng, dtype, shapes):
    """anchor, a positive near it, a negative: margin + d(a,p) - d(a,n) stays away from 0."""
    a = rng.uniform(-1, 1, shapes[0])
    pos = a + rng.uniform(-0.3, 0.3, shapes[1])
    neg = a + rng.choice([-1, 1], shapes[2]) * rng.uniform(0.2, 1.0, shapes[2])
    return [a.astype(dtype), pos.astype(dtype), neg.astype(dtype)]


def l2_np(a, b):
    return np.sqrt(np.sum((a - b + 1e-6) ** 2, -1))


def cosine_np(a, b):
    return 1 - np.sum(a * b, -1) / np.maximum(np.linalg.norm(a, axis=-1) *
                                              np.linalg.norm(b, axis=-1), 1e-8)


def triplet_np(a, p, n, distance=l2_np, margin=1.0, swap=False):
    d_neg = distance(a, n)
    if swap:
        d_neg = np.minimum(d_neg, distance(p, n))
    return np.maximum(margin + distance(a, p) - d_neg, 0)


def cosine_distance(lib):
    return lambda a, b: 1 - lib.nn.functional.cosine_similarity(a, b)


def twd(lib, a, p, n, **kw):
    return lib.nn.functional.triplet_margin_with_distance_loss(a, p, n, **kw)


TRIPLE = ((4, 5), (4, 5), (4, 5))
TW_CASES = [OpCase(f"triplet_distance_{r}", lambda lib, a, p, n, r=r: twd(lib, a, p, n,
                                                                          reduction=r),
                   TRIPLE, inputs=triplets,
                   numpy=lambda np, a, p, n, r=r: reduce_np(triplet_np(a, p, n), r))
            for r in ("mean", "sum", "none")]
TW_CASES += [
    OpCase("triplet_distance_cosine_swap", lambda lib, a, p, n: twd(
        lib, a, p, n, distance_function=cosine_distance(lib), margin=0.5, swap=True,
        reduction="sum"), TRIPLE, inputs=triplets,
           numpy=lambda np, a, p, n: np.sum(triplet_np(a, p, n, cosine_np, 0.5, swap=True))),
    OpCase("triplet_distance_l1_lambda", lambda lib, a, p, n: twd(
        lib, a, p, n, distance_function=lambda u, v: (u - v).abs().sum(-1), margin=2.0),
           TRIPLE, inputs=triplets, numpy=lambda np, a, p, n: np.mean(triplet_np(
               a, p, n, lambda u, v: np.abs(u - v).sum(-1), 2.0))),
    OpCase("triplet_distance_1d", lambda lib, a, p, n: twd(lib, a, p, n, swap=True),
           ((5,), (5,), (5,)), inputs=triplets,
           numpy=lambda np, a, p, n: triplet_np(a, p, n, swap=True)),
]

globals().update(standard_op_tests(ML_CASES, prefix="multilabel_"))
globals().update(standard_op_tests(TW_CASES, prefix="triplet_distance_"))


# --- multilabel: what the table does not reach ------------------------------------------------

@needs_torch
@settings(max_examples=30, deadline=None)
@given(st.data())
def test_multilabel_random_lists_match_pytorch(data):
    n = data.draw(st.integers(0, 4), label="N")
    classes = data.draw(st.integers(1, 6), label="C")
    y = np.array(data.draw(st.lists(st.integers(-1, classes - 1), min_size=n * classes,
                                    max_size=n * classes)), dtype=np.int64).reshape(n, classes)
    x = np.round(np.random.default_rng(n * 10 + classes).uniform(-2, 2, (n, classes)), 1)
    reduction = data.draw(st.sampled_from(["mean", "sum", "none"]))
    xg, xt = gradlab.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours = F.multilabel_margin_loss(xg, gradlab.tensor(y), reduction=reduction)
    theirs = torch.nn.functional.multilabel_margin_loss(xt, torch.tensor(y), reduction=reduction)
    if n == 0 and reduction != "none":
        # PyTorch 2.13 returns uninitialized memory here (a different number on each call);
        # gradlab's is the sum over no samples, 0, for 'mean' too
        assert ours.item() == 0.0
        return
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    assert ours.shape == tuple(theirs.shape)
    if x.size:
        ours.sum().backward()
        theirs.sum().backward()
        # rounded scores make ties (z exactly 0) common: the slope there is 0, as PyTorch's
        np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_multilabel_hinge_at_exactly_zero_has_slope_zero():
    x = gradlab.tensor([[0.0, 1.0]], requires_grad=True)  # 1 - (x[1] - x[0]) = 0
    loss = F.multilabel_margin_loss(x, gradlab.tensor([[1, -1]]))
    loss.backward()
    assert loss.item() == 0.0 and x.grad.tolist() == [[0.0, 0.0]]


def test_multilabel_empty_batch_mean_is_zero_like_pytorch():
    x = gradlab.zeros(0, 3)
    y = gradlab.zeros(0, 3, dtype=gradlab.int64)
    assert F.multilabel_margin_loss(x, y).item() == 0.0
    assert F.multilabel_margin_loss(x, y, reduction="none").shape == (0,)


@pytest.mark.parametrize("case", ML_CASES, ids=lambda c: c.name)
def test_multilabel_forward_mode_matches_finite_differences(case):
    from gradlab.autograd import forward_ad as fwAD
    from tests.oracle import make_arrays

    rng = np.random.default_rng(2)
    arrays = make_arrays(case, case.shapes, rng=rng)
    tangents = [rng.standard_normal(a.shape) for a in arrays]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(gradlab.tensor(a), gradlab.tensor(t))
                 for a, t in zip(arrays, tangents)]
        got = fwAD.unpack_dual(case.fn(gradlab, *duals)).tangent.numpy()
    eps = 1e-6
    plus, minus = (case.fn(gradlab, *[gradlab.tensor(a + s * t) for a, t in
                                      zip(arrays, tangents)]).numpy() for s in (eps, -eps))
    want = (plus - minus) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    assert np.abs(want).max() > 1e-3  # not vacuous


# --- modules ----------------------------------------------------------------------------------

@needs_torch
def test_modules_match_pytorch():
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, (4, 4))
    for kwargs in ({}, {"reduction": "sum"}, {"reduction": "none"}):
        check_module_against_torch(
            lambda a, kw=kwargs: nn.MultiLabelMarginLoss(**kw)(a, gradlab.tensor(LISTS)),
            lambda a, kw=kwargs: torch.nn.MultiLabelMarginLoss(**kw)(a, torch.tensor(LISTS)),
            [x])
    a, p, n = triplets(rng, np.float64, TRIPLE)
    for lib_kwargs in (lambda lib: {}, lambda lib: {"margin": 0.3, "swap": True},
                       lambda lib: {"distance_function": lib.nn.PairwiseDistance(p=1.0),
                                    "reduction": "none"}):
        ours = nn.TripletMarginWithDistanceLoss(**lib_kwargs(gradlab))
        theirs = torch.nn.TripletMarginWithDistanceLoss(**lib_kwargs(torch))
        check_module_against_torch(ours, theirs, [a, p, n])
        assert repr(ours) == repr(theirs)
        assert (ours.margin, ours.swap, ours.reduction) == \
            (theirs.margin, theirs.swap, theirs.reduction)
        assert list(ours.state_dict()) == list(theirs.state_dict()) == []


def test_module_reprs_and_defaults():
    assert repr(nn.MultiLabelMarginLoss()) == "MultiLabelMarginLoss()"
    loss = nn.TripletMarginWithDistanceLoss()
    assert repr(loss) == ("TripletMarginWithDistanceLoss(\n  (distance_function): "
                          "PairwiseDistance()\n)")
    assert (loss.margin, loss.swap, loss.reduction) == (1.0, False, "mean")
    with pytest.warns(UserWarning, match="deprecated"):
        assert nn.MultiLabelMarginLoss(reduce=False).reduction == "none"


# --- errors -----------------------------------------------------------------------------------

X, Y = gradlab.zeros(2, 4), gradlab.tensor([[1, -1, 0, 0], [2, 3, -1, 0]])
A = gradlab.zeros(3, 5)


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.multilabel_margin_loss(X, Y[:, :3]), ValueError,
     r"multilabel_margin_loss: target shape \(2, 3\) doesn't match input \(2, 4\)"),
    (lambda: F.multilabel_margin_loss(X, gradlab.tensor([[4, -1, 0, 0], [0, 0, 0, 0]])),
     IndexError, r"target holds 4, out of range: each entry is a class in \[0, 3\], or -1"),
    (lambda: F.multilabel_margin_loss(X, gradlab.tensor([[0, -1, -2, 0], [0, 0, 0, 0]])),
     IndexError, r"target holds -2, out of range"),
    (lambda: F.multilabel_margin_loss(X, Y.int()), TypeError,
     r"target must hold class indices as int64.*got gradlab.int32.*target.long\(\)"),
    (lambda: F.multilabel_margin_loss(X[None], Y[None]), ValueError,
     r"input must be non-empty \(C,\) or \(N, C\) scores, got shape \(1, 2, 4\)"),
    (lambda: F.multilabel_margin_loss(Y, Y), TypeError, r"expected floating point scores"),
    (lambda: F.triplet_margin_with_distance_loss(A, A, A, margin=0.0), ValueError,
     r"triplet_margin_with_distance_loss: margin must be greater than 0, got 0.0"),
    (lambda: F.triplet_margin_with_distance_loss(A, A, A[0]), RuntimeError,
     r"same number of dimensions, but got: anchor 2D, positive 2D, and negative 1D inputs"),
    (lambda: F.triplet_margin_with_distance_loss(A, A, A, distance_function="l2"), TypeError,
     r"distance_function must be a function of two tensors .*got str"),
    (lambda: F.triplet_margin_with_distance_loss(A, A, A, reduction="max"), ValueError,
     r"'max' is not a valid reduction"),
    (lambda: nn.TripletMarginWithDistanceLoss(margin=-1), ValueError,
     r"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got -1 instead"),
])
def test_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()
