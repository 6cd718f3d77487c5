"""cross_entropy and nll_loss: every option against NumPy and PyTorch, gradients of two orders."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
import gradlab.nn.functional as F
from gradlab.autograd import gradcheck, gradgradcheck
from tests.oracle import OpCase, index_tensor, needs_torch, standard_op_tests, torch

W5 = [0.5, 1.0, 2.0, 1.5, 0.25]
T4 = [1, 0, 4, 2]
T4_IGNORED = [1, -100, 4, 2]
T_SPATIAL = [[[0, 4], [2, 1]], [[3, 3], [-100, 0]]]  # (2, 2, 2) for input (2, 5, 2, 2)


def np_cross_entropy(x, t, weight=None, ignore_index=-100, reduction="mean", smoothing=0.0):
    """NumPy reference: scores (N, C, d1, ...), class indices (N, d1, ...)."""
    m = x.max(axis=1, keepdims=True)
    logp = x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))
    classes = x.shape[1]
    t = np.asarray(t)
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    w = np.ones(classes) if weight is None else np.asarray(weight, dtype=float)
    picked = np.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
    w_t = w[safe] * keep
    smooth = -(logp * w.reshape((-1,) + (1,) * (x.ndim - 2))).sum(axis=1) * keep
    loss = (1 - smoothing) * (-picked * w_t) + smoothing / classes * smooth
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    with np.errstate(invalid="ignore"):
        return loss.sum() / w_t.sum()


def np_soft_cross_entropy(x, p, weight=None, reduction="mean", smoothing=0.0):
    m = x.max(axis=1, keepdims=True)
    logp = x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))
    p = p * (1 - smoothing) + smoothing / x.shape[1]
    w = 1.0 if weight is None else np.asarray(weight).reshape((-1,) + (1,) * (x.ndim - 2))
    loss = -(logp * p * w).sum(axis=1)
    return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]


def weight_like(lib, x, values=W5):
    return lib.tensor(values).to(x)  # x's dtype and device


def classes(lib, x, values):
    """Class indices on x's device (the rows run on every device)."""
    return index_tensor(lib, values).to(x.device)


def soft_targets(rng, dtype, shapes):
    """Scores, then class probabilities (each row sums to 1) of the same shape."""
    p = rng.uniform(0.05, 1, shapes[1])
    return [rng.uniform(-2, 2, shapes[0]).astype(dtype),
            (p / p.sum(axis=1 if len(shapes[1]) > 1 else 0, keepdims=True)).astype(dtype)]


CE = []
for red in ("mean", "sum", "none"):
    CE += [
        OpCase(f"ce_{red}", lambda lib, x, r=red: lib.nn.functional.cross_entropy(
            x, classes(lib, x, T4), reduction=r), ((4, 5),),
               numpy=lambda np, x, r=red: np_cross_entropy(x, T4, reduction=r)),
        OpCase(f"ce_weight_ignore_{red}", lambda lib, x, r=red: lib.nn.functional.cross_entropy(
            x, classes(lib, x, T4_IGNORED), weight=weight_like(lib, x), reduction=r), ((4, 5),),
               numpy=lambda np, x, r=red: np_cross_entropy(x, T4_IGNORED, W5, reduction=r)),
        OpCase(f"ce_smoothing_{red}", lambda lib, x, r=red: lib.nn.functional.cross_entropy(
            x, classes(lib, x, T4_IGNORED), reduction=r, label_smoothing=0.2), ((4, 5),),
               numpy=lambda np, x, r=red: np_cross_entropy(x, T4_IGNORED, reduction=r,
                                                           smoothing=0.2)),
        OpCase(f"ce_smoothing_weight_{red}",
               lambda lib, x, r=red: lib.nn.functional.cross_entropy(
                   x, classes(lib, x, T4_IGNORED), weight=weight_like(lib, x), reduction=r,
                   label_smoothing=0.3), ((4, 5),),
               numpy=lambda np, x, r=red: np_cross_entropy(x, T4_IGNORED, W5, reduction=r,
                                                           smoothing=0.3)),
        OpCase(f"ce_spatial_{red}", lambda lib, x, r=red: lib.nn.functional.cross_entropy(
            x, classes(lib, x, T_SPATIAL), weight=weight_like(lib, x), reduction=r,
            label_smoothing=0.1), ((2, 5, 2, 2),),
               numpy=lambda np, x, r=red: np_cross_entropy(x, T_SPATIAL, W5, reduction=r,
                                                           smoothing=0.1)),
        OpCase(f"ce_probabilities_{red}", lambda lib, x, p, r=red: lib.nn.functional
               .cross_entropy(x, p, reduction=r), ((4, 5), (4, 5)), inputs=soft_targets,
               numpy=lambda np, x, p, r=red: np_soft_cross_entropy(x, p, reduction=r)),
        OpCase(f"nll_{red}", lambda lib, x, r=red: lib.nn.functional.nll_loss(
            x, classes(lib, x, T4_IGNORED), weight=weight_like(lib, x), reduction=r),
               ((4, 5),), numpy=lambda np, x, r=red: _np_nll(x, T4_IGNORED, W5, r)),
    ]

