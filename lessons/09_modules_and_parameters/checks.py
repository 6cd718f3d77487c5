"""Lesson 9's checks: the student's Linear against nn.Linear with the same weights, the MLP's
parameter names and gradients, parameter counts of random models, and the parameters that
got no gradient."""

import math

import numpy as np

import gradlab
import gradlab.nn.functional as F
from gradlab import nn
from lessons.expect import check, expect, expect_close, expect_equal, expect_tensor


def _names(model):
    return [name for name, _ in model.named_parameters()]


def _expect_shape(tensor, shape, what):
    got = tuple(tensor.shape)
    expect(got == shape, what, str(shape), str(got))


def _data(rng, *shape):
    return gradlab.tensor(rng.standard_normal(shape), dtype=gradlab.float32)


def _same_as_nn_linear(layer, n_in, n_out, bias, rng):
    """Copy the student's weights into an nn.Linear; outputs and gradients must agree."""
    ref = nn.Linear(n_in, n_out, bias=bias)
    ref.load_state_dict(layer.state_dict())  # needs the keys and shapes nn.Linear has
    batch = int(rng.integers(1, 6))
    x = _data(rng, batch, n_in)
    upstream = _data(rng, batch, n_out)
    x_mine, x_ref = x.clone().requires_grad_(), x.clone().requires_grad_()
    out = layer(x_mine)
    expect_tensor(out, "Linear returns a tensor")
    want = ref(x_ref)
    where = f"Linear({n_in}, {n_out}, bias={bias}) on a batch of {batch}"
    expect_close(out, want.detach(), f"output of {where}, against nn.Linear with the same "
                 "weights", rtol=1e-5, atol=1e-6)
    (out * upstream).sum().backward()
    (want * upstream).sum().backward()
    expect_close(layer.weight.grad, ref.weight.grad, f"gradient of the weight, {where}",
                 rtol=1e-5, atol=1e-6)
    if bias:
        expect_close(layer.bias.grad, ref.bias.grad, f"gradient of the bias, {where}",
                     rtol=1e-5, atol=1e-6)
    expect_close(x_mine.grad, x_ref.grad, f"gradient of the input, {where}", rtol=1e-5,
                 atol=1e-6)


@check("linear")
def linear(student, rng):
    n_in, n_out = (int(v) for v in rng.integers(1, 9, size=2))
    layer = student.Linear(n_in, n_out)
    expect(isinstance(layer, nn.Module), "Linear is an nn.Module", "a subclass of nn.Module",
           f"a subclass of {type(layer).__mro__[1].__name__}")
    expect_equal(_names(layer), ["weight", "bias"], f"parameter names of Linear({n_in}, {n_out})")
    expect(isinstance(layer.weight, nn.Parameter), "the weight is an nn.Parameter",
           "a Parameter", f"a {type(layer.weight).__name__}")
    _expect_shape(layer.weight, (n_out, n_in),
                  f"weight shape of Linear({n_in}, {n_out}): (out_features, in_features)")
    _expect_shape(layer.bias, (n_out,), f"bias shape of Linear({n_in}, {n_out})")
    _same_as_nn_linear(layer, n_in, n_out, True, rng)

    layer = student.Linear(n_out, n_in, bias=False)
    expect_equal(_names(layer), ["weight"], f"parameter names of Linear({n_out}, {n_in}, "
                 "bias=False)")
    expect(getattr(layer, "bias", "missing") is None, "bias=False leaves self.bias as None",
           "None", repr(getattr(layer, "bias", "no attribute bias"))[:60],
           'register_parameter("bias", None)')
    _same_as_nn_linear(layer, n_out, n_in, False, rng)

    # Initialisation: nn.Linear's U(-1/sqrt(in), 1/sqrt(in)), from gradlab's generator.
    n_in, n_out = int(rng.integers(100, 300)), int(rng.integers(100, 200))
    seed = int(rng.integers(0, 2**31))
    gradlab.manual_seed(seed)
    big = student.Linear(n_in, n_out)
    bound = 1 / math.sqrt(n_in)
    w = big.weight.detach().numpy().astype(np.float64)
    b = big.bias.detach().numpy().astype(np.float64)
    expect(bool(np.abs(w).max() <= bound * (1 + 1e-6)),
           f"all weights of Linear({n_in}, {n_out}) lie in ±1/sqrt({n_in}) = ±{bound:.4f}",
           f"|w| <= {bound:.4f}", f"max |w| = {np.abs(w).max():.4f}")
    expect(bool(abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound / math.sqrt(3)),
           "the weights are spread uniformly over that range (std = bound / sqrt(3))",
           f"std ≈ {bound / math.sqrt(3):.4f}", f"std = {w.std():.4f}")
    expect(bool(np.abs(b).max() <= bound * (1 + 1e-6) and b.std() > 0.3 * bound),
           f"the bias is drawn from the same range ±{bound:.4f}, not left at zero",
           f"|b| <= {bound:.4f}, spread out", f"max |b| = {np.abs(b).max():.4f}, "
           f"std {b.std():.4f}")
    gradlab.manual_seed(seed)
    again = student.Linear(n_in, n_out)
    expect(bool(np.array_equal(again.weight.detach().numpy(), big.weight.detach().numpy())),
           "gradlab.manual_seed makes the init repeatable (draw from gradlab, not NumPy)",
           "the same weights twice", "different weights")


