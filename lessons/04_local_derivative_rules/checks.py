"""Lesson 4's checks: each Function on random shapes in float64, against gradlab's
built-in ops (values and gradients) and against finite differences (gradcheck)."""

import numpy as np

import gradlab
from gradlab.autograd import Function
from lessons.expect import check, expect, expect_close, expect_gradcheck, expect_tensor

_SHAPES = ((), (5,), (2, 3), (3, 1, 2))


def _shape(rng):
    return _SHAPES[int(rng.integers(len(_SHAPES)))]


def _tensor(values, requires_grad=True):
    return gradlab.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def _function(student, name):
    """The student's Function subclass called ``name``."""
    cls = getattr(student, name, None)
    ok = isinstance(cls, type) and issubclass(cls, Function)
    expect(ok, f"{name} is a gradlab.autograd.Function subclass", "a Function subclass",
           type(cls).__name__ if not isinstance(cls, type) else cls.__name__)
    return cls


def _builtin_grad(builtin, values, upstream):
    """What gradlab's own op sends back to its input for the upstream gradient."""
    x = _tensor(values)
    builtin(x).backward(upstream)
    return x.grad


def _check_unary(student, rng, name, builtin, values, saves_output=False):
    """Forward, what was saved, backward against the built-in op, then gradcheck."""
    cls = _function(student, name)
    shape = values.shape
    x = _tensor(values)
    y = cls.apply(x)
    expect_tensor(y, f"{name}.apply returns a tensor")
    expect_close(y, builtin(x.detach()), f"{name} forward, shape {shape}", rtol=1e-10,
                 atol=1e-12)
    expect(y.grad_fn is not None, f"{name}.apply records a node", "a grad_fn",
           "None" if y.grad_fn is None else y.grad_fn.name(),
           "return a tensor computed from the inputs")
    if saves_output:
        saved = y.grad_fn.saved_tensors
        ok = len(saved) == 1 and isinstance(saved[0], gradlab.Tensor) and \
            tuple(saved[0].shape) == shape and np.allclose(saved[0].detach().numpy(),
                                                           y.detach().numpy())
        expect(ok, f"what {name}.forward saved", "the output, and nothing else",
               "the output" if ok else "another tensor" if len(saved) == 1 else
               f"{len(saved)} tensors",
               "backward can be written with the output alone: save only it")
    upstream = _tensor(rng.normal(size=shape), requires_grad=False)
    y.backward(upstream)
    expect_close(x.grad, _builtin_grad(builtin, values, upstream),
                 f"{name} backward for a random upstream gradient, against gradlab's own "
                 f"{name.lower()}", rtol=1e-9, atol=1e-12)
    expect_gradcheck(cls.apply, (_tensor(values),),
                     f"gradcheck of {name} on shape {shape}, float64")


@check("square")
def square(student, rng):
    values = rng.uniform(-2, 2, size=_shape(rng))
    _check_unary(student, rng, "Square", lambda t: t * t, values)


@check("mul")
def mul(student, rng):
    cls = _function(student, "Mul")
    shape = _shape(rng)
    va, vb = rng.normal(size=shape), rng.normal(size=shape)
    a, b = _tensor(va), _tensor(vb)
    y = cls.apply(a, b)
    expect_tensor(y, "Mul.apply returns a tensor")
    expect_close(y, va * vb, f"Mul forward, shape {shape}", rtol=1e-10, atol=1e-12)
    upstream = rng.normal(size=shape)
    y.backward(_tensor(upstream, requires_grad=False))
    expect_close(a.grad, upstream * vb, "gradient for a: upstream · b", rtol=1e-9, atol=1e-12)
    expect_close(b.grad, upstream * va, "gradient for b: upstream · a", rtol=1e-9, atol=1e-12)
    # Only a requires grad: b is a constant and must get no gradient.
    a, b = _tensor(va), _tensor(vb, requires_grad=False)
    cls.apply(a, b).backward(_tensor(upstream, requires_grad=False))
    expect_close(a.grad, upstream * vb, "gradient for a when b needs none", rtol=1e-9,
                 atol=1e-12)
    expect(b.grad is None, "a constant b gets no .grad", "None",
           "None" if b.grad is None else "a gradient")
    expect_gradcheck(cls.apply, (_tensor(va), _tensor(vb)),
                     f"gradcheck of Mul on shape {shape}, float64, both inputs")


@check("exp")
def exp(student, rng):
    values = rng.uniform(-2, 2, size=_shape(rng))
    _check_unary(student, rng, "Exp", lambda t: t.exp(), values, saves_output=True)


@check("sigmoid")
def sigmoid(student, rng):
    values = rng.normal(0, 2, size=_shape(rng))
    _check_unary(student, rng, "Sigmoid", lambda t: t.sigmoid(), values, saves_output=True)


@check("log")
def log(student, rng):
    values = rng.uniform(0.2, 3, size=_shape(rng))
    _check_unary(student, rng, "Log", lambda t: t.log(), values)


@check("softplus")
def softplus(student, rng):
    shape = _shape(rng)
    values = rng.normal(0, 2, size=shape)
    x = _tensor(values)
    y = student.softplus(x)
    expect_tensor(y, "softplus returns a tensor")
    expect_close(y, np.logaddexp(0, values), f"softplus(x) = ln(1 + e^x), shape {shape}",
                 rtol=1e-10, atol=1e-12)
    found, stack = set(), [y.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None:
            found.add(getattr(node, "fn", None))
            stack.extend(fn for fn, _ in node.next_functions if fn is not None)
    for name in ("Exp", "Log"):
        mine = getattr(student, name, None) in found
        expect(mine, f"softplus's graph has a node of your {name}", f"a node of {name}",
               "one" if mine else "none", f"call {name}.apply, not gradlab's own op")
    y.backward(_tensor(np.ones(shape), requires_grad=False))
    expect_close(x.grad, 1 / (1 + np.exp(-values)), "d softplus/dx = σ(x), chained by "
                 "backward through your Log, gradlab's add and your Exp", rtol=1e-9,
                 atol=1e-12)
    expect_gradcheck(student.softplus, (_tensor(values),),
                     f"gradcheck of softplus on shape {shape}, float64")
