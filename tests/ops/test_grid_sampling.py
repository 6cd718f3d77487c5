"""F.affine_grid and F.grid_sample: every mode x padding_mode x align_corners against PyTorch
(values and both gradients, float64), gradcheck and gradgradcheck, forward mode, grids far
outside [-1, 1], non-finite grids, hypothesis over sizes, every error, and a small spatial
transformer that trains step for step like PyTorch's."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
import tests.oracle as oracle
from gradlab.nn import functional as GF
from tests.oracle import OpCase, needs_torch, standard_op_tests, torch

MODES, PADDINGS = ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection")


def _sampler(mode, padding_mode, align_corners):
    return lambda lib, x, grid: lib.nn.functional.grid_sample(
        x, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners)


def _affine(size, align_corners):
    return lambda lib, theta: lib.nn.functional.affine_grid(theta, size,
                                                           align_corners=align_corners)


def _sample_case(dims, mode, padding, align):
    shapes = ((1, 2, 3, 3), (1, 2, 3, 2)) if dims == 2 else ((1, 1, 2, 3, 3), (1, 2, 1, 2, 3))
    far = 3.0 if padding == "reflection" else 1.4  # reflection: several mirrors away
    return OpCase(
        f"grid_sample{dims}d_{mode}_{padding}_{'aligned' if align else 'edges'}",
        _sampler(mode, padding, align), shapes, domain=[(-2.0, 2.0), (-far, far)],
        variants=(((2, 0, 3, 4), (2, 3, 2, 2)),) if dims == 2 else (),
        # second derivatives: the padding modes' derivatives are checked with bilinear, the
        # cubic weights' with zeros padding (bicubic's taps move with the padding, weights don't)
        gradgrad=mode == "bilinear" and (dims == 2 or padding == "zeros") or
        mode == "bicubic" and padding == "zeros",
        jvp=False)  # PyTorch has no forward AD for grid_sampler: test_jvp below checks ours


SAMPLE_CASES = [_sample_case(2, m, p, a) for m, p, a in itertools.product(
    MODES, PADDINGS, (False, True))] + [_sample_case(3, m, p, a) for m, p, a in
                                        itertools.product(MODES[:2], PADDINGS, (False, True))]
AFFINE_CASES = [
    OpCase(f"affine_grid{len(size) - 2}d_{align}", _affine(size, align),
           ((size[0], len(size) - 2, len(size) - 1),), domain=(-1.5, 1.5))
    for size in ((2, 3, 4, 5), (2, 1, 3, 2, 4), (1, 1, 1, 3)) for align in (False, True)
    if not (align and min(size[2:]) == 1)]

globals().update(standard_op_tests(SAMPLE_CASES))
globals().update(standard_op_tests(AFFINE_CASES, prefix="affine_"))


@pytest.mark.parametrize("case", SAMPLE_CASES[::3], ids=lambda c: c.id)
def test_jvp(case, monkeypatch):
    """Forward mode (composed ops): tangents match central differences (PyTorch has none)."""
    monkeypatch.setattr(oracle, "torch", None)
    oracle.check_jvp(case, "cpu")


# --- properties that need no oracle ------------------------------------------------------------

@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_identity_grid_reads_the_input_back(mode, align):
    """The identity θ samples every pixel at its centre: the output is the input."""
    x = gradlab.randn(2, 3, 5, 7, dtype=gradlab.float64)
    theta = gradlab.tensor([[1.0, 0, 0], [0, 1, 0]], dtype=gradlab.float64).expand(2, 2, 3)
    grid = GF.affine_grid(theta, x.shape, align_corners=align)
    out = GF.grid_sample(x, grid, mode=mode, align_corners=align)
    np.testing.assert_allclose(out.numpy(), x.numpy(), atol=1e-12)


def test_shift_by_one_pixel_and_padding_modes():
    """x + 2/W moves one pixel right: the last column reads outside (0, edge or mirror)."""
    x = gradlab.arange(12, dtype=gradlab.float64).reshape(1, 1, 3, 4)
    theta = gradlab.tensor([[[1.0, 0, 2 / 4], [0, 1, 0]]], dtype=gradlab.float64)
    grid = GF.affine_grid(theta, (1, 1, 3, 4), align_corners=False)
    want = {"zeros": 0.0, "border": 3.0, "reflection": 3.0}  # mirror at the edge: pixel 3 again
    for padding, last in want.items():
        out = GF.grid_sample(x, grid, padding_mode=padding, align_corners=False).numpy()
        np.testing.assert_allclose(out[0, 0, :, :3], x.numpy()[0, 0, :, 1:], atol=1e-12)
        np.testing.assert_allclose(out[0, 0, 0, 3], last, atol=1e-12)


def test_nearest_keeps_the_grid_in_the_graph_with_zero_gradient():
    x = gradlab.randn(1, 2, 3, 3, dtype=gradlab.float64)
    grid = gradlab.rand(1, 2, 2, 2, dtype=gradlab.float64, requires_grad=True)
    out = GF.grid_sample(x, grid, mode="nearest", align_corners=False)
    assert out.requires_grad
    out.sum().backward()
    assert grid.grad is not None and not grid.grad.numpy().any()


def test_empty_batch_channels_and_grid():
    x = gradlab.randn(2, 0, 3, 4, requires_grad=True)
    assert tuple(GF.grid_sample(x, gradlab.rand(2, 5, 6, 2), align_corners=True).shape) == \
        (2, 0, 5, 6)
    x = gradlab.randn(2, 3, 3, 4, requires_grad=True)
    out = GF.grid_sample(x, gradlab.rand(2, 0, 6, 2), align_corners=True)
    assert tuple(out.shape) == (2, 3, 0, 6)
    out.sum().backward()
    assert not x.grad.numpy().any()


def test_default_align_corners_warns_and_is_false():
    x, theta = gradlab.randn(1, 1, 3, 3), gradlab.randn(1, 2, 3)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        grid = GF.affine_grid(theta, (1, 1, 3, 3))
    np.testing.assert_array_equal(grid.numpy(),
                                  GF.affine_grid(theta, (1, 1, 3, 3), False).numpy())
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        out = GF.grid_sample(x, grid)
    np.testing.assert_array_equal(out.numpy(), GF.grid_sample(x, grid, align_corners=False)
                                  .numpy())
    with pytest.warns(UserWarning, match="unit-size grids"):
        GF.affine_grid(theta, (1, 1, 1, 3), align_corners=True)


# --- against PyTorch: non-finite grids, hypothesis over sizes, the unit-size grid -------------

def _both(x, grid, backward_in_torch=True, **kw):
    """(output, input grad, grid grad) from gradlab and PyTorch for one random output grad."""
    results = []
    for lib in (gradlab, torch):
        xs = lib.tensor(x, requires_grad=True)
        gs = lib.tensor(grid, requires_grad=True)
        out = lib.nn.functional.grid_sample(xs, gs, **kw)
        if lib is gradlab or backward_in_torch:
            cot = np.random.default_rng(3).standard_normal(tuple(out.shape))
            out.backward(lib.tensor(cot))
        results.append([oracle.host(t) for t in (out, xs.grad, gs.grad) if t is not None])
    return results


@needs_torch
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dims,mode,padding", [(2, m, p) for m in MODES for p in PADDINGS] +
                         [(3, m, p) for m in MODES[:2] for p in PADDINGS])
def test_nonfinite_grid_matches_torch(dims, mode, padding, align):
    """NaN and ±inf coordinates: values as PyTorch's (NaN or 0 with zeros padding, an edge
    pixel with border/reflection); gradients equal wherever PyTorch's are finite."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 4, 5) if dims == 2 else (2, 2, 3, 4, 5))
    grid = rng.uniform(-1.2, 1.2, (2, 3, 4, 2) if dims == 2 else (2, 3, 4, 2, 3))
    points = grid.reshape(2, -1, dims)  # a view: one coordinate NaN, +inf, -inf; all NaN
    points[0, 0, 0], points[0, 5, 1], points[1, 9, dims - 1] = np.nan, np.inf, -np.inf
    points[1, 3] = np.nan
    # PyTorch 2.13's CPU backward crashes (segfault) for 4-D bilinear border/reflection on
    # such a grid, and for 5-D drops the points its forward held on an edge: there only the
    # values are compared, and our gradients must be finite.
    crashes = padding != "zeros" and (dims == 3 or mode == "bilinear")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ours, theirs = _both(x, grid, backward_in_torch=not crashes, mode=mode,
                             padding_mode=padding, align_corners=align)
    np.testing.assert_allclose(ours[0], theirs[0], atol=1e-12, equal_nan=True)
    if crashes:  # a non-finite point is held at an edge, with no gradient (as in forward)
        assert np.isfinite(ours[1]).all() and np.isfinite(ours[2]).all()
        assert not ours[2][~np.isfinite(grid)].any()
    for got, want in zip(ours[1:], theirs[1:]):
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], want[finite], atol=1e-10)


