"""The op test harness: one table row per op drives every check.

A row (``OpCase``) names an op and gives one lambda, ``fn(lib, *tensors)``,
that runs unchanged with ``lib = gradlab`` and ``lib = torch`` (the two share
names), so a test reads like the API. From a row the harness checks:

* the forward against NumPy (``numpy=`` lambda taking ``np`` and arrays),
* ``gradcheck`` (and ``gradgradcheck``) in float64 against finite differences,
* values and gradients against PyTorch with a random output gradient, when
  PyTorch is installed (those checks skip otherwise),

on every device, for the row's shapes plus 0-d, empty and non-contiguous
variants where the row allows them.

A test module gets those checks as test functions from its table in one line::

    globals().update(standard_op_tests(CASES))

``standard_op_tests(cases, prefix="")`` returns eight tests, each parametrized
over the rows it applies to and over ``device``:

* ``test_forward_matches_numpy``: the rows with a ``numpy`` reference,
* ``test_gradcheck``: the rows with ``grad``,
* ``test_gradgradcheck``: the rows with ``grad`` and ``gradgrad``,
* ``test_jvp_matches_finite_differences``: the rows with ``grad`` and ``jvp``,
* ``test_matches_torch`` and ``test_matches_torch_float32``: every row,
* ``test_matches_torch_non_contiguous``: the rows with ``strided``,
* ``test_matches_torch_nonfinite_gradients``: the rows with ``grad`` and ``nonfinite``.

The four PyTorch tests skip when PyTorch is not installed. A module with
several tables gives each a prefix: ``prefix="getitem_"`` names the tests
``test_getitem_gradcheck`` and so on. A row that must skip a check says so in
its own fields (``strided=False``, ``gradgrad=False``), so the table stays the
one place that says what is checked.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import gradlab

try:  # PyTorch is the oracle, never a dependency
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")


@dataclass
class OpCase:
    """One op under test.

    ``fn``       ``fn(lib, *tensors)`` with lib = gradlab or torch
    ``shapes``   input shapes; a tuple of shapes per input
    ``numpy``    ``numpy(np, *arrays)``: the expected forward, or None
    ``domain``   (low, high) of the random inputs, one pair or one per input
    ``inputs``   custom input maker ``inputs(rng, dtype)`` -> list of arrays (overrides)
    ``grad``     differentiable w.r.t. its float inputs
    ``gradgrad`` also check second derivatives
    ``variants`` extra shape sets (0-d, empty, broadcast ...) checked the same way
    ``strided``  also run with non-contiguous inputs
    ``nonfinite`` also backpropagate NaN and inf output gradients (``check_nonfinite_gradients``)
    """

    name: str
    fn: Callable
    shapes: tuple
    numpy: Callable | None = None
    domain: Any = (-2.0, 2.0)
    inputs: Callable | None = None
    grad: bool = True
    gradgrad: bool = True
    variants: tuple = ()
    strided: bool = True
    atol: float = 1e-5
    rtol: float = 1e-4
    grad_inputs: tuple | None = None  # indices of inputs to differentiate (default: float ones)
    jvp: bool = True  # forward mode: check its tangent rule (False: a reason is in a comment)
    nonfinite: bool = True  # NaN/inf output gradients vs PyTorch (False: a reason in a comment)
    id: str = field(default="")

    def __post_init__(self):
        self.id = self.id or self.name


# Shape sets used across the op tables: one shape per input.
SCALAR = ((),)
EMPTY = ((0, 3),)
M = ((3, 4),)
T = ((2, 3, 4),)


def away_from_zero(rng, dtype, shapes, high=2.0):
    """Inputs with |x| in [0.5, high]: for ops with a kink or pole at 0 (abs, div, prod)."""
    return [(rng.uniform(0.5, high, s) * rng.choice([-1, 1], s)).astype(dtype) for s in shapes]


def away_from_zero_small(rng, dtype, shapes):
    """|x| in [0.5, 1.5]: away from 0, and products of several values stay moderate."""
    return away_from_zero(rng, dtype, shapes, high=1.5)


def index_tensor(lib, values, dtype="int64"):
    """An index tensor for ``lib`` (gradlab or torch)."""
    return lib.tensor(values, dtype=getattr(lib, dtype))


def shape_sets(case: OpCase):
    """The case's own shapes, then its variants."""
    return [case.shapes, *case.variants]


