"""Linear algebra: matmul and friends, einsum; values and gradients vs NumPy and PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import gradlab
from gradlab.autograd import gradcheck, gradgradcheck
from tests.oracle import (
    OpCase,
    needs_torch,
    standard_op_tests,
    torch,
)

# --- the table ----------------------------------------------------------------------------------

PRODUCTS = [
    OpCase("matmul_2d", lambda lib, a, b: a @ b, ((3, 4), (4, 5)), numpy=lambda np, a, b: a @ b,
           variants=(((0, 4), (4, 5)), ((3, 0), (0, 5)))),
    OpCase("matmul_vec_mat", lambda lib, a, b: lib.matmul(a, b), ((4,), (4, 5)),
           numpy=lambda np, a, b: a @ b),
    OpCase("matmul_mat_vec", lambda lib, a, b: lib.matmul(a, b), ((3, 4), (4,)),
           numpy=lambda np, a, b: a @ b),
    OpCase("matmul_vec_vec", lambda lib, a, b: lib.matmul(a, b), ((4,), (4,)),
           numpy=lambda np, a, b: a @ b),
    OpCase("matmul_batch_broadcast", lambda lib, a, b: a @ b, ((2, 1, 3, 4), (5, 4, 2)),
           numpy=lambda np, a, b: a @ b, variants=(((2, 3, 4), (1, 4, 2)),)),
    OpCase("matmul_vec_batch", lambda lib, a, b: a @ b, ((4,), (2, 4, 3)),
           numpy=lambda np, a, b: a @ b),
    OpCase("matmul_batch_vec", lambda lib, a, b: a @ b, ((2, 3, 4), (4,)),
           numpy=lambda np, a, b: a @ b),
    OpCase("matmul_one_side_grad", lambda lib, a, b: a @ b, ((3, 4), (4, 2)),
           numpy=lambda np, a, b: a @ b, grad_inputs=(1,)),
    OpCase("mm", lambda lib, a, b: lib.mm(a, b), ((3, 4), (4, 2)), numpy=lambda np, a, b: a @ b),
    OpCase("mm_method", lambda lib, a, b: a.mm(b), ((2, 3), (3, 3)),
           numpy=lambda np, a, b: a @ b),
    OpCase("bmm", lambda lib, a, b: lib.bmm(a, b), ((2, 3, 4), (2, 4, 5)),
           numpy=lambda np, a, b: a @ b, variants=(((0, 3, 4), (0, 4, 5)),)),
    OpCase("dot", lambda lib, a, b: lib.dot(a, b), ((5,), (5,)), numpy=lambda np, a, b: a @ b,
           variants=(((0,), (0,)),)),
    OpCase("dot_method", lambda lib, a, b: a.dot(b), ((3,), (3,)), numpy=lambda np, a, b: a @ b),
    OpCase("outer", lambda lib, a, b: lib.outer(a, b), ((3,), (4,)),
           numpy=lambda np, a, b: np.outer(a, b), variants=(((0,), (4,)),)),
]


def _einsum(eq, *shapes, numpy=True, listed=False, id=None, variants=()):
    """A table row for ``einsum(eq, ...)``; ``listed`` passes the operands as one list."""
    if listed:
        def fn(lib, *xs):
            return lib.einsum(eq, list(xs))
    else:
        def fn(lib, *xs):
            return lib.einsum(eq, *xs)
    reference = (lambda np, *xs: np.einsum(eq, *xs)) if numpy else None
    return OpCase("einsum", fn, shapes, numpy=reference, id=id or f"einsum[{eq}]",
                  variants=variants)


EINSUM = [
    _einsum("ij,jk->ik", (3, 4), (4, 2), variants=(((0, 4), (4, 2)), ((3, 0), (0, 2)))),
    _einsum("ij,jk", (3, 4), (4, 2), id="einsum[implicit matmul]"),
    _einsum("ba", (2, 3), id="einsum[implicit transpose]"),
    _einsum("ij->ji", (2, 3)),
    _einsum("i,i", (4,), (4,)),
    _einsum("i,j->ij", (3,), (4,)),
    _einsum("ij->", (2, 3), variants=(((0, 3),),)),
    _einsum("ij->j", (2, 3)),
    _einsum("ii->i", (3, 3)),
    _einsum("ii", (3, 3), id="einsum[trace]"),
    _einsum("iij->ij", (3, 3, 2)),
    _einsum("iji->j", (2, 3, 2)),
    _einsum("iij,jk", (2, 2, 3), (3, 4), id="einsum[diagonal then contract]"),
    _einsum("ijk,ikj->ijk", (2, 3, 3), (2, 3, 3)),
    _einsum("bij,bjk->bik", (2, 3, 4), (2, 4, 2)),
    _einsum("...ij,...jk->...ik", (2, 1, 2, 3), (4, 3, 2), id="einsum[ellipsis broadcast]"),
    _einsum("...i,...i->...", (2, 3), (1, 3), id="einsum[ellipsis size-1 broadcast]"),
    _einsum("...i->i", (2, 3), numpy=False, id="einsum[ellipsis summed]"),
    _einsum("i...->...", (3, 2, 2)),
    _einsum("...,...", (2, 3), (3,), id="einsum[implicit ellipsis]"),
    _einsum("ij,ij->ij", (2, 3), (1, 3), numpy=False, id="einsum[letter broadcast]"),
    _einsum("ii,i->i", (1, 1), (3,), numpy=False, id="einsum[broadcast diagonal]"),
    _einsum("ij,jk,kl->il", (2, 3), (3, 4), (4, 2), id="einsum[chain of three]"),
    _einsum(",ij->ij", (), (2, 3), id="einsum[scalar operand]"),
    _einsum("Ab,bA->", (2, 3), (3, 2), id="einsum[upper case]"),
    _einsum("ij,kl->", (2, 3), (1, 2), id="einsum[unrelated operands]"),
    _einsum("bn,anm,bm->ba", (2, 3), (4, 3, 5), (2, 5), id="einsum[bilinear]"),
    _einsum("ij,jk->ik", (3, 4), (4, 2), listed=True, id="einsum[operands as a list]"),
    _einsum("i j , j k -> i k", (3, 4), (4, 2), id="einsum[spaces]"),
    OpCase("einsum", lambda lib, a, b: lib.einsum(a, [0, 1], b, [1, 2], [0, 2]), ((3, 4), (4, 2)),
           numpy=lambda np, a, b: a @ b, id="einsum[sublist form]"),
    OpCase("einsum", lambda lib, a, b: lib.einsum(a, [..., 27, 1], b, [1]), ((2, 3, 4), (4,)),
           numpy=lambda np, a, b: a @ b, id="einsum[sublist form, ellipsis, implicit output]"),
]

ALL = PRODUCTS + EINSUM


globals().update(standard_op_tests(ALL))


# --- matmul over every combination of ranks, property-based ------------------------------------

def _left(form, b, n, k):
    return {"vec": (k,), "mat": (n, k), "batch": (b, n, k), "batch4": (b, 1, n, k)}[form]


def _right(form, b, k, m):
    return {"vec": (k,), "mat": (k, m), "batch": (b, k, m), "batch4": (b, 1, k, m)}[form]


FORMS = ["vec", "mat", "batch", "batch4"]
SIZES = st.integers(0, 3)


def _matmul_both(sa, sb, seed=0):
    """gradlab and torch: a @ b, then backward of a random cotangent; returns both sides."""
    rng = np.random.default_rng(seed)
    a_np, b_np = rng.standard_normal(sa), rng.standard_normal(sb)
    results = []
    for lib in (gradlab, torch):
        a = lib.tensor(a_np, requires_grad=True)
        b = lib.tensor(b_np, requires_grad=True)
        out = a @ b
        cot = np.random.default_rng(seed + 1).standard_normal(tuple(out.shape))
        out.backward(lib.tensor(cot))
        results.append((out.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    return results


@needs_torch
@settings(max_examples=60, deadline=None)
@given(left=st.sampled_from(FORMS), right=st.sampled_from(FORMS), b=SIZES, n=SIZES, k=SIZES,
       m=SIZES)
def test_matmul_rank_combinations_match_torch(left, right, b, n, k, m):
    """(k,), (n,k), (b,n,k), (b,1,n,k) @ (k,), (k,m), (b,k,m), (b,1,k,m): values and grads."""
    sa, sb = _left(left, b, n, k), _right(right, b, k, m)
    ours, theirs = _matmul_both(sa, sb)
    for g, t, what in zip(ours, theirs, ("value", "grad a", "grad b")):
        assert g.shape == t.shape, f"{what}: {g.shape} vs {t.shape} for {sa} @ {sb}"
        np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12, err_msg=f"{what} {sa} @ {sb}")


@needs_torch
@settings(max_examples=40, deadline=None)
@given(shapes=mutually_broadcastable_shapes(signature=np.matmul.signature, max_dims=3,
                                            max_side=3))
def test_matmul_gufunc_shapes_match_torch(shapes):
    """Any shapes NumPy's matmul signature (n?,k),(k,m?)->(n?,m?) allows, batch dims broadcast."""
    ours, theirs = _matmul_both(*shapes.input_shapes)
    assert ours[0].shape == shapes.result_shape
    for g, t in zip(ours, theirs):
        np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(left=st.sampled_from(FORMS), right=st.sampled_from(FORMS), k=st.integers(1, 3))