@check("mlp")
def mlp(student, rng):
    depth = int(rng.integers(2, 5))
    sizes = [int(v) for v in rng.integers(1, 9, size=depth + 1)]
    model = student.MLP(sizes)
    names = [f"layers.{k}.{p}" for k in range(depth) for p in ("weight", "bias")]
    expect_equal(_names(model), names, f"parameter names of MLP({sizes})")
    expect_equal(list(model.state_dict().keys()), names, f"state_dict keys of MLP({sizes})")
    kinds = {type(m).__name__ for m in model.layers}
    expect(all(isinstance(m, student.Linear) for m in model.layers),
           "the MLP is built from your Linear", "Linear layers", ", ".join(sorted(kinds)))

    x = _data(rng, int(rng.integers(1, 6)), sizes[0])
    out = model(x)
    expect_tensor(out, "MLP returns a tensor")
    with gradlab.no_grad():
        want = x
        for k, layer in enumerate(model.layers):
            want = F.linear(want, layer.weight, layer.bias)
            if k < depth - 1:
                want = F.relu(want)
    expect_close(out, want, f"output of MLP({sizes}): linear, relu, ..., linear (no relu "
                 "after the last)", rtol=1e-5, atol=1e-6)

    upstream = _data(rng, *out.shape)
    (out * upstream).sum().backward()
    params = [p for _, p in model.named_parameters()]
    copies = [p.detach().clone().requires_grad_() for p in params]
    h = x
    for k in range(depth):
        h = F.linear(h, copies[2 * k], copies[2 * k + 1])
        if k < depth - 1:
            h = F.relu(h)
    (h * upstream).sum().backward()
    for name, p, c in zip(names, params, copies):
        expect_close(p.grad, c.grad, f"gradient of {name}", rtol=1e-5, atol=1e-6)

    model.eval()
    still = [name or "the MLP" for name, m in model.named_modules() if m.training]
    expect(not still, "model.eval() reaches every layer (they are registered submodules)",
           "training False everywhere", f"still training: {', '.join(still)}" if still else
           "training False everywhere")
    model.train()
    off = [name or "the MLP" for name, m in model.named_modules() if not m.training]
    expect(not off, "model.train() switches them back", "training True everywhere",
           f"not training: {', '.join(off)}" if off else "training True everywhere")


class _Tied(nn.Module):
    """Two layers that share one weight (as a language model ties its embedding and output)."""

    def __init__(self, n):
        super().__init__()
        self.first = nn.Linear(n, n)
        self.second = nn.Linear(n, n)
        self.second.weight = self.first.weight


@check("count_parameters")
def count_parameters(student, rng):
    a, b, c = (int(v) for v in rng.integers(1, 20, size=3))
    with_bias = bool(rng.integers(0, 2))
    model = nn.Sequential(nn.Linear(a, b), nn.ReLU(), nn.Linear(b, c, bias=with_bias))
    expect_equal(student.count_parameters(model), a * b + b + b * c + c * with_bias,
                 f"parameters of Linear({a}, {b}), ReLU, Linear({b}, {c}, bias={with_bias})")

    n = int(rng.integers(2, 10))
    expect_equal(student.count_parameters(nn.BatchNorm1d(n)), 2 * n,
                 f"parameters of BatchNorm1d({n}): weight and bias; its running statistics "
                 "are buffers, not parameters")
    vocab, dim = (int(v) for v in rng.integers(2, 30, size=2))
    expect_equal(student.count_parameters(nn.Embedding(vocab, dim)), vocab * dim,
                 f"parameters of Embedding({vocab}, {dim})")
    expect_equal(student.count_parameters(_Tied(n)), n * n + 2 * n,
                 f"parameters of two Linear({n}, {n}) sharing one weight: it counts once")

    model[0].weight.requires_grad_(False)
    expect_equal(student.count_parameters(model, trainable_only=True), b + b * c + c * with_bias,
                 f"trainable parameters once the first layer's ({b}, {a}) weight is frozen")
    expect_equal(student.count_parameters(model), a * b + b + b * c + c * with_bias,
                 "all parameters of the same model, frozen ones included")


class _TwoHeads(nn.Module):
    """A body and two heads; forward uses one head, so the other gets no gradient."""

    def __init__(self, n, k, use):
        super().__init__()
        self.use = use
        self.body = nn.Linear(n, k)
        self.head_a = nn.Linear(k, 1)
        self.head_b = nn.Linear(k, 1)

    def forward(self, x):
        head = self.head_a if self.use == "a" else self.head_b
        return head(F.relu(self.body(x)))


@check("params_without_grad")
def params_without_grad(student, rng):
    n, k = (int(v) for v in rng.integers(2, 8, size=2))
    use = "a" if rng.integers(0, 2) else "b"
    model = _TwoHeads(n, k, use)
    frozen = bool(rng.integers(0, 2))
    if frozen:
        model.body.bias.requires_grad_(False)
    expect_equal(student.params_without_grad(model), _names(model),
                 "before any backward, no parameter has a gradient")
    model(_data(rng, 4, n)).sum().backward()
    unused = "head_b" if use == "a" else "head_a"
    want = (["body.bias"] if frozen else []) + [f"{unused}.weight", f"{unused}.bias"]
    what = f"after backward through head_{use}" + (" with body.bias frozen" if frozen else "")
    expect_equal(student.params_without_grad(model), want, what)

    # A gradient of zeros is still a gradient: a layer whose output is multiplied by 0.
    model = nn.Sequential(nn.Linear(n, k), nn.Linear(k, 1))
    (model(_data(rng, 3, n)) * 0).sum().backward()
    expect_equal(student.params_without_grad(model), [],
                 "a parameter whose gradient is all zeros did get one (.grad is not None)")
