"""The backward engine: backward(), autograd.grad(), accumulation, higher order, deep graphs."""

from __future__ import annotations

import weakref

import numpy as np
import pytest

import gradlab
from gradlab.autograd import grad
from tests.oracle import needs_torch, torch


def leaf(values, dtype=gradlab.float32):
    return gradlab.tensor(values, dtype=dtype, requires_grad=True)


# --- backward() -------------------------------------------------------------------------------

def test_backward_of_a_scalar():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    assert x.grad.dtype is x.dtype and not x.grad.requires_grad and x.grad.grad_fn is None


def test_gradients_accumulate_across_backwards():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_backward_with_an_explicit_gradient():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 3
    y.backward(gradient=gradlab.tensor([1.0, 0.0, 2.0]))
    assert x.grad.tolist() == [3.0, 0.0, 6.0]


def test_a_leaf_used_twice_gets_the_sum():
    x = leaf([3.0])
    (x * x * x + x).sum().backward()  # d/dx (x^3 + x) = 3x^2 + 1
    assert x.grad.tolist() == [28.0]


def test_diamond_graph_runs_each_node_once():
    x = leaf([2.0])
    h = x * 3
    y = (h * h + h.exp()).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2 * 6.0 * 3 + np.exp(6.0) * 3], rtol=1e-6)


def test_retain_graph_allows_a_second_backward():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_backward_inputs_only_fills_those():
    a, b = leaf(2.0), leaf(3.0)
    (a * b).backward(inputs=[a])
    assert a.grad.item() == 3.0 and b.grad is None
    (a * b).backward(inputs=b)
    assert b.grad.item() == 2.0 and a.grad.item() == 3.0


def test_backward_inputs_may_be_a_non_leaf():
    x = leaf([1.0, 2.0])
    h = x * 2
    (h * h).sum().backward(inputs=[h])
    assert h.grad.tolist() == [4.0, 8.0] and x.grad is None


def test_backward_to_several_roots():
    x = leaf([1.0, 2.0])
    gradlab.autograd.backward([(x * 2).sum(), (x * x).sum()])
    assert x.grad.tolist() == [4.0, 6.0]
    x.grad = None
    y = x * 2
    z = y.sum()
    gradlab.autograd.backward([z, y], [None, gradlab.ones(2)])  # y also feeds z
    assert x.grad.tolist() == [4.0, 4.0]


def test_backward_on_a_leaf():
    x = leaf([1.0, 2.0])
    x.backward(gradlab.tensor([5.0, 6.0]))
    assert x.grad.tolist() == [5.0, 6.0]


def test_gradient_of_a_broadcast_input_is_summed_back():
    x = leaf([[1.0], [2.0]])  # (2, 1)
    w = leaf([1.0, 2.0, 3.0])  # (3,)
    (x * w).sum().backward()
    assert x.grad.tolist() == [[6.0], [6.0]] and w.grad.tolist() == [3.0, 3.0, 3.0]


# --- backward() errors ------------------------------------------------------------------------

def test_backward_on_a_non_scalar_needs_a_gradient():
    y = leaf([1.0, 2.0]) * 2
    with pytest.raises(RuntimeError, match=r"only for scalar outputs.*shape \(2,\).*"
                                           r"y.sum\(\).backward\(\).*gradient="):
        y.backward()


def test_backward_on_something_that_does_not_require_grad():
    with pytest.raises(RuntimeError, match="does not require grad.*requires_grad=True.*no_grad"):
        (gradlab.ones(2) * 2).sum().backward()


def test_second_backward_through_freed_buffers_names_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=r"backward through the graph a second time: 'mul'"
                                           r".*retain_graph=True"):
        y.backward()


def test_gradient_shape_must_match():
    y = leaf([1.0, 2.0]) * 2
    with pytest.raises(RuntimeError, match=r"gradient has shape \(3,\) but the tensor has "
                                           r"shape \(2,\)"):
        y.backward(gradlab.ones(3))
    with pytest.raises(TypeError, match="gradient must be a Tensor, got list"):
        y.backward([1.0, 1.0])


def test_backward_with_empty_inputs():
    with pytest.raises(RuntimeError, match="'inputs' was given but is empty"):
        (leaf(1.0) * 2).backward(inputs=[])


# --- autograd.grad ----------------------------------------------------------------------------

def test_grad_returns_gradients_without_touching_dot_grad():
    x = leaf([1.0, 2.0])
    (g,) = grad((x * x).sum(), x)
    assert g.tolist() == [2.0, 4.0] and x.grad is None
    gx, gw = grad((x * x).sum(), [x, x])
    assert gx.tolist() == gw.tolist() == [2.0, 4.0]