def test_matmul_rank_combinations_gradcheck(left, right, k):
    """The same grid without PyTorch: first and second derivatives vs finite differences."""
    rng = np.random.default_rng(0)
    a = gradlab.tensor(rng.standard_normal(_left(left, 2, 2, k)), requires_grad=True)
    b = gradlab.tensor(rng.standard_normal(_right(right, 2, k, 3)), requires_grad=True)
    assert gradcheck(gradlab.matmul, [a, b])
    assert gradgradcheck(gradlab.matmul, [a, b])


def test_matmul_is_one_node_and_integer_matmul_stays_integer():
    a = gradlab.tensor([[1.0, 2.0]], requires_grad=True)
    out = a @ gradlab.tensor([[3.0], [4.0]])
    assert out.grad_fn.name() == "MmBackward0" and out.tolist() == [[11.0]]  # PyTorch's name
    ints = gradlab.tensor([[1, 2]]) @ gradlab.tensor([[3], [4]])
    assert ints.dtype is gradlab.int64 and ints.tolist() == [[11]]


def test_matmul_promotes_mixed_dtypes():
    a = gradlab.ones(2, 3, dtype=gradlab.float32)
    b = gradlab.ones(3, dtype=gradlab.float64)
    out = a @ b
    assert out.dtype is gradlab.float64 and out.tolist() == [3.0, 3.0]


