"""nn.Module hooks (gradlab/nn/modules/_hooks.py): forward pre-hooks and hooks, with kwargs,
prepend and always_call, and full backward hooks, in the order and with the values of PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab import nn
from tests.nn.test_module import Block, Net, torch_block, torch_net
from tests.oracle import needs_torch, torch


def test_forward_pre_hook_and_forward_hook_change_inputs_and_outputs():
    layer = nn.Identity()
    h1 = layer.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    h2 = layer.register_forward_hook(lambda m, args, out: out + 1)
    x = gradlab.ones(2)
    assert layer(x).tolist() == [3.0, 3.0]
    h1.remove()
    assert layer(x).tolist() == [2.0, 2.0]
    h2.remove()
    assert layer(x) is x
    layer.register_forward_pre_hook(lambda m, args: args[0] * 5)  # a single value is wrapped
    assert layer(x).tolist() == [5.0, 5.0]


def test_hooks_with_kwargs_prepend_and_always_call():
    class Scaled(nn.Module):
        def forward(self, x, *, scale=1.0):
            if scale < 0:
                raise ValueError("negative")
            return x * scale

    m = Scaled()
    log = []
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": 3.0}),
                                with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("kw", kwargs)) or out,
                            with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: log.append("first"), prepend=True)
    assert m(gradlab.ones(1)).tolist() == [3.0]
    assert log == ["first", ("kw", {"scale": 3.0})]

    failing = Scaled()
    called = []
    failing.register_forward_hook(lambda mod, args, out: called.append(out), always_call=True)
    failing.register_forward_hook(lambda mod, args, out: called.append("never"))
    with pytest.raises(ValueError, match="negative"):
        failing(gradlab.ones(1), scale=-1.0)
    assert called == [None]
    bad = nn.Identity()
    bad.register_forward_pre_hook(lambda mod, a, k: 3, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"must return None or a tuple \(args, kwargs\)"):
        bad(gradlab.ones(1))


def _hook_trace(lib, model, x):
    """Every hook's call, in order, with its module's class and what it received."""
    trace = []

    def shapes(items):
        return tuple(None if t is None else tuple(t.shape) for t in items)

    for name, m in model.named_modules():
        m.register_forward_pre_hook(lambda mod, args, n=name: trace.append(("pre", n,
                                                                            shapes(args))))
        m.register_forward_hook(lambda mod, args, out, n=name: trace.append(
            ("fwd", n, shapes(args), tuple(out.shape))))
        m.register_full_backward_pre_hook(lambda mod, go, n=name: trace.append(
            ("bw_pre", n, shapes(go))))
        m.register_full_backward_hook(lambda mod, gi, go, n=name: trace.append(
            ("bw", n, shapes(gi), shapes(go))))
    model(x).sum().backward()
    return trace


@needs_torch
def test_hook_order_and_arguments_match_torch():
    ours, theirs = Net(), torch_net()
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    got = _hook_trace(gradlab, ours, gradlab.tensor(x, requires_grad=True))
    want = _hook_trace(torch, theirs, torch.tensor(x, requires_grad=True))
    assert got == want


@needs_torch
def test_full_backward_hook_values_match_torch():
    ours, theirs = Block(), torch_block()
    ours.load_state_dict(theirs.state_dict())
    seen = {"gradlab": [], "torch": []}
    for lib, model in (("gradlab", ours), ("torch", theirs)):
        model.fc2.register_full_backward_hook(
            lambda m, gi, go, lib=lib: seen[lib].append((gi[0].detach().numpy().copy(),
                                                         go[0].detach().numpy().copy())))
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    xg, xt = gradlab.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (ours(xg) ** 2).sum().backward()
    (theirs(xt) ** 2).sum().backward()
    (gi, go), (ti, to) = seen["gradlab"][0], seen["torch"][0]
    np.testing.assert_allclose(gi, ti, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(go, to, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_backward_hooks_can_replace_gradients():
    layer = nn.Identity()
    x = gradlab.ones(2, requires_grad=True)
    layer.register_full_backward_pre_hook(lambda m, go: (go[0] * 10,))
    layer.register_full_backward_hook(lambda m, gi, go: (gi[0] + 1,))
    (layer(x) * 2).sum().backward()
    assert x.grad.tolist() == [21.0, 21.0]


def test_backward_hook_when_no_input_requires_grad():
    layer = nn.Linear(3, 1)
    got = []
    layer.register_full_backward_hook(lambda m, gi, go: got.append((gi, go[0].shape)))
    layer(gradlab.ones(2, 3)).sum().backward()
    assert got == [((None,), (2, 1))]
    layer.register_full_backward_hook(lambda m, gi, go: (gradlab.ones(1),))
    with pytest.raises(RuntimeError, match="inputs don't require grad must return None"):
        layer(gradlab.ones(2, 3)).sum().backward()


def test_backward_hook_errors_on_wrong_count():
    layer = nn.Identity()
    layer.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but "
                                           "expected 1"):
        layer(gradlab.ones(1, requires_grad=True)).sum().backward()
    pre = nn.Identity()
    pre.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="returned 2 grad_output values"):
        pre(gradlab.ones(1, requires_grad=True)).sum().backward()




def test_forward_mode_passes_through_a_module_with_a_full_backward_hook():
    import gradlab.autograd.forward_ad as fwAD

    lin = nn.Linear(3, 2).double()
    seen = []
    lin.register_full_backward_hook(lambda m, gin, gout: seen.append(gout))
    x = gradlab.randn(4, 3, dtype=gradlab.float64)
    t = gradlab.randn(4, 3, dtype=gradlab.float64)
    with fwAD.dual_level():
        y = lin(fwAD.make_dual(x, t))
        tangent = fwAD.unpack_dual(y).tangent
    expected = (t @ lin.weight.T).detach().numpy()  # linear in x: its tangent is t Wᵀ
    np.testing.assert_allclose(tangent.detach().numpy(), expected, rtol=1e-12)
