"""ctc_loss and nn.CTCLoss: forward vs a brute-force sum over every alignment, gradcheck,
values and gradients vs PyTorch (float64, float32, non-contiguous, NaN/inf output
gradients); impossible alignments, zero_infinity, lengths shorter than T, target length 0,
blank in the middle, repeated labels; forward mode; the missing double backward; errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
import gradlab.nn as nn
import gradlab.nn.functional as F
from tests.oracle import OpCase, check_module_against_torch, needs_torch, standard_op_tests, torch

# --- the reference: enumerate every path of every sample --------------------------------------


def log_softmax_np(x):
    s = x - x.max(-1, keepdims=True)
    return s - np.log(np.exp(s).sum(-1, keepdims=True))


def collapse(path, blank):
    """A path's labelling: repeats merged, then blanks dropped."""
    merged = [c for i, c in enumerate(path) if i == 0 or c != path[i - 1]]
    return tuple(c for c in merged if c != blank)


def ctc_bruteforce(x, targets, il, tl, blank=0, reduction="mean", zero_infinity=False):
    """-log Σ over all C^T paths that collapse to the target: exponential, but obviously right."""
    lp = log_softmax_np(x)
    if lp.ndim == 2:
        lp = lp[:, None]
    classes = lp.shape[2]
    flat = np.asarray(targets).reshape(-1)
    losses, offset = [], 0
    for n, (steps, length) in enumerate(zip(il, tl)):
        if np.ndim(targets) == 2:
            want = tuple(np.asarray(targets)[n, :length])
        elif len(il) == 1 and np.ndim(targets) == 1 and lp.shape[1] == 1:
            want = tuple(flat[:length])
        else:
            want = tuple(flat[offset:offset + length])
        offset += length
        total = sum(math.exp(sum(lp[t, n, c] for t, c in enumerate(path)))
                    for path in itertools.product(range(classes), repeat=steps)
                    if collapse(path, blank) == want)
        loss = -math.log(total) if total > 0 else math.inf
        losses.append(0.0 if zero_infinity and math.isinf(loss) else loss)
    losses = np.array(losses)
    if reduction == "sum":
        return losses.sum()
    if reduction == "mean":
        return np.mean(losses / np.maximum(np.asarray(tl), 1))
    return losses


# --- the table: log_softmax in front, as CTC's inputs are log-probabilities ---------------------

SHAPE = ((5, 3, 4),)  # T, N, C
PADDED = np.array([[1, 2, 2], [3, 3, 0], [1, 0, 0]])  # repeats; padding may be anything
IL, TL = [5, 4, 3], [3, 2, 1]
CONCAT = np.array([1, 2, 2, 3, 3, 1])
MIDDLE = np.array([[1, 3, 3], [0, 1, 0], [3, 0, 0]])  # blank=2: labels on both sides of it
EMPTY_TARGET_TL = [0, 2, 1]
IMPOSSIBLE = np.array([[1, 2, 2], [1, 1, 1], [3, 0, 0]])  # 1,1,1 needs 5 frames, gets 4
UNBATCHED = np.array([1, 3, 1])


def ctc(lib, x, targets, il, tl, **kw):
    return lib.nn.functional.ctc_loss(x.log_softmax(-1), lib.tensor(targets), il, tl, **kw)


def row(name, fn, numpy, shapes=SHAPE):
    # gradgrad: ctc_loss's backward has no derivative (as in PyTorch); jvp: PyTorch has no
    # forward mode for ctc_loss to compare with (test_forward_mode_* checks gradlab's)
    return OpCase(name, fn, shapes, numpy=numpy, gradgrad=False, jvp=False, atol=1e-6)


CASES = [row(f"padded_{r}", lambda lib, x, r=r: ctc(lib, x, PADDED, IL, TL, reduction=r),
             lambda np, x, r=r: ctc_bruteforce(x, PADDED, IL, TL, reduction=r))
         for r in ("mean", "sum", "none")]