CE += [
    OpCase("ce_one_sample", lambda lib, x: lib.nn.functional.cross_entropy(
        x, classes(lib, x, 3), label_smoothing=0.1), ((5,),),
           numpy=lambda np, x: np_cross_entropy(x[None], [3], smoothing=0.1)),
    OpCase("ce_one_sample_none", lambda lib, x: lib.nn.functional.cross_entropy(
        x, classes(lib, x, 3), reduction="none"), ((5,),),
           numpy=lambda np, x: np_cross_entropy(x[None], [3], reduction="none")[0]),
    OpCase("ce_one_sample_probabilities", lambda lib, x, p: lib.nn.functional.cross_entropy(
        x, p), ((5,), (5,)), inputs=soft_targets,
           numpy=lambda np, x, p: np_soft_cross_entropy(x[None], p[None])),
    OpCase("ce_probabilities_weight_smoothing", lambda lib, x, p: lib.nn.functional
           .cross_entropy(x, p, weight=weight_like(lib, x), label_smoothing=0.2),
           ((4, 5), (4, 5)), inputs=soft_targets,
           numpy=lambda np, x, p: np_soft_cross_entropy(x, p, W5, smoothing=0.2)),
    OpCase("ce_probabilities_spatial", lambda lib, x, p: lib.nn.functional.cross_entropy(
        x, p, reduction="sum"), ((2, 5, 3), (2, 5, 3)), inputs=soft_targets,
           numpy=lambda np, x, p: np_soft_cross_entropy(x, p, reduction="sum")),
    OpCase("nll_spatial", lambda lib, x: lib.nn.functional.nll_loss(
        x, classes(lib, x, T_SPATIAL)), ((2, 5, 2, 2),),
           numpy=lambda np, x: _np_nll(x, T_SPATIAL, None, "mean")),
    OpCase("nll_one_sample", lambda lib, x: lib.nn.functional.nll_loss(
        x, classes(lib, x, 2), reduction="none"), ((5,),),
           numpy=lambda np, x: -x[2]),
    OpCase("ce_ignore_index_positive", lambda lib, x: lib.nn.functional.cross_entropy(
        x, classes(lib, x, T4), ignore_index=4), ((4, 5),),
           numpy=lambda np, x: np_cross_entropy(x, T4, ignore_index=4)),
]


def _np_nll(x, t, w, reduction):
    t = np.asarray(t)
    keep = t != -100
    safe = np.where(keep, t, 0)
    w = np.ones(x.shape[1]) if w is None else np.asarray(w)
    w_t = w[safe] * keep
    loss = -np.take_along_axis(x, safe[:, None], axis=1)[:, 0] * w_t
    return {"none": loss, "sum": loss.sum(), "mean": loss.sum() / w_t.sum()}[reduction]


globals().update(standard_op_tests(CE))


# --- ignored targets, extreme logits ----------------------------------------------------------

@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_all_ignored_mean_is_nan_with_zero_gradient(smoothing):
    x = gradlab.randn(3, 4, requires_grad=True)
    t = gradlab.full((3,), -100, dtype=gradlab.int64)
    loss = F.cross_entropy(x, t, label_smoothing=smoothing)
    assert np.isnan(loss.item())
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 4), np.float32))
    assert F.cross_entropy(x, t, reduction="sum").item() == 0.0
    assert F.nll_loss(x, t, reduction="none").tolist() == [0.0, 0.0, 0.0]
    assert np.isnan(F.nll_loss(x, t).item())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_extreme_logits_stay_finite(dtype):
    x = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4], [1e4, 1e4, -1e4]], dtype)
    t = [1, 2, 0]
    xt = gradlab.tensor(x, requires_grad=True)
    loss = F.cross_entropy(xt, gradlab.tensor(t), reduction="none", label_smoothing=0.1)
    loss.sum().backward()
    assert np.all(np.isfinite(loss.detach().numpy())) and np.all(np.isfinite(xt.grad.numpy()))
    np.testing.assert_allclose(loss.detach().numpy(),
                               np_cross_entropy(x.astype(np.float64), t, reduction="none",
                                                smoothing=0.1), rtol=1e-6)