def make_arrays(case: OpCase, shapes, dtype=np.float64, rng=None, strided=False):
    """Random NumPy inputs for ``case``; strided=True makes them non-contiguous views."""
    rng = rng or np.random.default_rng(0)
    if case.inputs is not None:
        arrays = [np.asarray(a) for a in case.inputs(rng, dtype, shapes)]
        return [_strided_copy(a) for a in arrays] if strided else arrays
    domains = case.domain if isinstance(case.domain, list) else [case.domain] * len(shapes)
    arrays = []
    for shape, (lo, hi) in zip(shapes, domains):
        if strided and len(shape) >= 1:
            big = rng.uniform(lo, hi, size=shape[:-1] + (2 * shape[-1],)).astype(dtype)
            arr = big[..., ::2]
        else:
            arr = rng.uniform(lo, hi, size=shape).astype(dtype)
        arrays.append(arr)
    return arrays


def _strided_copy(a: np.ndarray) -> np.ndarray:
    """The same values in a non-contiguous view (every other element of a wider array)."""
    if a.ndim == 0:
        return a
    big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
    view = big[..., ::2]
    view[...] = a
    return view


def _is_float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f"


def _grad_positions(case: OpCase, arrays):
    if case.grad_inputs is not None:
        return list(case.grad_inputs)
    return [i for i, a in enumerate(arrays) if _is_float(a)]


def to_gradlab(arrays, device, positions, share=False):
    out = []
    for i, a in enumerate(arrays):
        if share and device == "cpu":
            t = gradlab.from_numpy(a)  # keeps the strides: tests non-contiguous input
        else:
            t = gradlab.tensor(a, device=device)
        if i in positions:
            t.requires_grad_()
        out.append(t)
    return out


def to_torch(arrays, positions):
    out = []
    for i, a in enumerate(arrays):
        t = torch.from_numpy(np.array(a))
        if i in positions:
            t.requires_grad_()
        out.append(t)
    return out


def as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def host(x) -> np.ndarray:
    if isinstance(x, gradlab.Tensor):
        return x.detach().cpu().numpy()
    if torch is not None and isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x)


def check_forward_numpy(case: OpCase, device: str) -> None:
    for shapes in shape_sets(case):
        arrays = make_arrays(case, shapes)
        got = as_tuple(case.fn(gradlab, *to_gradlab(arrays, device, [])))
        want = as_tuple(case.numpy(np, *[a.copy() for a in arrays]))
        assert len(got) == len(want), f"{case.name}: {len(got)} outputs, expected {len(want)}"
        for g, w in zip(got, want):
            np.testing.assert_allclose(host(g), np.asarray(w), rtol=case.rtol, atol=case.atol,
                                       err_msg=f"{case.name} forward vs NumPy, shapes {shapes}")
            assert tuple(g.shape) == np.shape(w), f"{case.name}: shape {tuple(g.shape)} " \
                                                  f"!= {np.shape(w)}"


def check_gradcheck(case: OpCase, device: str, second_order: bool = False) -> None:
    from gradlab.autograd import gradcheck, gradgradcheck

    check = gradgradcheck if second_order else gradcheck
    for shapes in shape_sets(case):
        arrays = make_arrays(case, shapes)
        positions = _grad_positions(case, arrays)
        if not positions or any(arrays[i].size == 0 for i in positions):
            continue
        tensors = to_gradlab(arrays, device, positions)
        assert check(lambda *ts: case.fn(gradlab, *ts), tensors, atol=1e-5, rtol=1e-3)