# --- errors that teach --------------------------------------------------------------------------

def test_matmul_shape_mismatch_suggests_transpose_of_b():
    a, b = gradlab.ones(3, 4), gradlab.ones(3, 4)
    with pytest.raises(RuntimeError, match=r"matmul: shapes \(3, 4\) and \(3, 4\) don't line up "
                                           r"\(4 != 3\).*did you mean b\.T"):
        a @ b


def test_matmul_shape_mismatch_suggests_transpose_of_a():
    with pytest.raises(RuntimeError, match=r"\(4 != 2\).*did you mean a\.T"):
        gradlab.ones(2, 4) @ gradlab.ones(2, 5)


def test_matmul_vector_mismatch_names_the_first_dim():
    with pytest.raises(RuntimeError, match=r"\(3,\) and \(4,\).*equal the first dim"):
        gradlab.matmul(gradlab.ones(3), gradlab.ones(4))


def test_matmul_rejects_0d_and_numbers():
    with pytest.raises(RuntimeError, match="at least 1 dimension.*use \\* for scalars"):
        gradlab.matmul(gradlab.tensor(2.0), gradlab.ones(3))
    with pytest.raises(TypeError, match="matmul: expected two tensors, got Tensor and float"):
        gradlab.matmul(gradlab.ones(3), 2.0)


def test_matmul_batch_dims_that_do_not_broadcast():
    with pytest.raises(RuntimeError, match=r"batch dims \(2,\) and \(3,\).*don't broadcast"):
        gradlab.ones(2, 3, 4) @ gradlab.ones(3, 4, 5)


def test_mm_bmm_dot_outer_errors():
    with pytest.raises(RuntimeError, match=r"mm: expects two 2-D tensors, got shapes \(3,\)"):
        gradlab.mm(gradlab.ones(3), gradlab.ones(3, 2))
    with pytest.raises(RuntimeError, match=r"^mm: shapes \(2, 3\) and \(2, 3\).*b\.T"):
        gradlab.mm(gradlab.ones(2, 3), gradlab.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"bmm: expects \(b, n, m\) and \(b, m, p\) with the "
                                           r"same b, got shapes \(2, 3, 4\) and \(3, 4, 5\)"):
        gradlab.bmm(gradlab.ones(2, 3, 4), gradlab.ones(3, 4, 5))
    with pytest.raises(RuntimeError, match=r"^bmm: shapes \(2, 3, 4\) and \(2, 3, 4\)"):
        gradlab.bmm(gradlab.ones(2, 3, 4), gradlab.ones(2, 3, 4))
    with pytest.raises(RuntimeError, match=r"dot: expects two 1-D tensors of the same length, "
                                           r"got shapes \(3,\) and \(4,\)"):
        gradlab.dot(gradlab.ones(3), gradlab.ones(4))
    with pytest.raises(RuntimeError, match=r"dot: .*got shapes \(2, 2\)"):
        gradlab.dot(gradlab.ones(2, 2), gradlab.ones(2, 2))
    with pytest.raises(RuntimeError, match=r"outer: expects two 1-D tensors, got shapes "
                                           r"\(2, 2\) and \(2,\)"):
        gradlab.outer(gradlab.ones(2, 2), gradlab.ones(2))


