"""batch_norm, layer_norm, group_norm: the ops (oracle table, running statistics, errors)
and the modules (BatchNorm1d/2d, LayerNorm, GroupNorm)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch

# --- NumPy references -------------------------------------------------------------------------


def np_standardize(x, axes, eps=1e-5):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def channel(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def np_batch_norm_train(x, w=None, b=None):
    y = np_standardize(x, (0,) + tuple(range(2, x.ndim)))
    if w is not None:
        y = y * channel(w, x.ndim)
    if b is not None:
        y = y + channel(b, x.ndim)
    return y


def np_batch_norm_eval(x, w, b, rm, rv):
    y = (x - channel(rm, x.ndim)) / np.sqrt(channel(rv, x.ndim) + 1e-5)
    return y * channel(w, x.ndim) + channel(b, x.ndim)


def np_group_norm(x, groups, w=None, b=None):
    y = np_standardize(x.reshape(x.shape[0], groups, -1), (2,)).reshape(x.shape)
    if w is not None:
        y = y * channel(w, x.ndim) + channel(b, x.ndim)
    return y


def with_running_stats(rng, dtype, shapes):
    """x, weight, bias, running_mean, running_var (> 0)."""
    x, w, b, rm, rv = shapes
    return [rng.standard_normal(x).astype(dtype), rng.standard_normal(w).astype(dtype),
            rng.standard_normal(b).astype(dtype), rng.standard_normal(rm).astype(dtype),
            rng.uniform(0.5, 2.0, rv).astype(dtype)]


def normal(rng, dtype, shapes):
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def F(lib):
    return lib.nn.functional


BN_SHAPES = ((4, 3), (3,), (3,))
BN_VARIANTS = (((3, 3, 4), (3,), (3,)), ((2, 3, 2, 3), (3,), (3,)))

CASES = [
    OpCase("batch_norm_train",
           lambda lib, x, w, b: F(lib).batch_norm(x, None, None, w, b, training=True),
           BN_SHAPES, numpy=lambda np, x, w, b: np_batch_norm_train(x, w, b), inputs=normal,
           variants=BN_VARIANTS),
    OpCase("batch_norm_train_no_affine",
           lambda lib, x: F(lib).batch_norm(x, None, None, training=True, eps=1e-3),
           ((5, 2, 3),),
           numpy=lambda np, x: np_standardize(x, (0,) + tuple(range(2, x.ndim)), eps=1e-3),
           inputs=normal, variants=(((6, 2),),)),
    OpCase("batch_norm_train_with_stats",
           lambda lib, x, w, b, rm, rv: F(lib).batch_norm(x, rm.clone(), rv.clone(), w, b,
                                                          training=True, momentum=0.3),
           ((4, 3, 2), (3,), (3,), (3,), (3,)),
           numpy=lambda np, x, w, b, rm, rv: np_batch_norm_train(x, w, b),
           inputs=with_running_stats, grad_inputs=(0, 1, 2)),
    OpCase("batch_norm_eval",
           lambda lib, x, w, b, rm, rv: F(lib).batch_norm(x, rm, rv, w, b),
           ((4, 3), (3,), (3,), (3,), (3,)),
           numpy=lambda np, *arrays: np_batch_norm_eval(*arrays),
           inputs=with_running_stats, grad_inputs=(0, 1, 2),
           variants=(((2, 3, 2, 2), (3,), (3,), (3,), (3,)),)),
    OpCase("layer_norm_last_dim",
           lambda lib, x, w, b: F(lib).layer_norm(x, (4,), w, b),
           ((2, 3, 4), (4,), (4,)),
           numpy=lambda np, x, w, b: np_standardize(x, (x.ndim - 1,)) * w + b, inputs=normal,
           variants=(((0, 4), (4,), (4,)), ((4,), (4,), (4,)))),
    OpCase("layer_norm_last_two_dims",
           lambda lib, x, w, b: F(lib).layer_norm(x, [3, 2], w, b, eps=1e-3),
           ((3, 3, 2), (3, 2), (3, 2)),
           numpy=lambda np, x, w, b: np_standardize(x, (1, 2), eps=1e-3) * w + b,
           inputs=normal),
    OpCase("layer_norm_no_affine", lambda lib, x: F(lib).layer_norm(x, [5]),
           ((3, 5),), numpy=lambda np, x: np_standardize(x, (1,)), inputs=normal),
    OpCase("layer_norm_weight_only", lambda lib, x, w: F(lib).layer_norm(x, (5,), w),
           ((3, 5), (5,)), numpy=lambda np, x, w: np_standardize(x, (1,)) * w, inputs=normal),
    OpCase("group_norm", lambda lib, x, w, b: F(lib).group_norm(x, 2, w, b),
           ((2, 4, 3), (4,), (4,)), numpy=lambda np, x, w, b: np_group_norm(x, 2, w, b),
           inputs=normal, variants=(((2, 4, 2, 2), (4,), (4,)), ((3, 4), (4,), (4,)))),
    OpCase("group_norm_instance_like", lambda lib, x: F(lib).group_norm(x, 3),
           ((2, 3, 4),), numpy=lambda np, x: np_group_norm(x, 3), inputs=normal),
    OpCase("group_norm_one_group", lambda lib, x: F(lib).group_norm(x, 1, eps=1e-3),
           ((2, 3, 2),), numpy=lambda np, x: np_standardize(x, (1, 2), eps=1e-3),
           inputs=normal),
]

globals().update(standard_op_tests(CASES))


# --- forward-over-reverse: tangents through the backward formulas --------------------------------

# (name, op on gradlab or torch's functional module F, x's shape, weight/bias shape)
THROUGH_BACKWARD = [
    ("layer_norm", lambda F, x, w, b: F.layer_norm(x, (4,), w, b), (3, 4), (4,)),
    ("batch_norm_train", lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     (4, 3, 2), (3,)),
    ("group_norm", lambda F, x, w, b: F.group_norm(x, 2, w, b), (2, 4, 3), (4,)),
]


@pytest.mark.parametrize("name, op, shape, affine", THROUGH_BACKWARD,
                         ids=[row[0] for row in THROUGH_BACKWARD])
def test_jvp_through_backward_is_the_hessian_vector_product(name, op, shape, affine, device):
    """Forward-over-reverse: a tangent on x carried through backward(create_graph=True) gives
    H·v of f(x) = Σ c ⊙ norm(x), through the tangent rules of the ops in the backward formula;
    checked against a central difference of the gradient along v (and torch.func). Backward
    through the op's own jvp (reverse-over-forward) must give the same H·v."""
    from gradlab.autograd import forward_ad as fwAD

    rng = np.random.default_rng(6)
    x0, v, c = (rng.standard_normal(shape) for _ in range(3))
    w, b = rng.standard_normal(affine), rng.standard_normal(affine)
    F = gradlab.nn.functional

    def on_device(a):
        return gradlab.tensor(a, device=device)

    def gradient(x_np, dual=None):
        x = gradlab.tensor(x_np, device=device, requires_grad=True)
        if dual is not None:
            x = fwAD.make_dual(x, on_device(dual))
        (g,) = gradlab.autograd.grad((op(F, x, on_device(w), on_device(b)) * on_device(c)).sum(),
                                     [x], create_graph=dual is not None)
        return g

    with fwAD.dual_level():
        hv = fwAD.unpack_dual(gradient(x0, dual=v)).tangent.detach().cpu().numpy()
        # reverse-over-forward too: the gradient of the tangent ∇f·v is H·v, through the jvp
        x = gradlab.tensor(x0, device=device, requires_grad=True)
        y = op(F, fwAD.make_dual(x, on_device(v)), on_device(w), on_device(b))
        (hv_reverse,) = gradlab.autograd.grad((fwAD.unpack_dual(y).tangent * on_device(c))
                                              .sum(), [x])
    eps = 1e-6
    want = (gradient(x0 + eps * v).cpu().numpy() - gradient(x0 - eps * v).cpu().numpy()) / (
        2 * eps)
    np.testing.assert_allclose(hv, want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hv_reverse.cpu().numpy(), want, rtol=1e-5, atol=1e-7)
    assert np.abs(want).max() > 1e-2  # the Hessian is not zero along v
    if torch is not None:
        tw, tb, tc = (torch.from_numpy(a) for a in (w, b, c))
        _, theirs = torch.func.jvp(
            torch.func.grad(lambda x: (op(torch.nn.functional, x, tw, tb) * tc).sum()),
            (torch.from_numpy(x0),), (torch.from_numpy(v),))
        np.testing.assert_allclose(hv, theirs.numpy(), rtol=1e-8, atol=1e-10)