CASES += [
    row("concatenated", lambda lib, x: ctc(lib, x, CONCAT, IL, TL, reduction="none"),
        lambda np, x: ctc_bruteforce(x, CONCAT, IL, TL, reduction="none")),
    row("blank_in_the_middle", lambda lib, x: ctc(lib, x, MIDDLE, [5, 5, 2], [3, 3, 1],
                                                  blank=2, reduction="sum"),
        lambda np, x: ctc_bruteforce(x, MIDDLE, [5, 5, 2], [3, 3, 1], blank=2, reduction="sum")),
    row("target_length_0", lambda lib, x: ctc(lib, x, PADDED, IL, EMPTY_TARGET_TL),
        lambda np, x: ctc_bruteforce(x, PADDED, IL, EMPTY_TARGET_TL)),
    row("lengths_as_tensors", lambda lib, x: ctc(
        lib, x, PADDED, lib.tensor(IL), lib.tensor(TL, dtype=lib.int32), reduction="none"),
        lambda np, x: ctc_bruteforce(x, PADDED, IL, TL, reduction="none")),
    row("zero_infinity", lambda lib, x: ctc(lib, x, IMPOSSIBLE, IL, [3, 3, 1],
                                            zero_infinity=True),
        lambda np, x: ctc_bruteforce(x, IMPOSSIBLE, IL, [3, 3, 1], zero_infinity=True)),
    row("unbatched_none", lambda lib, x: ctc(lib, x, UNBATCHED, lib.tensor(5), lib.tensor(3),
                                             reduction="none"),
        lambda np, x: ctc_bruteforce(x, UNBATCHED, [5], [3], reduction="none")[0], ((5, 4),)),
    row("unbatched_mean", lambda lib, x: ctc(lib, x, UNBATCHED, (4,), (3,)),
        lambda np, x: ctc_bruteforce(x, UNBATCHED, [4], [3]), ((5, 4),)),
]

globals().update(standard_op_tests(CASES))


# --- what the table does not reach ------------------------------------------------------------

def torch_pair(x, targets, il, tl, **kw):
    """gradlab's and PyTorch's loss (reduction 'none') and gradient w.r.t. the log-probs
    themselves (a leaf, so PyTorch's exp(lp) - γ form is compared directly)."""
    lp = log_softmax_np(x)
    ours_lp = gradlab.tensor(lp, requires_grad=True)
    theirs_lp = torch.tensor(lp, requires_grad=True)
    ours = F.ctc_loss(ours_lp, gradlab.tensor(targets), il, tl, reduction="none", **kw)
    theirs = torch.nn.functional.ctc_loss(theirs_lp, torch.tensor(targets), il, tl,
                                          reduction="none", **kw)
    ours.sum().backward()
    theirs.sum().backward()
    return ours.detach().numpy(), theirs.detach().numpy(), ours_lp.grad.numpy(), \
        theirs_lp.grad.numpy()


@needs_torch
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignment_is_inf_and_zero_infinity_zeroes_it(zero_infinity):
    x = np.random.default_rng(3).standard_normal((5, 3, 4))
    ours, theirs, g_ours, g_theirs = torch_pair(x, IMPOSSIBLE, IL, [3, 3, 1],
                                                zero_infinity=zero_infinity)
    np.testing.assert_array_equal(ours[1], 0.0 if zero_infinity else math.inf)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-10, atol=1e-12)  # NaN where theirs is
    if zero_infinity:
        assert not g_ours[:, 1].any()  # the impossible sample's gradient is exactly 0
    else:
        assert np.isnan(g_ours[:4, 1]).all() and not g_ours[4:, 1].any()  # frames past il: 0


@needs_torch
def test_input_length_zero_and_gradient_leaf_form_match_pytorch():
    x = np.random.default_rng(4).standard_normal((5, 3, 4))
    ours, theirs, g_ours, g_theirs = torch_pair(x, PADDED, [0, 4, 0], [0, 2, 1])
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    assert ours[0] == 0 and ours[2] == math.inf  # nothing from nothing; a label from nothing
    np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-10, atol=1e-12)
    # PyTorch's gradient is exp(lp) - γ: it sums to 0 over the classes in each frame
    np.testing.assert_allclose(g_ours[:4, 1].sum(-1), 0, atol=1e-12)


@needs_torch
@settings(max_examples=25, deadline=None)
@given(st.data())
def test_random_batches_match_pytorch(data):
    steps = data.draw(st.integers(1, 7), label="T")
    n = data.draw(st.integers(1, 3), label="N")
    classes = data.draw(st.integers(2, 5), label="C")
    blank = data.draw(st.integers(0, classes - 1), label="blank")
    il = data.draw(st.lists(st.integers(0, steps), min_size=n, max_size=n), label="il")
    tl = data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n), label="tl")
    labels = [c for c in range(classes) if c != blank]
    targets = np.array(data.draw(st.lists(st.sampled_from(labels), min_size=n * 4,
                                          max_size=n * 4), label="targets")).reshape(n, 4)
    if data.draw(st.booleans(), label="concatenated"):
        targets = np.concatenate([targets[i, :tl[i]] for i in range(n)]).astype(np.int64)
    x = np.random.default_rng(steps * 100 + n).standard_normal((steps, n, classes))
    zero_inf = data.draw(st.booleans(), label="zero_infinity")
    ours, theirs, g_ours, g_theirs = torch_pair(x, targets, il, tl, blank=blank,
                                                zero_infinity=zero_inf)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-9, atol=1e-12)


