"""embedding: the op (oracle table, summed gradients, padding_idx, max_norm, errors) and
nn.Embedding (init, padding row, from_pretrained, repr)."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
import gradlab.nn as nn
from tests.oracle import OpCase, check_jvp, index_tensor, needs_torch, standard_op_tests, torch

F = gradlab.nn.functional
IDX = [[0, 2, 2], [4, 2, 0]]  # repeated ids: their gradients must add up


def lookup(values, **kwargs):
    """An OpCase fn: embedding of the fixed ids ``values`` into the table w."""
    return lambda lib, w: lib.nn.functional.embedding(index_tensor(lib, values), w, **kwargs)


def np_lookup(values):
    return lambda np, w: w[np.array(values, dtype=np.int64)]


TABLE = ((5, 3),)

CASES = [
    OpCase("embedding", lookup(IDX), TABLE, numpy=np_lookup(IDX)),
    OpCase("embedding_1d_ids", lookup([3, 3, 3, 1]), TABLE, numpy=np_lookup([3, 3, 3, 1])),
    OpCase("embedding_0d_id", lookup(2), TABLE, numpy=np_lookup(2)),
    OpCase("embedding_no_ids", lambda lib, w: lib.nn.functional.embedding(
        lib.zeros(0, 2, dtype=lib.int64), w), TABLE,
        numpy=lambda np, w: np.zeros((0, 2, 3))),
    OpCase("embedding_int32_ids", lambda lib, w: lib.nn.functional.embedding(
        index_tensor(lib, IDX, "int32"), w), TABLE, numpy=np_lookup(IDX)),
]

globals().update(standard_op_tests(CASES))

# padding_idx and scale_grad_by_freq change the gradient on purpose, so it is no longer the
# derivative that gradcheck's finite differences measure: these rows check values only, and
# the tests below check their gradients against PyTorch's and their second derivatives.
MODIFIED_GRADIENT = [
    {"padding_idx": 2}, {"padding_idx": -1}, {"scale_grad_by_freq": True},
    {"padding_idx": 0, "scale_grad_by_freq": True, "sparse": False},
]
globals().update({name: test for name, test in standard_op_tests(
    [OpCase("embedding_" + "_".join(map(str, kw.values())), lookup(IDX, **kw), TABLE,
            numpy=np_lookup(IDX), grad=False) for kw in MODIFIED_GRADIENT],
    prefix="modified_gradient_").items() if "gradcheck" not in name and "jvp" not in name})


@pytest.mark.parametrize("kwargs", MODIFIED_GRADIENT)
def test_jvp_with_modified_gradient_is_the_plain_lookup(kwargs, device):
    """padding_idx and scale_grad_by_freq change only the backward: the forward is still a
    lookup, so its tangent is the lookup of the table's tangent (finite differences and
    torch.func.jvp agree), the padding row included."""
    check_jvp(OpCase("embedding", lookup(IDX, **kwargs), TABLE), device)


@needs_torch
@pytest.mark.parametrize("kwargs", MODIFIED_GRADIENT)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_modified_gradients_match_torch(kwargs, dtype, device):
    rng = np.random.default_rng(5)
    table = rng.standard_normal((5, 3)).astype(dtype)
    cot = rng.standard_normal((2, 3, 3)).astype(dtype)
    ours = gradlab.tensor(table, device=device, requires_grad=True)
    theirs = torch.tensor(table, requires_grad=True)
    F.embedding(gradlab.tensor(IDX, device=device), ours, **kwargs).backward(
        gradlab.tensor(cot, device=device))
    torch.nn.functional.embedding(torch.tensor(IDX), theirs, **kwargs).backward(
        torch.tensor(cot))
    np.testing.assert_allclose(ours.grad.cpu().numpy(), theirs.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("kwargs", MODIFIED_GRADIENT)
def test_modified_gradients_are_differentiable(kwargs, device):
    """The backward is linear in the output gradient; gradgradcheck checks that map."""
    w = gradlab.randn(5, 3, dtype=gradlab.float64, device=device, requires_grad=True)
    ids = gradlab.tensor(IDX, device=device)
    assert gradlab.autograd.gradgradcheck(lambda t: F.embedding(ids, t, **kwargs), [w])


def test_repeated_ids_sum_their_gradients(device):
    w = gradlab.zeros(5, 2, device=device, requires_grad=True)
    ids = gradlab.tensor([[1, 3, 1], [1, 0, 3]], device=device)
    grad = gradlab.arange(12.0, device=device).reshape(2, 3, 2)
    F.embedding(ids, w).backward(grad)
    g = grad.cpu().numpy()
    expected = np.zeros((5, 2))
    expected[1] = g[0, 0] + g[0, 2] + g[1, 0]
    expected[3] = g[0, 1] + g[1, 2]
    expected[0] = g[1, 1]
    np.testing.assert_array_equal(w.grad.cpu().numpy(), expected)


def test_padding_row_gets_no_gradient_but_is_still_read():
    w = gradlab.randn(4, 2, requires_grad=True)
    ids = gradlab.tensor([0, 3, 3, 1])
    out = F.embedding(ids, w, padding_idx=3)
    np.testing.assert_array_equal(out.detach().numpy()[1], w.detach().numpy()[3])
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[1, 1], [1, 1], [0, 0], [0, 0]])


def test_scale_grad_by_freq_divides_by_the_count_in_the_batch():
    w = gradlab.randn(3, 1, requires_grad=True)
    F.embedding(gradlab.tensor([2, 2, 2, 0]), w, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [[1.0], [0.0], [1.0]])


def test_sparse_true_gives_a_dense_gradient():
    w = gradlab.randn(4, 2, requires_grad=True)
    F.embedding(gradlab.tensor([1]), w, sparse=True).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[0, 0], [1, 1], [0, 0], [0, 0]])


def test_graph_node_is_embedding():
    w = gradlab.randn(4, 2, requires_grad=True)
    assert F.embedding(gradlab.tensor([1]), w).grad_fn.name() == "EmbeddingBackward0"


@needs_torch
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
def test_max_norm_renormalises_looked_up_rows_in_place_like_torch(norm_type):
    rng = np.random.default_rng(2)
    table = rng.standard_normal((6, 3)) * 2
    ids = np.array([[0, 1, 1], [5, 0, 3]])
    ours = gradlab.tensor(table, requires_grad=True)
    theirs = torch.tensor(table, requires_grad=True)
    version = ours._version
    out_g = F.embedding(gradlab.tensor(ids), ours, max_norm=1.5, norm_type=norm_type)
    out_t = torch.nn.functional.embedding(torch.tensor(ids), theirs, max_norm=1.5,
                                          norm_type=norm_type)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(out_g.detach().numpy(), out_t.detach().numpy(), rtol=1e-12)
    np.testing.assert_array_equal(ours.detach().numpy()[[2, 4]], table[[2, 4]])  # not looked up
    assert ours._version == version + 1
    cot = rng.standard_normal(out_t.shape)
    out_g.backward(gradlab.tensor(cot))
    out_t.backward(torch.tensor(cot))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def test_max_norm_leaves_short_rows_and_the_version_alone():
    values = [[0.1, 0.2], [0.3, 0.1]]
    w = gradlab.tensor(values)
    version = w._version
    F.embedding(gradlab.tensor([0, 1]), w, max_norm=1.0)
    np.testing.assert_array_equal(w.numpy(), np.array(values, dtype=np.float32))
    assert w._version == version


def test_errors_teach():
    w = gradlab.randn(3, 2)
    with pytest.raises(TypeError, match=r"embedding: indices must be an int64 \(or int32\) "
                                        r"tensor, got gradlab.float32.*\.long\(\)"):
        F.embedding(gradlab.tensor([1.0]), w)
    with pytest.raises(TypeError, match="got list"):
        F.embedding([1], w)
    with pytest.raises(RuntimeError, match=r"weight must be a 2D table .* got \(3,\)"):
        F.embedding(gradlab.tensor([1]), gradlab.randn(3))
    with pytest.raises(ValueError, match=r"padding_idx=3 must be within num_embeddings=3"):
        F.embedding(gradlab.tensor([1]), w, padding_idx=3)
    with pytest.raises(ValueError, match=r"padding_idx=-4 must be within"):
        F.embedding(gradlab.tensor([1]), w, padding_idx=-4)
    with pytest.raises(IndexError, match=r"index 5 is out of range for a table of 3 rows"):
        F.embedding(gradlab.tensor([[0, 5]]), w)
    with pytest.raises(IndexError, match=r"index -1 is out of range .* \[0, 2\]"):
        F.embedding(gradlab.tensor([-1]), w)


# --- nn.Embedding -----------------------------------------------------------------------------

def test_module_looks_up_its_weight_and_initialises_n01():
    gradlab.manual_seed(0)
    emb = nn.Embedding(400, 50)
    w = emb.weight.detach().numpy()
    assert emb.weight.shape == (400, 50) and emb.weight.requires_grad
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02
    ids = gradlab.tensor([[3, 7], [7, 399]])
    np.testing.assert_array_equal(emb(ids).detach().numpy(), w[[[3, 7], [7, 399]]])
    assert list(emb.state_dict()) == ["weight"]


def test_module_padding_row_starts_at_zero_and_stays_there():
    emb = nn.Embedding(5, 3, padding_idx=-2)
    assert emb.padding_idx == 3
    np.testing.assert_array_equal(emb.weight.detach().numpy()[3], 0.0)
    emb(gradlab.tensor([3, 1, 3])).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.numpy()[3], 0.0)
    np.testing.assert_array_equal(emb.weight.grad.numpy()[1], 1.0)


def test_from_pretrained_shares_the_table_and_freezes_it():
    table = gradlab.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    emb = nn.Embedding.from_pretrained(table, padding_idx=1)
    assert not emb.weight.requires_grad
    np.testing.assert_array_equal(emb.weight.detach().numpy(), table.numpy())  # pad kept
    table[0, 0] = 10.0
    assert emb.weight[0, 0].item() == 10.0  # the same memory, as in PyTorch
    trainable = nn.Embedding.from_pretrained(table, freeze=False)
    assert trainable.weight.requires_grad
    np.testing.assert_array_equal(emb(gradlab.tensor([2])).numpy(), [[5.0, 6.0]])


@needs_torch
@pytest.mark.parametrize("kwargs", [
    {}, {"padding_idx": -1}, {"padding_idx": 2, "max_norm": 1.0},
    {"norm_type": 3.0, "scale_grad_by_freq": True, "sparse": True},
])
def test_repr_matches_torch(kwargs):
    assert repr(nn.Embedding(10, 3, **kwargs)) == repr(torch.nn.Embedding(10, 3, **kwargs))


def test_module_errors_teach():
    with pytest.raises(ValueError, match=r"Embedding: padding_idx=5 must be within "
                                         r"num_embeddings=5"):
        nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(ValueError, match=r"padding_idx=-6 must be within"):
        nn.Embedding(5, 2, padding_idx=-6)
    with pytest.raises(ValueError, match=r"weight has shape \(4, 2\), but num_embeddings=5"):
        nn.Embedding(5, 2, _weight=gradlab.zeros(4, 2))
    with pytest.raises(ValueError, match=r"from_pretrained: embeddings must be a 2D tensor.*"
                                         r"\(3,\)"):
        nn.Embedding.from_pretrained(gradlab.zeros(3))