def test_graph_shows_one_node_per_normalization():
    x = gradlab.randn(4, 3, requires_grad=True)
    assert gradlab.nn.functional.batch_norm(x, None, None, training=True).grad_fn.name() == \
        "NativeBatchNormBackward0"
    assert gradlab.nn.functional.layer_norm(x, (3,)).grad_fn.name() == "NativeLayerNormBackward0"
    y = gradlab.group_norm(x.reshape(4, 3, 1), 3)
    assert y.grad_fn.name() == "NativeGroupNormBackward0"


def test_layer_norm_and_group_norm_are_exported_at_top_level():
    assert gradlab.layer_norm is gradlab.nn.functional.layer_norm
    assert gradlab.group_norm is gradlab.nn.functional.group_norm


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(2, 4), min_size=2, max_size=4), k=st.integers(1, 2))
def test_layer_norm_output_has_mean_0_variance_1(shape, k):
    k = min(k, len(shape))
    x = gradlab.tensor(np.random.default_rng(0).standard_normal(shape) * 3 + 2)
    y = gradlab.layer_norm(x, shape[-k:], eps=0.0).numpy()
    axes = tuple(range(len(shape) - k, len(shape)))
    np.testing.assert_allclose(y.mean(axis=axes), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=axes), 1.0, atol=1e-9)


