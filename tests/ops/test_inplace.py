"""In-place forms (gradlab/ops/inplace.py): erf_, what every in-place op refuses, and the one
in-place mechanism (``apply_inplace``) as the indexing ops use it: writes through views and
second derivatives, against PyTorch.

Versions, leaves and saved tensors are tested in tests/autograd/test_versions.py and
test_views.py; what each indexing op computes in tests/ops/test_indexing.py and
test_gather_scatter.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
from tests.oracle import (
    OpCase,
    needs_torch,
    standard_op_tests,
    torch,
)


def np_erf(np, x):
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


# erf_ changes a non-leaf copy (x * 1): a leaf that requires grad can't be changed in place.
CASES = [
    OpCase("erf_", lambda lib, x: (x * 1).erf_(), ((3, 4),), numpy=np_erf, domain=(-3.0, 3.0),
           variants=(((),), ((0, 3),))),
    OpCase("erf_function", lambda lib, x: lib.erf_(x * 2), ((5,),),
           numpy=lambda np, x: np_erf(np, 2 * x)),
    OpCase("erf_through_a_view", lambda lib, x: _erf_of_a_view(x), ((3, 4),),
           numpy=lambda np, x: np.concatenate([x[:1], np_erf(np, x[1:])])),
]


def _erf_of_a_view(x):
    y = x * 1
    y[1:].erf_()  # changes y through the view y[1:]
    return y


globals().update(standard_op_tests(CASES))


def test_erf_changes_the_tensor_itself_and_records_one_node():
    x = gradlab.tensor([0.0, 1.0], requires_grad=True)
    y = x * 1
    out = y.erf_()
    assert out is y and y._version == 1 and gradlab.erf_ is gradlab.Tensor.erf_
    assert y.grad_fn.op == "erf_" and y.grad_fn.name() == "ErfBackward0"
    np.testing.assert_allclose(y.detach().numpy(), [0.0, math.erf(1.0)], rtol=1e-6)


def test_erf_gradient_uses_the_old_values():
    """d/dx erf(x) = 2/√π · e^(-x²) at the values *before* the change; d² = -2x · d."""
    values = [-1.5, 0.0, 0.5, 2.0]
    x = gradlab.tensor(values, dtype=gradlab.float64, requires_grad=True)
    y = x * 1
    y.erf_()
    (d1,) = gradlab.autograd.grad(y.sum(), x, create_graph=True)
    (d2,) = gradlab.autograd.grad(d1.sum(), x)
    slope = [2 / math.sqrt(math.pi) * math.exp(-v * v) for v in values]
    np.testing.assert_allclose(d1.detach().numpy(), slope, rtol=1e-12)
    np.testing.assert_allclose(d2.numpy(), [-2 * v * s for v, s in zip(values, slope)],
                               rtol=1e-12, atol=1e-15)


def test_erf_of_half_precision_stays_half():
    y = gradlab.tensor([0.5, -1.0], dtype=gradlab.float16)
    y.erf_()
    assert y.dtype is gradlab.float16
    np.testing.assert_allclose(y.float().numpy(), [math.erf(0.5), math.erf(-1.0)], rtol=1e-3)


def test_erf_of_a_leaf_that_requires_grad_teaches():
    w = gradlab.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"erf_: a leaf tensor that requires grad .*no_grad"):
        w.erf_()
    with gradlab.no_grad():
        w.erf_()
    assert w._version == 1 and w.is_leaf


FLOAT_VALUED = ["exp_", "log_", "sqrt_", "sigmoid_", "tanh_", "erf_"]


@pytest.mark.parametrize("op", FLOAT_VALUED)
def test_float_valued_ops_refuse_integer_tensors(op):
    """PyTorch refuses these too: the floats they give can't be stored in integers."""
    x = gradlab.tensor([1, 2])
    with pytest.raises(RuntimeError, match=rf"{op}: the result type gradlab.float32 can't be cast "
                                           rf"to the tensor's dtype gradlab.int64 in place.*Fix"):
        getattr(x, op)()
    assert x.tolist() == [1, 2] and x._version == 0
    if torch is not None:
        with pytest.raises(RuntimeError, match="can't be cast"):
            getattr(torch.tensor([1, 2]), op)()


# --- in-place indexing goes through apply_inplace: views and second derivatives -------------