def check_against_torch(case: OpCase, device: str, strided: bool = False,
                        dtype=np.float64) -> None:
    """Values, dtypes and gradients (for a random output gradient) against PyTorch."""
    rng = np.random.default_rng(1)
    loose = dtype == np.float32
    rtol, atol = (max(case.rtol, 1e-4), max(case.atol, 1e-4)) if loose else (case.rtol,
                                                                            case.atol)
    for shapes in shape_sets(case):
        arrays = make_arrays(case, shapes, dtype=dtype, rng=rng, strided=strided)
        positions = _grad_positions(case, arrays) if case.grad else []
        ours = to_gradlab(arrays, device, positions, share=strided)
        theirs = to_torch(arrays, positions)
        out_g = as_tuple(case.fn(gradlab, *ours))
        out_t = as_tuple(case.fn(torch, *theirs))
        assert len(out_g) == len(out_t)
        for g, t in zip(out_g, out_t):
            assert tuple(g.shape) == tuple(t.shape), \
                f"{case.name}: shape {tuple(g.shape)} vs PyTorch {tuple(t.shape)} ({shapes})"
            assert g.dtype.name == str(t.dtype).replace("torch.", ""), \
                f"{case.name}: dtype {g.dtype} vs PyTorch {t.dtype}"
            np.testing.assert_allclose(host(g), host(t), rtol=rtol, atol=atol,
                                       err_msg=f"{case.name} values vs PyTorch, shapes {shapes}")
        grads = _both_gradients(case, device, ours, theirs, out_g, out_t, positions,
                                lambda shape: rng.standard_normal(shape))
        for i, gg, gt in grads:
            if gt is None:
                assert gg is None or not np.any(host(gg)), f"{case.name}: grad {i} should be 0"
                continue
            assert gg is not None, f"{case.name}: no gradient for input {i}"
            np.testing.assert_allclose(host(gg), host(gt), rtol=rtol, atol=atol,
                                       err_msg=f"{case.name} grad of input {i} vs PyTorch, "
                                               f"shapes {shapes}")


def _both_gradients(case, device, ours, theirs, out_g, out_t, positions, cotangent):
    """``(input index, gradlab's gradient, PyTorch's)`` for one output gradient per
    differentiable output, ``cotangent(shape)``, the same array for both libraries."""
    diff = [(g, t) for g, t in zip(out_g, out_t) if t.requires_grad]
    if not positions or not diff:
        return []
    cots = [cotangent(tuple(t.shape)) for _, t in diff]
    grads_g = gradlab.autograd.grad(
        [g for g, _ in diff], [ours[i] for i in positions],
        [gradlab.tensor(c, dtype=g.dtype, device=device) for c, (g, _) in zip(cots, diff)],
        allow_unused=True)
    grads_t = torch.autograd.grad(
        [t for _, t in diff], [theirs[i] for i in positions],
        [torch.from_numpy(c).to(t.dtype) for c, (_, t) in zip(cots, diff)],
        allow_unused=True)
    return list(zip(positions, grads_g, grads_t))


NONFINITE = np.array([np.nan, np.inf, 1.0, -np.inf, 0.0, 2.0, np.nan, -1.0])
"""The output gradients of ``check_nonfinite_gradients``: NaN and ±inf among numbers."""


def check_layout_against_torch(case: OpCase, device: str) -> None:
    """Every output is contiguous where PyTorch's is, for C-ordered inputs and for
    transposed (Fortran-ordered) ones. NumPy keeps a transposed input's order through
    most ops; PyTorch returns C order from all but the elementwise ones, and code that
    ``.view``s a result relies on it."""
    for order in ("C", "F"):
        arrays = [np.asfortranarray(a) if order == "F" and a.ndim >= 2 else a
                  for a in make_arrays(case, case.shapes, rng=np.random.default_rng(0))]
        torch.manual_seed(0)
        try:
            theirs = as_tuple(case.fn(torch, *[torch.from_numpy(a.copy(order="K"))
                                               for a in arrays]))
        except RuntimeError:
            if order == "C":
                raise
            continue  # the row's code needs C order (it views its input): so does PyTorch
        gradlab.manual_seed(0)
        ours = as_tuple(case.fn(gradlab, *[gradlab.from_numpy(a.copy(order="K")).to(device)
                                           for a in arrays]))
        for k, (o, t) in enumerate(zip(ours, theirs)):
            if isinstance(t, torch.Tensor) and t.is_contiguous():
                assert isinstance(o, gradlab.Tensor) and o.is_contiguous(), (
                    f"{case.id}: output {k} has strides {o.stride()} for shape "
                    f"{tuple(o.shape)} ({order}-ordered inputs), PyTorch's is contiguous")


def check_nonfinite_gradients(case: OpCase, device: str) -> None:
    """NaN and inf output gradients stay where PyTorch's do: wherever PyTorch's input
    gradient is finite, gradlab's is finite and equal. (A mask applied as ``grad * 0``
    turns a NaN into NaN where PyTorch's ``where`` gives 0.) Where PyTorch's is NaN or
    inf, gradlab's may differ: an exact 0 from a ``where`` is accepted there."""
    arrays = make_arrays(case, case.shapes, rng=np.random.default_rng(1))
    positions = _grad_positions(case, arrays)
    with warnings.catch_warnings():  # NaN arithmetic is the point here: NumPy need not say so
        warnings.simplefilter("ignore", RuntimeWarning)
        _check_nonfinite_gradients(case, device, arrays, positions)


