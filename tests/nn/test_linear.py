"""F.linear (the fused op), nn.Linear, Identity, Bilinear, Flatten and Unflatten."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradlab
import gradlab.nn.functional as F
from gradlab import nn
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch


def _linear_np(np, x, w, b=None):
    out = x @ w.T
    return out if b is None else out + b


LINEAR = [
    OpCase("linear_2d", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
           ((5, 4), (3, 4), (3,)), numpy=_linear_np,
           variants=(((0, 4), (3, 4), (3,)), ((1, 1), (1, 1), (1,)))),
    # fewer rows than outputs: computed as (W xᵀ)ᵀ on NumPy (see dense._times_transposed)
    OpCase("linear_few_rows", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
           ((2, 4), (6, 4), (6,)), numpy=_linear_np, variants=(((1, 3, 4), (6, 4), (6,)),)),
    OpCase("linear_1d", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
           ((4,), (3, 4), (3,)), numpy=_linear_np),
    OpCase("linear_3d", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
           ((2, 5, 4), (3, 4), (3,)), numpy=_linear_np, variants=(((2, 0, 4), (3, 4), (3,)),)),
    OpCase("linear_4d", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
           ((2, 1, 3, 4), (2, 4), (2,)), numpy=_linear_np),
    OpCase("linear_no_bias", lambda lib, x, w: lib.nn.functional.linear(x, w),
           ((5, 4), (3, 4)), numpy=_linear_np),
    OpCase("linear_no_bias_3d", lambda lib, x, w: lib.nn.functional.linear(x, w, None),
           ((2, 5, 4), (3, 4)), numpy=_linear_np),
    OpCase("linear_only_input_grad", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
           ((5, 4), (3, 4), (3,)), numpy=_linear_np, grad_inputs=(0,)),
    OpCase("linear_only_weight_grad", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
           ((2, 5, 4), (3, 4), (3,)), numpy=_linear_np, grad_inputs=(1,)),
]

globals().update(standard_op_tests(LINEAR))


def test_linear_is_one_node_and_one_op():
    x = gradlab.randn(5, 4)
    w = gradlab.randn(3, 4, requires_grad=True)
    b = gradlab.randn(3, requires_grad=True)
    seen = []
    with gradlab.events.subscribe(lambda e: seen.append(e)):
        y = F.linear(x, w, b)
    ops = [e.op for e in seen if isinstance(e, gradlab.events.OpForward)]
    assert ops == ["linear"]
    assert y.grad_fn.op == "linear"
    assert [node is None for node, _ in y.grad_fn.next_functions] == [True, False, False]


def test_linear_skips_the_gradient_of_an_input_that_needs_none():
    x = gradlab.randn(5, 4)
    w = gradlab.randn(3, 4, requires_grad=True)
    F.linear(x, w).sum().backward()
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), np.tile(x.numpy().sum(0), (3, 1)), rtol=1e-5)


def test_hessian_vector_product_through_a_linear_tanh_network():
    """H·v of L = Σ (W2 tanh(W1 x + b1) + b2)² wrt every input and parameter, by
    forward-over-reverse (linear's tangent rule inside its own backward) and by a central
    difference of the gradient."""
    from tests.nn.test_convolution import hvp_two_ways

    rng = np.random.default_rng(9)
    arrays = [rng.standard_normal(s) for s in ((5, 4), (3, 4), (3,), (2, 3), (2,))]
    hvp, by_differences = hvp_two_ways(
        lambda x, w1, b1, w2, b2: F.linear(F.linear(x, w1, b1).tanh(), w2, b2).pow(2).sum(),
        arrays)
    for have, want in zip(hvp, by_differences):
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6)


def test_linear_errors_teach():
    x = gradlab.randn(5, 4)
    with pytest.raises(RuntimeError, match=r"linear: input of shape \(5, 4\) has 4 features.*"
                                           r"expects in_features=3"):
        F.linear(x, gradlab.randn(2, 3))
    with pytest.raises(RuntimeError, match="weight looks transposed|is the weight transposed"):
        F.linear(x, gradlab.randn(4, 3))
    with pytest.raises(RuntimeError, match=r"weight must be 2-D"):
        F.linear(x, gradlab.randn(4))
    with pytest.raises(RuntimeError, match=r"bias must have shape \(3,\).*got \(4,\)"):
        F.linear(x, gradlab.randn(3, 4), gradlab.randn(4))
    with pytest.raises(RuntimeError, match=r"same dtype.*float64.*float32"):
        F.linear(x.double(), gradlab.randn(3, 4))
    with pytest.raises(RuntimeError, match="at least 1 dimension"):
        F.linear(gradlab.tensor(1.0), gradlab.randn(3, 1))
    with pytest.raises(TypeError, match="input must be a Tensor"):
        F.linear(np.ones((2, 4)), gradlab.randn(3, 4))
    with pytest.raises(TypeError, match="bias must be a Tensor"):
        F.linear(x, gradlab.randn(3, 4), 1.0)


# --- nn.Linear ----------------------------------------------------------------------------

def test_linear_module_shapes_repr_and_parameters():
    layer = nn.Linear(4, 3)
    assert layer.weight.shape == (3, 4) and layer.bias.shape == (3,)
    assert isinstance(layer.weight, nn.Parameter) and layer.weight.requires_grad
    assert repr(layer) == "Linear(in_features=4, out_features=3, bias=True)"
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    no_bias = nn.Linear(4, 3, bias=False)
    assert no_bias.bias is None and [n for n, _ in no_bias.named_parameters()] == ["weight"]
    assert "bias=False" in repr(no_bias)
    assert "bias" not in no_bias.state_dict()


def test_linear_module_dtype_and_device_arguments():
    layer = nn.Linear(2, 3, dtype=gradlab.float64, device="cpu")
    assert layer.weight.dtype == gradlab.float64 and layer.bias.dtype == gradlab.float64
    assert layer(gradlab.randn(1, 2, dtype=gradlab.float64)).dtype == gradlab.float64


def test_linear_default_init_bounds_are_pytorchs():
    """kaiming_uniform_(a=√5) gives U(-1/√in, 1/√in) for the weight; the bias the same."""
    layer = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.98 * bound
    np.testing.assert_allclose(w.std(), bound / math.sqrt(3), rtol=0.02)


def test_linear_init_follows_the_seed():
    gradlab.manual_seed(3)
    a = nn.Linear(5, 4).weight.detach().numpy().copy()
    gradlab.manual_seed(3)
    b = nn.Linear(5, 4).weight.detach().numpy()
    np.testing.assert_array_equal(a, b)


@needs_torch
@pytest.mark.parametrize("shape", [(6, 4), (4,), (2, 3, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_module_values_and_grads_match_torch_float64(shape, bias):
    ours = nn.Linear(4, 3, bias=bias).double()
    theirs = torch.nn.Linear(4, 3, bias=bias).double()
    ours.load_state_dict(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal(shape)
    xg = gradlab.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    yg, yt = ours(xg), theirs(xt)
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    cot = np.random.default_rng(1).standard_normal(yt.shape)
    yg.backward(gradlab.tensor(cot))
    yt.backward(torch.tensor(cot))
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12, atol=1e-12,
                                   err_msg=n)


def test_linear_module_gradcheck():
    layer = nn.Linear(3, 2).double()
    x = gradlab.randn(4, 3, dtype=gradlab.float64, requires_grad=True)
    assert gradlab.autograd.gradcheck(lambda x, w, b: F.linear(x, w, b),
                                      (x, layer.weight, layer.bias))


def test_identity_passes_input_and_ignores_arguments():
    x = gradlab.randn(2, 3)
    ident = nn.Identity(54, unused="x")
    assert ident(x) is x and repr(ident) == "Identity()"


@needs_torch
def test_bilinear_matches_torch():
    ours, theirs = nn.Bilinear(3, 2, 4).double(), torch.nn.Bilinear(3, 2, 4).double()
    ours.load_state_dict(theirs.state_dict())
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    ag, bg = gradlab.tensor(a, requires_grad=True), gradlab.tensor(b)
    at, bt = torch.tensor(a, requires_grad=True), torch.tensor(b)
    yg, yt = ours(ag, bg), theirs(at, bt)
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-10)
    yg.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(ag.grad.numpy(), at.grad.numpy(), rtol=1e-10)
    assert repr(ours) == repr(theirs)
    with pytest.raises(RuntimeError, match="Bilinear: expected inputs with last dims 3 and 2"):
        ours(bg, ag)


# --- Flatten / Unflatten ------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("args", [(), (0,), (1, 2), (-3, -2)])
def test_flatten_matches_torch(args):
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
    ours, theirs = nn.Flatten(*args), torch.nn.Flatten(*args)
    np.testing.assert_array_equal(ours(gradlab.tensor(x)).numpy(), theirs(torch.tensor(x)))
    assert repr(ours) == repr(theirs)


@needs_torch
def test_unflatten_matches_torch_and_inverts_flatten():
    x = gradlab.randn(2, 12)
    ours, theirs = nn.Unflatten(1, (3, 4)), torch.nn.Unflatten(1, (3, 4))
    assert ours(x).shape == (2, 3, 4)
    assert repr(ours) == repr(theirs)
    np.testing.assert_array_equal(nn.Flatten()(ours(x)).numpy(), x.numpy())
    assert nn.Unflatten(-1, (2, -1))(x).shape == (2, 2, 6)
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints"):
        nn.Unflatten(1, 12)


def test_functional_bilinear_is_the_layers_op_and_matches_torch():
    gradlab.manual_seed(0)
    layer = nn.Bilinear(3, 2, 4).double()
    x1 = gradlab.randn(5, 3, dtype=gradlab.float64, requires_grad=True)
    x2 = gradlab.randn(5, 2, dtype=gradlab.float64, requires_grad=True)
    out = gradlab.nn.functional.bilinear(x1, x2, layer.weight, layer.bias)
    np.testing.assert_allclose(out.detach().numpy(), layer(x1, x2).detach().numpy())
    assert gradlab.bilinear is gradlab.nn.functional.bilinear
    assert gradlab.autograd.gradcheck(
        lambda a, b: gradlab.nn.functional.bilinear(a, b, layer.weight, layer.bias), (x1, x2))
    if torch is not None:
        theirs = torch.nn.functional.bilinear(
            torch.tensor(x1.detach().numpy()), torch.tensor(x2.detach().numpy()),
            torch.tensor(layer.weight.detach().numpy()), torch.tensor(layer.bias.detach().numpy()))
        np.testing.assert_allclose(out.detach().numpy(), theirs.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match=r"bilinear: expected inputs \(\.\.\., in1\)"):
        gradlab.nn.functional.bilinear(x1, x1, layer.weight)


def test_linear_output_is_row_major_however_it_was_computed():
    """A few rows take the (W xᵀ)ᵀ route; the result must still be C-contiguous, as
    PyTorch's is, so that .view() and friends work on it."""
    w = gradlab.randn(6, 4)
    for rows in (1, 2, 5, 8):
        x = gradlab.randn(rows, 4)
        y = gradlab.nn.functional.linear(x, w)
        assert y.is_contiguous() and y.view(-1).shape == (rows * 6,)
        np.testing.assert_allclose(y.numpy(), x.numpy() @ w.numpy().T, rtol=1e-5, atol=1e-6)


@needs_torch
def test_linear_adds_a_one_element_bias_to_every_feature_like_torch():
    """A bias of shape (1,) broadcasts (fuse_linear_bn_eval with BatchNorm1d(1) makes one);
    its gradient is the sum over every output."""
    rng = np.random.default_rng(0)
    arrays = (rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), np.array([0.7]))
    ours = [gradlab.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    F.linear(*ours).pow(2).sum().backward()
    torch.nn.functional.linear(*theirs).pow(2).sum().backward()
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-12)