def _setitem_through_a_view(lib, x_np, w_np):
    """``y[0][1] = w`` writes through the view ``y[0]``: y's history must change too."""
    x = lib.tensor(x_np, requires_grad=True)
    w = lib.tensor(w_np, requires_grad=True)
    y = x * 1
    y[0][1] = w
    weights = lib.tensor(np.arange(x_np.size, dtype=np.float64).reshape(x_np.shape))
    (y * y * weights).sum().backward()
    return [y.detach().numpy().copy(), x.grad.numpy().copy(), w.grad.numpy().copy()]


def test_setitem_through_a_view_reaches_the_base_and_the_value():
    x_np, w_np = np.ones((2, 3, 2)), np.array([2.0, 3.0])
    y, x_grad, w_grad = _setitem_through_a_view(gradlab, x_np, w_np)
    weights = np.arange(12.0).reshape(2, 3, 2)
    assert y[0, 1].tolist() == [2.0, 3.0]
    want = 2 * weights  # d(y² · weights)/dx where y = x = 1 ...
    want[0, 1] = 0.0  # ... except where w overwrote y
    np.testing.assert_array_equal(x_grad, want)
    np.testing.assert_array_equal(w_grad, 2 * w_np * weights[0, 1])


@needs_torch
def test_setitem_through_a_view_matches_torch():
    rng = np.random.default_rng(6)
    x_np, w_np = rng.standard_normal((2, 3, 2)), rng.standard_normal(2)
    for ours, theirs in zip(_setitem_through_a_view(gradlab, x_np, w_np),
                            _setitem_through_a_view(torch, x_np, w_np)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


IN_PLACE_THROUGH_VIEWS = {
    "setitem": lambda lib, v, w: v.__setitem__((slice(None), [0, 2]), w[:, :2]),
    "index_put_": lambda lib, v, w: v.index_put_((lib.tensor([1, 0]),), w, accumulate=True),
    "masked_fill_": lambda lib, v, w: v.masked_fill_(v > 0, w[0, 0]),
    "scatter_": lambda lib, v, w: v.scatter_(1, lib.tensor([[2, 0], [1, 3]]), w[:, :2]),
    "scatter_add_": lambda lib, v, w: v.scatter_add_(0, lib.tensor([[1, 1, 0, 0]]), w[:1]),
    "index_add_": lambda lib, v, w: v.index_add_(1, lib.tensor([3, 3, 0, 1]), w, alpha=2.0),
}


def _in_place_through_a_view(lib, op, x_np, w_np, second_order):
    x = lib.tensor(x_np, requires_grad=True)
    w = lib.tensor(w_np, requires_grad=True)
    y = x * x
    IN_PLACE_THROUGH_VIEWS[op](lib, y[1:3], w * w)  # y[1:3] is a view of y
    loss = (y * y).sum()
    grads = lib.autograd.grad(loss, [x, w], create_graph=second_order)
    if second_order:
        grads = lib.autograd.grad(sum(g.sum() for g in grads), [x, w])
    return [y.detach().numpy().copy()] + [g.detach().numpy().copy() for g in grads]


@needs_torch
@pytest.mark.parametrize("second_order", [False, True], ids=["grad", "gradgrad"])
@pytest.mark.parametrize("op", sorted(IN_PLACE_THROUGH_VIEWS))
def test_in_place_indexing_ops_through_a_view_match_torch(op, second_order):
    rng = np.random.default_rng(7)
    x_np, w_np = rng.standard_normal((4, 4)), rng.standard_normal((2, 4))
    ours = _in_place_through_a_view(gradlab, op, x_np, w_np, second_order)
    theirs = _in_place_through_a_view(torch, op, x_np, w_np, second_order)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)


SETITEM_KEYS = {
    "int": lambda lib: 1,
    "slice_list": lambda lib: (slice(None), [0, 2]),
    "mask": lambda lib: lib.tensor([True, False, True]),
    "pairs": lambda lib: (lib.tensor([0, 2]), lib.tensor([1, 1])),
}


def _second_derivatives_through_setitem(lib, key, x_np, v_np):
    """d²/dx², d²/dv² (summed) of sum((x² with x²[key] replaced by v³)³)."""
    x = lib.tensor(x_np, requires_grad=True)
    v = lib.tensor(v_np, requires_grad=True)
    y = x * x
    y[SETITEM_KEYS[key](lib)] = v ** 3
    d1 = lib.autograd.grad((y ** 3).sum(), [x, v], create_graph=True)
    d2 = lib.autograd.grad(d1[0].sum() + d1[1].sum(), [x, v])
    return [g.detach().numpy().copy() for g in (*d1, *d2)]