# --- running statistics -----------------------------------------------------------------------

def test_training_updates_running_stats_in_place_with_unbiased_variance():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 2, 3))
    rm, rv = gradlab.zeros(2, dtype=gradlab.float64), gradlab.ones(2, dtype=gradlab.float64)
    version = rm._version
    gradlab.nn.functional.batch_norm(gradlab.tensor(x), rm, rv, training=True, momentum=0.25)
    n = 5 * 3
    mean = x.mean(axis=(0, 2))
    var = x.var(axis=(0, 2)) * n / (n - 1)
    np.testing.assert_allclose(rm.numpy(), 0.25 * mean, rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.75 + 0.25 * var, rtol=1e-12)
    assert rm._version == version + 1


def test_eval_mode_leaves_running_stats_alone():
    rm, rv = gradlab.tensor([0.5, -1.0]), gradlab.tensor([2.0, 0.5])
    gradlab.nn.functional.batch_norm(gradlab.randn(4, 2), rm, rv)
    assert rm.tolist() == [0.5, -1.0] and rv.tolist() == [2.0, 0.5]


@needs_torch
@pytest.mark.parametrize("momentum", [0.1, None])
def test_running_stat_trajectory_matches_torch(momentum):
    """Several steps, momentum 0.1 and the cumulative average (factor 1/t) of momentum=None."""
    rng = np.random.default_rng(4)
    ours = [gradlab.zeros(3, dtype=gradlab.float64), gradlab.ones(3, dtype=gradlab.float64)]
    theirs = [torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)]
    for step in range(1, 6):
        x = rng.standard_normal((4, 3, 2)) * step + step
        factor = 1.0 / step if momentum is None else momentum
        gradlab.nn.functional.batch_norm(gradlab.tensor(x), *ours, training=True,
                                         momentum=factor)
        torch.nn.functional.batch_norm(torch.tensor(x), *theirs, training=True,
                                       momentum=factor)
        for g, t in zip(ours, theirs):
            np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12)


def test_backward_through_eval_is_unaffected_by_a_later_running_stat_update():
    """Eval mode saves a copy of running_mean, so training after it can't invalidate it."""
    rm, rv = gradlab.zeros(2), gradlab.ones(2)
    x = gradlab.randn(3, 2, requires_grad=True)
    y = gradlab.nn.functional.batch_norm(x, rm, rv)
    gradlab.nn.functional.batch_norm(gradlab.randn(3, 2), rm, rv, training=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((3, 2), 1 / np.sqrt(1 + 1e-5)),
                               rtol=1e-6)


def test_batch_norm_create_graph_gives_exact_second_derivative():
    """Second derivatives of a nonlinear function of batch_norm's output, in float64."""
    x = gradlab.randn(3, 2, 2, dtype=gradlab.float64, requires_grad=True)
    assert gradlab.autograd.gradgradcheck(
        lambda t: gradlab.nn.functional.batch_norm(t, None, None, training=True) ** 2, [x])


def test_half_precision_keeps_its_dtype():
    x = gradlab.randn(4, 3).to(gradlab.float16)
    assert gradlab.nn.functional.batch_norm(x, None, None, training=True).dtype is \
        gradlab.float16
    assert gradlab.layer_norm(x, (3,)).dtype is gradlab.float16


# --- errors -----------------------------------------------------------------------------------