def test_grad_with_grad_outputs():
    v = leaf([1.0, 2.0])
    (g,) = grad(v * v, v, grad_outputs=gradlab.tensor([1.0, 10.0]))
    assert g.tolist() == [2.0, 40.0]
    (g,) = grad([v * v], [v], grad_outputs=[gradlab.tensor([1.0, 0.0])])
    assert g.tolist() == [2.0, 0.0]


def test_grad_of_an_unused_input():
    x, unused = leaf(2.0), leaf(1.0)
    with pytest.raises(RuntimeError, match=r"input 1 \(shape \(\)\) was not used.*"
                                           r"allow_unused=True"):
        grad(x * 2, [x, unused])
    gx, gu = grad(x * 2, [x, unused], allow_unused=True)
    assert gx.item() == 2.0 and gu is None
    gx, gu = grad(x * 2, [x, unused], materialize_grads=True)
    assert gu.item() == 0.0


def test_grad_of_an_input_that_does_not_require_grad():
    x = leaf(2.0)
    with pytest.raises(RuntimeError, match=r"input 1 .* does not require grad"):
        grad(x * 2, [x, gradlab.tensor(1.0)])


def test_grad_with_respect_to_an_intermediate():
    x = leaf([1.0, 2.0])
    h = x * 3
    (g,) = grad((h * h).sum(), h)
    assert g.tolist() == [6.0, 12.0]


def test_grad_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    grad(y, x, retain_graph=True)
    (g,) = grad(y, x)
    assert g.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        grad(y, x)


# --- higher order -------------------------------------------------------------------------------

def test_second_and_third_derivatives_of_a_cube():
    x = leaf(2.0, gradlab.float64)
    y = x * x * x
    (d1,) = grad(y, x, create_graph=True)
    assert d1.item() == 12.0 and d1.requires_grad  # 3x^2
    (d2,) = grad(d1, x, create_graph=True)
    assert d2.item() == 12.0  # 6x
    (d3,) = grad(d2, x)
    assert d3.item() == 6.0 and not d3.requires_grad


def test_backward_with_create_graph_makes_grad_differentiable():
    x = leaf([1.0, 2.0], gradlab.float64)
    (x * x * x).sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.tolist() == [3.0, 12.0]
    (gg,) = grad(x.grad.sum(), x)
    assert gg.tolist() == [6.0, 12.0]


def test_accumulating_after_create_graph_leaves_no_alias():
    """After backward(create_graph=True), .grad owns its memory: later sums don't leak."""
    x = leaf([1.0, 2.0])
    x.sum().backward(create_graph=True)  # the gradient is a broadcast of one 1.0
    x.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    y = leaf([1.0, 2.0])
    v = gradlab.tensor([5.0, 6.0])
    y.backward(gradient=v, create_graph=True)
    (y * 1).sum().backward()
    assert y.grad.tolist() == [6.0, 7.0] and v.tolist() == [5.0, 6.0]


@needs_torch
def test_hessian_vector_product_matches_torch():
    rng = np.random.default_rng(0)
    x_np, a_np, v_np = rng.normal(size=3), rng.normal(size=(3, 3)), rng.normal(size=3)

    def f(lib, x, a):
        return (a @ x).tanh().sum() + (x * x * x).sum() + (x.exp() * x).sum()

    def hvp(lib, autograd):
        x = lib.tensor(x_np, requires_grad=True)
        a = lib.tensor(a_np)
        (g,) = autograd.grad(f(lib, x, a), x, create_graph=True)
        (h,) = autograd.grad(g, x, grad_outputs=lib.tensor(v_np))
        return g.detach().numpy(), h.numpy()

    g_ours, h_ours = hvp(gradlab, gradlab.autograd)
    g_torch, h_torch = hvp(torch, torch.autograd)
    np.testing.assert_allclose(g_ours, g_torch, rtol=1e-10)
    np.testing.assert_allclose(h_ours, h_torch, rtol=1e-10)


def test_hessian_vector_product_by_hand():
    """f(x) = sum(x^3): H = diag(6x), so H v = 6 x v."""
    x = leaf([1.0, -2.0, 0.5], gradlab.float64)
    v = gradlab.tensor([1.0, 2.0, 3.0], dtype=gradlab.float64)
    (g,) = grad((x * x * x).sum(), x, create_graph=True)
    (hv,) = grad(g, x, grad_outputs=v)
    assert hv.tolist() == [6.0, -24.0, 9.0]


# --- deep graphs, freeing -------------------------------------------------------------------------

def test_a_100k_op_chain_backpropagates_and_frees_without_recursion():
    x = leaf(1.0, gradlab.float64)
    y = x
    for _ in range(100_000):
        y = y * 1.0001
    # retain_graph keeps every node's saved input alive, the deepest structure to free
    y.backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.item(), 1.0001 ** 100_000, rtol=1e-9)
    last, first = weakref.ref(y.grad_fn), weakref.ref(_first_node(y.grad_fn))
    assert first().next_functions[0][0].variable is x
    del y  # frees 100,000 linked nodes: must not overflow the C stack
    assert last() is None and first() is None