def _check_nonfinite_gradients(case, device, arrays, positions):
    for fill in ("mixed", "inf"):
        ours, theirs = to_gradlab(arrays, device, positions), to_torch(arrays, positions)
        out_g = as_tuple(case.fn(gradlab, *ours))
        out_t = as_tuple(case.fn(torch, *theirs))

        def cotangent(shape, fill=fill):
            if fill == "inf":
                return np.full(shape, np.inf)
            return np.resize(NONFINITE, int(np.prod(shape))).reshape(shape)

        for i, gg, gt in _both_gradients(case, device, ours, theirs, out_g, out_t, positions,
                                         cotangent):
            if gt is None:
                continue
            assert gg is not None, f"{case.name}: no gradient for input {i}"
            want, got = host(gt), host(gg)
            finite = np.isfinite(want)
            leaked = finite & ~np.isfinite(got)
            assert not leaked.any(), (
                f"{case.name}: with {fill} output gradients, input {i}'s gradient is "
                f"{got[leaked][:3]} at {np.argwhere(leaked)[:3].tolist()} where PyTorch's is "
                f"finite ({want[leaked][:3]}): a NaN/inf leaked through a zero derivative")
            np.testing.assert_allclose(got[finite], want[finite], rtol=case.rtol, atol=case.atol,
                                       err_msg=f"{case.name}: grad of input {i} with {fill} "
                                               f"output gradients vs PyTorch")


def check_module_against_torch(ours, theirs, arrays) -> tuple[list, list]:
    """Run a gradlab module and its PyTorch twin on the same float64 ``arrays``: outputs
    must agree, then a random output gradient is backpropagated through both and the
    inputs' gradients must agree. Returns both lists of input leaves (for more checks)."""
    xgs = [gradlab.tensor(x, requires_grad=True) for x in arrays]
    xts = [torch.tensor(x, requires_grad=True) for x in arrays]
    # an in-place layer may not write into a leaf: feed it fresh non-leaf copies
    yg, yt = ours(*[x * 1.0 for x in xgs]), theirs(*[x * 1.0 for x in xts])
    assert tuple(yg.shape) == tuple(yt.shape)
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    cot = np.random.default_rng(1).standard_normal(tuple(yt.shape))
    yg.backward(gradlab.tensor(cot))
    yt.backward(torch.tensor(cot))
    for xg, xt in zip(xgs, xts):
        np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-12)
    return xgs, xts


def check_hvp(grad_at: Callable, x0, v0, device: str) -> None:
    """Forward-over-reverse: the tangent of ``grad_at(x, create_graph=True)`` along ``v0``
    is H·v, which must match central differences of the gradient itself."""
    from gradlab.autograd import forward_ad as fwAD

    with fwAD.dual_level():
        dual = fwAD.make_dual(gradlab.tensor(x0, device=device, requires_grad=True),
                              gradlab.tensor(v0, device=device))
        hvp = fwAD.unpack_dual(grad_at(dual, create_graph=True)).tangent
    eps = 1e-6
    plus, minus = (grad_at(gradlab.tensor(x0 + s * v0, device=device, requires_grad=True))
                   for s in (eps, -eps))
    want = (plus.cpu().numpy() - minus.cpu().numpy()) / (2 * eps)
    np.testing.assert_allclose(hvp.detach().cpu().numpy(), want, rtol=1e-6, atol=1e-6)
    assert np.abs(want).max() > 1  # not vacuous: H·v is far from zero