@needs_torch
@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 2), c=st.integers(1, 3), size=st.tuples(st.integers(1, 5),
                                                                 st.integers(1, 5)),
       out=st.tuples(st.integers(1, 4), st.integers(1, 4)), mode=st.sampled_from(MODES),
       padding=st.sampled_from(PADDINGS), align=st.booleans(), seed=st.integers(0, 99))
def test_sizes_match_torch(n, c, size, out, mode, padding, align, seed):
    rng = np.random.default_rng(seed)
    x, grid = rng.standard_normal((n, c, *size)), rng.uniform(-2.5, 2.5, (n, *out, 2))
    ours, theirs = _both(x, grid, mode=mode, padding_mode=padding, align_corners=align)
    for got, want in zip(ours, theirs):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)


@needs_torch
@settings(max_examples=15, deadline=None)
@given(size=st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 6),
                      st.integers(1, 6)), align=st.booleans())
def test_affine_grid_sizes_match_torch(size, align):
    random = np.random.default_rng(sum(size)).standard_normal((size[0], 2, 3))
    identity = np.broadcast_to(np.eye(2, 3), (size[0], 2, 3))
    for theta, rtol in ((random, 1e-14), (identity, 0)):  # identity: the base grid, bit for bit
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # unit-size grids with align_corners
            ours = GF.affine_grid(gradlab.tensor(theta), size, align_corners=align).numpy()
            theirs = torch.nn.functional.affine_grid(torch.tensor(theta), size, align)
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=rtol, atol=rtol)


