"""gather, scatter, scatter_add, index_select, index_add, take_along_dim (and the in-place forms).

Forward vs NumPy, gradcheck and gradgradcheck, values and gradients vs
PyTorch (repeated indices included), and the errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
import gradlab.autograd.forward_ad as fwAD
from tests.oracle import (
    M,
    OpCase,
    cases_by_id,
    check_gradcheck,
    check_hvp,
    standard_op_tests,
)

X3 = ((3, 4, 5),)


def G(lib, values):
    return lib.tensor(values, dtype=lib.int64)


FUNCS = [
    OpCase("gather_dim1", lambda lib, x: x.gather(1, G(lib, [[0, 0, 3], [1, 2, 2], [3, 3, 3]])),
           M, numpy=lambda np, x: np.take_along_axis(x, np.array([[0, 0, 3], [1, 2, 2],
                                                                   [3, 3, 3]]), 1)),
    OpCase("gather_small_index", lambda lib, x: lib.gather(x, 0, G(lib, [[2, 0], [2, 2]])), M,
           numpy=lambda np, x: np.take_along_axis(x[:, :2], np.array([[2, 0], [2, 2]]), 0)),
    OpCase("gather_3d", lambda lib, x: x.gather(-1, G(lib, [[[1], [0]], [[4], [4]]])), X3,
           numpy=lambda np, x: np.take_along_axis(x[:2, :2], np.array([[[1], [0]], [[4], [4]]]),
                                                  -1)),
    OpCase("gather_0d", lambda lib, x: x.gather(0, G(lib, 0)), ((),), numpy=lambda np, x: x),
    OpCase("gather_0d_index", lambda lib, x: x.gather(0, G(lib, 2)), ((4,),),
           numpy=lambda np, x: x[2]),
    OpCase("gather_0d_input", lambda lib, x: x.gather(0, G(lib, [0, 0])), ((),),
           numpy=lambda np, x: np.stack([x, x])),
    OpCase("gather_empty", lambda lib, x: x.gather(1, lib.zeros(3, 0, dtype=lib.int64)), M,
           numpy=lambda np, x: x[:, :0]),
    OpCase("scatter_add", lambda lib, x, s: lib.scatter_add(x, 0, G(lib, [[0, 1, 0, 0],
                                                                         [0, 2, 2, 0]]), s),
           ((3, 4), (2, 4))),
    OpCase("scatter_add_dim1", lambda lib, x, s: x.scatter_add(1, G(lib, [[1, 1], [0, 3]]), s),
           ((2, 4), (2, 2))),
    OpCase("scatter_src", lambda lib, x, s: x.scatter(1, G(lib, [[3, 0], [1, 2]]), s),
           ((2, 4), (2, 2))),
    OpCase("scatter_value", lambda lib, x: lib.scatter(x, 0, G(lib, [[1, 0, 2, 2]]), 1.5), M),
    OpCase("scatter_inplace", lambda lib, x, s: x.clone().scatter_(0, G(lib, [[2, 1]]), s),
           ((3, 2), (1, 2))),
    OpCase("scatter_add_inplace", lambda lib, x, s: (x * 1).scatter_add_(
        0, G(lib, [[0, 0], [0, 0]]), s), ((1, 2), (2, 2))),
    OpCase("index_select", lambda lib, x: x.index_select(1, G(lib, [3, 0, 3])), X3,
           numpy=lambda np, x: x[:, [3, 0, 3]]),
    OpCase("index_select_int32_0d", lambda lib, x: lib.index_select(
        x, 0, lib.tensor(2, dtype=lib.int32)), M, numpy=lambda np, x: x[[2]]),
    OpCase("index_add", lambda lib, x, s: x.index_add(0, G(lib, [2, 0, 2]), s, alpha=2.0),
           ((3, 4), (3, 4))),
    OpCase("index_add_inplace", lambda lib, x, s: (x * 1).index_add_(1, G(lib, [1, 1]), s),
           ((2, 3), (2, 2))),
    OpCase("take_along_dim", lambda lib, x: lib.take_along_dim(x, G(lib, [[0], [3], [1]]), 1), M,
           numpy=lambda np, x: np.take_along_axis(x, np.array([[0], [3], [1]]), 1)),
    OpCase("take_along_dim_broadcast", lambda lib, x: x.take_along_dim(G(lib, [[2, 0]]), 0),
           ((3, 1),), numpy=lambda np, x: np.take_along_axis(np.broadcast_to(x, (3, 2)),
                                                              np.array([[2, 0]]), 0)),
    OpCase("take_along_dim_flat", lambda lib, x: lib.take_along_dim(x, G(lib, [5, 0, 5])), M,
           numpy=lambda np, x: x.reshape(-1)[[5, 0, 5]]),
]


globals().update(standard_op_tests(FUNCS))


# src larger than the index: only its index-shaped corner is used. PyTorch's own backward
# fails on this (a gradient of the index's shape), so these are checked numerically only.
BIG_SRC = [
    OpCase("scatter_add_big_src", lambda lib, x, s: x.scatter_add(1, G(lib, [[1, 1], [0, 3]]), s),
           ((2, 4), (3, 3))),
    OpCase("scatter_big_src", lambda lib, x, s: x.scatter(1, G(lib, [[3, 0], [1, 2]]), s),
           ((2, 4), (2, 3))),
]


@cases_by_id(BIG_SRC)
def test_scatter_with_a_larger_src_gradcheck(case, device):
    check_gradcheck(case, device)
    check_gradcheck(case, device, second_order=True)


def test_scatter_reduce_add_is_scatter_add():
    x = gradlab.zeros(3)
    index = gradlab.tensor([0, 0, 2])
    out = x.scatter(0, index, gradlab.ones(3), reduce="add")
    assert out.tolist() == [2.0, 0.0, 1.0] and out.grad_fn is None
    assert out.tolist() == x.scatter_add(0, index, gradlab.ones(3)).tolist()


def test_scatter_one_hot_and_gather_round_trip():
    labels = gradlab.tensor([2, 0, 1])
    one_hot = gradlab.zeros(3, 4).scatter_(1, labels.unsqueeze(1), 1.0)
    assert one_hot.tolist() == [[0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 0]]
    logits = gradlab.arange(12.0).reshape(3, 4).requires_grad_()
    picked = logits.gather(1, labels.unsqueeze(1))
    assert picked.reshape(-1).tolist() == [2.0, 4.0, 9.0]
    picked.sum().backward()
    np.testing.assert_array_equal(logits.grad.numpy(), one_hot.numpy())


# --- errors that teach --------------------------------------------------------------------------

def _x():
    return gradlab.zeros(3, 4)


# --- forward mode ------------------------------------------------------------------------------

def test_forward_over_reverse_through_gather_and_pad_gives_a_hessian_vector_product(device):
    """The tangent of a gradient recorded with create_graph=True is H·v: it flows through
    the ops of gather's backward (scatter_add into zeros) and pad's (a crop)."""
    rng = np.random.default_rng(3)
    x0, v0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    index = gradlab.tensor([[0, 0, 3], [1, 2, 2], [3, 3, 3]], device=device)

    def grad_at(x, create_graph=False):
        y = gradlab.nn.functional.pad(x.gather(1, index), (1, 1), value=2.0)
        (g,) = gradlab.autograd.grad((y * y * y).sum(), x, create_graph=create_graph)
        return g

    check_hvp(grad_at, x0, v0, device)


def test_writes_treat_a_missing_tangent_as_zero():
    x, t = np.arange(6.0).reshape(2, 3), np.full((2, 3), 0.5)
    index = gradlab.tensor([[2, 0]])
    with fwAD.dual_level():
        src = fwAD.make_dual(gradlab.tensor([[10.0, 20.0]], dtype=gradlab.float64),
                             gradlab.tensor([[1.0, 2.0]], dtype=gradlab.float64))
        into_plain = gradlab.tensor(x).scatter(1, index, src)  # x has no tangent
        dual = fwAD.make_dual(gradlab.tensor(x), gradlab.tensor(t))
        number_in = dual.scatter(1, index, 7.0)  # a number has no tangent
        added = dual.index_add(1, gradlab.tensor([1]), gradlab.ones(2, 1, dtype=gradlab.float64))
        tangents = [fwAD.unpack_dual(y).tangent.numpy() for y in (into_plain, number_in, added)]
    np.testing.assert_array_equal(tangents[0], [[2.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(tangents[1], [[0.0, 0.5, 0.0], [0.5, 0.5, 0.5]])
    np.testing.assert_array_equal(tangents[2], t)  # adding a constant moves nothing


def test_scatter_into_a_view_updates_the_base_tangent():
    with fwAD.dual_level():
        base = gradlab.zeros(3, 2, dtype=gradlab.float64)
        src = fwAD.make_dual(gradlab.tensor([[1.0, 2.0]], dtype=gradlab.float64),
                             gradlab.tensor([[3.0, 4.0]], dtype=gradlab.float64))
        view = base.t()
        view.scatter_(0, gradlab.tensor([[1, 0]]), src)  # view[1, 0] = base[0, 1] gets src[0, 0]
        np.testing.assert_array_equal(fwAD.unpack_dual(base).tangent.numpy(),
                                      [[0.0, 3.0], [4.0, 0.0], [0.0, 0.0]])
        np.testing.assert_array_equal(fwAD.unpack_dual(view).tangent.numpy(),
                                      [[0.0, 4.0, 0.0], [3.0, 0.0, 0.0]])



ERRORS = [
    (lambda: _x().gather(1, gradlab.tensor([[0.0]])), TypeError, "int64 .or int32. tensor"),
    (lambda: _x().gather(1, [[0]]), TypeError, "got list"),
    (lambda: _x().gather(1, gradlab.tensor([0])), RuntimeError, "as many dims as the input"),
    (lambda: _x().gather(0, gradlab.zeros(1, 5, dtype=gradlab.int64)), RuntimeError,
     r"can't be larger than the input .* in dim 1; only dim 0 may differ"),
    (lambda: _x().gather(1, gradlab.tensor([[4]])), IndexError,
     "index 4 is out of range for dim 1 of size 4"),
    (lambda: _x().gather(1, gradlab.tensor([[-1]])), IndexError, r"valid: 0 to 3"),
    (lambda: _x().gather(2, gradlab.tensor([[0]])), IndexError, "dimension 2 is out of range"),
    (lambda: _x().scatter(0, gradlab.tensor([[0]]), gradlab.ones(1, 1, dtype=gradlab.float64)),
     RuntimeError, r"src has dtype .*float64 but the tensor has .*float32.*src\.to"),
    (lambda: _x().scatter(0, gradlab.tensor([[0]]), gradlab.ones(1)), RuntimeError,
     "src .* must have as many dims as the index"),
    (lambda: _x().scatter(0, gradlab.tensor([[0, 0]]), gradlab.ones(1, 1)), RuntimeError,
     r"larger than src \(shape \(1, 1\)\) in dim 1"),
    (lambda: _x().scatter(0, gradlab.tensor([[0]])), TypeError, "give src"),
    (lambda: _x().scatter(0, gradlab.tensor([[0]]), 1.0, reduce="multiply"),
     NotImplementedError, "reduce='multiply'"),
    (lambda: _x().scatter_add(0, gradlab.tensor([[0]]), 1.0), TypeError, "src must be a Tensor"),
    (lambda: gradlab.tensor(1.0).scatter(0, gradlab.tensor(0), 1.0), RuntimeError, "0-d"),
    (lambda: _x().index_select(0, gradlab.tensor([[0]])), IndexError, "must be 1-D"),
    (lambda: _x().index_select(1, gradlab.tensor([4])), IndexError,
     "index 4 is out of range for dim 1 of size 4"),
    (lambda: gradlab.tensor(1.0).index_select(0, gradlab.tensor([0, 0])), IndexError,
     "one position"),
    (lambda: _x().index_add(0, gradlab.tensor([0]), gradlab.ones(2, 4)), RuntimeError,
     r"source must have shape \(1, 4\)"),
    (lambda: _x().index_add(0, gradlab.tensor([0]), gradlab.ones(1, 4, dtype=gradlab.float64)),
     RuntimeError, "source has dtype .*float64"),
    (lambda: gradlab.tensor(1.0).index_add(0, gradlab.tensor([0]), gradlab.ones(1)),
     RuntimeError, "0-d"),
    (lambda: _x().take_along_dim(gradlab.tensor([0]), 0), RuntimeError, "same number of dims"),
    (lambda: _x().take_along_dim(gradlab.zeros(1, 2, dtype=gradlab.int64), 0), RuntimeError,
     r"don't broadcast in dim 1 \(4 vs 2\)"),
]


@pytest.mark.parametrize("make,error,match", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_problem(make, error, match):
    with pytest.raises(error, match=match):
        make()