def test_lengths_as_tuples_lists_and_tensors_agree():
    x = gradlab.tensor(log_softmax_np(np.random.default_rng(5).standard_normal((5, 3, 4))))
    t = gradlab.tensor(PADDED)
    results = [F.ctc_loss(x, t, il, tl, reduction="none").numpy() for il, tl in
               [(tuple(IL), tuple(TL)), (IL, TL), (gradlab.tensor(IL), gradlab.tensor(TL)),
                (np.array(IL), np.array(TL))]]
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
    assert F.ctc_loss(x, t, IL, TL).item() == pytest.approx(
        np.mean(results[0] / np.array(TL)), rel=1e-12)
    # torch.ctc_loss's form: blank and reduction positional, the reduction as 0/1/2
    assert gradlab.ctc_loss(x, t, IL, TL, 0, 2).item() == pytest.approx(results[0].sum(),
                                                                        rel=1e-12)


def test_forward_mode_matches_finite_differences():
    from gradlab.autograd import forward_ad as fwAD

    rng = np.random.default_rng(6)
    x, v = rng.standard_normal((5, 3, 4)), rng.standard_normal((5, 3, 4))

    def loss(a, reduction):
        return ctc(gradlab, a, PADDED, IL, TL, reduction=reduction)

    for reduction in ("mean", "sum", "none"):
        with fwAD.dual_level():
            dual = fwAD.make_dual(gradlab.tensor(x), gradlab.tensor(v))
            tangent = fwAD.unpack_dual(loss(dual, reduction)).tangent.numpy()
        eps = 1e-6
        want = (loss(gradlab.tensor(x + eps * v), reduction).numpy()
                - loss(gradlab.tensor(x - eps * v), reduction).numpy()) / (2 * eps)
        np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-8)
        assert np.abs(want).max() > 1e-3  # not vacuous


def test_is_one_node_and_double_backward_raises_like_pytorch():
    x = gradlab.tensor(log_softmax_np(np.random.default_rng(7).standard_normal((5, 3, 4))),
                       requires_grad=True)
    loss = F.ctc_loss(x, gradlab.tensor(PADDED), IL, TL)
    assert type(loss.grad_fn).__name__ == "CtcLossBackward0"
    if torch is not None:
        xt = torch.zeros(5, 3, 4, requires_grad=True).log_softmax(2)
        lt = torch.nn.functional.ctc_loss(xt, torch.tensor(PADDED), IL, TL, reduction="none")
        assert type(lt.grad_fn).__name__ == "CtcLossBackward0"  # (PyTorch reduces outside)
    (g,) = gradlab.autograd.grad(loss, x, create_graph=True)
    with pytest.raises(RuntimeError, match=r"ctc_loss: the gradient of ctc_loss can't be "
                                           r"differentiated again.*Fix:"):
        g.sum().backward()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_floats_are_computed_in_float32(dtype):
    lp = log_softmax_np(np.random.default_rng(8).standard_normal((5, 3, 4)))
    half = gradlab.tensor(lp, dtype=getattr(gradlab, dtype), requires_grad=True)
    loss = F.ctc_loss(half, gradlab.tensor(PADDED), IL, TL, reduction="sum")
    loss.backward()
    want = ctc_bruteforce(half.detach().float().numpy().astype(np.float64), PADDED, IL, TL,
                          reduction="sum")
    assert loss.dtype is half.dtype and half.grad.dtype is half.dtype
    assert float(loss) == pytest.approx(want, rel=1e-2)


# --- the module -------------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("kwargs", [{}, {"blank": 2, "reduction": "sum"},
                                    {"zero_infinity": True, "reduction": "none"}])