# --- einsum: beyond the table -------------------------------------------------------------------

def test_einsum_is_one_node_connected_to_its_operands():
    a = gradlab.ones(2, 3, requires_grad=True)
    b = gradlab.ones(3, 4, requires_grad=True)
    out = gradlab.einsum("ij,jk->ik", a, b)
    assert out.grad_fn.name() == "EinsumBackward0"
    assert [edge[0].name() for edge in out.grad_fn.next_functions] == ["AccumulateGrad"] * 2
    np.testing.assert_array_equal(out.detach().numpy(), np.full((2, 4), 3.0))


def test_einsum_saves_only_the_operands_backward_needs():
    x = gradlab.ones(4, 5, dtype=gradlab.float64, requires_grad=True)
    assert gradlab.einsum("ij->", x).grad_fn.saved_bytes == 0  # d/dx needs no values
    w = gradlab.ones(5, 3, dtype=gradlab.float64)
    # Only x needs a gradient, and dx = grad @ wᵀ: w is kept, x is not.
    assert gradlab.einsum("ij,jk->ik", x, w).grad_fn.saved_bytes == w.nbytes
    w.requires_grad_()
    assert gradlab.einsum("ij,jk->ik", x, w).grad_fn.saved_bytes == w.nbytes + x.nbytes


def test_einsum_diagonal_is_a_copy_not_a_view():
    x = gradlab.tensor(np.arange(9.0).reshape(3, 3))
    diag = gradlab.einsum("ii->i", x)
    x.numpy()[0, 0] = 100.0
    assert diag.tolist() == [0.0, 4.0, 8.0]


def test_einsum_gradient_of_diagonal_is_zero_off_the_diagonal():
    x = gradlab.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
    gradlab.einsum("ii->i", x).backward(gradlab.tensor([1.0, 2.0, 3.0], dtype=gradlab.float64))
    np.testing.assert_array_equal(x.grad.numpy(), np.diag([1.0, 2.0, 3.0]))
    y = gradlab.tensor(np.ones((2, 3)), requires_grad=True)
    gradlab.einsum("ij->", y).backward()  # an index only this operand has: expanded back
    np.testing.assert_array_equal(y.grad.numpy(), np.ones((2, 3)))


def test_hessian_vector_product_through_einsum_diagonal():
    """Forward-over-reverse: L = Σ_i a_ii³ has H·v = 6 a_ii v_ii on the diagonal, 0 off it.

    The backward of 'ii->i' writes onto a diagonal (DiagonalEmbed) what einsum computed
    from the output gradient: the tangent of the gradient runs both ops' tangent rules.
    """
    from gradlab.autograd import forward_ad as fwAD

    rng = np.random.default_rng(11)
    a, v = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    with fwAD.dual_level():
        dual = fwAD.make_dual(gradlab.tensor(a, requires_grad=True), gradlab.tensor(v))
        loss = gradlab.einsum("ii->i", dual).pow(3).sum()
        (grad,) = gradlab.autograd.grad(loss, dual, create_graph=True)
        hvp = fwAD.unpack_dual(grad).tangent
    np.testing.assert_allclose(hvp.detach().numpy(), np.diag(6 * np.diag(a) * np.diag(v)),
                               rtol=1e-12)


def test_einsum_promotes_dtypes_and_keeps_float32():
    a = gradlab.ones(2, dtype=gradlab.float32)
    assert gradlab.einsum("i,i", a, a).dtype is gradlab.float32
    out = gradlab.einsum("i,i", a, gradlab.ones(2, dtype=gradlab.float64))
    assert out.dtype is gradlab.float64 and out.item() == 2.0


