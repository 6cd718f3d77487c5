"""gradlab.func reverse mode: grad, grad_and_value, vjp, jacrev (values, composition, pytrees,
errors), against closed forms and against torch.func."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from gradlab.func import grad, grad_and_value, jacrev, vjp
from tests.func._helpers import F64, assert_tree_close, rand, t64
from tests.oracle import needs_torch, torch

# --- grad: closed forms ------------------------------------------------------------------------

def test_grad_of_a_cubic_is_three_x_squared():
    x = t64([1.0, -2.0, 0.5])
    g = grad(lambda x: (x ** 3).sum())(x)
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2)
    assert not g.requires_grad and g.grad_fn is None
    assert g.dtype is F64


def test_grad_composes_to_higher_derivatives():
    x = t64(0.7)
    f = lambda x: x ** 4  # noqa: E731
    assert grad(f)(x).item() == pytest.approx(4 * 0.7 ** 3)
    assert grad(grad(f))(x).item() == pytest.approx(12 * 0.7 ** 2)
    assert grad(grad(grad(f)))(x).item() == pytest.approx(24 * 0.7)
    assert grad(grad(grad(grad(f))))(x).item() == pytest.approx(24)


def test_grad_of_grad_on_a_vector_is_the_hessian_diagonal_sum():
    # f(x) = sum(sin x): grad = cos x, and d/dx sum(cos x) = -sin x.
    x = t64(rand(5))
    g2 = grad(lambda x: grad(lambda y: gradlab.sin(y).sum())(x).sum())(x)
    np.testing.assert_allclose(g2.numpy(), -np.sin(x.numpy()))


def test_inner_and_outer_inputs_are_kept_apart():
    # d/dx [x * d/dy (x * y)] = d/dx [x * x] = 2x: the inner grad must see only y's paths,
    # even though y is given the same tensor as x (no perturbation confusion).
    x = t64(3.0)
    g = grad(lambda x: x * grad(lambda y: x * y)(x))(x)
    assert g.item() == pytest.approx(6.0)


def test_argnums_picks_arguments_and_a_tuple_gives_a_tuple():
    x, y = t64(rand(3)), t64(rand(3, seed=1))
    f = lambda x, y: (x * y ** 2).sum()  # noqa: E731
    np.testing.assert_allclose(grad(f)(x, y).numpy(), y.numpy() ** 2)
    np.testing.assert_allclose(grad(f, argnums=1)(x, y).numpy(), 2 * x.numpy() * y.numpy())
    np.testing.assert_allclose(grad(f, argnums=-1)(x, y).numpy(), 2 * x.numpy() * y.numpy())
    gx, gy = grad(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx.numpy(), y.numpy() ** 2)
    np.testing.assert_allclose(gy.numpy(), 2 * x.numpy() * y.numpy())
    (only,) = grad(f, argnums=(1,))(x, y)
    np.testing.assert_allclose(only.numpy(), 2 * x.numpy() * y.numpy())


def test_keyword_arguments_pass_through_undifferentiated():
    x = t64([1.0, 2.0])
    g = grad(lambda x, scale=1.0: (scale * x * x).sum())(x, scale=3.0)
    np.testing.assert_allclose(g.numpy(), 6 * x.numpy())


def test_pytree_inputs_give_gradients_of_the_same_structure():
    w, b, c = t64(rand(2, 3)), t64(rand(2)), t64(rand(3))
    params = {"layer": (w, [b]), "skip": None, "c": c}

    def f(p, x):
        w, (b,) = p["layer"]
        assert p["skip"] is None
        return ((w @ x + b) ** 2).sum() + (p["c"] * x).sum()

    x = t64(rand(3, seed=2))
    g = grad(f)(params, x)
    assert set(g) == {"layer", "skip", "c"} and g["skip"] is None
    gw, (gb,) = g["layer"]
    assert isinstance(g["layer"], tuple) and isinstance(g["layer"][1], list)
    r = 2 * (w.numpy() @ x.numpy() + b.numpy())
    np.testing.assert_allclose(gw.numpy(), np.outer(r, x.numpy()))
    np.testing.assert_allclose(gb.numpy(), r)
    np.testing.assert_allclose(g["c"].numpy(), x.numpy())


def test_unused_inputs_and_constant_outputs_get_zero_gradients():
    x, y = t64(rand(3)), t64(rand(2))
    gx, gy = grad(lambda x, y: (x * 2).sum(), argnums=(0, 1))(x, y)
    assert gy.tolist() == [0.0, 0.0] and gx.tolist() == [2.0, 2.0, 2.0]
    g = grad(lambda x: t64(5.0))(x)
    assert g.tolist() == [0.0, 0.0, 0.0]


def test_has_aux_returns_the_aux_cut_from_the_graph():
    x = t64([1.0, 2.0])
    g, aux = grad(lambda x: ((x * x).sum(), {"doubled": x * 2, "n": 2}), has_aux=True)(x)
    assert g.tolist() == [2.0, 4.0]
    assert aux["n"] == 2 and aux["doubled"].tolist() == [2.0, 4.0]
    assert not aux["doubled"].requires_grad


def test_grad_and_value_returns_the_value_too():
    x = t64([1.0, 2.0])
    g, value = grad_and_value(lambda x: (x ** 2).sum())(x)
    assert g.tolist() == [2.0, 4.0] and value.item() == 5.0 and not value.requires_grad
    g, (value, aux) = grad_and_value(lambda x: ((x ** 2).sum(), x.mean()), has_aux=True)(x)
    assert g.tolist() == [2.0, 4.0] and value.item() == 5.0 and aux.item() == 1.5


# --- grad and the user's tensors --------------------------------------------------------------

def test_the_users_tensors_are_untouched():
    x = t64([1.0, 2.0])
    grad(lambda x: (x * x).sum())(x)
    assert not x.requires_grad and x.grad is None and x.grad_fn is None
    w = t64([3.0, 4.0], requires_grad=True)
    grad(lambda w: (w * w).sum())(w)
    assert w.grad is None


def test_an_input_that_requires_grad_stays_differentiable():
    # grad(f)(w) = 3 w^2 is itself a function of w: backward through it gives 6 w.
    w = t64([1.0, 2.0], requires_grad=True)
    g = grad(lambda w: (w ** 3).sum())(w)
    assert g.requires_grad
    g.sum().backward()
    assert w.grad.tolist() == [6.0, 12.0]


def test_a_closure_over_a_parameter_stays_differentiable():
    # d/dx sum(w * x^2) = 2 w x, and d/dw of sum(2 w x) = 2 x.
    w = t64([1.0, -1.0], requires_grad=True)
    x = t64([3.0, 5.0])
    g = grad(lambda x: (w * x * x).sum())(x)
    assert g.tolist() == [6.0, -10.0]
    g.sum().backward()
    assert w.grad.tolist() == [6.0, 10.0]


def test_grad_works_inside_no_grad_and_records_nothing():
    x = t64([1.0, 2.0], requires_grad=True)
    with gradlab.no_grad():
        g = grad(lambda x: (x ** 3).sum())(x)
    assert g.tolist() == [3.0, 12.0] and not g.requires_grad


# --- grad: errors that teach ------------------------------------------------------------------

def test_a_non_scalar_output_names_the_shape_and_the_fix():
    with pytest.raises(RuntimeError, match=r"scalar Tensor, got one of shape \(3,\).*y\.sum\(\)"
                                           r".*vjp or jacrev"):
        grad(lambda x: x * 2)(t64([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match=r"shape \(1,\)"):
        grad(lambda x: x.sum().reshape(1))(t64([1.0, 2.0]))


@pytest.mark.parametrize("call, error, message", [
    (lambda: grad(lambda x: 3.0)(t64(1.0)), TypeError, "scalar Tensor, got a float"),
    (lambda: grad(lambda x: (x * 1).sum().long())(t64([1.0])), RuntimeError,
     "int64 scalar, which has no derivative"),
    (lambda: grad(lambda x: x.sum(), has_aux=True)(t64([1.0])), RuntimeError,
     r"pair \(output, aux\), got Tensor"),
    (lambda: grad(lambda x: (x.sum(), 1, 2), has_aux=True)(t64([1.0])), RuntimeError,
     "got a tuple of 3"),
    (lambda: grad(lambda x, y: x.sum(), argnums=2)(t64(1.0), t64(1.0)), ValueError,
     r"argnums=2, but f was called with 2 positional"),
    (lambda: grad(lambda x: x.sum(), argnums=(0, 0))(t64(1.0)), ValueError, "must be unique"),
    (lambda: grad(lambda x: x.sum(), argnums=(0, -1))(t64(1.0)), ValueError, "must be unique"),
    (lambda: grad(lambda x: x.sum(), argnums=())(t64(1.0)), ValueError, "non-empty"),
    (lambda: grad(lambda x: x.sum(), argnums=[0])(t64(1.0)), TypeError, "int or a tuple"),
    (lambda: grad(lambda x: x.sum(), argnums=True)(t64(1.0)), TypeError, "int or a tuple"),
    (lambda: grad(lambda x: x.sum())(gradlab.tensor([1, 2])), TypeError,
     r"dtype gradlab.int64 .*only floating point.*x\.double\(\)"),
    (lambda: grad(lambda x: x)(3.0), TypeError, r"must be a Tensor.*holds a float"),
    (lambda: grad(lambda p: p[0].sum())([t64(1.0), "a"]), TypeError, "holds a str"),
    (lambda: grad(t64(1.0)), TypeError, r"expected a function.*grad\(f\), not grad\(f\(x\)\)"),
])
def test_grad_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# --- vjp --------------------------------------------------------------------------------------

def test_vjp_of_a_linear_map_is_the_transpose_product():
    a = t64(rand(3, 4))
    x = t64(rand(4, seed=1))
    out, vjp_fn = vjp(lambda x: a @ x, x)
    np.testing.assert_allclose(out.numpy(), a.numpy() @ x.numpy())
    assert not out.requires_grad
    for seed in (2, 3):  # the function can be called again
        v = t64(rand(3, seed=seed))
        (g,) = vjp_fn(v)
        np.testing.assert_allclose(g.numpy(), v.numpy() @ a.numpy())


def test_vjp_with_pytree_primals_and_outputs():
    x, y = t64(rand(2)), t64(rand(2, seed=1))
    out, vjp_fn = vjp(lambda p, y: {"s": p[0] * y, "t": (p[0] + y).sum()}, (x,), y)
    assert set(out) == {"s", "t"}
    u = t64([1.0, 10.0])
    (gp, gy) = vjp_fn({"t": t64(2.0), "s": u})  # dict keys in any order
    assert isinstance(gp, tuple)
    np.testing.assert_allclose(gp[0].numpy(), u.numpy() * y.numpy() + 2)
    np.testing.assert_allclose(gy.numpy(), u.numpy() * x.numpy() + 2)


def test_vjp_has_aux_and_differentiable_cotangents():
    x = t64([1.0, 2.0])
    out, vjp_fn, aux = vjp(lambda x: (x * x, x.sum()), x, has_aux=True)
    assert aux.item() == 3.0 and not aux.requires_grad
    v = t64([1.0, 1.0], requires_grad=True)
    (g,) = vjp_fn(v)  # g = 2 x * v is differentiable w.r.t. v
    assert g.requires_grad
    g.sum().backward()
    assert v.grad.tolist() == [2.0, 4.0]


@pytest.mark.parametrize("cotangent, error, message", [
    (t64([1.0, 2.0]), RuntimeError, r"cotangent 0 has shape \(2,\), but output 0 has shape "
                                    r"\(3,\)"),
    ((t64([1.0, 2.0, 3.0]),), ValueError, r"expected \*.*got \(\*,\)"),
    ([1.0, 2.0, 3.0], ValueError, r"structure of the cotangents must match f's output"),
    (3.0, TypeError, "cotangent 0 must be a Tensor"),
])
def test_vjp_fn_errors(cotangent, error, message):
    _, vjp_fn = vjp(lambda x: x * 2, t64([1.0, 2.0, 3.0]))
    with pytest.raises(error, match=message):
        vjp_fn(cotangent)


def test_vjp_errors():
    with pytest.raises(ValueError, match="at least one primal"):
        vjp(lambda: t64(1.0))
    with pytest.raises(TypeError, match="leaf 1 is a str"):
        vjp(lambda x: (x, "label"), t64(1.0))
    with pytest.raises(RuntimeError, match="holds no tensors"):
        vjp(lambda x: (), t64(1.0))


# --- jacrev -----------------------------------------------------------------------------------

def test_jacrev_of_closed_forms():
    a = t64(rand(3, 4))
    x = t64(rand(4, seed=1))
    np.testing.assert_allclose(jacrev(lambda x: a @ x)(x).numpy(), a.numpy())
    j = jacrev(gradlab.sin)(x)
    np.testing.assert_allclose(j.numpy(), np.diag(np.cos(x.numpy())))
    # a matrix input and output: J has shape out.shape + in.shape
    m = t64(rand(2, 3))
    j = jacrev(lambda m: m * m)(m)
    assert tuple(j.shape) == (2, 3, 2, 3)
    expected = np.zeros((2, 3, 2, 3))
    for i in range(2):
        for k in range(3):
            expected[i, k, i, k] = 2 * m.numpy()[i, k]
    np.testing.assert_allclose(j.numpy(), expected)
    # a scalar output gives the gradient's shape; a scalar input the output's
    np.testing.assert_allclose(jacrev(lambda m: (m ** 2).sum())(m).numpy(), 2 * m.numpy())
    s = t64(0.5)
    np.testing.assert_allclose(jacrev(lambda s: s * x)(s).numpy(), x.numpy())


def test_jacrev_structure_with_argnums_pytrees_and_aux():
    x, y = t64(rand(2)), t64(rand(3, seed=1))
    f = lambda x, y: ({"a": x * 2, "b": y.sum() * x}, x.sum())  # noqa: E731
    jac, aux = jacrev(f, argnums=(0, 1), has_aux=True)(x, y)
    assert aux.item() == pytest.approx(x.sum().item())
    (dadx, dady), (dbdx, dbdy) = jac["a"], jac["b"]
    np.testing.assert_allclose(dadx.numpy(), 2 * np.eye(2))
    assert dady.tolist() == np.zeros((2, 3)).tolist()
    np.testing.assert_allclose(dbdx.numpy(), y.numpy().sum() * np.eye(2))
    np.testing.assert_allclose(dbdy.numpy(), np.outer(x.numpy(), np.ones(3)))


def test_jacrev_of_an_empty_output_and_an_unused_input():
    x = t64(rand(3))
    j = jacrev(lambda x: x[:0] * 2)(x)
    assert tuple(j.shape) == (0, 3)
    j = jacrev(lambda x, y: y * 2, argnums=0)(x, t64(rand(2)))
    assert tuple(j.shape) == (2, 3) and not j.numpy().any()


def test_jacrev_of_jacrev_is_the_hessian():
    # f = sum(x_i^2 x_j) over i, j = (sum x^2)(sum x): H = 2 diag(S) + 2 (x 1^T + 1 x^T)
    x = t64(rand(3))
    h = jacrev(jacrev(lambda x: (x ** 2).sum() * x.sum()))(x)
    xs = x.numpy()
    expected = 2 * xs.sum() * np.eye(3) + 2 * (np.outer(xs, np.ones(3)) + np.outer(np.ones(3), xs))
    np.testing.assert_allclose(h.numpy(), expected)
    assert not h.requires_grad


def test_grad_through_jacrev_and_vjp_inside_grad():
    # sum of the Jacobian of x^3 is sum(3 x^2): its gradient is 6 x
    x = t64([1.0, 2.0])
    g = grad(lambda x: jacrev(lambda y: y ** 3)(x).sum())(x)
    assert g.tolist() == [6.0, 12.0]
    g = grad(lambda x: vjp(lambda y: y * y, x)[1](gradlab.ones_like(x))[0].sum())(x)
    assert g.tolist() == [2.0, 2.0]


def test_the_transforms_are_reachable_from_gradlab():
    assert gradlab.func.grad is grad and gradlab.func.jacrev is jacrev
    assert {"grad", "grad_and_value", "vjp", "jacrev", "jvp", "jacfwd", "hessian",
            "functional_call"} <= set(gradlab.func.__all__)


# --- against torch.func -----------------------------------------------------------------------

def _function(lib, x, y):
    """R^n x R^n -> R^m, smooth, uses broadcasting and a reduction."""
    return lib.tanh(x[:, None] * y[None, :]).sum(0) + lib.sin(x).sum() * y


@needs_torch
def test_grad_and_vjp_match_torch_func():
    xs, ys = rand(4), rand(4, seed=1)
    gx, gy = t64(xs), t64(ys)
    tx, ty = torch.tensor(xs), torch.tensor(ys)

    def loss(lib):
        return lambda x, y: (_function(lib, x, y) ** 2).sum()

    assert_tree_close(grad(loss(gradlab), argnums=(0, 1))(gx, gy),
                      torch.func.grad(loss(torch), argnums=(0, 1))(tx, ty))
    assert_tree_close(grad(lambda x: grad(lambda x: loss(gradlab)(x, gy))(x).sum())(gx),
                      torch.func.grad(lambda x: torch.func.grad(lambda x: loss(torch)(x, ty))(x)
                                      .sum())(tx))
    v = rand(4, seed=5)
    out, fn = vjp(lambda x, y: _function(gradlab, x, y), gx, gy)
    t_out, t_fn = torch.func.vjp(lambda x, y: _function(torch, x, y), tx, ty)
    assert_tree_close(out, t_out)
    assert_tree_close(fn(t64(v)), t_fn(torch.tensor(v)))


@needs_torch
@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 4), m=st.integers(1, 4), seed=st.integers(0, 2 ** 16))
def test_jacrev_matches_torch_on_random_maps(n, m, seed):
    a, b = rand(m, n, seed=seed), rand(m, seed=seed + 1)
    x = rand(n, seed=seed + 2)

    def f(lib, x):
        a_, b_ = (t64(a), t64(b)) if lib is gradlab else (torch.tensor(a), torch.tensor(b))
        return lib.tanh(a_ @ x + b_) * (x ** 2).sum()

    assert_tree_close(jacrev(lambda x: f(gradlab, x))(t64(x)),
                      torch.func.jacrev(lambda x: f(torch, x))(torch.tensor(x)))


@needs_torch
def test_jacrev_of_jacrev_matches_torch_hessian():
    xs = rand(2, 2)

    def f(lib):
        return lambda x: (lib.exp(x) * x.sum(1, keepdim=True)).sum()

    assert_tree_close(jacrev(jacrev(f(gradlab)))(t64(xs)),
                      torch.func.hessian(f(torch))(torch.tensor(xs)))