@needs_torch
@pytest.mark.parametrize("key", sorted(SETITEM_KEYS))
def test_second_derivatives_through_setitem_match_torch(key):
    rng = np.random.default_rng(8)
    x_np = rng.standard_normal((3, 3))
    region = tuple(torch.tensor(x_np)[SETITEM_KEYS[key](torch)].shape)
    v_np = rng.standard_normal(region)
    ours = _second_derivatives_through_setitem(gradlab, key, x_np, v_np)
    theirs = _second_derivatives_through_setitem(torch, key, x_np, v_np)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)


def test_second_derivatives_through_setitem():
    x = gradlab.tensor([1.0, 2.0, 3.0], dtype=gradlab.float64, requires_grad=True)
    v = gradlab.tensor(2.0, dtype=gradlab.float64, requires_grad=True)
    y = x * x
    y[1] = v ** 3
    (dx, dv) = gradlab.autograd.grad((y ** 3).sum(), [x, v], create_graph=True)
    # y = (x0², v³, x2²): d(Σy³)/dx_i = 6 x_i^5 off the written slot, d/dv = 9 v^8
    assert dx.tolist() == [6.0, 0.0, 6 * 3.0 ** 5] and dv.item() == 9 * 2.0 ** 8
    (dxx, dvv) = gradlab.autograd.grad(dx.sum() + dv, [x, v])
    assert dxx.tolist() == [30.0, 0.0, 30 * 3.0 ** 4] and dvv.item() == 72 * 2.0 ** 7


def test_update_without_history_writes_into_the_same_memory_once():
    """p -= lr * g under no_grad: no temporary copy, one version bump, one event."""
    from gradlab import events

    p = gradlab.ones(4, requires_grad=True)
    g = gradlab.full((4,), 2.0)
    memory, version = p._data, p._version
    seen = []
    with gradlab.no_grad(), events.subscribe(seen.append):
        p -= 0.5 * g
    ops = [e.op for e in seen if isinstance(e, events.OpForward)]
    assert ops == ["mul", "sub_"]
    assert p._data is memory and p._version == version + 1
    assert p.tolist() == [0.0, 0.0, 0.0, 0.0] and p.is_leaf


def test_update_without_history_still_refuses_a_wrong_shape():
    t = gradlab.zeros(3)
    with gradlab.no_grad(), pytest.raises(RuntimeError, match="can't change a tensor's shape"):
        t.add_(gradlab.ones(2, 3))
    with gradlab.no_grad(), pytest.raises(RuntimeError, match=r"add.*\(3,\) and \(4,\)"):
        t.add_(gradlab.ones(4))


# --- forward mode: an in-place op changes the tensor's tangent (and its base's) --------------

def _in_place_tangents(lib, fwAD_, x_np, t_np, requires_grad):
    """Tangents after in-place ops: on a tensor, through views (base and view), into a tensor
    that had none, and the no_grad fast path (``w.add_(d)`` writing straight into memory)."""
    x = lib.tensor(x_np, requires_grad=requires_grad)
    with fwAD_.dual_level():
        dual = fwAD_.make_dual(x, lib.tensor(t_np))
        y = dual * 1
        y.mul_(3)
        z = dual * 1
        z[1:].mul_(dual[1:] * 1)  # a view changed in place: z's tangent changes there too
        z[0].fill_(5.0)  # a constant: zero tangent in row 0
        row = z[2]
        row.exp_()  # row is z[2] and stays so: both tangents change
        e = lib.zeros(3, 4, dtype=lib.float64)  # no tangent until a dual is copied in
        e[1].copy_(dual[2])
        r = dual * 1
        r.relu_()
        with lib.no_grad():
            w = lib.ones(3, 4, dtype=lib.float64)
            w.add_(dual)
            w.sub_(dual * 2)
        tangents = [fwAD_.unpack_dual(a).tangent for a in (y, z, row, e, r, w)]
        values = [fwAD_.unpack_dual(a).primal for a in (y, z, r)]
    if requires_grad:  # reverse mode still sees what the in-place ops did
        (values[0].sum() + values[1].sum() + values[2].sum()).backward()
        tangents.append(x.grad)
    return [t.detach().numpy().copy() for t in tangents]