def test_gradient_is_softmax_minus_one_hot_over_n():
    x = gradlab.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], requires_grad=True)
    F.cross_entropy(x, gradlab.tensor([2, 0])).backward()
    e = np.exp([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    want = (e / e.sum(axis=1, keepdims=True) - np.eye(3)[[2, 0]]) / 2
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)


def test_create_graph_gives_the_softmax_hessian():
    x = gradlab.tensor(np.array([[0.3, -1.0, 2.0]]), requires_grad=True)
    (g,) = gradlab.autograd.grad(F.cross_entropy(x, gradlab.tensor([1])), [x],
                                 create_graph=True)
    v = gradlab.tensor(np.array([[1.0, -2.0, 0.5]]))
    (hv,) = gradlab.autograd.grad((g * v).sum(), [x])
    p = np.exp([0.3, -1.0, 2.0])
    p /= p.sum()
    hessian = np.diag(p) - np.outer(p, p)  # d²/dx² of logsumexp
    np.testing.assert_allclose(hv.numpy()[0], hessian @ [1.0, -2.0, 0.5], rtol=1e-10)


@pytest.mark.parametrize("kw", [
    {}, {"weight": W5, "label_smoothing": 0.2}, {"reduction": "sum"},
    {"reduction": "none", "label_smoothing": 0.1}])
def test_jvp_through_backward_is_the_hessian_vector_product(kw, device):
    """Forward-over-reverse: a tangent on x carried through backward(create_graph=True) gives
    H·v, by CrossEntropyBackward's own tangent rule; checked against a central difference
    of the gradient along v (and torch.func's jvp of grad where PyTorch is installed)."""
    from gradlab.autograd import forward_ad as fwAD

    rng = np.random.default_rng(4)
    x0, v = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    if "weight" in kw:
        kw = dict(kw, weight=gradlab.tensor(np.array(kw["weight"]), device=device))
    target = gradlab.tensor(T4_IGNORED, device=device)

    def gradient(x_np):
        x = gradlab.tensor(x_np, device=device, requires_grad=True)
        (g,) = gradlab.autograd.grad(F.cross_entropy(x, target, **kw).sum(), [x])
        return g.cpu().numpy()

    with fwAD.dual_level():
        x = fwAD.make_dual(gradlab.tensor(x0, device=device, requires_grad=True),
                           gradlab.tensor(v, device=device))
        (g,) = gradlab.autograd.grad(F.cross_entropy(x, target, **kw).sum(), [x],
                                     create_graph=True)
        hv = fwAD.unpack_dual(g).tangent
    assert hv is not None
    hv = hv.detach()  # part of the recorded graph: create_graph records the rules too
    eps = 1e-6
    want = (gradient(x0 + eps * v) - gradient(x0 - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hv.cpu().numpy(), want, rtol=1e-5, atol=1e-7)
    assert np.abs(want).max() > 1e-2  # a Hessian that is not zero along v
    if torch is not None:
        tkw = {k: torch.from_numpy(w.cpu().numpy()) if isinstance(w, gradlab.Tensor) else w
               for k, w in kw.items()}
        t_target = torch.tensor(T4_IGNORED)
        _, theirs = torch.func.jvp(
            torch.func.grad(lambda x: torch.nn.functional.cross_entropy(x, t_target, **tkw)
                            .sum()), (torch.from_numpy(x0),), (torch.from_numpy(v),))
        np.testing.assert_allclose(hv.cpu().numpy(), theirs.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kw", [{}, {"weight": W5, "label_smoothing": 0.2}])
def test_gradgradcheck_with_respect_to_the_output_gradient(kw):
    """reduction='none': the second-order check also covers d(grad_input)/d(grad_output)."""
    rng = np.random.default_rng(3)
    x = gradlab.tensor(rng.standard_normal((3, 5, 2)), requires_grad=True)
    t = gradlab.tensor([[0, 4], [2, -100], [1, 1]])
    if "weight" in kw:
        kw = dict(kw, weight=gradlab.tensor(np.array(kw["weight"])))
    assert gradgradcheck(lambda x: F.cross_entropy(x, t, reduction="none", **kw), [x])
    assert gradgradcheck(lambda x: F.nll_loss(x, t, reduction="none"), [x])


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 4), c=st.integers(1, 5), spatial=st.lists(st.integers(1, 3), max_size=2),
       reduction=st.sampled_from(["none", "mean", "sum"]), smoothing=st.sampled_from([0.0, 0.3]),
       seed=st.integers(0, 2**16))
def test_any_shape_matches_numpy_and_gradcheck(n, c, spatial, reduction, smoothing, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, *spatial))
    t = rng.integers(0, c, (n, *spatial))
    t[rng.uniform(size=t.shape) < 0.2] = -100
    w = rng.uniform(0.5, 2, c)
    xt = gradlab.tensor(x, requires_grad=True)
    out = F.cross_entropy(xt, gradlab.tensor(t), gradlab.tensor(w), reduction=reduction,
                          label_smoothing=smoothing)
    want = np_cross_entropy(x, t, w, reduction=reduction, smoothing=smoothing)
    assert tuple(out.shape) == np.shape(want)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-10, atol=1e-12)
    if not np.isnan(want).any():
        assert gradcheck(lambda x: F.cross_entropy(x, gradlab.tensor(t), gradlab.tensor(w),
                                                   reduction=reduction,
                                                   label_smoothing=smoothing), [xt])


