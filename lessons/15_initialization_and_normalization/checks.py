"""Lesson 15's checks: Kaiming init by its statistics on big random shapes, layer and batch
norm against gradlab.nn.functional (values and gradcheck), and the activations of a deep
ReLU net against NumPy with the same weights."""

import math

import numpy as np

import gradlab
from gradlab import nn
from gradlab.nn import functional as F
from lessons.expect import as_array, check, expect, expect_close, expect_gradcheck, expect_tensor


def _expect_statistics(values, std, what):
    """Mean about 0, std about ``std``, and a normal's 68.3% within one std (a uniform
    with the same std has 57.7%); tolerances are 6 standard errors for this many values."""
    n = values.size
    mean, got_std = float(values.mean()), float(values.std())
    expect(abs(mean) < 6 * std / math.sqrt(n), f"{what}: mean", "0", f"{mean:.3g}",
           f"allowed ±{6 * std / math.sqrt(n):.2g} for {n} values")
    expect_close(got_std, std, f"{what}: std = sqrt(2 / fan_in)", rtol=6 / math.sqrt(2 * n))
    inside = float(np.mean(np.abs(values) < std))
    allowed = 6 * math.sqrt(0.683 * 0.317 / n)
    expect(abs(inside - 0.683) < allowed, f"{what}: share of values within one std "
           "(normal: 68.3%)", f"68.3% ± {allowed:.1%}", f"{inside:.1%}",
           "draw from a normal distribution (randn), not a uniform one")


@check("kaiming_normal_")
def kaiming_normal_(student, rng):
    out_f, in_f = int(rng.integers(150, 300)), int(rng.integers(500, 900))
    cases = [("Linear weight", (out_f, in_f), in_f)]
    k = int(rng.choice([3, 5]))
    c_in = int(rng.integers(8, 24))
    cases.append(("Conv2d weight", (int(rng.integers(96, 160)), c_in, k, k), c_in * k * k))
    c_in, k = int(rng.integers(16, 48)), int(rng.integers(2, 8))
    cases.append(("Conv1d weight", (int(rng.integers(300, 500)), c_in, k), c_in * k))
    for name, shape, fan_in in cases:
        weight = nn.Parameter(gradlab.zeros(*shape, dtype=gradlab.float64))
        result = student.kaiming_normal_(weight)
        expect(result is weight, f"{name}: kaiming_normal_ returns the tensor it was given",
               "the same tensor", "the same tensor" if result is weight else
               "another object" if result is not None else "None",
               "fill the given tensor in place (copy_ under no_grad) and return it")
        expect(weight.dtype == gradlab.float64 and weight.grad_fn is None and
               weight.requires_grad, f"{name}: still a float64 leaf that requires grad",
               "float64, no grad_fn, requires_grad", f"{weight.dtype}, grad_fn "
               f"{weight.grad_fn}, requires_grad {weight.requires_grad}")
        _expect_statistics(as_array(weight), math.sqrt(2 / fan_in),
                           f"{name} {shape}, fan_in {fan_in}")


def _graph_ops(t):
    """The op names in t's graph (walked through grad_fn.next_functions)."""
    seen, todo, ops = set(), [t.grad_fn], set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        ops.add(getattr(node, "op", type(node).__name__))
        todo += [fn for fn, _ in getattr(node, "next_functions", ()) if fn is not None]
    return ops


def _norm_inputs(rng, shape, features):
    x = gradlab.tensor(rng.normal(size=shape) * rng.uniform(0.5, 4) + rng.uniform(-3, 3))
    weight = gradlab.tensor(rng.normal(size=features))
    bias = gradlab.tensor(rng.normal(size=features))
    return x, weight, bias


def _check_norm(student, rng, name, reference, shapes, features_of, small):
    fn = getattr(student, name)
    for shape in shapes:
        x, weight, bias = _norm_inputs(rng, shape, features_of(shape))
        got = fn(x, weight, bias)
        expect_tensor(got, f"{name} returns a tensor")
        expect_close(got, reference(x, weight, bias, 1e-5), f"{name} of a {shape} input",
                     rtol=1e-9, atol=1e-9)
    # Few values and a big eps: divide by n (not n - 1) and put eps inside the root.
    x, weight, bias = _norm_inputs(rng, small, features_of(small))
    x = x * 0.1
    eps = float(rng.uniform(0.05, 0.5))
    expect_close(fn(x, weight, bias, eps=eps), reference(x, weight, bias, eps),
                 f"{name} of a {small} input with small values and eps={eps:.3f}",
                 rtol=1e-9, atol=1e-9)
    x, weight, bias = (t.requires_grad_() for t in _norm_inputs(rng, small, features_of(small)))
    out = fn(x, weight, bias)
    forbidden = {"layer_norm", "batch_norm", "group_norm", "instance_norm"} & _graph_ops(out)
    expect(not forbidden, f"{name} is built from gradlab ops (mean, sub, sqrt, div...)",
           "no normalization op in its graph", f"the graph has {sorted(forbidden)}",
           "write the formula yourself instead of calling gradlab's")
    expect_gradcheck(lambda a, w, b: fn(a, w, b), (x, weight, bias),
                     f"gradients of {name} w.r.t. x, weight and bias, {small} input")