def test_module_matches_pytorch(kwargs):
    targets = MIDDLE if kwargs.get("blank") else IMPOSSIBLE
    tl = [3, 3, 1]
    ours, theirs = nn.CTCLoss(**kwargs), torch.nn.CTCLoss(**kwargs)
    x = np.random.default_rng(9).standard_normal((5, 3, 4))
    check_module_against_torch(
        lambda a: ours(a.log_softmax(2), gradlab.tensor(targets), IL, tl),
        lambda a: theirs(a.log_softmax(2), torch.tensor(targets), IL, tl), [x])
    assert repr(ours) == repr(theirs) == "CTCLoss()"
    assert (ours.blank, ours.reduction, ours.zero_infinity) == \
        (theirs.blank, theirs.reduction, theirs.zero_infinity)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == []


# --- errors -----------------------------------------------------------------------------------

LP = gradlab.zeros(5, 2, 4)
T2 = gradlab.tensor([[1, 2, 2], [3, 1, 0]])


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.ctc_loss(LP, T2, [6, 4], [3, 2]), RuntimeError,
     r"ctc_loss: input_lengths must be at most T=5 .*got 6"),
    (lambda: F.ctc_loss(LP, T2, [5, 4], [4, 2]), RuntimeError,
     r"ctc_loss: padded targets must be \(N, S\) with N=2 and S >= max\(target_lengths\)=4"),
    (lambda: F.ctc_loss(LP, T2, [5, 4, 3], [3, 2]), RuntimeError,
     r"ctc_loss: input_lengths must be of size batch_size: one length per sample, N=2"),
    (lambda: F.ctc_loss(LP, T2, [5, 4], [3]), RuntimeError,
     r"ctc_loss: target_lengths must be of size batch_size"),
    (lambda: F.ctc_loss(LP, T2, [-1, 4], [3, 2]), RuntimeError,
     r"ctc_loss: input_lengths must be >= 0, got -1"),
    (lambda: F.ctc_loss(LP, gradlab.tensor([1, 2, 2, 3]), [5, 4], [3, 2]), RuntimeError,
     r"concatenated 1-D targets must hold sum\(target_lengths\)=5 labels, got 4"),
    (lambda: F.ctc_loss(LP, T2[None], [5, 4], [3, 2]), RuntimeError,
     r"targets must be padded \(N, S\) or concatenated"),
    (lambda: F.ctc_loss(LP[None], T2, [5, 4], [3, 2]), RuntimeError,
     r"log_probs must be \(T, N, C\), or \(T, C\).*transpose\(0, 1\)"),
    (lambda: F.ctc_loss(LP[:, 0], T2, [5], [3]), RuntimeError,
     r"for unbatched log_probs \(5, 4\), targets must be 1-D"),
    (lambda: F.ctc_loss(LP, T2, gradlab.tensor([5.0, 4.0]), [3, 2]), RuntimeError,
     r"input_lengths must be integral, got gradlab.float32"),
    (lambda: F.ctc_loss(LP, T2, [5.5, 4], [3, 2]), RuntimeError,
     r"input_lengths must hold ints"),
    (lambda: F.ctc_loss(LP, T2, [5, 4], [3, 2], blank=4), RuntimeError,
     r"blank must be in label range \[0, 3\].*got blank=4"),
    (lambda: F.ctc_loss(LP, gradlab.tensor([[1, 7, 2], [3, 1, 0]]), [5, 4], [3, 2]),
     IndexError, r"targets hold class 7, but log_probs has C=4 classes"),
    (lambda: F.ctc_loss(LP, gradlab.tensor([[1, 0, 2], [3, 1, 0]]), [5, 4], [3, 2]),
     ValueError, r"targets contain the blank class 0.*blank=<a class no target uses>"),
    (lambda: F.ctc_loss(LP.long(), T2, [5, 4], [3, 2]), TypeError,
     r"log_probs must be a floating point tensor.*log_softmax"),
    (lambda: F.ctc_loss(LP, [[1, 2, 2], [3, 1, 0]], [5, 4], [3, 2]), TypeError,
     r"targets must be a tensor of class indices \(int64\), got list"),
    (lambda: F.ctc_loss(LP, T2, [5, 4], [3, 2], reduction="avg"), ValueError,
     r"ctc_loss: 'avg' is not a valid reduction"),
])
def test_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_padding_past_a_target_length_may_hold_anything():
    x = gradlab.tensor(log_softmax_np(np.random.default_rng(10).standard_normal((5, 2, 4))))
    a = F.ctc_loss(x, gradlab.tensor([[1, 2, 2], [3, 1, 0]]), [5, 4], [3, 2], reduction="none")
    b = F.ctc_loss(x, gradlab.tensor([[1, 2, 2], [3, 1, 99]]), [5, 4], [3, 2], reduction="none")
    np.testing.assert_array_equal(a.numpy(), b.numpy())
