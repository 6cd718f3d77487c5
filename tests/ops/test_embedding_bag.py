"""F.embedding_bag (oracle table: sum/mean/max, offsets, empty bags, padding, per-sample
weights; tangents, ties, NaN, scale_grad_by_freq, max_norm, errors) and nn.EmbeddingBag."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
import gradlab.nn as nn
from gradlab.autograd import forward_ad as fwAD
from tests.oracle import OpCase, index_tensor, needs_torch, standard_op_tests, torch

F = gradlab.nn.functional
TABLE = (7, 3)
FLAT = [0, 1, 2, 0, 3, 3, 6, 5]  # ids, cut into bags by offsets
OFFSETS = [0, 3, 3, 4]  # bag 1 is empty; the last bag runs to the end
GRID = [[1, 2, 2], [4, 6, 0]]


def reference(ids, table, offsets=None, mode="mean", psw=None, padding_idx=None,
              include_last_offset=False):
    """A loop over the bags, as the documentation says it (ties and NaN aside)."""
    ids = np.asarray(ids)
    if ids.ndim == 2:
        offsets, psw = list(range(0, ids.size, ids.shape[1])), \
            None if psw is None else psw.reshape(-1)
        ids = ids.reshape(-1)
    if padding_idx is not None:
        padding_idx %= table.shape[0]
    starts = list(offsets[:-1] if include_last_offset else offsets)
    ends = starts[1:] + [len(ids)]
    out = np.zeros((len(starts), table.shape[1]), dtype=table.dtype)
    for b, (s, e) in enumerate(zip(starts, ends)):
        keep = [j for j in range(s, e) if ids[j] != padding_idx]
        if not keep:
            continue
        rows = table[ids[keep]] * (1 if psw is None else psw[keep][:, None])
        out[b] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode]
    return out


def bag(ids, offsets=None, **kwargs):
    """An OpCase row's fn: embedding_bag of fixed ids into the table (and per-sample
    weights, when the row has a second input)."""
    def fn(lib, w, psw=None):
        off = None if offsets is None else index_tensor(lib, offsets)
        return lib.nn.functional.embedding_bag(index_tensor(lib, ids), w, off,
                                               per_sample_weights=psw, **kwargs)
    return fn


def np_bag(ids, offsets=None, **kwargs):
    return lambda np, w, psw=None: reference(ids, w, offsets, psw=psw, **kwargs)


def row(name, ids, offsets=None, shapes=(TABLE,), **kwargs):
    # PyTorch has no forward-mode rule for embedding_bag, so the harness's jvp check (which
    # also asks torch.func.jvp) can't run: test_jvp_matches_finite_differences does it.
    return OpCase(name, bag(ids, offsets, **kwargs), shapes, numpy=np_bag(ids, offsets, **kwargs),
                  jvp=False)


CASES = [
    *[row(f"{mode}_2d", GRID, mode=mode) for mode in ("sum", "mean", "max")],
    *[row(f"{mode}_offsets_empty_bag", FLAT, OFFSETS, mode=mode) for mode in ("sum", "mean",
                                                                             "max")],
    *[row(f"{mode}_padding", FLAT, OFFSETS, mode=mode, padding_idx=3)
      for mode in ("sum", "mean", "max")],  # bag 3 holds only padding: zeros
    row("mean_include_last_offset", FLAT, [0, 2, 2, 5, 8], include_last_offset=True),
    row("max_negative_padding_idx", GRID, mode="max", padding_idx=-1),
    row("sum_per_sample_weights", FLAT, OFFSETS, shapes=(TABLE, (8,)), mode="sum"),
    row("sum_per_sample_weights_2d_padding", GRID, shapes=(TABLE, (2, 3)), mode="sum",
        padding_idx=2),
    row("no_ids", [], [0, 0], mode="mean"),
]

globals().update(standard_op_tests(CASES))


@pytest.mark.parametrize("case", [c for c in CASES if c.name != "no_ids"], ids=lambda c: c.id)
def test_jvp_matches_finite_differences(case, device):
    """Forward mode (sum/mean: linear in each input; max: the tangent at the winning rows)
    against central differences along random tangents."""
    rng = np.random.default_rng(3)
    arrays = [rng.uniform(-2, 2, s) for s in case.shapes]
    tangents = [rng.standard_normal(s) for s in case.shapes]

    def at(shift):
        moved = [gradlab.tensor(a + shift * t, device=device) for a, t in zip(arrays, tangents)]
        return case.fn(gradlab, *moved).cpu().numpy()

    with fwAD.dual_level():
        duals = [fwAD.make_dual(gradlab.tensor(a, device=device), gradlab.tensor(t, device=device))
                 for a, t in zip(arrays, tangents)]
        got = fwAD.unpack_dual(case.fn(gradlab, *duals)).tangent.cpu().numpy()
    np.testing.assert_allclose(got, (at(1e-6) - at(-1e-6)) / 2e-6, rtol=1e-5, atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=12), st.data(),
       st.sampled_from(["sum", "mean", "max"]), st.sampled_from([None, 0, 4]))
def test_any_bagging_matches_the_loop(ids, data, mode, padding_idx):
    """Random bag boundaries (empty bags included) against the loop reference; the
    gradient of the sum of the output counts each kept id once per bag it wins or joins."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(ids)), max_size=5)))
    offsets = [0] + cuts
    table = np.random.default_rng(len(ids)).permutation(21).reshape(7, 3).astype(float)
    w = gradlab.tensor(table, requires_grad=True)
    out = F.embedding_bag(gradlab.tensor(ids, dtype=gradlab.int64), w,
                          gradlab.tensor(offsets), mode=mode, padding_idx=padding_idx)
    np.testing.assert_allclose(out.detach().numpy(),
                               reference(ids, table, offsets, mode, padding_idx=padding_idx))
    out.sum().backward()
    assert w.grad.shape == (7, 3)
    if padding_idx is not None:
        assert not w.grad.numpy()[padding_idx].any()