@needs_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_256_matches_torch(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 10)).astype(dtype)
    t = rng.integers(0, 10, 256)
    ours = gradlab.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    a = F.cross_entropy(ours, gradlab.tensor(t))
    b = torch.nn.functional.cross_entropy(theirs, torch.tensor(t))
    a.backward()
    b.backward()
    assert a.dtype.name == str(b.dtype).replace("torch.", "")
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(a.item(), b.item(), rtol=tol)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=tol, atol=tol)


# --- errors that teach ------------------------------------------------------------------------

def test_class_out_of_range_names_class_count_and_shapes():
    x = gradlab.zeros(4, 5)
    with pytest.raises(IndexError, match=r"cross_entropy: target has class 7 but input has 5 "
                                         r"classes \(input \(4, 5\), target \(4,\)\)"):
        F.cross_entropy(x, gradlab.tensor([1, 2, 3, 7]))
    with pytest.raises(IndexError, match=r"nll_loss: target has class -1 .*ignore_index=-100"):
        F.nll_loss(x, gradlab.tensor([1, 2, 3, -1]))


def test_target_dtype_and_shape_errors():
    x = gradlab.zeros(4, 5)
    with pytest.raises(TypeError, match=r"cross_entropy: target must hold class indices as "
                                        r"int64, got gradlab.int32.*target.long\(\)"):
        F.cross_entropy(x, gradlab.tensor([1, 2, 3, 4], dtype=gradlab.int32))
    with pytest.raises(ValueError, match=r"cross_entropy: target shape \(3,\) doesn't match "
                                         r"input \(4, 5\).*\(4,\)"):
        F.cross_entropy(x, gradlab.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match=r"cross_entropy: a float target is read as class "
                                         r"probabilities .*\(4, 5\), got \(4, 4\)"):
        F.cross_entropy(x, gradlab.zeros(4, 4))
    with pytest.raises(ValueError, match=r"nll_loss: target shape \(2, 3\) doesn't match input "
                                         r"\(2, 3, 4\).*\(2, 4\)"):
        F.nll_loss(gradlab.zeros(2, 3, 4), gradlab.zeros(2, 3, dtype=gradlab.int64))


def test_input_weight_reduction_and_smoothing_errors():
    t = gradlab.tensor([0, 1])
    with pytest.raises(TypeError, match=r"cross_entropy: expected floating point scores"):
        F.cross_entropy(gradlab.zeros(2, 3, dtype=gradlab.int64), t)
    with pytest.raises(ValueError, match=r"cross_entropy: input needs a class dim"):
        F.cross_entropy(gradlab.zeros(()), gradlab.tensor(0))
    with pytest.raises(ValueError, match=r"cross_entropy: weight must have one entry per class, "
                                         r"shape \(3,\), got \(2,\)"):
        F.cross_entropy(gradlab.zeros(2, 3), t, weight=gradlab.ones(2))
    with pytest.raises(ValueError, match=r"cross_entropy: 'avg' is not a valid reduction"):
        F.cross_entropy(gradlab.zeros(2, 3), t, reduction="avg")
    with pytest.raises(ValueError, match=r"label_smoothing must be in \[0, 1\]"):
        F.cross_entropy(gradlab.zeros(2, 3), t, label_smoothing=1.5)
    with pytest.raises(ValueError, match=r"ignore_index is not supported for class-probability"):
        F.cross_entropy(gradlab.zeros(2, 3), gradlab.zeros(2, 3), ignore_index=1)


@pytest.mark.parametrize("loss_fn", [F.cross_entropy, lambda x, t: F.nll_loss(x.log_softmax(1), t)])
def test_the_target_is_an_input_of_the_loss_op_in_events(loss_fn):
    """Graph images and the debugger show the targets, so the op's event must carry them."""
    from gradlab import events

    x = gradlab.randn(4, 3, requires_grad=True)
    target = gradlab.tensor([0, 2, 1, 2])
    seen = []
    with events.subscribe(lambda e: seen.append(e) if isinstance(e, events.OpForward) else None):
        loss_fn(x, target)
    loss_event = seen[-1]
    assert loss_event.op in ("cross_entropy", "nll_loss")
    assert [ref.tensor for ref in loss_event.inputs][-1] is target
