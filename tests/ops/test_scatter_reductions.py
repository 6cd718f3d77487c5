"""scatter_reduce and index_reduce: every reduce, with and without self, vs PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from tests import oracle
from tests.oracle import OpCase, index_tensor, needs_torch, standard_op_tests, torch

# dim 0 of a (3, 4) input: each column gets 3 values, and row 1 of every column none. (src
# has the index's shape: PyTorch's backward fails for a larger src; ours is tested below)
SCATTER_INDEX = [[0, 0, 2, 0], [2, 0, 0, 2], [0, 2, 2, 0]]
SLICE_INDEX = [0, 3, 0, 1, 3]  # index_reduce along dim 1 of a (2, 4) input: slice 2 gets none
REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _with_zeros(rng, dtype, shapes):
    """For 'prod': src holds one zero landing alone and two landing together."""
    x, src = (rng.uniform(0.5, 1.5, s) * rng.choice([-1, 1], s) for s in shapes)
    src[0, 0] = 0.0  # along dim 1, position (0, 0) gets one zero among its values
    src[1, 1] = src[1, 2] = 0.0  # and position (1, 0) two
    return [x.astype(dtype), src.astype(dtype)]


def _away_from_zero(rng, dtype, shapes):
    return [(rng.uniform(0.5, 1.5, s) * rng.choice([-1, 1], s)).astype(dtype) for s in shapes]


def _scatter_case(reduce, include_self, **kw):
    def fn(lib, x, src):
        idx = index_tensor(lib, SCATTER_INDEX)
        return lib.scatter_reduce(x, 0, idx, src, reduce, include_self=include_self)
    # (jvp: torch.func.jvp of scatter_reduce 'prod' returns zeros, so that row is checked
    # against finite differences only, in the test below)
    return OpCase(f"scatter_reduce_{reduce}_{'self' if include_self else 'noself'}", fn,
                  ((3, 4), (3, 4)), inputs=_away_from_zero, jvp=reduce != "prod", **kw)


def _index_case(reduce, include_self):
    def fn(lib, x, src):
        return x.index_reduce(1, index_tensor(lib, SLICE_INDEX), src, reduce,
                              include_self=include_self)
    # (jvp=False: PyTorch has no forward mode for index_reduce; finite differences below)
    return OpCase(f"index_reduce_{reduce}_{'self' if include_self else 'noself'}", fn,
                  ((2, 4), (2, 5)), inputs=_away_from_zero, jvp=False)


CASES = [
    *[_scatter_case(r, inc) for r in REDUCES for inc in (True, False)],
    *[_index_case(r, inc) for r in REDUCES[1:] for inc in (True, False)],
    # zeros in src: one alone and two together (double backward refuses that, as PyTorch)
    OpCase("scatter_reduce_prod_zeros",
           lambda lib, x, src: lib.scatter_reduce(x, 1, index_tensor(lib, SCATTER_INDEX), src,
                                                  "prod"),
           ((3, 4), (3, 4)), inputs=_with_zeros, gradgrad=False, jvp=False),
]

globals().update(standard_op_tests(CASES))

NO_TORCH_JVP = [c for c in CASES if not c.jvp and c.gradgrad]


@pytest.mark.parametrize("case", NO_TORCH_JVP, ids=[c.id for c in NO_TORCH_JVP])
def test_jvp_matches_finite_differences_where_torch_has_none(case, device, monkeypatch):
    monkeypatch.setattr(oracle, "torch", None)  # finite differences only
    oracle.check_jvp(case, device)


@needs_torch
@pytest.mark.parametrize("reduce", ["amax", "amin", "mean", "prod"])
@pytest.mark.parametrize("include_self", [True, False])
def test_ties_split_the_gradient_as_torch_does(reduce, include_self):
    x = np.array([3.0, 2.0, 3.0, 1.0])
    src = np.array([3.0, 1.0, 3.0, 2.0, 1.0, 0.0])
    idx = [0, 0, 0, 1, 3, 3]
    cot = np.array([1.0, 2.0, 3.0, 4.0])
    grads = []
    for lib in (gradlab, torch):
        xs = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in (x, src)]
        out = lib.scatter_reduce(xs[0], 0, lib.tensor(idx), xs[1], reduce,
                                 include_self=include_self)
        out.backward(lib.tensor(cot, dtype=lib.float64))
        grads.append([out.detach().numpy()] + [t.grad.numpy() for t in xs])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14)


def _numpy_scatter_reduce(x, dim, idx, src, reduce, include_self):
    """One index entry at a time: the definition, slowly."""
    out = x.copy()
    taken = {}
    for pos in np.ndindex(*idx.shape):
        target = list(pos)
        target[dim] = idx[pos]
        taken.setdefault(tuple(target), []).append(src[pos])
    for target, values in taken.items():
        values = ([x[target]] if include_self else []) + values
        out[target] = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max,
                       "amin": np.min}[reduce](values)
    return out


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(REDUCES), st.booleans(), st.integers(1, 3), st.integers(1, 4),
       st.integers(0, 1), st.data())
def test_matches_the_definition_for_random_shapes(reduce, include_self, rows, cols, dim, data):
    rng = np.random.default_rng(rows * 10 + cols)
    x = rng.standard_normal((rows, cols))
    idx_shape = (data.draw(st.integers(0, 3)) if dim == 0 else rows,
                 cols if dim == 0 else data.draw(st.integers(0, 5)))
    size = x.shape[dim]
    idx = np.asarray(data.draw(st.lists(st.integers(0, size - 1), min_size=int(np.prod(
        idx_shape)), max_size=int(np.prod(idx_shape))))).reshape(idx_shape).astype(np.int64)
    src = rng.standard_normal(idx_shape)
    got = gradlab.scatter_reduce(gradlab.tensor(x), dim, gradlab.tensor(idx), gradlab.tensor(src),
                                 reduce, include_self=include_self)
    np.testing.assert_allclose(got.numpy(), _numpy_scatter_reduce(x, dim, idx, src, reduce,
                                                                  include_self), rtol=1e-12)


@needs_torch
def test_integer_mean_rounds_down_and_integer_extremes_as_torch():
    x, idx, src = [5, -7, 9], [0, 0, 1, 1], [2, 3, -4, 4]
    for reduce in ("mean", "amax", "amin", "prod"):
        for include_self in (True, False):
            ours = gradlab.scatter_reduce(gradlab.tensor(x), 0, gradlab.tensor(idx),
                                          gradlab.tensor(src), reduce, include_self=include_self)
            theirs = torch.scatter_reduce(torch.tensor(x), 0, torch.tensor(idx),
                                          torch.tensor(src), reduce, include_self=include_self)
            assert ours.dtype is gradlab.int64 and ours.tolist() == theirs.tolist()


def test_src_larger_than_the_index_and_a_0d_input():
    src = gradlab.arange(6.0, requires_grad=True)
    out = gradlab.scatter_reduce(gradlab.zeros(2), 0, gradlab.tensor([1, 1]), src, "sum")
    assert out.tolist() == [0.0, 1.0]
    out.sum().backward()
    assert src.grad.tolist() == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    scalar = gradlab.scatter_reduce(gradlab.tensor(2.0), 0, gradlab.tensor([0, 0]),
                                    gradlab.tensor([3.0, 4.0]), "prod")
    assert scalar.shape == () and scalar.item() == 24.0


def test_errors_name_the_op_and_the_fix():
    x = gradlab.zeros(3, requires_grad=True)
    idx = gradlab.tensor([0, 1])
    with pytest.raises(RuntimeError, match=r"scatter_reduce: reduce must be one of 'sum', "
                                           r"'prod'.*got 'max'"):
        gradlab.scatter_reduce(x, 0, idx, gradlab.ones(2), "max")
    with pytest.raises(RuntimeError, match=r"index_reduce: reduce must be one of 'prod'.*"
                                           r"got 'sum'. For a sum use index_add"):
        gradlab.index_reduce(x, 0, idx, gradlab.ones(2), "sum")
    with pytest.raises(TypeError, match=r"scatter_reduce: src must be a Tensor.*full"):
        gradlab.scatter_reduce(x, 0, idx, 1.0, "sum")
    with pytest.raises(TypeError, match=r"scatter_reduce: input must be a Tensor"):
        gradlab.scatter_reduce([0.0], 0, idx, gradlab.ones(2), "sum")
    with pytest.raises(RuntimeError, match=r"scatter_reduce: src has dtype gradlab.float64.*"
                                           r"src.to"):
        gradlab.scatter_reduce(x, 0, idx, gradlab.ones(2, dtype=gradlab.float64), "sum")
    with pytest.raises(TypeError, match=r"scatter_reduce: index must be an int64"):
        gradlab.scatter_reduce(x, 0, gradlab.ones(2), gradlab.ones(2), "sum")
    with pytest.raises(RuntimeError, match=r"scatter_reduce: src \(shape \(2, 1\)\) must have "
                                           r"as many dims as the index"):
        gradlab.scatter_reduce(x, 0, idx, gradlab.ones(2, 1), "sum")
    with pytest.raises(IndexError, match=r"scatter_reduce: index 3 is out of range for dim 0"):
        gradlab.scatter_reduce(x, 0, gradlab.tensor([3]), gradlab.ones(1), "sum")
    with pytest.raises(RuntimeError, match=r"index_reduce: source must have shape \(2,\)"):
        gradlab.index_reduce(x, 0, idx, gradlab.ones(3), "prod")
    with pytest.raises(RuntimeError, match=r"index_reduce: needs a tensor with at least 1 dim"):
        gradlab.index_reduce(gradlab.tensor(1.0), 0, idx, gradlab.ones(2), "prod")
    src = gradlab.tensor([0.0, 0.0], requires_grad=True)
    out = gradlab.scatter_reduce(gradlab.ones(2), 0, gradlab.tensor([0, 0]), src, "prod")
    (grad,) = gradlab.autograd.grad(out.sum(), src)  # a first derivative is fine
    assert grad.tolist() == [0.0, 0.0]
    out = gradlab.scatter_reduce(gradlab.ones(2), 0, gradlab.tensor([0, 0]), src, "prod")
    with pytest.raises(RuntimeError, match=r"scatter_reduce: double backward of reduce='prod'"
                                           r".*two or more zeros"):
        gradlab.autograd.grad(out.sum(), src, create_graph=True)
    assert type(out.grad_fn).__name__ == "ScatterReduceBackward0"