def test_errors_teach():
    F_ = gradlab.nn.functional
    x = gradlab.randn(4, 3)
    with pytest.raises(RuntimeError, match="batch_norm: expected a floating point"):
        F_.batch_norm(gradlab.ones(4, 3, dtype=gradlab.int64), None, None, training=True)
    with pytest.raises(ValueError, match=r"at least 2 dims, got shape \(3,\)"):
        F_.batch_norm(gradlab.randn(3), None, None, training=True)
    with pytest.raises(RuntimeError, match="must be given in evaluation mode"):
        F_.batch_norm(x, None, None)
    with pytest.raises(RuntimeError, match="both running_mean and running_var"):
        F_.batch_norm(x, gradlab.zeros(3), None, training=True)
    with pytest.raises(RuntimeError, match=r"running_mean should have one value per channel, "
                                           r"shape \(3,\), but got \(4,\)"):
        F_.batch_norm(x, gradlab.zeros(4), gradlab.ones(4), training=True)
    with pytest.raises(RuntimeError, match=r"weight should have one value per channel"):
        F_.batch_norm(x, None, None, gradlab.ones(2), training=True)
    with pytest.raises(ValueError, match=r"more than 1 value per channel .* \(1, 3\)"):
        F_.batch_norm(gradlab.randn(1, 3), None, None, training=True)
    with pytest.raises(RuntimeError, match=r"normalized_shape=\(4,\) must match the last dims"):
        F_.layer_norm(x, (4,))
    with pytest.raises(RuntimeError, match=r"weight must have shape normalized_shape=\(3,\)"):
        F_.layer_norm(x, (3,), gradlab.ones(4))
    with pytest.raises(RuntimeError, match="group_norm: expected an input of shape"):
        F_.group_norm(gradlab.randn(6), 2)
    with pytest.raises(RuntimeError, match=r"divisible by num_groups.* \(2, 6, 3\).*=4"):
        F_.group_norm(gradlab.randn(2, 6, 3), 4)
    with pytest.raises(RuntimeError, match=r"group_norm: bias should have one value"):
        F_.group_norm(gradlab.randn(2, 6, 3), 3, gradlab.ones(6), gradlab.ones(5))


# --- modules ----------------------------------------------------------------------------------

def _pair(cls_name, *args, **kwargs):
    """The same layer in gradlab and PyTorch, float64, with PyTorch's parameters copied in."""
    ours = getattr(gradlab.nn, cls_name)(*args, **kwargs).double()
    theirs = getattr(torch.nn, cls_name)(*args, **kwargs).double()
    rng = np.random.default_rng(8)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape))))
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def _step(ours, theirs, x, rng):
    """One forward and backward of both; outputs and parameter gradients must agree."""
    xg = gradlab.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    yg, yt = ours(xg), theirs(xt)
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    cot = rng.standard_normal(tuple(yt.shape))
    yg.backward(gradlab.tensor(cot))
    yt.backward(torch.tensor(cot))
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-10)
    for (name, pg), pt in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(pg.grad.numpy(), pt.grad.numpy(), rtol=1e-8, atol=1e-10,
                                   err_msg=name)


def _same_state(ours, theirs):
    sg, st_ = ours.state_dict(), theirs.state_dict()
    assert list(sg) == list(st_)
    for k in st_:
        np.testing.assert_allclose(sg[k].numpy(), st_[k].numpy(), rtol=1e-12, err_msg=k)


@needs_torch
@pytest.mark.parametrize("cls_name, shape", [("BatchNorm1d", (6, 3)),
                                             ("BatchNorm1d", (4, 3, 5)),
                                             ("BatchNorm2d", (3, 3, 2, 4)),
                                             ("BatchNorm3d", (2, 3, 2, 2, 2))])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_training_trajectory_and_eval_match_torch(cls_name, shape, momentum):
    ours, theirs = _pair(cls_name, 3, momentum=momentum)
    rng = np.random.default_rng(9)
    for step in range(4):
        _step(ours, theirs, rng.standard_normal(shape) * (step + 1) + step, rng)
        _same_state(ours, theirs)
    assert ours.num_batches_tracked.item() == 4
    ours.eval()
    theirs.eval()
    _step(ours, theirs, rng.standard_normal(shape), rng)
    _same_state(ours, theirs)  # evaluation leaves the statistics alone


@needs_torch
@pytest.mark.parametrize("kwargs", [{"affine": False}, {"track_running_stats": False},
                                    {"bias": False, "eps": 1e-3}])
