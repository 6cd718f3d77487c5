"""Lesson 8's checks: the student's Functions on random shapes, against gradlab's
built-in ops and against finite differences (gradcheck, float64)."""

import gradlab
from lessons.expect import (
    check,
    expect,
    expect_close,
    expect_gradcheck,
    expect_tensor,
)


def _leaf(rng, shape):
    """A float64 leaf tensor with random values (no ties, so max has one winner per row)."""
    return gradlab.tensor(rng.standard_normal(shape), dtype=gradlab.float64, requires_grad=True)


def _grads(fn, inputs, upstream):
    """Gradients of fn(*inputs) w.r.t. each input, given the upstream gradient: the
    student's op run on fresh copies of the inputs, so no .grad is left behind."""
    copies = [t.detach().clone().requires_grad_() for t in inputs]
    out = fn(*copies)
    out.backward(upstream)
    return out, [c.grad for c in copies]


def _kind(value):
    return "None" if value is None else "a tensor"


def _expect_shape(tensor, shape, what):
    got = tuple(tensor.shape)
    expect(got == tuple(shape), what, str(tuple(shape)), str(got),
           "a gradient always has the shape of the input it belongs to")


@check("matmul")
def matmul(student, rng):
    for _ in range(2):
        n, k, m = (int(v) for v in rng.integers(1, 6, size=3))
        a, b = _leaf(rng, (n, k)), _leaf(rng, (k, m))
        upstream = gradlab.tensor(rng.standard_normal((n, m)), dtype=gradlab.float64)
        out, (da, db) = _grads(student.MatMul.apply, (a, b), upstream)
        expect_tensor(out, "MatMul.apply returns a tensor")
        expect_close(out, a.detach() @ b.detach(), f"MatMul forward, ({n}, {k}) @ ({k}, {m})")
        _, (ref_a, ref_b) = _grads(lambda x, y: x @ y, (a, b), upstream)
        expect(da is not None and db is not None, "backward returns a gradient for a and for b",
               "two tensors", f"{_kind(da)} for a, {_kind(db)} for b")
        _expect_shape(da, (n, k), "dL/dA has A's shape")
        _expect_shape(db, (k, m), "dL/dB has B's shape")
        expect_close(da, ref_a, f"dL/dA for ({n}, {k}) @ ({k}, {m}), against gradlab's matmul")
        expect_close(db, ref_b, f"dL/dB for ({n}, {k}) @ ({k}, {m}), against gradlab's matmul")
    n, k, m = (int(v) for v in rng.integers(2, 5, size=3))
    expect_gradcheck(student.MatMul.apply, (_leaf(rng, (n, k)), _leaf(rng, (k, m))),
                     f"gradcheck of MatMul, ({n}, {k}) @ ({k}, {m})")


def _cases(rng):
    """(shape, dim, keepdim) for both keepdims, one random dim each, maybe negative; one
    case has a square input so an expand that skips unsqueeze gives the transpose."""
    side = int(rng.integers(2, 5))
    cases = [((side, side), 1, False)]
    for keepdim in (False, True):
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(s) for s in rng.integers(1, 5, size=ndim))
        cases.append((shape, int(rng.integers(-ndim, ndim)), keepdim))
    return cases


def _reduction(student_op, builtin, rng, name):
    for shape, dim, keepdim in _cases(rng):
        def student_fn(t, dim=dim, keepdim=keepdim):
            return student_op.apply(t, dim, keepdim)

        def builtin_fn(t, dim=dim, keepdim=keepdim):
            return builtin(t, dim, keepdim)

        x = _leaf(rng, shape)
        want = builtin(x.detach(), dim, keepdim)
        upstream = gradlab.tensor(rng.standard_normal(tuple(want.shape)), dtype=gradlab.float64)
        out, (dx,) = _grads(student_fn, (x,), upstream)
        call = f"{name}(x of shape {shape}, dim={dim}, keepdim={keepdim})"
        expect_tensor(out, f"{name}.apply returns a tensor")
        expect_close(out, want, f"forward of {call}")
        _, (ref,) = _grads(builtin_fn, (x,), upstream)
        expect(dx is not None, f"backward of {call} gives x a gradient", "a tensor", _kind(dx))
        _expect_shape(dx, shape, f"the gradient of {call} has x's shape")
        expect_close(dx, ref, f"gradient of {call}, against gradlab's built-in")
        expect_gradcheck(student_fn, (x,), f"gradcheck of {call}")


@check("sum_dim")
def sum_dim(student, rng):
    _reduction(student.SumDim, lambda t, d, k: t.sum(d, keepdim=k), rng, "SumDim")


@check("mean_dim")
def mean_dim(student, rng):
    _reduction(student.Mean, lambda t, d, k: t.mean(d, keepdim=k), rng, "Mean")


@check("max_dim")
def max_dim(student, rng):
    _reduction(student.MaxDim, lambda t, d, k: t.max(d, keepdim=k).values, rng, "MaxDim")
    # A tie: the row's gradient must arrive once in all, not once per tied element.
    rows, cols = (int(v) for v in rng.integers(2, 5, size=2))
    values = rng.standard_normal((rows, cols))
    values[:, 0] = values[:, 1] = values.max() + 1.0
    x = gradlab.tensor(values, dtype=gradlab.float64, requires_grad=True)
    upstream = gradlab.tensor(rng.uniform(0.5, 2.0, rows), dtype=gradlab.float64)
    _, (dx,) = _grads(lambda t: student.MaxDim.apply(t, 1, False), (x,), upstream)
    expect_close(dx.sum(1), upstream, f"with a tie for the max in every row of a ({rows}, "
                 f"{cols}) input, the gradient summed along the row equals the row's gradient")