@check("layer_norm")
def layer_norm(student, rng):
    d = int(rng.integers(5, 12))
    shapes = [(int(rng.integers(2, 6)), d),
              (int(rng.integers(2, 4)), int(rng.integers(2, 5)), int(rng.integers(4, 9)))]
    small = (int(rng.integers(2, 4)), int(rng.integers(2, 4)))

    def reference(x, weight, bias, eps):
        return F.layer_norm(x, x.shape[-1:], weight, bias, eps)

    _check_norm(student, rng, "layer_norm", reference, shapes, lambda s: s[-1], small)


@check("batch_norm")
def batch_norm(student, rng):
    shapes = [(int(rng.integers(8, 32)), int(rng.integers(2, 10))) for _ in range(2)]
    small = (int(rng.integers(2, 4)), int(rng.integers(2, 4)))

    def reference(x, weight, bias, eps):
        return F.batch_norm(x, None, None, weight, bias, training=True, eps=eps)

    _check_norm(student, rng, "batch_norm", reference, shapes, lambda s: s[1], small)
    # After batch norm (weight 1, bias 0) every feature has mean 0 and std 1 over the batch.
    x, _, _ = _norm_inputs(rng, shapes[0], shapes[0][1])
    out = as_array(student.batch_norm(x, gradlab.ones(shapes[0][1], dtype=gradlab.float64),
                                      gradlab.zeros(shapes[0][1], dtype=gradlab.float64)))
    expect_close(out.std(axis=0), np.ones(shapes[0][1]), "std of each feature after "
                 "batch_norm (weight 1, bias 0)", rtol=1e-4)


def _numpy_stds(x, weights):
    stds = []
    for w in weights:
        x = np.maximum(x @ w.T, 0)
        stds.append(x.std(ddof=1))  # Tensor.std divides by n - 1, as in PyTorch
    return np.array(stds)


@check("activation_stds")
def activation_stds(student, rng):
    depth, width = int(rng.integers(4, 9)), int(rng.integers(16, 48))
    weights = [rng.normal(size=(width, width)) * rng.uniform(1.0, 2.0) / math.sqrt(width)
               for _ in range(depth)]
    shapes, queue = [], list(weights)

    def init(w):  # hands out the check's weights, in order
        shapes.append(tuple(w.shape))
        with gradlab.no_grad():
            w.copy_(gradlab.tensor(queue.pop(0) if queue else np.zeros((width, width)),
                                   dtype=w.dtype))
        return w

    x = rng.normal(size=(int(rng.integers(20, 60)), width))
    got = student.activation_stds(gradlab.tensor(x, dtype=gradlab.float32), init,
                                  depth=depth)
    expect(shapes == [(width, width)] * depth, "init is called once per layer, on its weight",
           f"{depth} calls on ({width}, {width}) weights",
           f"{len(shapes)} calls on weights of shapes {sorted(set(shapes))}")
    expect(isinstance(got, list) and all(isinstance(v, float) for v in got),
           "activation_stds returns a list of floats", "a list of floats", repr(got)[:80])
    expect_close(got, _numpy_stds(x, [w.astype(np.float32) for w in weights]),
                 f"std after each of {depth} Linear + ReLU layers (y = relu(x @ W.T))",
                 rtol=1e-4)

    # The lesson's experiment: 20 layers of width 128, from a N(0, 1) batch.
    x = gradlab.tensor(rng.normal(size=(256, 128)), dtype=gradlab.float32)
    kaiming = student.activation_stds(
        x, lambda w: nn.init.kaiming_normal_(w, nonlinearity="relu"))
    ratio = kaiming[-1] / kaiming[0]
    expect(0.25 < ratio < 4, "Kaiming init: std after layer 20 / std after layer 1",
           "between 1/4 and 4 (about 1)", f"{ratio:.3g}")
    xavier = student.activation_stds(x, nn.init.xavier_normal_)
    ratio = xavier[-1] / xavier[0]
    expect(1e-4 < ratio < 1e-2, "Xavier init under ReLU: std after layer 20 / after layer 1",
           "about (1/√2)^19 ≈ 0.0014", f"{ratio:.3g}")
    tiny = student.activation_stds(x, lambda w: nn.init.normal_(w, std=0.01))
    expect(tiny[-1] < 1e-15, "N(0, 0.01²) init: std after layer 20", "below 1e-15 (vanished)",
           f"{tiny[-1]:.3g}")
