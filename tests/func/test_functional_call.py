"""gradlab.func.functional_call: swapped parameters and buffers, restored afterwards; tied
weights; strict; with grad; against torch.func.functional_call."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab import nn
from gradlab.func import functional_call, grad
from tests.oracle import needs_torch, torch

F64 = gradlab.float64


def t64(values, requires_grad=False):
    return gradlab.tensor(values, dtype=F64, requires_grad=requires_grad)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape)


def linear():
    return nn.Linear(3, 2).double()


def snapshot(module):
    """name -> (object, values) of every parameter and buffer."""
    return {name: (t, t.detach().numpy().copy()) for name, t in
            list(module.named_parameters()) + list(module.named_buffers())}


def assert_unchanged(module, before, changed=()):
    """The same objects with the same values (but for the names in ``changed``), no .grad."""
    after = snapshot(module)
    assert after.keys() == before.keys()
    for name, (t, values) in before.items():
        assert after[name][0] is t, f"{name} was replaced"
        if name not in changed:
            np.testing.assert_array_equal(t.detach().numpy(), values)
        if isinstance(t, nn.Parameter):
            assert t.grad is None


def test_a_linear_runs_with_the_given_weights_and_keeps_its_own():
    lin = linear()
    before = snapshot(lin)
    w, b, x = t64(rand(2, 3)), t64(rand(2, seed=1)), t64(rand(4, 3, seed=2))
    out = functional_call(lin, {"weight": w, "bias": b}, (x,))
    np.testing.assert_allclose(out.numpy(), x.numpy() @ w.numpy().T + b.numpy())
    assert_unchanged(lin, before)
    assert isinstance(lin.weight, nn.Parameter)
    np.testing.assert_allclose(lin(x).detach().numpy(), x.numpy() @ before["weight"][1].T
                               + before["bias"][1])


def test_names_not_given_keep_the_modules_tensors_and_args_may_be_one_tensor():
    lin = linear()
    w, x = t64(rand(2, 3)), t64(rand(3, seed=2))
    out = functional_call(lin, {"weight": w}, x)  # not a tuple: the single argument
    expected = w.numpy() @ x.numpy() + lin.bias.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), expected)


def test_a_sequential_with_dotted_names_and_kwargs():
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()

        def forward(self, x, scale=1.0):
            return self.body(x) * scale

    model = Scaled()
    before = snapshot(model)
    params = {name: t64(rand(*p.shape, seed=i)) for i, (name, p) in
              enumerate(model.named_parameters())}
    assert set(params) == {"body.0.weight", "body.0.bias", "body.2.weight", "body.2.bias"}
    x = t64(rand(5, 3, seed=9))
    out = functional_call(model, params, (x,), {"scale": 2.0})
    h = np.tanh(x.numpy() @ params["body.0.weight"].numpy().T + params["body.0.bias"].numpy())
    expected = 2.0 * (h @ params["body.2.weight"].numpy().T + params["body.2.bias"].numpy())
    np.testing.assert_allclose(out.numpy(), expected)
    assert_unchanged(model, before)


def test_grad_through_functional_call_matches_backward_and_leaves_dot_grad_alone():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    x, y = t64(rand(6, 3)), t64(rand(6, 2, seed=1))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        return ((functional_call(model, p, (x,)) - y) ** 2).mean()

    grads = grad(loss)(params, x, y)
    assert all(p.grad is None for p in model.parameters())
    ((model(x) - y) ** 2).mean().backward()
    assert grads.keys() == params.keys()
    for name, p in model.named_parameters():
        np.testing.assert_allclose(grads[name].numpy(), p.grad.numpy(), rtol=1e-12)


def test_swapped_buffers_get_the_in_place_updates_and_the_modules_stay_put():
    bn = nn.BatchNorm1d(3).double()
    before = snapshot(bn)
    mean, var = t64(np.zeros(3)), t64(np.ones(3))
    x = t64(rand(8, 3))
    functional_call(bn, {"running_mean": mean, "running_var": var}, (x,))
    np.testing.assert_allclose(mean.numpy(), 0.1 * x.numpy().mean(0))
    assert_unchanged(bn, before, changed={"num_batches_tracked"})
    assert bn.num_batches_tracked.item() == 1  # its own counter (not given) did count


def test_a_buffer_the_module_replaces_is_handed_back_through_the_dict():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", gradlab.tensor(0.0))

        def forward(self, x):
            self.count = self.count + 1  # a new tensor, not an in-place change
            return x

    m = Counter()
    given = {"count": gradlab.tensor(10.0)}
    functional_call(m, given, (t64(1.0),))
    assert given["count"].item() == 11.0 and m.count.item() == 0.0


def test_the_originals_come_back_when_forward_raises():
    class Broken(nn.Linear):
        def forward(self, x):
            raise ValueError("boom")

    m = Broken(2, 2)
    before = snapshot(m)
    with pytest.raises(ValueError, match="boom"):
        functional_call(m, {"weight": gradlab.zeros(2, 2), "extra": gradlab.ones(1)}, (None,))
    assert_unchanged(m, before)
    assert not hasattr(m, "extra")


def test_an_unknown_name_is_set_for_the_call_only_when_not_strict():
    class UsesScale(nn.Module):
        def forward(self, x):
            return x * self.scale

    m = UsesScale()
    assert functional_call(m, {"scale": t64(3.0)}, (t64(2.0),)).item() == 6.0
    assert not hasattr(m, "scale")


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2, bias=False).double()
        self.b = nn.Linear(2, 2, bias=False).double()
        self.b.weight = self.a.weight  # one tensor under two names

    def forward(self, x):
        return self.a(x) + self.b(x)


def test_tied_weights_follow_one_value_unless_untied():
    m = Tied()
    x, w = t64([1.0, 2.0]), t64([[1.0, 0.0], [0.0, 1.0]])
    own = m.a.weight.detach().numpy() @ x.numpy()
    out = functional_call(m, {"a.weight": w}, (x,))
    np.testing.assert_allclose(out.numpy(), 2 * x.numpy())
    out = functional_call(m, {"a.weight": w}, (x,), tie_weights=False)
    np.testing.assert_allclose(out.detach().numpy(), x.numpy() + own)
    out = functional_call(m, {"a.weight": w, "b.weight": w}, (x,))  # the same value: fine
    np.testing.assert_allclose(out.numpy(), 2 * x.numpy())
    assert m.b.weight is m.a.weight


def test_two_values_for_tied_weights_raise():
    m = Tied()
    w1, w2 = t64(np.eye(2)), t64(np.eye(2))
    with pytest.raises(ValueError, match=r"multiple values for keys \['a.weight', 'b.weight'\], "
                                         r"which are tied.*tie_weights=False"):
        functional_call(m, {"a.weight": w1, "b.weight": w2}, (t64([1.0, 1.0]),))
    out = functional_call(m, {"a.weight": w1, "b.weight": 2 * w2}, (t64([1.0, 1.0]),),
                          tie_weights=False)
    assert out.tolist() == [3.0, 3.0]


def test_strict_wants_exactly_the_modules_names():
    lin = linear()
    w, b = t64(rand(2, 3)), t64(rand(2))
    x = t64(rand(3))
    assert functional_call(lin, {"weight": w, "bias": b}, (x,), strict=True).shape == (2,)
    with pytest.raises(RuntimeError, match=r"reparametrizing for Linear:\n\tMissing key\(s\): "
                                           r"'bias'\."):
        functional_call(lin, {"weight": w}, (x,), strict=True)
    with pytest.raises(RuntimeError, match=r"Unexpected key\(s\): 'scale'\.\n\tMissing key\(s\): "
                                           r"'bias'\."):
        functional_call(lin, {"weight": w, "scale": b}, (x,), strict=True)
    assert lin.weight is not w


def test_a_sequence_of_dicts_is_merged():
    bn = nn.BatchNorm1d(2).double().eval()
    params = {"weight": t64([2.0, 2.0]), "bias": t64([1.0, 1.0])}
    buffers = {"running_mean": t64([0.0, 0.0]), "running_var": t64([1.0, 1.0])}
    out = functional_call(bn, (params, buffers), (t64([[1.0, -1.0]]),))
    np.testing.assert_allclose(out.numpy(), [[3.0, -1.0]], rtol=1e-4)


@pytest.mark.parametrize("given, error, message", [
    (({"weight": gradlab.zeros(2, 3)}, {"weight": gradlab.zeros(2, 3)}), ValueError,
     r"\['weight'\] appeared in multiple dictionaries"),
    (({"weight": gradlab.zeros(2, 3)}, 3), ValueError, "all elements .* to be dictionaries"),
    (5, ValueError, "to be a dict, or a list/tuple of dicts, but got int"),
    ({"weight": [[0.0] * 3] * 2}, TypeError, "value for 'weight' must be a Tensor"),
    ({"encoder.weight": gradlab.zeros(2, 3)}, AttributeError, "no attribute `encoder`"),
])
def test_functional_call_errors(given, error, message):
    lin = nn.Linear(3, 2)
    before = snapshot(lin)
    with pytest.raises(error, match=message):
        functional_call(lin, given, (gradlab.zeros(3),))
    assert_unchanged(lin, before)


def test_functional_call_wants_a_module():
    with pytest.raises(TypeError, match="expected a gradlab.nn.Module, got function"):
        functional_call(lambda x: x, {}, (1,))


@needs_torch
def test_matches_torch_functional_call_and_its_gradients():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    t_model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                                  torch.nn.Linear(4, 1)).double()
    arrays = {name: rand(*p.shape, seed=i) for i, (name, p) in
              enumerate(model.named_parameters())}
    assert set(arrays) == {name for name, _ in t_model.named_parameters()}
    x = rand(5, 3, seed=7)

    def loss(call, params, x):
        return (call(params, (x,)) ** 2).sum()

    g_params = {k: t64(v) for k, v in arrays.items()}
    t_params = {k: torch.tensor(v) for k, v in arrays.items()}
    got = grad(lambda p: loss(lambda p, a: functional_call(model, p, a), p, t64(x)))(g_params)
    expected = torch.func.grad(lambda p: loss(
        lambda p, a: torch.func.functional_call(t_model, p, a), p, torch.tensor(x)))(t_params)
    for name in arrays:
        np.testing.assert_allclose(got[name].numpy(), expected[name].numpy(), rtol=1e-10)