@pytest.mark.parametrize("requires_grad", [False, True], ids=["no_history", "history"])
def test_in_place_ops_carry_tangents_through_views(requires_grad):
    import gradlab.autograd.forward_ad as fwAD

    rng = np.random.default_rng(9)
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    got = _in_place_tangents(gradlab, fwAD, x, t, requires_grad)
    z = t.copy()
    z[1:] = 2 * x[1:] * t[1:]
    z[0] = 0.0
    z[2] = np.exp(x[2] ** 2) * z[2]
    e = np.zeros((3, 4))
    e[1] = t[2]
    want = [3 * t, z, z[2], e, t * (x > 0), -t]
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=f"tangent {k}")
    if requires_grad:
        grad = 3 + (x > 0) + np.concatenate([0 * x[:1], 2 * x[1:2],
                                              np.exp(x[2:] ** 2) * 2 * x[2:]])
        np.testing.assert_allclose(got[-1], grad, rtol=1e-12)
    if torch is not None:
        import torch.autograd.forward_ad as torch_fwAD

        theirs = _in_place_tangents(torch, torch_fwAD, x, t, requires_grad)
        for k, (g, th) in enumerate(zip(got, theirs)):
            np.testing.assert_allclose(g, th, rtol=1e-12, atol=1e-12, err_msg=f"tangent {k}")


def test_reverse_over_forward_through_an_in_place_op_on_a_view():
    """The tangent is tensor code too: its gradient w.r.t. the input tangent."""
    import gradlab.autograd.forward_ad as fwAD

    x = gradlab.tensor([[0.5, -1.0], [2.0, 3.0]], dtype=gradlab.float64)
    v = gradlab.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=gradlab.float64, requires_grad=True)
    with fwAD.dual_level():
        y = fwAD.make_dual(x, v) * 1
        y[1:].mul_(x[1:])  # tangent: v · x in row 1, v in row 0
        tangent = fwAD.unpack_dual(y).tangent
    (tangent * tangent).sum().backward()  # d/dv Σ (v·s)² = 2 v s²
    np.testing.assert_allclose(v.grad.numpy(), [[2.0, 2.0], [8.0, 18.0]])


# --- addcmul_, addcdiv_, lerp_: the optimizers' in-place updates -------------------------------

# Each changes a non-leaf copy (x * 1); operands broadcast to the tensor's shape.
FUSED = [
    OpCase("addcmul_", lambda lib, x, a, b: (x * 1).addcmul_(a, b, value=0.5),
           ((3, 4), (3, 4), (4,)), numpy=lambda np, x, a, b: x + 0.5 * a * b,
           variants=(((), (), ()), ((0, 3), (3,), (1, 3)))),
    OpCase("addcdiv_", lambda lib, x, a, b: (x * 1).addcdiv_(a, b, value=-3),
           ((3, 4), (3, 1), (3, 4)), numpy=lambda np, x, a, b: x - 3 * a / b,
           domain=[(-2.0, 2.0), (-2.0, 2.0), (0.5, 2.0)]),
    OpCase("lerp_", lambda lib, x, e: (x * 1).lerp_(e, 0.75), ((3, 4), (4,)),
           numpy=lambda np, x, e: x + 0.75 * (e - x), variants=(((), ()),)),
    OpCase("lerp_tensor_weight", lambda lib, x, e, w: (x * 1).lerp_(e, w),
           ((3, 4), (3, 4), (3, 1)), numpy=lambda np, x, e, w: x + w * (e - x),
           domain=[(-2.0, 2.0), (-2.0, 2.0), (-0.5, 1.5)]),
    OpCase("lerp_through_a_view", lambda lib, x, e: _lerp_of_a_view(x, e), ((3, 4), (4,)),
           numpy=lambda np, x, e: np.concatenate([x[:1], x[1:] + 0.25 * (e - x[1:])])),
]


def _lerp_of_a_view(x, end):
    y = x * 1
    y[1:].lerp_(end, 0.25)  # changes y through the view y[1:]
    return y


globals().update(standard_op_tests(FUSED, prefix="fused_"))


@pytest.mark.parametrize("op, args", [
    ("addcmul_", lambda: (gradlab.full((3,), 2.0), gradlab.full((3,), 3.0))),
    ("addcdiv_", lambda: (gradlab.full((3,), 2.0), gradlab.full((3,), 4.0))),
    ("lerp_", lambda: (gradlab.full((3,), 5.0), 0.5)),
])
def test_fused_updates_change_the_tensor_itself(op, args):
    x = gradlab.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=rf"{op}: a leaf tensor that requires grad .*no_grad"):
        getattr(x, op)(*args())
    assert x._version == 0 and x.tolist() == [1.0, 1.0, 1.0]
    memory = x._data
    with gradlab.no_grad():
        out = getattr(x, op)(*args())
    expected = {"addcmul_": 7.0, "addcdiv_": 1.5, "lerp_": 3.0}[op]
    assert out is x and x._data is memory and x._version == 1 and x.is_leaf
    assert x.tolist() == [expected] * 3
    assert getattr(gradlab, op) is getattr(gradlab.Tensor, op)
    y = x * 1
    getattr(y, op)(*args())
    assert y.grad_fn.op == op and y._version == 1