# --- errors --------------------------------------------------------------------------------------

@pytest.mark.parametrize("args,kwargs,error,match", [
    (((2, 3, 4, 5), (2, 6, 7, 2)), {"mode": "linear"}, ValueError, "expected mode to be"),
    (((2, 3, 4, 5), (2, 6, 7, 2)), {"padding_mode": "wrap"}, ValueError, "padding_mode"),
    (((3, 4, 5), (6, 7, 2)), {}, RuntimeError, "4D or 5D input"),
    (((2, 3, 4, 5), (2, 6, 7, 2, 1)), {}, RuntimeError, "same number of dimensions"),
    (((2, 3, 4, 5), (1, 6, 7, 2)), {}, RuntimeError, "same batch size"),
    (((2, 3, 4, 5), (2, 6, 7, 3)), {}, RuntimeError, "size 2 in last dimension"),
    (((2, 3, 4, 5, 6), (2, 1, 6, 7, 2)), {}, RuntimeError, "size 3 in last dimension"),
    (((2, 3, 0, 5), (2, 6, 7, 2)), {}, RuntimeError, "dimension 2 being empty"),
    (((2, 3, 4, 5, 6), (2, 1, 6, 7, 3)), {"mode": "bicubic"}, RuntimeError,
     "bicubic interpolation only supports 4D"),
    (((2, 3, 4, 5), (2, 6, 7, 2)), {"align_corners": 1}, TypeError, "must be bool"),
])
def test_grid_sample_errors(args, kwargs, error, match):
    x, grid = (gradlab.randn(*s) for s in args)
    kwargs.setdefault("align_corners", False)
    with pytest.raises(error, match=match):
        GF.grid_sample(x, grid, **kwargs)


def test_grid_sample_dtype_errors():
    x, grid = gradlab.randn(1, 1, 2, 2), gradlab.rand(1, 2, 2, 2)
    with pytest.raises(RuntimeError, match="same dtype.*grid.to"):
        GF.grid_sample(x, grid.double(), align_corners=False)
    with pytest.raises(NotImplementedError, match="floating point.*int64"):
        GF.grid_sample(x.long(), grid.long(), align_corners=False)


