"""gradlab.autograd.functional (vjp, jvp, vhp, hvp, jacobian, hessian) against
torch.autograd.functional in float64: values, nesting, detaching, create_graph, strict and v
errors; closed forms where PyTorch is not installed."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.autograd import functional as F
from tests.oracle import needs_torch, torch

X = np.array([0.3, -1.2, 0.8])
Y = np.array([1.1, 0.4, -0.6])


def both(lib, *arrays, requires_grad=False):
    ts = tuple(lib.tensor(a, dtype=lib.float64, requires_grad=requires_grad) for a in arrays)
    return ts if len(ts) > 1 else ts[0]


def assert_same(got, expected):
    """Same nesting (tuple vs list vs tensor), same values, same requires_grad."""
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected), (got, expected)
        for g, e in zip(got, expected):
            assert_same(g, e)
        return
    assert isinstance(got, gradlab.Tensor)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    assert got.requires_grad == expected.requires_grad


# f(lib) -> function; inputs: how many of X, Y; scalar: f returns one number
FUNCS = {
    "tensor_to_tensor": (lambda lib: lambda x: x.sin() * x.exp(), 1),
    "tensor_to_tuple": (lambda lib: lambda x: (x ** 2, x.cos().sum()), 1),
    "tuple_to_tensor": (lambda lib: lambda x, y: x * y.tanh(), 2),
    "tuple_to_tuple": (lambda lib: lambda x, y: ((x * y).sin(), (x ** 2).sum() * y), 2),
}
SCALARS = {
    "tensor": (lambda lib: lambda x: (x.sin() ** 3).sum(), 1),
    "tuple": (lambda lib: lambda x, y: (x.exp() * y).sum() + (x * x * y).sum(), 2),
}


def inputs_of(lib, n, requires_grad=False):
    return both(lib, *(X, Y)[:n], requires_grad=requires_grad)


@needs_torch
@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("how", ["reverse", "forward"])
def test_jacobian_matches_torch_in_value_and_nesting(name, how):
    make, n = FUNCS[name]
    kw = {} if how == "reverse" else {"strategy": "forward-mode", "vectorize": True}
    got = F.jacobian(make(gradlab), inputs_of(gradlab, n), **kw)
    expected = torch.autograd.functional.jacobian(make(torch), inputs_of(torch, n), **kw)
    if how == "forward":  # PyTorch's forward-mode results stay attached; gradlab detaches
        expected = _detach_tree(expected)
    assert_same(got, expected)


def _detach_tree(tree):
    if isinstance(tree, (tuple, list)):
        return type(tree)(_detach_tree(t) for t in tree)
    return tree.detach()


def pack(lib, arrays, as_tuple):
    ts = tuple(lib.tensor(a, dtype=lib.float64) for a in arrays)
    return ts if as_tuple else ts[0]


@needs_torch
@pytest.mark.parametrize("name", FUNCS)
def test_vjp_and_jvp_match_torch(name):
    make, n = FUNCS[name]
    x = inputs_of(torch, n)
    outs = make(torch)(*(x if n > 1 else (x,)))
    out_is_tuple = isinstance(outs, tuple)
    rng = np.random.default_rng(1)
    v_out = [rng.standard_normal(tuple(o.shape)) for o in (outs if out_is_tuple else (outs,))]
    v_in = [rng.standard_normal(3) for _ in range(n)]
    for fn, arrays, as_tuple in (("vjp", v_out, out_is_tuple), ("jvp", v_in, n > 1)):
        got = getattr(F, fn)(make(gradlab), inputs_of(gradlab, n),
                             pack(gradlab, arrays, as_tuple))
        expected = getattr(torch.autograd.functional, fn)(make(torch), inputs_of(torch, n),
                                                          pack(torch, arrays, as_tuple))
        assert_same(got, expected)


@needs_torch
@pytest.mark.parametrize("name", SCALARS)
def test_hessian_vhp_hvp_match_torch(name):
    make, n = SCALARS[name]
    tf = torch.autograd.functional
    for fn in ("vhp", "hvp"):
        got = getattr(F, fn)(make(gradlab), inputs_of(gradlab, n), pack(gradlab, (Y, X)[:n],
                                                                         n > 1))
        expected = getattr(tf, fn)(make(torch), inputs_of(torch, n),
                                   pack(torch, (Y, X)[:n], n > 1))
        assert_same(got, expected)
    assert_same(F.hessian(make(gradlab), inputs_of(gradlab, n)),
                tf.hessian(make(torch), inputs_of(torch, n)))
    kw = {"vectorize": True, "outer_jacobian_strategy": "forward-mode"}
    assert_same(F.hessian(make(gradlab), inputs_of(gradlab, n), **kw),
                _detach_tree(tf.hessian(make(torch), inputs_of(torch, n), **kw)))


@needs_torch
@pytest.mark.parametrize("fn", ["vjp", "jvp", "vhp", "hvp", "jacobian", "hessian"])
def test_create_graph_gives_second_derivatives_as_torch(fn):
    scalar = fn in ("vhp", "hvp", "hessian")
    results = []
    for lib, mod in ((gradlab, F), (torch, torch.autograd.functional)):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        f = (lambda x: (x.sin() ** 3).sum()) if scalar else (lambda x: x.sin() ** 2 * x)
        args = () if fn in ("jacobian", "hessian") else (lib.tensor(Y, dtype=lib.float64),)
        out = getattr(mod, fn)(f, x, *args, create_graph=True)
        value = out if fn in ("jacobian", "hessian") else out[1]
        assert value.requires_grad
        (second,) = lib.autograd.grad((value * value).sum(), x)
        results.append((out, second))
    assert_same(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1].numpy(), results[1][1].numpy(), rtol=1e-10)


def test_results_are_detached_and_inputs_untouched_without_create_graph():
    x = both(gradlab, X, requires_grad=True)
    out, grad = F.vjp(lambda x: (x ** 2).sum(), x)
    assert not out.requires_grad and not grad.requires_grad
    np.testing.assert_allclose(grad.numpy(), 2 * X)
    assert x.grad is None
    assert not F.jacobian(lambda x: x ** 2, x).requires_grad


def test_an_unused_input_gets_zeros_without_strict():
    x, y = both(gradlab, X, Y)
    _, (gx, gy) = F.vjp(lambda x, y: (x ** 2).sum(), (x, y))
    np.testing.assert_allclose(gy.numpy(), 0.0)
    jac = F.jacobian(lambda x, y: x * 2, (x, y))
    np.testing.assert_allclose(jac[1].numpy(), np.zeros((3, 3)))
    np.testing.assert_allclose(jac[0].numpy(), 2 * np.eye(3))
    hess = F.hessian(lambda x, y: (x ** 3).sum(), (x, y))
    np.testing.assert_allclose(hess[0][0].numpy(), np.diag(6 * X))
    np.testing.assert_allclose(hess[1][1].numpy(), 0.0)


def test_v_may_be_left_out_for_one_element():
    x = both(gradlab, np.array([0.5]))
    _, d = F.jvp(lambda x: x ** 3, x)
    np.testing.assert_allclose(d.numpy(), [3 * 0.25])
    _, d = F.hvp(lambda x: (x ** 3).sum(), x)
    np.testing.assert_allclose(d.numpy(), [6 * 0.5])
    _, d = F.vjp(lambda x: (x ** 3).sum(), both(gradlab, X))
    np.testing.assert_allclose(d.numpy(), 3 * X ** 2)


# (function, f, n inputs, kwargs (v: how many ones), message): the same errors as PyTorch
STRICT_ERRORS = [
    ("vjp", lambda x, y: x * 2, 2, {"v": 1}, "independent of input 1"),
    ("vjp", lambda x: x.detach(), 1, {"v": 1}, "Output 0 .* does not require gradients"),
    ("vjp", lambda x: x * 2, 1, {"v": 1, "create_graph": True},
     "jacobian .* independent of input 0.*create_graph=True"),
    ("jvp", lambda x, y: x * 2, 2, {"v": "per input"}, "independent of input 1"),
    ("jvp", lambda x: x * 2, 1, {"v": "per input", "create_graph": True},
     "jacobian .* independent of input 0.*create_graph=True"),
    ("vhp", lambda x: (x * 2).sum(), 1, {"v": "per input"},
     "jacobian .* with respect to input 0 is independent of the input"),
    ("hvp", lambda x, y: (x ** 2).sum(), 2, {"v": "per input"}, "independent of input 1"),
    ("jacobian", lambda x, y: x * 2, 2, {}, "Output 0 .* independent of input 1"),
    ("jacobian", lambda x: x * 2, 1, {"create_graph": True}, "create_graph=True"),
    ("hessian", lambda x, y: (x ** 2).sum() + y.sum(), 2, {},
     "jacobian .* with respect to input 1 is independent"),
]


@pytest.mark.parametrize("case", STRICT_ERRORS, ids=lambda c: c[0] + "_" + c[4][:20])
def test_strict_mode_raises_as_torch(case):
    name, f, n, kw, message = case
    libs = [(gradlab, F)] + ([(torch, torch.autograd.functional)] if torch else [])
    for lib, mod in libs:
        kw2 = dict(kw)
        if "v" in kw2:
            count = n if kw2["v"] == "per input" else kw2["v"]
            ones = tuple(lib.ones(3, dtype=lib.float64) for _ in range(count))
            kw2["v"] = ones if count > 1 else ones[0]
        with pytest.raises(RuntimeError, match=message):
            getattr(mod, name)(f, inputs_of(lib, n), strict=True, **kw2)


CALL_ERRORS = [  # (function, call, error type, message) — PyTorch raises the same
    ("vjp", lambda m, lib: m.vjp(lambda x: x * 2, inputs_of(lib, 1)), RuntimeError,
     "v can only be None if the user-provided function returns a single Tensor"),
    ("jvp", lambda m, lib: m.jvp(lambda x: x * 2, inputs_of(lib, 1)), RuntimeError,
     "v can only be None if the input to the user-provided function is a single"),
    ("jvp", lambda m, lib: m.jvp(lambda x: x, inputs_of(lib, 1), (lib.ones(3),) * 2),
     RuntimeError, "The given v should contain a single Tensor"),
    ("vjp", lambda m, lib: m.vjp(lambda x, y: x, inputs_of(lib, 2), lib.ones(2)),
     RuntimeError, "v has invalid size"),
    ("vhp", lambda m, lib: m.vhp(lambda x, y: x.sum(), inputs_of(lib, 2), (lib.ones(3),)),
     RuntimeError, "v is a tuple of invalid length: should be 2 but got 1"),
    ("vjp", lambda m, lib: m.vjp(lambda x: [x], inputs_of(lib, 1), lib.ones(3)), TypeError,
     "outputs of the user-provided function given to vjp must be either a Tensor or a tuple"),
    ("jacobian", lambda m, lib: m.jacobian(lambda x: (x, 3), inputs_of(lib, 1)), TypeError,
     "value at index 1 has type"),
    ("jacobian", lambda m, lib: m.jacobian(lambda x: x, [inputs_of(lib, 1)]), TypeError,
     "inputs given to jacobian must be either a Tensor or a tuple"),
    ("hessian", lambda m, lib: m.hessian(lambda x: x ** 2, inputs_of(lib, 1)), RuntimeError,
     "function given to hessian should contain a single element"),
    ("hvp", lambda m, lib: m.hvp(lambda x: (x.sum(),), inputs_of(lib, 1), lib.ones(3)),
     RuntimeError, "function given to hvp should return a single Tensor"),
    ("jacobian", lambda m, lib: m.jacobian(lambda x: x, inputs_of(lib, 1),
                                           strategy="forward-mode"),
     NotImplementedError, "only implemented for `vectorize=True`"),
    ("jacobian", lambda m, lib: m.jacobian(lambda x: x, inputs_of(lib, 1), create_graph=True,
                                           strategy="forward-mode", vectorize=True),
     NotImplementedError, "`create_graph=True` and `strategy=\"forward-mode\"`"),
    ("jacobian", lambda m, lib: m.jacobian(lambda x: x, inputs_of(lib, 1), strict=True,
                                           strategy="forward-mode", vectorize=True),
     RuntimeError, "`strict=True` and `strategy=\"forward-mode\"`"),
    ("jacobian", lambda m, lib: m.jacobian(lambda x: x, inputs_of(lib, 1), strict=True,
                                           vectorize=True),
     RuntimeError, "`strict=True` and `vectorized=True` are not supported together"),
    ("jacobian", lambda m, lib: m.jacobian(lambda x: x, inputs_of(lib, 1), strategy="fwd"),
     AssertionError, "Expected strategy to be either \"forward-mode\" or \"reverse-mode\""),
    ("hessian", lambda m, lib: m.hessian(lambda x: x.sum(), inputs_of(lib, 1),
                                         outer_jacobian_strategy="x"),
     AssertionError, "Expected strategy to be either"),
]


@pytest.mark.parametrize("case", CALL_ERRORS, ids=lambda c: c[0] + "_" + c[3][:24])
def test_argument_and_output_errors_as_torch(case):
    _, call, error, message = case
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(F, gradlab)
    if torch is not None:  # PyTorch raises the same type (its wording may differ slightly)
        with pytest.raises(error):
            call(torch.autograd.functional, torch)


def test_reachable_after_import_gradlab():
    assert gradlab.autograd.functional.jacobian is F.jacobian
    x = both(gradlab, X)
    np.testing.assert_allclose(gradlab.autograd.functional.jacobian(gradlab.sin, x).numpy(),
                               np.diag(np.cos(X)))


def test_gradcheck_of_the_vjp_result():
    """vjp(create_graph=True) is itself differentiable: gradcheck it in float64."""
    v = both(gradlab, Y)

    def vjp_of(x):
        return F.vjp(lambda x: x.sin() * x.exp(), x, v, create_graph=True)[1]

    assert gradlab.autograd.gradcheck(vjp_of, (both(gradlab, X, requires_grad=True),))