def _adam_steps(lib, steps=3, lr=0.1, betas=(0.9, 0.999), eps=1e-8):
    """The Adam update as PyTorch's own optimizer writes it, with addcmul_ and addcdiv_."""
    p = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
    m, v = lib.zeros_like(p), lib.zeros_like(p)
    for t in range(1, steps + 1):
        p.grad = None
        (p ** 3).sum().backward()
        with lib.no_grad():
            m.lerp_(p.grad, 1 - betas[0])
            v.mul_(betas[1]).addcmul_(p.grad, p.grad, value=1 - betas[1])
            denom = (v / (1 - betas[1] ** t)).sqrt().add_(eps)
            p.addcdiv_(m, denom, value=-lr / (1 - betas[0] ** t))
    return p.detach().numpy().copy(), m.numpy().copy(), v.numpy().copy()


@needs_torch
def test_adam_written_with_fused_updates_matches_torch():
    ours, theirs = _adam_steps(gradlab), _adam_steps(torch)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-12)
    optimizer_p = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([optimizer_p], lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        (optimizer_p ** 3).sum().backward()
        optimizer.step()
    np.testing.assert_allclose(ours[0], optimizer_p.detach().numpy(), rtol=1e-10)


@pytest.mark.parametrize("call, match", [
    (lambda: gradlab.zeros(3).addcmul_(gradlab.ones(2, 3), gradlab.ones(3)),
     r"addcmul_: the result has shape \(2, 3\) but the tensor has shape \(3,\)"),
    (lambda: gradlab.tensor([1, 2]).addcmul_(gradlab.ones(2), gradlab.ones(2)),
     r"addcmul_: the result type gradlab.float32 can't be cast to the tensor's dtype "
     r"gradlab.int64"),
    (lambda: gradlab.tensor([1, 2]).addcdiv_(gradlab.tensor([1, 2]), gradlab.tensor([3, 4])),
     r"addcdiv_: tensor1 \(gradlab.int64\) and tensor2 \(gradlab.int64\) are both integers"),
    (lambda: gradlab.tensor([1, 2]).addcdiv_(gradlab.ones(2), gradlab.ones(2)),
     r"addcdiv_: the result type gradlab.float32 can't be cast"),
    (lambda: gradlab.ones(2).lerp_(gradlab.ones(2, dtype=gradlab.float64), 0.5),
     r"lerp_: expected dtype gradlab.float32 for end"),
    (lambda: gradlab.ones(2).lerp_(gradlab.ones(3, 2), 0.5),
     r"lerp_: the result has shape \(3, 2\) but the tensor has shape \(2,\)"),
])
def test_fused_update_errors_teach(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


def test_integer_addcmul_in_place_stays_integer():
    x = gradlab.tensor([1, 2])
    x.addcmul_(gradlab.tensor([3, 4]), gradlab.tensor([5, 6]), value=2)
    assert x.dtype is gradlab.int64 and x.tolist() == [31, 50]


@needs_torch
def test_fill_with_a_tensor_value_sends_it_the_summed_gradient_like_torch():
    """``y.fill_(v)``: every element is v, so dL/dv = Σ dL/dy; the old values get zeros."""
    grads = []
    for lib in (gradlab, torch):
        x = lib.ones(3, requires_grad=True)
        v = lib.tensor(2.0, requires_grad=True)
        y = x * 1
        y.fill_(v)
        (y * lib.arange(3.0)).sum().backward()
        grads.append((x.grad.tolist(), v.grad.item(), y.tolist()))
    assert grads[0] == grads[1] == ([0.0, 0.0, 0.0], 3.0, [2.0, 2.0, 2.0])


@needs_torch
@pytest.mark.parametrize("value", [np.float64(0.3), np.float32(2.0), np.int64(2)], ids=str)
@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_"])
def test_numpy_scalars_are_numbers_to_in_place_ops_as_in_torch(op, value):
    """``p.add_(np.float64(0.3))`` keeps float32, as a Python float would (it raised)."""
    ours, theirs = getattr(gradlab.ones(3), op)(value), getattr(torch.ones(3), op)(value)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-7)