@needs_torch
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_ties_nan_and_empty_bags_match_torch(mode):
    """'max' keeps the first of equal values and a NaN only in first place (PyTorch walks
    the bag replacing the maximum by strictly greater values); its gradient goes to the
    winner. Empty bags give zeros and pass no gradient."""
    nan = float("nan")
    table = np.array([[1, 5, 2], [1, 0, 7], [3, 5, 2], [0, 0, 0], [nan, 1, 2], [2, nan, 0]])
    ids, offsets = [0, 1, 2, 0, 3, 3, 4, 5, 5, 4], [0, 3, 3, 4, 6, 8]
    cot = np.arange(18.0).reshape(6, 3) + 1
    outs, grads = [], []
    for lib in (gradlab, torch):
        w = lib.tensor(table, requires_grad=True)
        out = lib.nn.functional.embedding_bag(lib.tensor(ids), w, lib.tensor(offsets),
                                              mode=mode)
        out.backward(lib.tensor(cot))
        outs.append(out.detach().numpy())
        grads.append(w.grad.numpy())
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(grads[0], grads[1])
    if mode == "max":
        assert grads[0][0, 1] == cot[0, 1] + cot[2, 1]  # the tie of rows 0 and 2 goes to 0


@needs_torch
@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_scale_grad_by_freq_matches_torch_where_torch_cpu_is_right(mode):
    """Row r's gradient divided by r's count in input. (PyTorch 2.13's CPU kernel divides by
    the wrong count when counts differ, pytorch/pytorch#190063: here every id occurs twice.)"""
    ids, offsets = [4, 1, 1, 0, 4, 0], [0, 2, 2, 5]
    grads = []
    for lib in (gradlab, torch):
        w = lib.tensor(np.ones((5, 2)), requires_grad=True)
        lib.nn.functional.embedding_bag(lib.tensor(ids), w, lib.tensor(offsets), mode=mode,
                                        scale_grad_by_freq=True, padding_idx=0).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_scale_grad_by_freq_divides_by_each_rows_own_count():
    w = gradlab.ones(4, 3, requires_grad=True)
    F.embedding_bag(gradlab.tensor([1, 1, 3]), w, gradlab.tensor([0]), mode="sum",
                    scale_grad_by_freq=True).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[:, 0], [0.0, 1.0, 0.0, 1.0])


