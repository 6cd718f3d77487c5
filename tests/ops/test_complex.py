"""Complex numbers: every op that declares ``supports_complex``, checked three ways.

A row runs ``fn(lib, *tensors)`` with lib = gradlab and lib = torch. Its
``kinds`` say which inputs are complex ("c") and which real ("r"). Checks:

* values and dtypes, and the gradients for a random complex output
  gradient, against PyTorch (complex128, and complex64 loosely);
* gradcheck in complex128: the Jacobian of the real and imaginary parts,
  from backward with output gradients 1 and 1j, against finite differences
  of both parts of every input (``gradlab/autograd/gradcheck.py``);
* gradgradcheck where the row allows it.

Finite differences know nothing of conventions, so a backward formula that
forgets a ``conj()`` fails the gradcheck even where PyTorch is absent.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradlab
from gradlab.autograd import gradcheck, gradgradcheck
from gradlab.autograd.gradcheck import GradcheckError
from tests.oracle import needs_torch, torch


@dataclass
class Case:
    id: str
    fn: Callable
    shapes: tuple
    kinds: str = ""  # one letter per input, "c" complex (the default) or "r" real
    gradgrad: bool = True
    away_from_zero: bool = False
    loose: bool = False  # against PyTorch: 100x the tolerances (LAPACK's rounding differs)

    def kind(self, i: int) -> str:
        return self.kinds[i] if self.kinds else "c"


def _sum_parts(lib, z):
    return z.real.sum() + z.imag.sum()


def _const(lib, like, values):
    """A constant tensor on ``like``'s device (the rows run on every device)."""
    return lib.tensor(values, device=like.device)


def _eye(lib, like, n):
    return lib.eye(n, device=like.device)