def _first_node(node):
    while node.next_functions[0][0].name() != "AccumulateGrad":
        node = node.next_functions[0][0]
    return node


def test_saved_buffers_are_freed_after_backward():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    mul = y.grad_fn.next_functions[0][0]
    assert mul.op == "mul" and len(mul.saved_tensors) == 2
    y.backward()
    with pytest.raises(RuntimeError, match="already freed the tensors it saved"):
        _ = mul.saved_tensors


def test_dropping_the_output_frees_the_graph():
    x = leaf([1.0, 2.0])
    y = (x * 2).exp()
    node = weakref.ref(y.grad_fn)
    inner = weakref.ref(y.grad_fn.next_functions[0][0])
    del y
    assert node() is None and inner() is None
    assert x.grad is None


def test_graph_records_edges_to_inputs():
    x = leaf([1.0, 2.0])
    w = gradlab.tensor([3.0, 4.0])
    y = x * w
    (edge_x, edge_w) = y.grad_fn.next_functions
    assert edge_x[0].name() == "AccumulateGrad" and edge_x[0].variable is x
    assert edge_w == (None, 0)  # w needs no gradient: PyTorch's empty edge
    assert y.grad_fn.needs_input_grad == (True, False)
    assert y.grad_fn.edges == (edge_x, None)  # the engine's view: one per argument


def test_next_functions_lists_tensor_arguments_only_as_pytorch_does():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    s = x.sum(0)  # the dim is an argument, not an input: no edge for it
    assert [node.name() for node, _ in s.grad_fn.next_functions] == ["AccumulateGrad"]
    assert len(s.grad_fn.edges) == 4  # (x, dim, keepdim, dtype): one per argument
    y = 3 * x
    assert len(y.grad_fn.next_functions) == 1
    z = gradlab.where(x > 2, x, gradlab.zeros(2, 2))  # a bool and a constant tensor
    assert [n is None for n, _ in z.grad_fn.next_functions] == [True, False, True]
    for node, _ in z.grad_fn.next_functions:  # unpacks the PyTorch way
        assert node is None or node.name() == "AccumulateGrad"


# --- what a Function's backward may return --------------------------------------------------------

def test_a_backward_returning_a_non_tensor_is_explained():
    class Bad(gradlab.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return np.ones(2)

    with pytest.raises(TypeError, match=r"BadBackward0 returned a ndarray .*input 0.*Tensors"):
        Bad.apply(leaf([1.0, 2.0])).sum().backward()


def test_a_backward_returning_too_many_gradients_is_explained():
    class TooMany(gradlab.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match=r"TooManyBackward0 returned an incorrect number of "
                                           r"gradients \(expected 1.*got 2\)"):
        TooMany.apply(leaf([1.0])).sum().backward()


def test_a_backward_returning_a_wrong_shape_is_explained():
    class WrongShape(gradlab.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return gradlab.ones(3)

    with pytest.raises(RuntimeError, match=r"gradient of shape \(3,\) for input 0, which has "
                                           r"shape \(2,\)"):
        WrongShape.apply(leaf([1.0, 2.0])).sum().backward()


def test_a_broadcast_gradient_is_summed_and_a_dtype_cast_for_the_input():
    class Loose(gradlab.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return gradlab.ones(4, 2, dtype=gradlab.float64)  # (4, 2) for a (2,) input

    x = leaf([1.0, 2.0])
    Loose.apply(x).backward()
    assert x.grad.tolist() == [4.0, 4.0] and x.grad.dtype is gradlab.float32


def test_a_leaf_keeps_one_accumulator_which_does_not_keep_it_alive():
    import gc
    import weakref

    w = gradlab.ones(3, requires_grad=True)
    first = (w * 2).sum().grad_fn.next_functions[0][0].next_functions[0][0]
    second = (w * 3).sum().grad_fn.next_functions[0][0].next_functions[0][0]
    assert first is second and first.name() == "AccumulateGrad" and first.variable is w
    leaf_ref, acc_ref = weakref.ref(w), weakref.ref(first)
    del w, first, second
    gc.collect()
    assert leaf_ref() is None and acc_ref() is None


def test_gradient_reaching_a_freed_leaf_is_dropped_quietly():
    y = gradlab.ones(3, requires_grad=True) + 2  # add saves nothing: the leaf is gone at once
    assert y.grad_fn.next_functions[0][0].variable is None
    y.sum().backward()  # its gradient has nowhere to go, and that is not an error
    assert y.grad_fn.next_functions[0][0].variable is None
