"""gradlab.func forward mode: jvp, jacfwd and hessian (forward-over-reverse), against closed
forms, against the reverse-mode transforms and against torch.func."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from gradlab.autograd import forward_ad
from gradlab.func import grad, hessian, jacfwd, jacrev, jvp
from tests.func._helpers import assert_tree_close, rand, t64
from tests.oracle import needs_torch, torch

# --- jvp --------------------------------------------------------------------------------------

def test_jvp_of_closed_forms():
    x, t = t64(rand(4)), t64(rand(4, seed=1))
    out, tangent = jvp(lambda x: x * x, (x,), (t,))
    np.testing.assert_allclose(out.numpy(), x.numpy() ** 2)
    np.testing.assert_allclose(tangent.numpy(), 2 * x.numpy() * t.numpy())
    a = t64(rand(3, 4, seed=2))
    out, tangent = jvp(lambda x: gradlab.sin(a @ x), (x,), (t,))
    np.testing.assert_allclose(tangent.numpy(),
                               np.cos(a.numpy() @ x.numpy()) * (a.numpy() @ t.numpy()))
    assert forward_ad.unpack_dual(out).tangent is None  # the level is closed: plain results


def test_jvp_of_an_output_that_ignores_the_input_is_zero():
    x = t64([1.0, 2.0])
    out, tangent = jvp(lambda x: (x * 2, t64([5.0])), (x,), (gradlab.ones_like(x),))
    assert tangent[0].tolist() == [2.0, 2.0] and tangent[1].tolist() == [0.0]


def test_jvp_with_pytrees_and_aux():
    x, y = t64(rand(3)), t64(rand(3, seed=1))
    tx, ty = t64(rand(3, seed=2)), t64(rand(3, seed=3))

    def f(p, scale):
        return {"prod": p["x"] * p["y"] * scale}, (p["x"].sum(), "note")

    out, tangent, aux = jvp(f, ({"x": x, "y": y}, t64(2.0)),
                            ({"y": ty, "x": tx}, t64(0.0)), has_aux=True)
    np.testing.assert_allclose(out["prod"].numpy(), 2 * x.numpy() * y.numpy())
    np.testing.assert_allclose(tangent["prod"].numpy(),
                               2 * (tx.numpy() * y.numpy() + x.numpy() * ty.numpy()))
    assert aux[1] == "note" and aux[0].item() == pytest.approx(x.numpy().sum())


def test_jvp_is_differentiable_in_reverse_mode():
    # jvp of x^3 along t is 3 x^2 t; its gradient w.r.t. x is 6 x t.
    x, t = t64([1.0, 2.0]), t64([1.0, -1.0])
    g = grad(lambda x: jvp(lambda y: y ** 3, (x,), (t,))[1].sum())(x)
    assert g.tolist() == [6.0, -12.0]


@pytest.mark.parametrize("call, error, message", [
    (lambda: jvp(lambda x: x, t64([1.0]), (t64([1.0]),)), TypeError,
     r"primals to be a tuple.*jvp\(f, \(x,\), \(t,\)\)"),
    (lambda: jvp(lambda x: x, (), ()), ValueError, "non-empty tuple"),
    (lambda: jvp(lambda x: x, (t64([1.0, 2.0]),), (t64([1.0]),)), ValueError,
     r"tangent 0 has shape \(1,\), but its primal has shape \(2,\)"),
    (lambda: jvp(lambda x, y: x, (t64(1.0), t64(1.0)), (t64(1.0),)), ValueError,
     "structure of the tangents must match the primals"),
    (lambda: jvp(lambda x: x, (gradlab.tensor([1, 2]),), (gradlab.tensor([1, 1]),)),
     TypeError, "only floating point tensors carry tangents"),
    (lambda: jvp(lambda x: x, (t64(1.0),), (1.0,)), TypeError, "tangent 0 must be a Tensor"),
    (lambda: jvp(lambda x: jvp(lambda y: y, (x,), (x,))[1], (t64(1.0),), (t64(1.0),)),
     RuntimeError, r"forward-mode level is already active.*jacfwd\(jacrev\(f\)\)"),
    (lambda: jvp(lambda x: 3.0, (t64(1.0),), (t64(1.0),)), TypeError, "is a float"),
])
def test_jvp_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# --- jacfwd -----------------------------------------------------------------------------------

def test_jacfwd_of_closed_forms_and_structure():
    a = t64(rand(3, 4))
    x = t64(rand(4, seed=1))
    np.testing.assert_allclose(jacfwd(lambda x: a @ x)(x).numpy(), a.numpy())
    np.testing.assert_allclose(jacfwd(gradlab.exp)(x).numpy(), np.diag(np.exp(x.numpy())))
    m = t64(rand(2, 3))
    assert tuple(jacfwd(lambda m: m.sum(0))(m).shape) == (3, 2, 3)
    y = t64(rand(2, seed=3))
    (jx, jy), aux = jacfwd(lambda x, y: ((x.sum() * y), y.max()), argnums=(0, 1),
                           has_aux=True)(x, y)
    np.testing.assert_allclose(jx.numpy(), np.outer(y.numpy(), np.ones(4)))
    np.testing.assert_allclose(jy.numpy(), x.numpy().sum() * np.eye(2))
    assert aux.item() == y.numpy().max()


def test_jacfwd_of_an_empty_input():
    x = t64(np.zeros(0))
    j = jacfwd(lambda x: x.sum() * t64([1.0, 2.0]))(x)
    assert tuple(j.shape) == (2, 0)


def test_jacfwd_errors():
    with pytest.raises(TypeError, match=r"argument 1 \(picked by argnums\) must be a Tensor"):
        jacfwd(lambda x, y: x, argnums=1)(t64(1.0), "y")
    with pytest.raises(TypeError, match="dtype gradlab.int64.*carry tangents"):
        jacfwd(lambda x: x)(gradlab.tensor([1, 2]))
    with pytest.raises(ValueError, match="randomness must be"):
        jacfwd(gradlab.sin, randomness="sometimes")


def test_jacfwd_inside_jacfwd_explains_the_one_level():
    with pytest.raises(RuntimeError, match="one level at a time"):
        jacfwd(jacfwd(gradlab.sin))(t64([1.0]))


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 4), m=st.integers(1, 4), seed=st.integers(0, 2 ** 16))
def test_jacfwd_equals_jacrev_on_random_maps(n, m, seed):
    a, b = t64(rand(m, n, seed=seed)), t64(rand(m, seed=seed + 1))
    x = t64(rand(n, seed=seed + 2))

    def f(x):
        return gradlab.tanh(a @ x + b) * (x ** 2).sum() + gradlab.sigmoid(x).mean()

    assert_tree_close(jacfwd(f)(x), jacrev(f)(x))


# --- hessian ----------------------------------------------------------------------------------

def test_hessian_of_closed_forms():
    # f = x^T A x: H = A + A^T
    a = t64(rand(3, 3))
    x = t64(rand(3, seed=1))
    h = hessian(lambda x: x @ (a @ x))(x)
    np.testing.assert_allclose(h.numpy(), a.numpy() + a.numpy().T)
    assert not h.requires_grad
    # f = sum(x^2) * sum(x): H = 2 sum(x) I + 2 (x 1^T + 1 x^T)
    xs = x.numpy()
    expected = 2 * xs.sum() * np.eye(3) + 2 * (np.outer(xs, np.ones(3)) + np.outer(np.ones(3), xs))
    np.testing.assert_allclose(hessian(lambda x: (x ** 2).sum() * x.sum())(x).numpy(), expected)


def test_hessian_equals_jacrev_of_jacrev_and_of_jacfwd():
    x = t64(rand(2, 2))

    def f(x):
        return (gradlab.sin(x) * x.sum(1, keepdim=True)).sum() + gradlab.log(x * x + 1).sum() ** 2

    h = hessian(f)(x)
    assert tuple(h.shape) == (2, 2, 2, 2)
    assert_tree_close(h, jacrev(jacrev(f))(x))
    assert_tree_close(jacrev(jacfwd(f))(x), jacrev(jacrev(f))(x))


# Forward-over-reverse needs the tangent of every tensor a backward formula reads. An op that
# saves its own output (exp, tanh, sigmoid, sqrt, reciprocal, softmax) or a private array
# (prod, logsumexp) gets it back from the node without its tangent, so the Hessian misses
# that term. The fix belongs to the engine (SavedTensor / forward_ad.propagate); when it
# lands these pass and strict xfail reports it: then drop the marker.
SAVES_ITS_OUTPUT = {
    "exp": lambda x: gradlab.exp(x).sum(),
    "tanh": lambda x: gradlab.tanh(x).sum(),
    "sigmoid": lambda x: gradlab.sigmoid(x).sum(),
    "sqrt": lambda x: gradlab.sqrt(x).sum(),
    "reciprocal": lambda x: (1 / x).sum(),
    "softmax": lambda x: (gradlab.softmax(x, 0) * x).sum(),
    "prod": lambda x: x.prod(),
    "logsumexp": lambda x: gradlab.logsumexp(x, 0),
}


@pytest.mark.parametrize("name", sorted(SAVES_ITS_OUTPUT))
def test_hessian_through_ops_that_save_their_output(name):
    f = SAVES_ITS_OUTPUT[name]
    x = t64([0.3, 0.5, 0.9])
    assert_tree_close(hessian(f)(x), jacrev(jacrev(f))(x))


# --- against torch.func -----------------------------------------------------------------------

def _f(lib, x, y):
    return (lib.tanh(x[:, None] * y[None, :]).sum(0) + lib.sin(x).sum() * y) ** 2


@needs_torch
def test_jvp_and_jacfwd_match_torch():
    xs, ys, ts, us = rand(3), rand(3, seed=1), rand(3, seed=2), rand(3, seed=3)
    got = jvp(lambda x, y: _f(gradlab, x, y), (t64(xs), t64(ys)), (t64(ts), t64(us)))
    expected = torch.func.jvp(lambda x, y: _f(torch, x, y), (torch.tensor(xs), torch.tensor(ys)),
                              (torch.tensor(ts), torch.tensor(us)))
    assert_tree_close(got, expected)
    got = jacfwd(lambda x, y: _f(gradlab, x, y), argnums=(0, 1))(t64(xs), t64(ys))
    expected = torch.func.jacfwd(lambda x, y: _f(torch, x, y), argnums=(0, 1))(
        torch.tensor(xs), torch.tensor(ys))
    assert_tree_close(got, expected)


@needs_torch
def test_hessian_matches_torch():
    xs, ys = rand(3), rand(3, seed=1)

    def loss(lib):
        return lambda x, y: ((lib.sin(x[:, None] * y[None, :]) @ x) ** 2).sum() + \
            lib.cos(x * y).sum() * (y ** 3).sum()

    got = hessian(loss(gradlab), argnums=(0, 1))(t64(xs), t64(ys))
    expected = torch.func.hessian(loss(torch), argnums=(0, 1))(torch.tensor(xs),
                                                               torch.tensor(ys))
    assert_tree_close(got, expected)