CASES = [
    Case("add", lambda L, a, b: a + b, ((2, 3), (3,))),
    Case("add_real", lambda L, a, b: a + b, ((2, 3), (2, 3)), "cr"),
    Case("add_alpha", lambda L, a, b: L.add(a, b, alpha=2 - 1j), ((2, 3), (2, 3))),
    Case("sub", lambda L, a, b: a - b, ((2, 3), (2, 3))),
    Case("sub_alpha", lambda L, a, b: L.sub(a, b, alpha=0.5j), ((2, 3), (2, 3))),
    Case("rsub", lambda L, a: 1 - 2j - a, ((4,),)),
    Case("mul", lambda L, a, b: a * b, ((2, 3), (2, 1))),
    Case("mul_real", lambda L, a, b: a * b, ((2, 3), (3,)), "rc"),
    Case("mul_number", lambda L, a: a * (2 - 3j), ((4,),)),
    Case("real_times_number", lambda L, a: a * 1j, ((4,),), "r"),
    Case("div", lambda L, a, b: a / b, ((2, 3), (2, 3)), away_from_zero=True),
    Case("rdiv", lambda L, a: (1 + 1j) / a, ((4,),), away_from_zero=True),
    Case("neg", lambda L, a: -a, ((2, 3),)),
    Case("pow_2", lambda L, a: a ** 2, ((2, 3),)),
    Case("pow_half", lambda L, a: a ** 0.5, ((2, 3),), away_from_zero=True),
    Case("pow_complex", lambda L, a: a ** (1 + 0.5j), ((2, 3),), away_from_zero=True),
    Case("exp", lambda L, a: a.exp(), ((2, 3),)),
    Case("log", lambda L, a: a.log(), ((2, 3),), away_from_zero=True),
    Case("sqrt", lambda L, a: a.sqrt(), ((2, 3),), away_from_zero=True),
    Case("sin", lambda L, a: a.sin(), ((2, 3),)),
    Case("tan", lambda L, a: (a * 0.5).tan(), ((2, 3),)),
    Case("tanh", lambda L, a: (a * 0.5).tanh(), ((2, 3),)),
    Case("sigmoid", lambda L, a: (a * 0.5).sigmoid(), ((2, 3),)),
    Case("log1p", lambda L, a: a.log1p(), ((2, 3),), away_from_zero=True),
    Case("expm1", lambda L, a: a.expm1(), ((2, 3),)),
    Case("log2", lambda L, a: a.log2(), ((2, 3),), away_from_zero=True),
    Case("log10", lambda L, a: a.log10(), ((2, 3),), away_from_zero=True),
    Case("exp2", lambda L, a: a.exp2(), ((2, 3),)),
    Case("rsqrt", lambda L, a: a.rsqrt(), ((2, 3),), away_from_zero=True),
    Case("cos", lambda L, a: a.cos(), ((2, 3),)),
    Case("sinh", lambda L, a: a.sinh(), ((2, 3),)),
    Case("cosh", lambda L, a: a.cosh(), ((2, 3),)),
    Case("asin", lambda L, a: a.asin(), ((2, 3),), away_from_zero=True),
    Case("acos", lambda L, a: a.acos(), ((2, 3),), away_from_zero=True),
    Case("atan", lambda L, a: (a * 0.5).atan(), ((2, 3),)),
    Case("asinh", lambda L, a: (a * 0.5).asinh(), ((2, 3),)),
    # (angles up to ±2.5 rad: half the points have Re z < 0, where 1/√(z² - 1) is wrong)
    Case("acosh", lambda L, a: a.acosh(), ((2, 4),), away_from_zero=True),
    Case("atanh", lambda L, a: (a * 0.5).atanh(), ((2, 3),)),
    Case("sinc", lambda L, a: L.sinc(a), ((2, 3),)),
    Case("pow_tensor", lambda L, a, b: a ** b, ((2, 3), (3,)), away_from_zero=True),
    Case("pow_real_exponent", lambda L, a, b: a ** b, ((2, 3), (2, 3)), "cr",
         away_from_zero=True),
    Case("number_to_a_power", lambda L, a: 2 ** a, ((2, 3),)),
    Case("complex_number_to_a_power", lambda L, a: (1 - 0.5j) ** a, ((2, 3),)),
    Case("cumprod", lambda L, a: a.cumprod(1), ((2, 4),)),
    Case("cumprod_with_a_zero", lambda L, a: (a * _const(L, a, [1, 0, 1, 1])).cumprod(1),
         ((2, 4),)),
    Case("logsumexp", lambda L, a: a.logsumexp(1), ((2, 3),)),
    Case("einsum", lambda L, a, b: L.einsum("bij,jk->bik", a, b), ((2, 2, 3), (3, 2))),
    Case("einsum_diagonal", lambda L, a, b: L.einsum("ii,i->i", a, b), ((3, 3), (3,))),
    Case("tensordot", lambda L, a, b: L.tensordot(a, b, dims=([1], [0])), ((2, 3), (3, 2))),
    Case("inner", lambda L, a, b: L.inner(a, b), ((2, 3), (4, 3))),
    Case("addcmul", lambda L, a, b, c: L.addcmul(a, b, c, value=0.5 - 1j), ((2, 3), (3,),
                                                                          (2, 3))),
    Case("addcdiv", lambda L, a, b, c: L.addcdiv(a, b, c, value=2j), ((2, 3), (2, 3), (2, 3)),
         away_from_zero=True),
    Case("lerp", lambda L, a, b: L.lerp(a, b, 0.25 + 0.5j), ((2, 3), (2, 3))),
    Case("lerp_tensor_weight", lambda L, a, b, w: L.lerp(a, b, w), ((2, 3), (2, 3), (3,))),
    Case("normalize", lambda L, a: L.nn.functional.normalize(a, dim=1), ((2, 3),)),
    Case("vander", lambda L, a: L.linalg.vander(a), ((3,),)),
    Case("abs", lambda L, a: a.abs(), ((2, 3),), away_from_zero=True),
    Case("angle", lambda L, a: a.angle(), ((2, 3),), away_from_zero=True),
    Case("sgn", lambda L, a: a.sgn(), ((2, 3),), away_from_zero=True),
    Case("conj", lambda L, a: a.conj() * 1, ((2, 3),)),
    Case("real", lambda L, a: a.real * 1, ((2, 3),)),
    Case("imag", lambda L, a: a.imag * 1, ((2, 3),)),
    Case("complex", lambda L, a, b: L.complex(a, b), ((2, 3), (3,)), "rr"),
    # polar's abs must be >= 0 (PyTorch's gradient assumes it)
    Case("polar", lambda L, a, b: L.polar(a.abs() + 0.1, b), ((2, 3), (2, 3)), "rr"),
    Case("view_as_real", lambda L, a: L.view_as_real(a) * 1, ((2, 3),)),
    Case("view_as_complex", lambda L, a: L.view_as_complex(a) * 1, ((3, 2),), "r"),
    Case("to_complex128", lambda L, a: a.to(L.complex128) * (1 + 1j), ((4,),), "r"),
    Case("sum", lambda L, a: a.sum(1), ((2, 3),)),
    Case("sum_all", lambda L, a: a.sum(), ((2, 3),)),
    Case("mean", lambda L, a: a.mean(0, keepdim=True), ((2, 3),)),
    Case("matmul", lambda L, a, b: a @ b, ((2, 3), (3, 2))),
    Case("matmul_batched", lambda L, a, b: a @ b, ((2, 2, 3), (3, 4))),
    Case("matmul_vector", lambda L, a, b: a @ b, ((2, 3), (3,))),
    Case("matmul_real", lambda L, a, b: a.to(b.dtype) @ b, ((2, 3), (3, 2)), "rc"),
    Case("mH", lambda L, a: a.mH * 1, ((2, 3),)),
    Case("reshape", lambda L, a: a.reshape(3, 2), ((2, 3),)),
    Case("transpose", lambda L, a: a.transpose(0, 1) * 1, ((2, 3),)),
    Case("permute", lambda L, a: a.permute(2, 0, 1) * 1, ((2, 3, 2),)),
    Case("expand", lambda L, a: a.expand(4, 3) * 1, ((1, 3),)),
    Case("unsqueeze_squeeze", lambda L, a: a.unsqueeze(1).squeeze(), ((2, 3),)),
    Case("index", lambda L, a: a[1:, ::2], ((3, 4),)),
    Case("index_tensor", lambda L, a: a[_const(L, a, [0, 2, 0])], ((3, 4),)),
    Case("cat", lambda L, a, b: L.cat([a, b], 0), ((2, 3), (1, 3))),
    Case("stack", lambda L, a, b: L.stack([a, b], 1), ((2, 3), (2, 3))),
    Case("split", lambda L, a: a.split(2, 1)[1] * 1, ((2, 5),)),
    Case("flip", lambda L, a: a.flip(0), ((3, 2),)),
    Case("roll", lambda L, a: a.roll(1, 1), ((2, 3),)),
    Case("narrow", lambda L, a: a.narrow(1, 1, 2) * 1, ((2, 4),)),
    Case("pad", lambda L, a: L.nn.functional.pad(a, (1, 2)), ((2, 3),)),
    Case("clone", lambda L, a: a.clone(), ((2, 3),)),
    Case("unbind", lambda L, a: a.unbind(1)[2] * 1, ((2, 3),)),
    Case("t", lambda L, a: a.t() * 1, ((2, 3),)),
    Case("squeeze_dims", lambda L, a: a.unsqueeze(0).unsqueeze(2).squeeze((0, 2)), ((2, 3),)),
    Case("copy_", lambda L, a, b: a.clone().copy_(b) * 1, ((2, 3), (3,))),
    Case("where", lambda L, a, b: L.where(_const(L, a, [True, False, True]), a, b),
         ((2, 3), (3,))),
    Case("cumsum", lambda L, a: a.cumsum(1), ((2, 3),)),
    Case("prod", lambda L, a: a.prod(1), ((2, 3),)),
    Case("prod_all", lambda L, a: a.prod(), ((2, 2),)),
    Case("prod_with_a_zero", lambda L, a: (a * _const(L, a, [1, 0, 1])).prod(1), ((2, 3),)),
    Case("tril", lambda L, a: a.tril(), ((3, 3),)),
    Case("triu", lambda L, a: a.triu(1), ((3, 3),)),
    Case("diagonal", lambda L, a: a.diagonal() * 1, ((3, 3),)),
    Case("diag", lambda L, a: L.diag(a), ((3,),)),
    Case("diag_of_matrix", lambda L, a: L.diag(a), ((3, 3),)),
    Case("trace", lambda L, a: a.trace(), ((3, 3),)),
    Case("repeat", lambda L, a: a.repeat(2, 1), ((2, 3),)),
    Case("gather", lambda L, a: a.gather(1, _const(L, a, [[0, 0], [2, 1]])), ((2, 3),)),
    Case("index_select", lambda L, a: a.index_select(0, _const(L, a, [1, 1])), ((2, 3),)),
    Case("masked_fill", lambda L, a: a.masked_fill(_const(L, a, [True, False, True]), 2 - 1j),
         ((2, 3),)),
    Case("mm", lambda L, a, b: a.mm(b), ((2, 3), (3, 2))),
    Case("conv1d", lambda L, x, w, b: L.nn.functional.conv1d(x, w, b, stride=2, padding=1,
                                                              groups=2),
         ((2, 4, 7), (4, 2, 3), (4,))),
    Case("conv2d", lambda L, x, w: L.nn.functional.conv2d(x, w, padding=1),
         ((1, 2, 4, 4), (3, 2, 3, 3))),
    Case("conv3d", lambda L, x, w: L.nn.functional.conv3d(x, w),
         ((1, 1, 3, 3, 3), (2, 1, 2, 2, 2))),
    Case("conv_transpose1d", lambda L, x, w: L.nn.functional.conv_transpose1d(x, w, stride=2),
         ((2, 3, 4), (3, 2, 3))),
    Case("conv_transpose2d", lambda L, x, w: L.nn.functional.conv_transpose2d(x, w),
         ((1, 2, 3, 3), (2, 2, 2, 2))),
    Case("linear", lambda L, x, w, b: L.nn.functional.linear(x, w, b), ((4, 3), (2, 3), (2,))),
    Case("linear_batched", lambda L, x, w: L.nn.functional.linear(x, w), ((2, 4, 3), (2, 3))),
    Case("addmm", lambda L, a, b, c: L.addmm(a, b, c, beta=0.5 - 1j, alpha=2j),
         ((2, 2), (2, 3), (3, 2))),
    Case("addmv", lambda L, a, b, c: L.addmv(a, b, c), ((2,), (2, 3), (3,))),
    Case("baddbmm", lambda L, a, b, c: L.baddbmm(a, b, c, alpha=1 + 1j),
         ((2, 2, 2), (2, 2, 3), (2, 3, 2))),
    Case("dot", lambda L, a, b: a.dot(b), ((3,), (3,))),
    Case("vdot", lambda L, a, b: L.vdot(a, b), ((3,), (3,))),
    Case("outer", lambda L, a, b: L.outer(a, b), ((3,), (2,))),
    # (A + 3I keeps the random matrices well away from singular)
    Case("inv", lambda L, a: L.linalg.inv(a + 3 * _eye(L, a, 3)), ((3, 3),)),
    Case("solve", lambda L, a, b: L.linalg.solve(a + 3 * _eye(L, a, 3), b), ((3, 3), (3, 2))),
    Case("solve_vector", lambda L, a, b: L.linalg.solve(a + 3 * _eye(L, a, 3), b),
         ((2, 3, 3), (3,))),
    Case("solve_right", lambda L, a, b: L.linalg.solve(a + 3 * _eye(L, a, 3), b, left=False),
         ((3, 3), (2, 3))),
    Case("det", lambda L, a: L.linalg.det(a), ((2, 3, 3),)),
    Case("norm", lambda L, a: a.norm(), ((2, 3),), away_from_zero=True),
    Case("vector_norm_1", lambda L, a: L.linalg.vector_norm(a, 1, dim=1), ((2, 3),),
         away_from_zero=True),
    Case("vector_norm_3", lambda L, a: L.linalg.vector_norm(a, 3), ((4,),), away_from_zero=True),
    Case("matrix_norm_fro", lambda L, a: L.linalg.matrix_norm(a), ((2, 2, 3),)),
    Case("matrix_norm_inf", lambda L, a: L.linalg.matrix_norm(a, float("inf")), ((3, 3),),
         away_from_zero=True),
    Case("cov", lambda L, a: L.cov(a), ((2, 4),)),
    Case("cov_weighted", lambda L, a: L.cov(a, aweights=_const(L, a, [1.0, 2, 0.5, 1]),
                                            correction=0), ((3, 4),)),
    Case("corrcoef", lambda L, a: L.corrcoef(a * 0.2), ((2, 5),)),
    Case("var", lambda L, a: a.var(), ((2, 3),)),
    Case("std_dim", lambda L, a: a.std(1, keepdim=True, correction=0), ((2, 3),)),
]
GRADGRAD = [c for c in CASES if c.gradgrad]


