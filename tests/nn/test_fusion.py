"""nn.utils.fusion (BatchNorm folding), skip_init and stateless.functional_call, against PyTorch."""

import numpy as np
import pytest

import gradlab
from gradlab import nn
from gradlab.nn.utils import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
    skip_init,
    stateless,
)
from tests.oracle import needs_torch, torch


def host(t) -> np.ndarray:
    return t if isinstance(t, np.ndarray) else t.detach().cpu().numpy()


def close(a, b, tol=1e-10) -> None:
    np.testing.assert_allclose(host(a), host(b), rtol=tol, atol=tol)


def randomize(module, rng):
    """Random parameters and running statistics (variance positive), in place."""
    with gradlab.no_grad():
        for _, t in list(module.named_parameters()) + list(module.named_buffers()):
            if t.is_floating_point():
                values = rng.standard_normal(tuple(t.shape))
                t.copy_(gradlab.tensor(np.abs(values) + 0.5 if t.ndim == 1 and
                                       t is getattr(module, "running_var", None) else values))
    return module


PAIRS = {  # name: (layer, batch norm, input shape, transpose)
    "conv2d": (lambda bias: nn.Conv2d(3, 4, 3, bias=bias), lambda a: nn.BatchNorm2d(4, affine=a),
               (2, 3, 6, 6), False),
    "conv1d": (lambda bias: nn.Conv1d(2, 3, 2, bias=bias), lambda a: nn.BatchNorm1d(3, affine=a),
               (2, 2, 5), False),
    "conv_transpose2d": (lambda bias: nn.ConvTranspose2d(3, 4, 2, bias=bias),
                         lambda a: nn.BatchNorm2d(4, affine=a), (2, 3, 4, 4), True),
}


@pytest.mark.parametrize("kind", list(PAIRS))
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_fused_conv_computes_conv_then_batch_norm(kind, bias, affine):
    make_layer, make_bn, shape, transpose = PAIRS[kind]
    rng = np.random.default_rng(0)
    conv = randomize(make_layer(bias).double(), rng).eval()
    bn = randomize(make_bn(affine).double(), rng).eval()
    fused = fuse_conv_bn_eval(conv, bn, transpose=transpose)
    assert type(fused) is type(conv) and fused is not conv
    assert isinstance(fused.weight, nn.Parameter) and isinstance(fused.bias, nn.Parameter)
    assert list(fused.state_dict()) == ["weight", "bias"]
    x = gradlab.tensor(rng.standard_normal(shape))
    close(fused(x), bn(conv(x)))
    if not bias:
        assert conv.bias is None  # the original is untouched


@needs_torch
@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_weights_matches_torch(transpose):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((4, 3, 2, 2)), rng.standard_normal(4),
              rng.standard_normal(4), np.abs(rng.standard_normal(4)) + 0.1,
              rng.standard_normal(4), rng.standard_normal(4)]
    if transpose:
        arrays[0] = rng.standard_normal((3, 4, 2, 2))
    w, b, rm, rv, bw, bb = arrays
    ours = fuse_conv_bn_weights(*(gradlab.tensor(a) for a in (w, b, rm, rv)), 1e-3,
                                gradlab.tensor(bw), gradlab.tensor(bb), transpose)
    theirs = torch.nn.utils.fusion.fuse_conv_bn_weights(
        *(torch.from_numpy(a) for a in (w, b, rm, rv)), 1e-3, torch.from_numpy(bw),
        torch.from_numpy(bb), transpose)
    for o, t in zip(ours, theirs):
        close(o, t)
        assert o.requires_grad == t.requires_grad is False  # inputs did not require grad
    ours = fuse_conv_bn_weights(gradlab.tensor(w).float().requires_grad_(), None,
                                *(gradlab.tensor(a) for a in (rm, rv)), 1e-5, None, None,
                                transpose)
    assert ours[0].dtype == gradlab.float32 and ours[0].requires_grad
    assert ours[1].dtype == gradlab.float32 and not ours[1].requires_grad