@needs_torch
def test_einsum_large_operands_match_torch():
    """Big enough for the contraction planner (the BLAS path) to run."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in [(40, 70), (70, 60), (60, 5)]]
    for eq, ops in [("ij,jk->ik", arrays[:2]), ("ij,jk,kl->li", arrays)]:
        ours = [gradlab.tensor(a, requires_grad=True) for a in ops]
        theirs = [torch.tensor(a, requires_grad=True) for a in ops]
        out_g, out_t = gradlab.einsum(eq, *ours), torch.einsum(eq, *theirs)
        np.testing.assert_allclose(out_g.detach().numpy(), out_t.detach().numpy(), rtol=1e-10)
        out_g.sum().backward()
        out_t.sum().backward()
        for g, t in zip(ours, theirs):
            np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-10)


@needs_torch
@settings(max_examples=30, deadline=None)
@given(shapes=mutually_broadcastable_shapes(signature="(n,k),(k,m)->(n,m)", max_dims=3,
                                            max_side=3))
def test_einsum_ellipsis_broadcasting_matches_torch(shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes.input_shapes]
    ours = [gradlab.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_g = gradlab.einsum("...nk,...km->...nm", *ours)
    out_t = torch.einsum("...nk,...km->...nm", *theirs)
    assert tuple(out_g.shape) == shapes.result_shape
    cot = rng.standard_normal(shapes.result_shape)
    out_g.backward(gradlab.tensor(cot))
    out_t.backward(torch.tensor(cot))
    np.testing.assert_allclose(out_g.detach().numpy(), out_t.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    for g, t in zip(ours, theirs):
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


EINSUM_ERRORS = [
    ("ij,jk", [(2, 3)], RuntimeError,
     r"einsum: the equation 'ij,jk' has subscripts for 2 operand\(s\) but 1 were given"),
    ("ij", [(3,)], RuntimeError,
     r"einsum: operand 0 has 1 dim\(s\) \(shape \(3,\)\) but its subscripts 'ij' name 2; "
     r"add '\.\.\.'"),
    ("...ijk", [(2, 2)], RuntimeError, r"operand 0 has 2 dim\(s\).*'\.\.\.ijk' name 3$"),
    ("ij,jk", [(2, 3), (4, 5)], RuntimeError,
     r"einsum: index 'j' has size 3 in operand 0 but 4 in operand 1"),
    ("...i,...i", [(2, 3), (4, 3)], RuntimeError,
     r"einsum: a '\.\.\.' dim has size 2 in operand 0 but 4 in operand 1"),
    ("ii", [(2, 3)], RuntimeError,
     r"einsum: index 'i' is repeated in operand 0 \(shape \(2, 3\)\) but its dims have sizes "
     r"2 and 3"),
    ("i->ii", [(3,)], RuntimeError, r"output subscript 'i' appears more than once"),
    ("i->j", [(3,)], RuntimeError, r"output subscript 'j' in 'i->j' does not appear in any "
                                   r"input"),
    ("i1", [(3, 3)], RuntimeError, r"invalid subscript '1' in term 'i1'.*letters a-z, A-Z"),
    ("......i", [(3, 3)], RuntimeError, r"invalid subscript '\.'.*'\.\.\.' may appear once"),
]


@pytest.mark.parametrize("equation,shapes,error,message", EINSUM_ERRORS,
                         ids=[f"{i}:{e[0]}" for i, e in enumerate(EINSUM_ERRORS)])
def test_einsum_errors_teach(equation, shapes, error, message):
    operands = [gradlab.ones(*s) for s in shapes]
    with pytest.raises(error, match=message):
        gradlab.einsum(equation, *operands)


def test_einsum_argument_errors():
    with pytest.raises(TypeError, match="einsum: operand 1 is a list, expected a Tensor"):
        gradlab.einsum("i,i", gradlab.ones(2), [1.0, 2.0])
    with pytest.raises(TypeError, match="first argument must be the equation string"):
        gradlab.einsum(3, gradlab.ones(2))
    with pytest.raises(TypeError, match=r"einsum: in the sublist form, each operand is followed "
                                        r"by a list of subscripts, got str"):
        gradlab.einsum(gradlab.ones(2), "i")
    with pytest.raises(ValueError, match=r"sublist subscripts must be ints in \[0, 52\) or "
                                         r"Ellipsis, got 52 in \[0, 52\]"):
        gradlab.einsum(gradlab.ones(2, 2), [0, 52])
    with pytest.raises(RuntimeError, match="einsum: needs at least one operand"):
        gradlab.einsum("i")


@pytest.mark.parametrize("m, k, n", [(2, 8, 8), (1, 5, 30), (8, 784, 256), (3, 2, 40), (40, 8, 8)])
def test_a_product_with_a_transposed_matrix_is_exact_and_row_major(m, k, n):
    """(bᵀ aᵀ)ᵀ replaces a @ bᵀ-views when it packs less (see matrix_product): the values
    must be a @ b's and the result row-major, whichever way it went."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((n, k)).T  # a transposed view, as W.T is
    out = gradlab.matmul(gradlab.tensor(a), gradlab.tensor(b))
    assert out.is_contiguous()
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-12, atol=1e-12)
    if (m + n) * k <= 400:  # finite differences: one forward per element
        x = gradlab.tensor(a, requires_grad=True)
        w = gradlab.tensor(b.T.copy(), requires_grad=True)
        assert gradcheck(lambda x, w: x @ w.T, [x, w])