def test_batchnorm_options_match_torch(kwargs):
    ours, theirs = _pair("BatchNorm1d", 4, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    rng = np.random.default_rng(10)
    for mode in ("train", "eval"):
        getattr(ours, mode)()
        getattr(theirs, mode)()
        _step(ours, theirs, rng.standard_normal((5, 4)), rng)


@needs_torch
@pytest.mark.parametrize("cls_name, args, kwargs, shape", [
    ("LayerNorm", (4,), {}, (2, 3, 4)),
    ("LayerNorm", ((3, 4),), {"eps": 1e-3}, (2, 3, 4)),
    ("LayerNorm", (4,), {"bias": False}, (5, 4)),
    ("LayerNorm", (4,), {"elementwise_affine": False}, (5, 4)),
    ("GroupNorm", (2, 4), {}, (3, 4, 5)),
    ("GroupNorm", (4, 4), {"affine": False}, (2, 4, 2, 2)),
    ("GroupNorm", (1, 4), {"bias": False}, (2, 4)),
])
def test_layernorm_and_groupnorm_match_torch(cls_name, args, kwargs, shape):
    ours, theirs = _pair(cls_name, *args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _step(ours, theirs, np.random.default_rng(11).standard_normal(shape),
          np.random.default_rng(12))


def test_fresh_layers_start_as_the_identity_map_with_unit_statistics():
    bn = gradlab.nn.BatchNorm1d(3)
    assert bn.weight.tolist() == [1, 1, 1] and bn.bias.tolist() == [0, 0, 0]
    assert bn.running_mean.tolist() == [0, 0, 0] and bn.running_var.tolist() == [1, 1, 1]
    assert bn.num_batches_tracked.dtype is gradlab.int64 and bn.num_batches_tracked.item() == 0
    ln = gradlab.nn.LayerNorm((2, 3))
    assert ln.weight.shape == (2, 3) and not ln.bias.detach().numpy().any()


def test_reset_running_stats():
    bn = gradlab.nn.BatchNorm1d(2)
    bn(gradlab.randn(4, 2) + 3)
    bn.reset_running_stats()
    assert bn.running_mean.tolist() == [0, 0] and bn.running_var.tolist() == [1, 1]
    assert bn.num_batches_tracked.item() == 0


def test_eval_without_running_stats_uses_the_batch():
    bn = gradlab.nn.BatchNorm1d(2, track_running_stats=False).eval()
    assert bn.running_mean is None and bn.num_batches_tracked is None
    y = bn(gradlab.randn(6, 2) * 3 + 1).detach().numpy()
    np.testing.assert_allclose(y.mean(0), 0, atol=1e-6)


def test_old_checkpoint_without_num_batches_tracked_loads():
    """state_dicts from before version 2 had no counter; loading keeps the current one."""
    bn = gradlab.nn.BatchNorm2d(2)
    bn(gradlab.randn(3, 2, 2, 2))
    old = {k: v for k, v in gradlab.nn.BatchNorm2d(2).state_dict().items()
           if k != "num_batches_tracked"}
    result = bn.load_state_dict(old)  # no metadata: treated as an old version
    assert result.missing_keys == [] and bn.num_batches_tracked.item() == 1
    assert bn.running_mean.tolist() == [0, 0]
    with pytest.raises(RuntimeError, match="num_batches_tracked"):
        new = gradlab.nn.BatchNorm2d(2).state_dict()  # version 2 metadata: the key is needed
        del new["num_batches_tracked"]
        bn.load_state_dict(new)


@needs_torch
def test_torch_checkpoint_loads_into_batchnorm():
    theirs = torch.nn.BatchNorm1d(3)
    theirs(torch.randn(4, 3) * 2 + 1)
    ours = gradlab.nn.BatchNorm1d(3)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    _same_state(ours, theirs)


def test_module_errors_teach():
    with pytest.raises(ValueError, match=r"BatchNorm1d: expected 2D or 3D input \(got 4D"):
        gradlab.nn.BatchNorm1d(3)(gradlab.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match=r"BatchNorm2d: expected 4D input \(got 3D"):
        gradlab.nn.BatchNorm2d(3)(gradlab.randn(2, 3, 4))
    with pytest.raises(ValueError, match=r"BatchNorm3d: expected 5D input \(got 4D"):
        gradlab.nn.BatchNorm3d(3)(gradlab.randn(2, 3, 4, 4))
    with pytest.raises(ValueError, match=r"expected 3 channels in dim 1 \(num_features=3\), "
                                         r"got input of shape \(2, 4\)"):
        gradlab.nn.BatchNorm1d(3)(gradlab.randn(2, 4))
    with pytest.raises(ValueError, match=r"num_channels \(4\) must be divisible by "
                                         r"num_groups \(3\)"):
        gradlab.nn.GroupNorm(3, 4)