@needs_torch
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("bn_features", [4, 1])
def test_fused_linear_matches_torch(bias, bn_features):
    rng = np.random.default_rng(2)
    lin = randomize(nn.Linear(3, 4, bias=bias).double(), rng).eval()
    bn = randomize(nn.BatchNorm1d(bn_features).double(), rng).eval()
    t_lin = torch.nn.Linear(3, 4, bias=bias).double().eval()
    t_bn = torch.nn.BatchNorm1d(bn_features).double().eval()
    t_lin.load_state_dict({k: torch.from_numpy(host(v)) for k, v in lin.state_dict().items()})
    t_bn.load_state_dict({k: torch.from_numpy(host(v)) for k, v in bn.state_dict().items()})
    fused = fuse_linear_bn_eval(lin, bn)
    t_fused = torch.nn.utils.fusion.fuse_linear_bn_eval(t_lin, t_bn)
    close(fused.weight, t_fused.weight)
    close(fused.bias, t_fused.bias)
    x = rng.standard_normal((5, 3))
    if bn_features == 4:  # only then is the unfused pair a valid model to compare with
        close(fused(gradlab.tensor(x)), bn(lin(gradlab.tensor(x))))
    if bias or bn_features == 4:  # else the fused bias has shape (1,), which gradlab's
        # linear refuses (PyTorch broadcasts it): compared through the weights above only
        close(fused(gradlab.tensor(x)), t_fused(torch.from_numpy(x)))
    w, b = fuse_linear_bn_weights(lin.weight, lin.bias, bn.running_mean, bn.running_var, bn.eps,
                                  bn.weight, bn.bias)
    close(w, fused.weight)
    assert w.requires_grad


def test_fusion_errors():
    conv, bn = nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        fuse_conv_bn_eval(conv, bn)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        fuse_linear_bn_eval(nn.Linear(2, 2), nn.BatchNorm1d(2).eval())
    with pytest.raises(AssertionError, match="linear.out_features=2 and bn.num_features=3"):
        fuse_linear_bn_eval(nn.Linear(2, 2).eval(), nn.BatchNorm1d(3).eval())
    no_stats = nn.BatchNorm2d(2, track_running_stats=False).eval()
    with pytest.raises(AssertionError, match="running_mean and bn.running_var must not be None"):
        fuse_conv_bn_eval(conv.eval(), no_stats)


# --- skip_init --------------------------------------------------------------------------
def test_skip_init_builds_the_module_on_the_device():
    m = skip_init(nn.Linear, 6, 1, bias=False, dtype=gradlab.float64)
    assert type(m) is nn.Linear
    assert tuple(m.weight.shape) == (1, 6) and m.bias is None
    assert m.weight.dtype == gradlab.float64 and m.weight.device.type == "cpu"
    with pytest.raises(RuntimeError, match="Expected a Module; got"):
        skip_init(int)

    class NoDevice(nn.Module):
        def __init__(self, n):
            super().__init__()

    with pytest.raises(RuntimeError, match="must support a 'device' arg"):
        skip_init(NoDevice, 3)


# --- stateless.functional_call ----------------------------------------------------------
def test_stateless_functional_call_is_the_func_one_with_a_warning():
    m = nn.Linear(3, 2).double()
    w = gradlab.ones(2, 3, dtype=gradlab.float64, requires_grad=True)
    x = gradlab.tensor(np.arange(6.0).reshape(2, 3))
    with pytest.warns(FutureWarning, match="torch.func.functional_call"):
        out = stateless.functional_call(m, {"weight": w}, (x,))
    close(out, x @ w.detach().T + m.bias.detach())
    close(out, gradlab.func.functional_call(m, {"weight": w}, x))
    out.sum().backward()
    close(w.grad, np.tile(x.detach().numpy().sum(0), (2, 1)))
    assert m.weight.grad is None