def _arrays(case: Case, complex_dtype=np.complex128, seed=0):
    rng = np.random.default_rng(seed)
    real_dtype = np.float64 if complex_dtype == np.complex128 else np.float32
    arrays = []
    for i, shape in enumerate(case.shapes):
        if case.away_from_zero:  # magnitudes in [0.5, 2], angles away from the branch cut
            radius = rng.uniform(0.5, 2.0, shape)
            theta = rng.uniform(-2.5, 2.5, shape)
            values = radius * np.exp(1j * theta)
        else:
            values = rng.uniform(-1.5, 1.5, shape) + 1j * rng.uniform(-1.5, 1.5, shape)
        arrays.append(values.astype(complex_dtype) if case.kind(i) == "c"
                      else values.real.astype(real_dtype))
    return arrays


def _ours(arrays, device="cpu"):
    return [gradlab.tensor(a, requires_grad=True, device=device) for a in arrays]


def _resolved(x):
    return x.detach().resolve_conj().numpy() if isinstance(x, torch.Tensor) else \
        x.detach().cpu().numpy()


def _cotangent(rng, shape, is_complex: bool):
    values = rng.standard_normal(shape)
    return np.asarray(values + 1j * rng.standard_normal(shape) if is_complex else values)


@needs_torch
@pytest.mark.parametrize("precision", ["complex128", "complex64"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_matches_torch(case, precision, device):
    check_matches_torch(case, precision, device)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_gradcheck(case, device):
    assert gradcheck(lambda *ts: case.fn(gradlab, *ts), _ours(_arrays(case), device))


@pytest.mark.parametrize("case", GRADGRAD, ids=lambda c: c.id)
def test_gradgradcheck(case):
    assert gradgradcheck(lambda *ts: case.fn(gradlab, *ts), _ours(_arrays(case)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_jvp_matches_finite_differences(case):
    check_jvp_matches_finite_differences(case)


def check_matches_torch(case: Case, precision: str, device) -> None:
    """Values, dtypes and the gradients for a random (complex) output gradient, against
    PyTorch: tight in complex128, loose in complex64 (``case.loose`` loosens both)."""
    arrays = _arrays(case, np.complex128 if precision == "complex128" else np.complex64)
    ours = _ours(arrays, device)
    theirs = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    out_g, out_t = case.fn(gradlab, *ours), case.fn(torch, *theirs)
    assert tuple(out_g.shape) == tuple(out_t.shape)
    assert out_g.dtype.name == str(out_t.dtype).replace("torch.", "")
    tol = dict(rtol=1e-10, atol=1e-12) if precision == "complex128" else dict(rtol=1e-4,
                                                                                atol=1e-5)
    if case.loose:
        tol = {k: v * 100 for k, v in tol.items()}
    np.testing.assert_allclose(_resolved(out_g), _resolved(out_t), **tol)
    cot = _cotangent(np.random.default_rng(1), tuple(out_t.shape), out_t.is_complex())
    grads_g = gradlab.autograd.grad(out_g, ours,
                                    gradlab.tensor(cot, dtype=out_g.dtype, device=device))
    grads_t = torch.autograd.grad(out_t, theirs, torch.from_numpy(cot).to(out_t.dtype))
    for i, (gg, gt) in enumerate(zip(grads_g, grads_t)):
        assert gg.dtype.name == str(gt.dtype).replace("torch.", ""), f"grad {i} dtype"
        np.testing.assert_allclose(_resolved(gg), _resolved(gt), **tol,
                                   err_msg=f"{case.id}: gradient of input {i}")


def check_jvp_matches_finite_differences(case: Case) -> None:
    """Forward mode: the tangent of the output for random (complex) input tangents equals
    the directional derivative (f(z + h·t) - f(z - h·t)) / 2h."""
    import gradlab.autograd.forward_ad as fwAD

    arrays = _arrays(case)
    rng = np.random.default_rng(7)
    tangents = [(rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)).astype(
        a.dtype) if a.dtype.kind == "c" else rng.standard_normal(a.shape) for a in arrays]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(gradlab.tensor(a), gradlab.tensor(t))
                 for a, t in zip(arrays, tangents)]
        ours = fwAD.unpack_dual(case.fn(gradlab, *duals)).tangent
    h = 1e-6

    def at(sign):
        return case.fn(gradlab, *[gradlab.tensor(a + sign * h * t)
                                  for a, t in zip(arrays, tangents)]).numpy()

    want = (at(1) - at(-1)) / (2 * h)
    assert ours is not None, f"{case.id}: no tangent"
    np.testing.assert_allclose(ours.numpy(), want, rtol=1e-5, atol=1e-6)


def test_gradcheck_catches_a_missing_conjugate():
    """z·z with backward 2z·grad (the real rule, no conj) is wrong for complex z."""

    class SquareWithoutConj(gradlab.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, grad):
            (z,) = ctx.saved_tensors
            return grad * 2 * z

    z = _ours(_arrays(Case("z", None, ((3,),))))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(SquareWithoutConj.apply, z)


@given(st.sampled_from([((2, 3), (3,)), ((4, 1), (1, 5)), ((), (2, 2)), ((3, 1, 2), (4, 2))]),
       st.sampled_from(["cc", "cr", "rc"]))
def test_broadcast_products_reduce_their_gradients(shapes, kinds):
    """mul and div with broadcasting and mixed real/complex inputs: gradients keep each
    input's shape and dtype (a real input gets the real part) and pass gradcheck."""
    case = Case("mul_div", lambda L, a, b: a * b / (b * b + 3), shapes, kinds)
    ours = _ours(_arrays(case))
    out = case.fn(gradlab, *ours)
    grads = gradlab.autograd.grad(_sum_parts(gradlab, out), ours)
    for t, g in zip(ours, grads):
        assert g.shape == t.shape and g.dtype is t.dtype
    assert gradcheck(lambda *ts: case.fn(gradlab, *ts), ours)


def test_a_complex_parameter_descends_to_its_target():
    """The gradient convention makes plain SGD work: z -> target for L = |z - target|²."""
    target = gradlab.tensor([1 - 2j, 0.5 + 0.25j], dtype=gradlab.complex128)
    z = gradlab.zeros(2, dtype=gradlab.complex128, requires_grad=True)
    opt = gradlab.optim.SGD([z], lr=0.2)
    for _ in range(60):
        opt.zero_grad()
        loss = (z - target).abs().pow(2).sum()
        loss.backward()
        opt.step()
    np.testing.assert_allclose(z.detach().numpy(), target.numpy(), atol=1e-6)


def test_real_and_imag_are_views_of_the_values():
    z = gradlab.tensor([1 + 2j, 3 - 4j])
    z.real.mul_(10)
    z.imag.add_(1)
    assert z.tolist() == [10 + 3j, 30 - 3j]
    pairs = gradlab.view_as_real(z)
    pairs[0, 1] = 7.0
    assert z.tolist()[0] == 10 + 7j
    assert gradlab.view_as_complex(pairs).tolist() == z.tolist()


def test_python_numbers_and_items():
    z = gradlab.tensor([1 + 2j, 3])
    assert z.dtype is gradlab.complex64 and z.is_complex() and not z.is_floating_point()
    assert z[0].item() == 1 + 2j and isinstance(z[1].item(), complex)
    assert (gradlab.ones(2) * 1j).dtype is gradlab.complex64
    assert (gradlab.ones(2, dtype=gradlab.float64) * 1j).dtype is gradlab.complex128
    assert (gradlab.arange(3) * (1 + 1j)).tolist() == [0j, 1 + 1j, 2 + 2j]
    assert gradlab.zeros(2, dtype=gradlab.cfloat).dtype is gradlab.complex64
    assert gradlab.complex64.to_real() is gradlab.float32
    assert gradlab.float64.to_complex() is gradlab.complex128


def test_random_and_ranged_complex_tensors():
    gradlab.manual_seed(0)
    z = gradlab.randn(20000, dtype=gradlab.complex64)
    assert z.dtype is gradlab.complex64
    # PyTorch's convention: each part has variance 1/2, so E|z|^2 = 1
    assert abs(float(z.real.var()) - 0.5) < 0.02 and abs(float(z.imag.var()) - 0.5) < 0.02
    assert abs(float((z.abs() ** 2).mean()) - 1.0) < 0.03
    u = gradlab.rand(1000, dtype=gradlab.complex128)
    assert 0 <= float(u.real.min()) and float(u.imag.max()) < 1 and float(u.imag.min()) >= 0
    assert gradlab.randn_like(z[:3]).dtype is gradlab.complex64
    assert gradlab.linspace(0, 2j, 3).tolist() == [0j, 1j, 2j]
    assert gradlab.linspace(0, 2j, 3).dtype is gradlab.complex64
    assert gradlab.full((2,), 1 - 1j).dtype is gradlab.complex64


@needs_torch
@pytest.mark.parametrize("values", [[1.5 + 2j, -3.25 - 1e-5j, 0], [1 + 2j], 1 - 1j,
                                    [[1e10j, 2], [0.5, -0.5j]], []])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_repr_matches_torch(values, dtype):
    ours = repr(gradlab.tensor(values, dtype=getattr(gradlab, dtype)))
    theirs = repr(torch.tensor(values, dtype=getattr(torch, dtype)))
    assert ours == theirs.replace("torch.", "gradlab.")


@needs_torch
@pytest.mark.parametrize("a, b", [
    ("float32", "complex64"), ("float64", "complex64"), ("float16", "complex64"),
    ("int64", "complex64"), ("complex64", "complex128"), ("bool", "complex128"),
])
def test_promote_types_matches_torch(a, b):
    ours = gradlab.promote_types(getattr(gradlab, a), getattr(gradlab, b))
    assert ours.name == str(torch.promote_types(getattr(torch, a), getattr(torch, b)))[6:]


@needs_torch
@pytest.mark.parametrize("make", [
    lambda L: (L.ones(2, dtype=L.float64), L.tensor(1j)),
    lambda L: (L.ones(2), L.tensor(1j, dtype=L.complex128)),
    lambda L: (L.ones(2, dtype=L.int32), 2j),
    lambda L: (L.tensor(1.0, dtype=L.float64), 1j),
    lambda L: (L.ones(2, dtype=L.complex64), L.tensor(1.0, dtype=L.float64)),
    lambda L: (L.ones(2, dtype=L.complex64), L.ones(2, dtype=L.float64)),
], ids=["f64*0d-c64", "f32*0d-c128", "i32*1j", "0d-f64*1j", "c64*0d-f64", "c64*f64"])
def test_result_type_matches_torch(make):
    ours, theirs = make(gradlab), make(torch)
    assert gradlab.result_type(*ours).name == str(torch.result_type(*theirs))[6:]
    assert (ours[0] * ours[1]).dtype.name == str((theirs[0] * theirs[1]).dtype)[6:]


# --- errors that teach --------------------------------------------------------------------------

def test_an_op_without_complex_support_refuses_and_names_the_way_out():
    z = gradlab.tensor([1 + 1j], requires_grad=True)
    with pytest.raises(TypeError, match=r"erf: complex tensors are not supported.*\(1,\) "
                                        r"gradlab.complex64.*x.real and x.imag"):
        z.erf()
    with pytest.raises(TypeError, match="relu: complex"):
        gradlab.tensor([1j]).relu()  # no gradient wanted: refused all the same


def test_backward_of_a_complex_loss_asks_for_a_real_one():
    z = gradlab.tensor([1 + 1j], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"only for real scalar outputs.*z.abs\(\) \*\* 2"):
        (z * 2).sum().backward()


def test_ordering_comparisons_refuse_complex_numbers():
    z = gradlab.tensor([1 + 1j, 2])
    for compare in (lambda: z < 1, lambda: z >= z, lambda: gradlab.ones(2) > 1j):
        with pytest.raises(TypeError, match="complex numbers have no order"):
            compare()
    assert (z == 2).tolist() == [False, True]  # equality is fine


def test_ops_that_order_or_round_refuse_complex_numbers():
    z = gradlab.tensor([[1 + 1j, 2], [0.5j, -1]])
    for name, call in [("argmax", lambda: z.argmax()), ("argmin", lambda: z.argmin(0)),
                       ("argsort", lambda: z.argsort()), ("floor", lambda: z.floor()),
                       ("round", lambda: z.round()), ("sign", lambda: z.sign()),
                       ("searchsorted", lambda: gradlab.searchsorted(z[0], z[1]))]:
        with pytest.raises(TypeError, match=f"{name}: complex numbers have no order"):
            call()
    with pytest.raises(RuntimeError, match="abs_: in-place abs is not supported for complex"):
        z.clone().abs_()


def test_part_errors():
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with "
                                           "non-complex dtypes"):
        _ = gradlab.ones(2).imag
    with pytest.raises(RuntimeError, match="view_as_real is only supported for complex"):
        gradlab.view_as_real(gradlab.ones(2))
    with pytest.raises(RuntimeError, match="last dimension must have size 2"):
        gradlab.view_as_complex(gradlab.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"side by side in memory.*x.contiguous\(\)"):
        gradlab.view_as_complex(gradlab.ones(2, 4)[:, ::2])
    with pytest.raises(RuntimeError, match="float tensors of one dtype"):
        gradlab.complex(gradlab.ones(2), gradlab.ones(2, dtype=gradlab.float64))
    assert gradlab.ones(2).real.tolist() == [1.0, 1.0]  # a real tensor's real part: itself


def test_forward_mode_through_complex_numbers():
    """A real input with a complex intermediate and a real result (jacfwd)."""
    x = gradlab.tensor([0.3, -1.2], dtype=gradlab.float64)
    jac = gradlab.func.jacfwd(lambda t: (t * (1 + 2j)).exp().abs())(x)
    np.testing.assert_allclose(jac.numpy(), np.diag(np.exp(x.numpy())), atol=1e-12)


def test_casting_to_real_is_refused_and_names_the_parts():
    """PyTorch keeps the real part and warns; gradlab refuses, since the same cast hidden in
    an op that does not take complex numbers would give a quietly wrong answer."""
    z = gradlab.tensor([1 + 2j, -3 + 0.5j], requires_grad=True)
    for cast in (lambda: z.to(gradlab.float32), lambda: z.float(), lambda: z.long()):
        with pytest.raises(TypeError, match=r"to: casting complex64 \(shape \(2,\)\) to "
                                            r"\w+ would discard the imaginary parts.*z.real"):
            cast()
    with pytest.raises(TypeError, match="softmax: complex tensors are not supported"):
        z.softmax(0)
    with pytest.raises(TypeError, match="lgamma: complex tensors are not supported"):
        z.lgamma()  # (its wrapper casts integers to float, and no longer anything else)
    assert z.real.tolist() == [1.0, -3.0]  # the way to ask for it


def test_numpy_complex_warnings_inside_gradlab_are_errors():
    """A raw op that drops imaginary parts (astype to a real dtype) fails loudly."""
    from gradlab.autograd.function import Function

    # The filter looks at the module the warning comes from: make it look like gradlab's.
    module = {"__name__": "gradlab.ops.a_careless_op"}
    exec("def forward(ctx, a):\n    return a.astype('float32')\n", module)

    class DropsImaginaryParts(Function):
        raw = True
        supports_complex = True  # (a false promise: the filter catches what it does)
        forward = staticmethod(module["forward"])

    # pytest sets aside the filters a module makes while tests are collected, so install
    # gradlab's again, as `import gradlab` does.
    with warnings.catch_warnings():
        gradlab._install_warning_filters()
        with pytest.raises(np.exceptions.ComplexWarning, match="imaginary part"):
            DropsImaginaryParts.apply(gradlab.tensor([1j]))
        with pytest.warns(np.exceptions.ComplexWarning):  # the user's own NumPy code: a warning
            np.array([1 + 2j]).astype("float32")