@needs_torch
def test_max_norm_renormalizes_the_looked_up_rows_in_place_as_torch():
    table = np.random.default_rng(0).standard_normal((6, 4)) * 3
    ids, offsets = [0, 2, 2, 5], [0, 1]
    ours, theirs = gradlab.tensor(table), torch.tensor(table)
    out = F.embedding_bag(gradlab.tensor(ids), ours, gradlab.tensor(offsets), max_norm=1.5,
                          norm_type=1.0, mode="sum")
    want = torch.nn.functional.embedding_bag(torch.tensor(ids), theirs, torch.tensor(offsets),
                                             max_norm=1.5, norm_type=1.0, mode="sum")
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(ours.numpy()[[1, 3, 4]], table[[1, 3, 4]])  # not looked up


def test_gradients_are_differentiable_again():
    w = gradlab.randn(5, 3, dtype=gradlab.float64, requires_grad=True)
    psw = gradlab.randn(8, dtype=gradlab.float64, requires_grad=True)
    ids = gradlab.tensor([0, 1, 4, 4, 2, 3, 3, 0])
    offsets = gradlab.tensor([0, 2, 2, 6])
    assert gradlab.autograd.gradgradcheck(
        lambda w, p: F.embedding_bag(ids, w, offsets, mode="sum", per_sample_weights=p,
                                     padding_idx=3), [w, psw])


def test_graph_node_and_empty_output():
    w = gradlab.randn(4, 2, requires_grad=True)
    out = F.embedding_bag(gradlab.zeros(0, 3, dtype=gradlab.int64), w)
    assert out.shape == (0, 2) and type(out.grad_fn).__name__ == "EmbeddingBagBackward0"


ERRORS = [
    (lambda w: F.embedding_bag(gradlab.tensor([0.0]), w, gradlab.tensor([0])), RuntimeError,
     "input must be an int64"),
    (lambda w: F.embedding_bag(gradlab.tensor([0]), w, gradlab.tensor([0.0])), RuntimeError,
     "offsets must be an int64"),
    (lambda w: F.embedding_bag(gradlab.tensor([[0]]), w, gradlab.tensor([0])), ValueError,
     "if input is 2D, then offsets has to be None"),
    (lambda w: F.embedding_bag(gradlab.tensor([[[0]]]), w), ValueError, "1D or 2D"),
    (lambda w: F.embedding_bag(gradlab.tensor([0]), w), ValueError, "offsets has to be a 1D"),
    (lambda w: F.embedding_bag(gradlab.tensor([0]), w, gradlab.tensor([[0]])), ValueError,
     r"offsets has to be a 1D Tensor, got shape \(1, 1\)"),
    (lambda w: F.embedding_bag(gradlab.tensor([0]), w[0], gradlab.tensor([0])), ValueError,
     "weight has to be a 2D"),
    (lambda w: F.embedding_bag(gradlab.tensor([0]), w.long(), gradlab.tensor([0])),
     RuntimeError, "floating point"),
    (lambda w: F.embedding_bag(gradlab.tensor([0, 1]), w, gradlab.tensor([1])), RuntimeError,
     r"offsets\[0\] has to be 0"),
    (lambda w: F.embedding_bag(gradlab.tensor([0, 1]), w, gradlab.tensor([0, 3])),
     RuntimeError, r"offsets\[-1\] can not be greater than input's length 2"),
    (lambda w: F.embedding_bag(gradlab.tensor([0, 1]), w, gradlab.tensor([0, 2, 1])),
     RuntimeError, "offsets must not decrease"),
    (lambda w: F.embedding_bag(gradlab.tensor([0]), w, gradlab.tensor([], dtype=gradlab.int64),
                               include_last_offset=True), ValueError, "at least one entry"),
    (lambda w: F.embedding_bag(gradlab.tensor([0]), w, gradlab.tensor([0]), mode="prod"),
     ValueError, "mode has to be one of sum, mean or max"),
    (lambda w: F.embedding_bag(gradlab.tensor([0]), w, gradlab.tensor([0]), mode="max",
                               scale_grad_by_freq=True), ValueError, "max mode does not support"),
    (lambda w: F.embedding_bag(gradlab.tensor([0]), w, gradlab.tensor([0]), mode="max",
                               sparse=True), ValueError, "does not support sparse"),
    (lambda w: F.embedding_bag(gradlab.tensor([0]), w, gradlab.tensor([0]), sparse=True),
     NotImplementedError, "no sparse tensors"),
    (lambda w: F.embedding_bag(gradlab.tensor([0]), w, gradlab.tensor([0]), padding_idx=4),
     RuntimeError, "padding_idx must be within the number of embeddings, -4 through 3"),
    (lambda w: F.embedding_bag(gradlab.tensor([4]), w, gradlab.tensor([0])), RuntimeError,
     "found idx to be 4"),
    (lambda w: F.embedding_bag(gradlab.tensor([-1]), w, gradlab.tensor([0])), RuntimeError,
     "found idx to be -1"),
    (lambda w: F.embedding_bag(gradlab.tensor([0]), w, gradlab.tensor([0]),
                               per_sample_weights=gradlab.ones(2)), ValueError,
     "must have the same shape as the input"),
    (lambda w: F.embedding_bag(gradlab.tensor([0]), w, gradlab.tensor([0]),
                               per_sample_weights=gradlab.ones(1)), NotImplementedError,
     "only supported for mode='sum'"),
    (lambda w: F.embedding_bag(gradlab.tensor([0]), w, gradlab.tensor([0]), mode="sum",
                               per_sample_weights=gradlab.ones(1, dtype=gradlab.float64)),
     RuntimeError, "must have the dtype of weight"),
]