@pytest.mark.parametrize("theta,size,error,match", [
    ((2, 2, 3), (2, 3, 4), NotImplementedError, "only supports 4D and 5D sizes"),
    ((2, 2, 3), (2, 3, 4, 5, 6), ValueError, "3D affine matrices of shape Nx3x4"),
    ((2, 3, 4), (2, 3, 4, 5), ValueError, "2D affine matrices of shape Nx2x3"),
    ((2, 3), (2, 3, 4, 5), ValueError, "2D affine matrices"),
    ((2, 2, 3), (2, 3, 0, 5), ValueError, "non-zero, positive output size"),
    ((2, 2, 3), (3, 3, 4, 5), RuntimeError, "theta holds 2 matrices.*batch of 3"),
])
def test_affine_grid_errors(theta, size, error, match):
    with pytest.raises(error, match=match):
        GF.affine_grid(gradlab.randn(*theta), size, align_corners=False)
    with pytest.raises(ValueError, match="floating point type, but got gradlab.int64"):
        GF.affine_grid(gradlab.zeros(2, 2, 3, dtype=gradlab.int64), (2, 3, 4, 5), False)


def test_torch_raises_the_same_errors():
    """PyTorch's types for the same mistakes (where we chose the type, it is PyTorch's)."""
    if torch is None:
        pytest.skip("PyTorch (the oracle) is not installed")
    for lib in (gradlab, torch):
        with pytest.raises(RuntimeError, match="same batch size"):
            lib.nn.functional.grid_sample(lib.zeros(2, 1, 3, 3), lib.zeros(1, 2, 2, 2),
                                          align_corners=False)
        with pytest.raises(ValueError, match="positive output size"):
            lib.nn.functional.affine_grid(lib.zeros(2, 2, 3), (2, 0, 4, 5), False)


# --- end to end: a tiny spatial transformer trains like PyTorch's -------------------------------

def _spatial_transformer(lib):
    """PyTorch's spatial-transformer tutorial, shrunk to 8 x 8 images (the same code runs on
    either library)."""
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.localization = nn.Sequential(nn.Conv2d(1, 4, kernel_size=3),
                                              nn.MaxPool2d(2, stride=2), nn.ReLU(True))
            self.fc_loc = nn.Sequential(nn.Linear(4 * 3 * 3, 8), nn.ReLU(True), nn.Linear(8, 6))
            self.fc_loc[2].weight.data.zero_()  # start at the identity transform
            self.fc_loc[2].bias.data.copy_(lib.tensor([1, 0, 0, 0, 1, 0], dtype=lib.float))
            self.fc = nn.Linear(64, 3)

        def stn(self, x):
            theta = self.fc_loc(self.localization(x).view(-1, 4 * 3 * 3)).view(-1, 2, 3)
            grid = F.affine_grid(theta, x.size(), align_corners=False)
            return F.grid_sample(x, grid, align_corners=False)

        def forward(self, x):
            return F.log_softmax(self.fc(self.stn(x).view(-1, 64)), dim=1)

    return Net()


@needs_torch
@pytest.mark.parametrize("dtype,nudge", [("float64", False), ("float64", True),
                                         ("float32", False)])
def test_spatial_transformer_trains_like_torch(dtype, nudge):
    """From the tutorial's start (θ = identity for every image) or a nudged one."""
    rng = np.random.default_rng(0)
    images = rng.standard_normal((6, 1, 8, 8)).astype(dtype)
    labels = rng.integers(0, 3, 6)
    torch.manual_seed(0)
    nets = {lib: _spatial_transformer(lib).to(getattr(lib, dtype)) for lib in (gradlab, torch)}
    for ours, theirs in zip(nets[gradlab].parameters(), nets[torch].parameters()):
        if nudge:  # θ off the identity from the first step
            theirs.data.add_(torch.randn_like(theirs) * 0.1)
        with gradlab.no_grad():
            ours.copy_(gradlab.tensor(theirs.detach().numpy()))
    losses = {}
    for lib, net in nets.items():
        optimizer = lib.optim.SGD(net.parameters(), lr=0.05, momentum=0.5)
        x, y = lib.tensor(images), lib.tensor(labels)
        losses[lib] = []
        for _ in range(6):
            optimizer.zero_grad()
            loss = lib.nn.functional.nll_loss(net(x), y)
            loss.backward()
            optimizer.step()
            losses[lib].append(loss.item())
    assert losses[torch][-1] < losses[torch][0]  # it learns, so the comparison means something
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(losses[gradlab], losses[torch], rtol=tol)
