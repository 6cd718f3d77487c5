"""autocast: which ops run in which dtype, the cast cache, nesting, threads, errors.

The op rules are checked against PyTorch's CPU autocast where it is installed:
for each op, float32 and bfloat16/float16 inputs must come out in the dtype
PyTorch's come out in. CUDA runs the same table on a GPU when there is one.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import gradlab
from gradlab import events
from gradlab.amp import autocast_mode, op_lists
from tests.oracle import needs_torch, torch

F32, BF16, F16 = "float32", "bfloat16", "float16"

# name -> (fn(lib, *tensors), input shapes); every input is made in the row's dtype
OPS = {
    "matmul": (lambda lib, a, b: a @ b, [(3, 4), (4, 5)]),
    "bmm": (lambda lib, a, b: lib.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    "addmm": (lambda lib, c, a, b: lib.addmm(c, a, b), [(3, 5), (3, 4), (4, 5)]),
    "baddbmm": (lambda lib, c, a, b: lib.baddbmm(c, a, b), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    "linear": (lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), [(3, 4), (5, 4), (5,)]),
    "conv1d": (lambda lib, x, w: lib.nn.functional.conv1d(x, w), [(2, 3, 8), (4, 3, 3)]),
    "conv2d": (lambda lib, x, w: lib.nn.functional.conv2d(x, w), [(2, 3, 6, 6), (4, 3, 3, 3)]),
    "conv_transpose2d": (lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w),
                         [(2, 3, 4, 4), (3, 2, 3, 3)]),
    "prelu": (lambda lib, x, w: lib.nn.functional.prelu(x, w), [(2, 3, 4), (3,)]),
    "sdpa": (lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v),
             [(2, 3, 4), (2, 5, 4), (2, 5, 4)]),
    "einsum": (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [(3, 4), (4, 5)]),
    "mm": (lambda lib, a, b: lib.mm(a, b), [(3, 4), (4, 5)]),
    "dot": (lambda lib, a, b: lib.dot(a, b), [(4,), (4,)]),
    "mv": (lambda lib, a, b: lib.mv(a, b), [(3, 4), (4,)]),
    "matmul_1d": (lambda lib, a, b: a @ b, [(3, 4), (4,)]),
    "inner": (lambda lib, a, b: lib.inner(a, b), [(3, 4), (5, 4)]),
    "inner_1d": (lambda lib, a, b: lib.inner(a, b), [(4,), (4,)]),
    "tensordot": (lambda lib, a, b: lib.tensordot(a, b, 1), [(3, 4), (4, 5)]),
    "bilinear": (lambda lib, a, b, w: lib.nn.functional.bilinear(a, b, w), [(2, 3), (2, 4),
                                                                            (5, 3, 4)]),
    "addmv": (lambda lib, c, a, b: lib.addmv(c, a, b), [(3,), (3, 4), (4,)]),
    "addr": (lambda lib, c, a, b: lib.addr(c, a, b), [(3, 4), (3,), (4,)]),
    "addbmm": (lambda lib, c, a, b: lib.addbmm(c, a, b), [(3, 5), (2, 3, 4), (2, 4, 5)]),
    "outer": (lambda lib, a, b: lib.outer(a, b), [(3,), (4,)]),
    "multi_dot": (lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]), [(2, 3), (3, 4),
                                                                          (4, 2)]),
    "softmax": (lambda lib, x: x.softmax(-1), [(3, 4)]),
    "log_softmax": (lambda lib, x: x.log_softmax(-1), [(3, 4)]),
    "sum": (lambda lib, x: x.sum(), [(3, 4)]),
    "exp": (lambda lib, x: x.exp(), [(3, 4)]),
    "mul": (lambda lib, a, b: a * b, [(3, 4), (3, 4)]),
    "relu": (lambda lib, x: x.relu(), [(3, 4)]),
    "mse_loss": (lambda lib, a, b: lib.nn.functional.mse_loss(a, b), [(3, 4), (3, 4)]),
    "bce_with_logits": (lambda lib, a, b: lib.nn.functional.binary_cross_entropy_with_logits(
        a, b.sigmoid()), [(3, 4), (3, 4)]),
    "cross_entropy": (lambda lib, x: lib.nn.functional.cross_entropy(
        x, lib.tensor([0, 2, 1])), [(3, 4)]),
    "prod": (lambda lib, x: x.prod(), [(3, 4)]),
    "cdist": (lambda lib, a, b: lib.cdist(a, b), [(3, 4), (5, 4)]),
    "addcmul": (lambda lib, a, b, c: lib.addcmul(a, b, c), [(3, 4), (3, 4), (3, 4)]),
}


def _inputs(lib, shapes, dtypes, device="cpu"):
    rng = np.random.default_rng(0)
    out = []
    for shape, dt in zip(shapes, dtypes):
        data = rng.uniform(0.5, 1.5, shape)
        t = lib.tensor(data, dtype=getattr(lib, F32), device=device).to(getattr(lib, dt))
        out.append(t)
    return out


def _run(lib, name, dtypes, low, device="cpu"):
    fn, shapes = OPS[name]
    args = _inputs(lib, shapes, dtypes, device)
    with lib.autocast(device, dtype=getattr(lib, low)):
        return fn(lib, *args)


def _dtype_name(t) -> str:
    return str(t.dtype).split(".")[-1]


@needs_torch
@pytest.mark.parametrize("low", [BF16, F16])
@pytest.mark.parametrize("inputs", ["float32", "low", "float64", "mixed"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_op_dtype_matches_torch_autocast(name, inputs, low, device):
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("this PyTorch has no CUDA: its CUDA autocast rules can't be the oracle")
    n = len(OPS[name][1])
    dtypes = {"float32": [F32] * n, "low": [low] * n, "float64": ["float64"] * n,
              "mixed": [low] + [F32] * (n - 1)}[inputs]  # a half activation, float32 weights
    try:
        theirs = _run(torch, name, dtypes, low, device)
    except RuntimeError:  # PyTorch refuses mixed dtypes for this op
        assert inputs == "mixed", name
        try:
            ours = _run(gradlab, name, dtypes, low, device)
        except RuntimeError:
            return  # gradlab refuses them too
        # gradlab promotes them (README): then autocast treats the op as for float32 inputs
        assert ours.dtype is _run(gradlab, name, [F32] * n, low, device).dtype, name
        return
    ours = _run(gradlab, name, dtypes, low, device)
    assert _dtype_name(ours) == _dtype_name(theirs), (name, dtypes)
    tol = 1e-6 if _dtype_name(ours) == "float64" else 3e-2
    np.testing.assert_allclose(ours.float().detach().cpu().numpy(),
                               theirs.float().detach().cpu().numpy(), rtol=tol, atol=tol)


def _mlp(lib, weights):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.tensor(w))
    return model


@needs_torch
def test_training_step_matches_torch_and_gradients_stay_float32():
    rng = np.random.default_rng(1)
    weights = [rng.normal(size=s).astype(np.float32) for s in [(8, 6), (8,), (3, 8), (3,)]]
    x = rng.normal(size=(5, 6)).astype(np.float32)
    y = np.array([0, 2, 1, 1, 0])
    results = []
    for lib in (gradlab, torch):
        model = _mlp(lib, weights)
        with lib.autocast("cpu"):
            logits = model(lib.tensor(x))
            loss = lib.nn.functional.cross_entropy(logits, lib.tensor(y))
        loss.backward()
        results.append((logits, loss, [p.grad for p in model.parameters()]))
    (lg, ls, gg), (lt, lst, gt) = results
    assert _dtype_name(lg) == _dtype_name(lt) == "bfloat16"
    assert _dtype_name(ls) == _dtype_name(lst) == "float32"
    np.testing.assert_allclose(ls.item(), lst.item(), rtol=1e-3)
    for a, b in zip(gg, gt):
        assert _dtype_name(a) == "float32"
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-2, atol=2e-2)


def test_casts_are_ops_in_the_graph_and_a_weight_is_cast_once():
    w = gradlab.randn(4, 4, requires_grad=True)
    x = gradlab.randn(2, 4)
    seen = []
    with events.subscribe(lambda e: seen.append(e.op) if isinstance(e, events.OpForward)
                          else None):
        with gradlab.autocast("cpu"):
            a = x @ w
            b = x @ w  # the cached bfloat16 copy of w: no second cast of w
    assert seen.count("to") == 3  # w once, x twice (x needs no grad: never cached)
    cast_w = a.grad_fn.next_functions[1][0]
    assert type(cast_w).__name__ == "ToCopyBackward0"
    assert b.grad_fn.next_functions[1][0] is cast_w
    (a.float().sum() + b.float().sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * x.numpy().sum(0)[:, None].repeat(4, 1),
                               rtol=2e-2)


def test_cast_cache_sees_in_place_changes_and_ends_with_the_region():
    w = gradlab.randn(3, 3, requires_grad=True)
    x = gradlab.randn(3)
    with gradlab.autocast("cpu"):
        first = x @ w
        with gradlab.no_grad():
            w.mul_(2)
        second = x @ w
        assert second.grad_fn.next_functions[1][0] is not first.grad_fn.next_functions[1][0]
        np.testing.assert_allclose(second.float().detach().numpy(),
                                   2 * first.float().detach().numpy(), rtol=2e-2)
    assert autocast_mode._settings.cache == {}


def test_no_cache_under_no_grad_so_a_later_graph_reaches_the_weight():
    w = gradlab.randn(3, 3, requires_grad=True)
    x = gradlab.randn(3)
    with gradlab.autocast("cpu"):
        with gradlab.no_grad():
            x @ w
        out = (x @ w).float().sum()
    out.backward()
    assert w.grad is not None and w.grad.dtype is gradlab.float32


def test_nesting_decorator_and_restore_after_an_error():
    x, w = gradlab.randn(2, 2), gradlab.randn(2, 2)

    @gradlab.autocast("cpu")
    def product():
        return x @ w

    assert product().dtype is gradlab.bfloat16
    assert (x @ w).dtype is gradlab.float32
    with gradlab.autocast("cpu"):
        with gradlab.autocast("cpu", enabled=False):
            assert (x @ w).dtype is gradlab.float32
            assert not gradlab.is_autocast_enabled("cpu")
        with gradlab.autocast("cpu", dtype=gradlab.float16):
            assert (x @ w).dtype is gradlab.float16
        assert (x @ w).dtype is gradlab.bfloat16
    with pytest.raises(ZeroDivisionError):
        with gradlab.autocast("cpu"):
            _ = 1 / 0
    assert not gradlab.is_autocast_enabled("cpu")
    assert gradlab.amp.autocast_mode.state.autocast is None


def test_integer_and_float64_inputs_are_left_alone():
    with gradlab.autocast("cpu"):
        assert (gradlab.ones(2, 2, dtype=gradlab.float64) @ gradlab.ones(2, 2,
                dtype=gradlab.float64)).dtype is gradlab.float64
        assert (gradlab.ones(2, 2, dtype=gradlab.int64) @ gradlab.ones(
            2, 2, dtype=gradlab.int64)).dtype is gradlab.int64


def test_autocast_is_per_thread():
    seen = {}

    def other():
        seen["enabled"] = gradlab.is_autocast_enabled("cpu")
        seen["dtype"] = (gradlab.ones(2, 2) @ gradlab.ones(2, 2)).dtype

    with gradlab.autocast("cpu"):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen == {"enabled": False, "dtype": gradlab.float32}


def test_backward_runs_without_autocast():
    x = gradlab.randn(3, 4, requires_grad=True)
    dtypes = []
    with events.subscribe(lambda e: dtypes.append(e.outputs[0].dtype)
                          if isinstance(e, events.OpForward) and e.op == "matmul" else None):
        with gradlab.autocast("cpu"):
            loss = (x @ x.mT).float().sum()
            loss.backward()  # backward inside the region: its matmuls stay bfloat16
    assert set(dtypes) == {gradlab.bfloat16}
    assert x.grad.dtype is gradlab.float32


def test_custom_function_is_not_cast_but_custom_fwd_can_ask_for_float32():
    class Linear(gradlab.autograd.Function):  # the same name as a built-in op
        @staticmethod
        def forward(ctx, a, b):
            ctx.dtypes = (a.dtype, b.dtype)
            return a @ b

        @staticmethod
        def backward(ctx, g):
            return g, g

    class Exact(gradlab.autograd.Function):
        @staticmethod
        @gradlab.amp.custom_fwd(device_type="cpu", cast_inputs=gradlab.float32)
        def forward(ctx, a):
            ctx.inside = gradlab.is_autocast_enabled("cpu")
            return a * 2

        @staticmethod
        @gradlab.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            ctx.backward_inside = gradlab.is_autocast_enabled("cpu")
            return g * 2

    a = gradlab.randn(2, 2, requires_grad=True)
    with gradlab.autocast("cpu"):
        out = Linear.apply(a, a)
        assert out.grad_fn.dtypes == (gradlab.float32, gradlab.float32)
        assert out.dtype is gradlab.bfloat16  # the matmul inside its forward was cast
        half = a.to(gradlab.bfloat16)
        exact = Exact.apply(half)
    assert exact.dtype is gradlab.float32 and exact.grad_fn.inside is False
    exact.sum().backward()
    assert exact.grad_fn.backward_inside is False


def test_settings_functions():
    assert gradlab.get_autocast_dtype("cpu") is gradlab.bfloat16
    assert gradlab.get_autocast_dtype("cuda") is gradlab.float16
    assert not gradlab.is_autocast_enabled()  # no argument: CUDA, as in PyTorch
    gradlab.set_autocast_enabled("cpu", True)
    try:
        assert (gradlab.ones(2, 2) @ gradlab.ones(2, 2)).dtype is gradlab.bfloat16
    finally:
        gradlab.set_autocast_enabled("cpu", False)
    assert gradlab.amp.is_autocast_available("cpu")
    assert not gradlab.amp.is_autocast_available("mps")


def test_errors_and_warnings_teach():
    with pytest.raises(RuntimeError, match="no device type 'gpu'"):
        gradlab.autocast("gpu")
    with pytest.raises(ValueError, match="x.device.type"):
        gradlab.autocast(gradlab.device("cpu"))
    with pytest.raises(TypeError, match="gradlab dtype"):
        gradlab.autocast("cpu", dtype="float16")
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        ac = gradlab.autocast("cpu", dtype=gradlab.float64)
    with ac:
        assert (gradlab.ones(2, 2) @ gradlab.ones(2, 2)).dtype is gradlab.float32
    if not gradlab.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            gradlab.autocast("cuda")


def test_banned_op_raises_with_the_fix(monkeypatch):
    monkeypatch.setitem(op_lists.BANNED, "cpu", frozenset({"binary_cross_entropy"}))
    p = gradlab.rand(4).clamp(0.1, 0.9)
    with gradlab.autocast("cpu"):
        with pytest.raises(RuntimeError, match="binary_cross_entropy_with_logits"):
            gradlab.nn.functional.binary_cross_entropy(p, p)


def test_old_cuda_amp_spellings_warn():
    from gradlab.cuda.amp import GradScaler, autocast

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "CUDA is not available" on this machine
        with pytest.warns(FutureWarning, match="gradlab.amp.autocast"):
            autocast()
        with pytest.warns(FutureWarning, match="gradlab.amp.GradScaler"):
            GradScaler()


def test_old_cpu_amp_spellings_warn_and_work():
    from gradlab.cpu.amp import GradScaler, autocast

    with pytest.warns(FutureWarning, match=r"gradlab.amp.autocast\('cpu'"):
        region = autocast()
    with region:
        assert (gradlab.ones(2, 2) @ gradlab.ones(2, 2)).dtype is gradlab.bfloat16
    with pytest.warns(FutureWarning, match="gradlab.cpu.amp.GradScaler"):
        assert GradScaler().is_enabled()
    assert gradlab.cpu.device_count() == 1 and gradlab.cpu.is_available()
    assert gradlab.cpu.current_device() == "cpu" and gradlab.cpu.synchronize() is None


@needs_torch
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_half_products_on_the_cpu_accumulate_in_float32(dtype):
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(64, 300)), rng.normal(size=(300, 32))
    ours = gradlab.tensor(a).to(getattr(gradlab, dtype)) @ gradlab.tensor(b).to(
        getattr(gradlab, dtype))
    theirs = torch.tensor(a).to(getattr(torch, dtype)) @ torch.tensor(b).to(
        getattr(torch, dtype))
    assert ours.dtype is getattr(gradlab, dtype)
    # One rounding of a float32 sum: at most an ulp apart from PyTorch's.
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(),
                               rtol=1e-2 if dtype == BF16 else 2e-3, atol=5e-2)