@pytest.mark.parametrize("call, error, match", ERRORS, ids=[m for _, _, m in ERRORS])
def test_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call(gradlab.randn(4, 2))


# --- nn.EmbeddingBag ------------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("kwargs", [{}, {"mode": "sum", "padding_idx": -2},
                                    {"mode": "max", "max_norm": 1.0, "norm_type": 3.0},
                                    {"scale_grad_by_freq": True, "include_last_offset": True}])
def test_module_matches_torch(kwargs):
    ours, theirs = nn.EmbeddingBag(6, 3, **kwargs), torch.nn.EmbeddingBag(6, 3, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    if "padding_idx" in kwargs:
        assert ours.padding_idx == theirs.padding_idx == 4
        assert not ours.weight.detach().numpy()[4].any()
    table = theirs.weight.detach().numpy().astype(np.float64)
    ours.load_state_dict({"weight": table})
    theirs.double()
    ids, offsets = [1, 4, 4, 1, 5, 5], [0, 2, 2, 6]  # every id twice (see above)
    yg = ours.double()(gradlab.tensor(ids), gradlab.tensor(offsets))
    yt = theirs(torch.tensor(ids), torch.tensor(offsets))
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    cot = np.random.default_rng(0).standard_normal(tuple(yt.shape))
    yg.backward(gradlab.tensor(cot))
    yt.backward(torch.tensor(cot))
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-12)


def test_from_pretrained_shares_the_table_and_freezes_it():
    table = gradlab.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    bag_layer = nn.EmbeddingBag.from_pretrained(table, mode="sum", padding_idx=0)
    assert bag_layer.weight.data_ptr() == table.data_ptr()
    assert not bag_layer.weight.requires_grad and bag_layer.padding_idx == 0
    out = bag_layer(gradlab.tensor([[0, 1, 2], [1, 1, 0]]))
    np.testing.assert_array_equal(out.numpy(), [[8.0, 10.0], [6.0, 8.0]])
    assert nn.EmbeddingBag.from_pretrained(table, freeze=False).weight.requires_grad
    out = bag_layer(gradlab.tensor([0, 2, 1]), per_sample_weights=gradlab.tensor([9.0, 2, 3]),
                    offsets=gradlab.tensor([0, 1]))
    np.testing.assert_array_equal(out.numpy(), [[0.0, 0.0], [19.0, 24.0]])


def test_module_errors_teach():
    with pytest.raises(ValueError, match="padding_idx=5 must be within num_embeddings=5"):
        nn.EmbeddingBag(5, 2, padding_idx=5)
    with pytest.raises(ValueError, match=r"the given weight has shape \(2, 2\)"):
        nn.EmbeddingBag(5, 2, _weight=gradlab.zeros(2, 2))
    with pytest.raises(ValueError, match="embeddings must be a 2D tensor"):
        nn.EmbeddingBag.from_pretrained(gradlab.zeros(3))