def check_jvp(case: OpCase, device: str) -> None:
    """Forward mode: the tangent of each output for random input tangents matches a central
    difference along that direction (float64), and torch.func.jvp where PyTorch is there."""
    from gradlab.autograd import forward_ad as fwAD

    rng = np.random.default_rng(2)
    eps = 1e-6
    for shapes in shape_sets(case):
        arrays = make_arrays(case, shapes, rng=rng)
        positions = _grad_positions(case, arrays)
        if not positions or any(arrays[i].size == 0 for i in positions):
            continue
        tangents = {i: rng.standard_normal(arrays[i].shape) for i in positions}

        def run(shift, arrays=arrays, tangents=tangents):
            moved = [a + shift * tangents[i] if i in tangents else a
                     for i, a in enumerate(arrays)]
            return [host(o) for o in as_tuple(case.fn(gradlab, *to_gradlab(moved, device, [])))]

        plus, minus = run(eps), run(-eps)
        with fwAD.dual_level():
            inputs = [gradlab.tensor(a, device=device) for a in arrays]
            for i in positions:
                inputs[i] = fwAD.make_dual(inputs[i], gradlab.tensor(tangents[i],
                                                                     device=device))
            outputs = as_tuple(case.fn(gradlab, *inputs))
            got = [None if not isinstance(o, gradlab.Tensor) else fwAD.unpack_dual(o).tangent
                   for o in outputs]
        for k, (o, t, p, m) in enumerate(zip(outputs, got, plus, minus)):
            if not isinstance(o, gradlab.Tensor) or not o.dtype.is_floating_point:
                continue
            want = (p - m) / (2 * eps)
            have = np.zeros_like(want) if t is None else host(t)
            np.testing.assert_allclose(
                have, want, rtol=1e-4, atol=1e-5,
                err_msg=f"{case.name}: tangent of output {k} vs a central difference along "
                        f"the input tangents, shapes {shapes}")
        if torch is not None:
            primals = tuple(torch.from_numpy(np.array(a)) for a in arrays)

            def only_diff(*diff, primals=primals, positions=positions):
                full = list(primals)
                for i, d in zip(positions, diff):
                    full[i] = d
                return as_tuple(case.fn(torch, *full))

            from torch.func import jvp as torch_jvp

            _, theirs = torch_jvp(
                only_diff, tuple(primals[i] for i in positions),
                tuple(torch.from_numpy(tangents[i]) for i in positions))
            for k, (t, o, th) in enumerate(zip(got, outputs, theirs)):
                if not isinstance(o, gradlab.Tensor) or not o.dtype.is_floating_point:
                    continue
                have = np.zeros(tuple(o.shape)) if t is None else host(t)
                np.testing.assert_allclose(have, host(th), rtol=1e-6, atol=1e-8,
                                           err_msg=f"{case.name}: tangent of output {k} vs "
                                                   f"torch.func.jvp, shapes {shapes}")


def cases_by_id(cases):
    return pytest.mark.parametrize("case", cases, ids=[c.id for c in cases])


def standard_op_tests(cases: list[OpCase], prefix: str = "") -> dict[str, Callable]:
    """The standard checks of an OpCase table, as parametrized pytest test functions.

    The keys are the test names (``test_<prefix><check>``); a test module adds
    them to its namespace, where pytest collects them, with
    ``globals().update(standard_op_tests(CASES))``. Each call makes new
    functions, so two tables in one module don't share parametrizations.
    """
    def forward_matches_numpy(case, device):
        check_forward_numpy(case, device)

    def gradcheck(case, device):
        check_gradcheck(case, device)

    def gradgradcheck(case, device):
        check_gradcheck(case, device, second_order=True)

    def matches_torch(case, device):
        check_against_torch(case, device)

    def jvp_matches_finite_differences(case, device):
        check_jvp(case, device)

    def matches_torch_float32(case, device):
        check_against_torch(case, device, dtype=np.float32)

    def matches_torch_non_contiguous(case, device):
        check_against_torch(case, device, strided=True)

    def matches_torch_nonfinite_gradients(case, device):
        check_nonfinite_gradients(case, device)

    def matches_torch_layout(case, device):
        check_layout_against_torch(case, device)

    selected = [
        (forward_matches_numpy, [c for c in cases if c.numpy is not None], False),
        (gradcheck, [c for c in cases if c.grad], False),
        (gradgradcheck, [c for c in cases if c.grad and c.gradgrad], False),
        (jvp_matches_finite_differences, [c for c in cases if c.grad and c.jvp], False),
        (matches_torch, cases, True),
        (matches_torch_float32, cases, True),
        (matches_torch_non_contiguous, [c for c in cases if c.strided], True),
        (matches_torch_nonfinite_gradients, [c for c in cases if c.grad and c.nonfinite],
         True),
        (matches_torch_layout, cases, True),
    ]
    tests = {}
    for check, rows, torch_only in selected:
        if not rows:  # no row takes this check: no test (an empty one would only skip)
            continue
        test = cases_by_id(rows)(check)
        if torch_only:
            test = needs_torch(test)
        test.__name__ = test.__qualname__ = f"test_{prefix}{check.__name__}"
        tests[test.__name__] = test
    return tests
