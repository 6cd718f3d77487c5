"""nn.Module: registration, traversal, modes, moving, state_dict and reprs. Elsewhere:
nn.Parameter (test_parameter.py), module paths (test_module_paths.py), hooks (test_module_hooks.py).
"""

from __future__ import annotations

import copy
from collections import OrderedDict

import numpy as np
import pytest

import gradlab
from gradlab import nn
from tests.oracle import needs_torch, torch


# The model of these tests; test_module_paths.py and test_module_hooks.py import it from here.
class Block(nn.Module):
    def __init__(self, lib_nn=nn):
        super().__init__()
        self.fc1 = lib_nn.Linear(3, 4)
        self.act = lib_nn.ReLU()
        self.fc2 = lib_nn.Linear(4, 3)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) + x


class Net(nn.Module):
    def __init__(self, lib_nn=nn):
        super().__init__()
        self.encoder = lib_nn.Sequential(Block(lib_nn), Block(lib_nn))
        self.head = lib_nn.Linear(3, 2)
        self.register_buffer("scale", gradlab.ones(2) if lib_nn is nn else torch.ones(2))

    def forward(self, x):
        return self.head(self.encoder(x)) * self.scale


def torch_block():
    return torch_net().encoder[0]


def torch_net():
    """The same architecture built from torch.nn (same attribute names, same keys)."""
    class TBlock(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.act, self.fc2 = torch.nn.Linear(3, 4), torch.nn.ReLU(), \
                torch.nn.Linear(4, 3)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x))) + x

    class TNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = torch.nn.Sequential(TBlock(), TBlock())
            self.head = torch.nn.Linear(3, 2)
            self.register_buffer("scale", torch.ones(2))

        def forward(self, x):
            return self.head(self.encoder(x)) * self.scale

    TBlock.__name__ = "Block"
    TNet.__name__ = "Net"
    return TNet()


# --- registration -------------------------------------------------------------------------

def test_attributes_register_by_kind_in_order():
    net = Net()
    assert list(net._modules) == ["encoder", "head"]
    assert list(net._buffers) == ["scale"]
    assert [n for n, _ in net.named_parameters()] == [
        "encoder.0.fc1.weight", "encoder.0.fc1.bias", "encoder.0.fc2.weight",
        "encoder.0.fc2.bias", "encoder.1.fc1.weight", "encoder.1.fc1.bias",
        "encoder.1.fc2.weight", "encoder.1.fc2.bias", "head.weight", "head.bias"]
    assert net.head.weight is net._modules["head"]._parameters["weight"]
    assert "head" in dir(net) and "scale" in dir(net) and "forward" in dir(net)


def test_reassigning_and_deleting_attributes():
    m = nn.Module()
    m.w = nn.Parameter(gradlab.ones(2))
    m.w = None  # a parameter slot may be emptied
    assert "w" in m._parameters and m.w is None and list(m.parameters()) == []
    m.w = nn.Parameter(gradlab.ones(3))
    m.sub = nn.Linear(1, 1)
    m.sub = nn.Parameter(gradlab.ones(1))  # changes kind: no longer a module
    assert "sub" not in m._modules and "sub" in m._parameters
    del m.w
    assert "w" not in m._parameters
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'w'"):
        _ = m.w
    m.plain = 3
    del m.plain
    assert not hasattr(m, "plain")


def test_registration_errors_teach():
    m = nn.Module()
    m.w = nn.Parameter(gradlab.ones(2))
    with pytest.raises(TypeError, match=r"cannot assign 'Tensor' as parameter 'w'.*"
                                        r"nn.Parameter\(t\)"):
        m.w = gradlab.ones(2)
    with pytest.raises(KeyError, match='name can.*t contain "."'):
        m.register_parameter("a.b", None)
    with pytest.raises(KeyError, match="name can.*t be empty string"):
        m.register_buffer("", None)
    with pytest.raises(KeyError, match="attribute 'forward' already exists"):
        m.register_parameter("forward", None)
    with pytest.raises(TypeError, match="cannot assign 'Tensor' object to parameter 'q'"):
        m.register_parameter("q", gradlab.ones(1))
    with pytest.raises(TypeError, match="cannot assign 'int' object to buffer 'b'"):
        m.register_buffer("b", 3)
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("x", 3)
    with pytest.raises(TypeError, match="parameter name should be a string"):
        m.register_parameter(1, None)
    m.sub = nn.Linear(1, 1)
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'sub'"):
        m.sub = 1
    m.register_buffer("buf", gradlab.ones(1))
    with pytest.raises(TypeError, match="cannot assign 'str' as buffer 'buf'"):
        m.buf = "x"

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(gradlab.ones(1))

    with pytest.raises(AttributeError, match=r"before Module.__init__\(\) call.*super"):
        Early()

    class NoForward(nn.Module):
        pass

    with pytest.raises(NotImplementedError, match=r'NoForward\] is missing the required '
                                                  r'"forward"'):
        NoForward()(1)
    with pytest.raises(TypeError, match="takes no arguments"):
        nn.Module(3)


def test_buffers_persistent_and_not():
    m = nn.Module()
    m.register_buffer("kept", gradlab.zeros(2))
    m.register_buffer("scratch", gradlab.zeros(2), persistent=False)
    m.register_buffer("empty", None)
    assert [n for n, _ in m.named_buffers()] == ["kept", "scratch"]
    assert list(m.state_dict()) == ["kept"]
    m.kept = gradlab.ones(2)  # a plain tensor assigned to a buffer name replaces the buffer
    assert m._buffers["kept"].tolist() == [1.0, 1.0]
    m.scratch = gradlab.ones(3)
    assert "scratch" in m._non_persistent_buffers_set


# --- traversal ----------------------------------------------------------------------------

@needs_torch
def test_traversal_names_match_torch():
    ours, theirs = Net(), torch_net()
    for method in ("named_modules", "named_children", "named_buffers", "named_parameters"):
        assert [n for n, _ in getattr(ours, method)()] == \
            [n for n, _ in getattr(theirs, method)()], method
    assert [n for n, _ in ours.named_parameters(prefix="model", recurse=True)] == \
        [n for n, _ in theirs.named_parameters(prefix="model")]
    assert [n for n, _ in ours.named_parameters(recurse=False)] == []
    assert [n for n, _ in ours.encoder[0].named_parameters(recurse=False)] == []
    assert [n for n, _ in ours.head.named_parameters(recurse=False)] == ["weight", "bias"]
    assert len(list(ours.modules())) == len(list(theirs.modules())) == 11
    assert len(list(ours.children())) == 2


def test_shared_modules_and_parameters_are_listed_once():
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    assert len(list(seq.parameters())) == 2
    assert [n for n, _ in seq.named_parameters(remove_duplicate=False)] == [
        "0.weight", "0.bias", "2.weight", "2.bias"]
    assert [n for n, _ in seq.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_get_submodule_and_get_parameter():
    net = Net()
    assert net.get_submodule("encoder.1.fc2") is net.encoder[1].fc2
    assert net.get_submodule("") is net
    assert net.get_parameter("encoder.0.fc1.bias") is net.encoder[0].fc1.bias
    assert net.get_buffer("scale") is net.scale
    with pytest.raises(AttributeError, match=r"Block has no attribute `fc3`.*fc1, act, fc2"):
        net.get_submodule("encoder.0.fc3")
    with pytest.raises(AttributeError, match=r"Linear has no attribute `weights`.*weight, bias"):
        net.get_parameter("head.weights")
    with pytest.raises(AttributeError, match="`scale` is not an nn.Parameter"):
        net.get_parameter("scale")


# --- modes, gradients, apply --------------------------------------------------------------

def test_train_eval_reach_every_submodule():
    net = Net()
    assert net.training and all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net.encoder.train(False)
    assert net.training and not net.encoder[0].fc1.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")


def test_zero_grad_and_requires_grad():
    net = Net()
    net(gradlab.randn(5, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())


def test_apply_visits_children_first_then_self():
    order = []
    net = Net()
    assert net.apply(lambda m: order.append(type(m).__name__)) is net
    assert order == ["Linear", "ReLU", "Linear", "Block", "Linear", "ReLU", "Linear", "Block",
                     "Sequential", "Linear", "Net"]


# --- to / casting -------------------------------------------------------------------------

def test_to_keeps_parameter_identity_and_converts_grads():
    net = Net()
    params = list(net.parameters())
    net(gradlab.randn(2, 3)).sum().backward()
    net.register_buffer("steps", gradlab.tensor(3))
    assert net.to(gradlab.float64) is net
    assert [id(p) for p in net.parameters()] == [id(p) for p in params]
    assert all(p.dtype == gradlab.float64 and p.grad.dtype == gradlab.float64 for p in params)
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in params)
    assert net.scale.dtype == gradlab.float64
    assert net.steps.dtype == gradlab.int64  # integer buffers keep their dtype
    net.float()
    assert net.head.weight.dtype == gradlab.float32
    net.to(gradlab.zeros(1, dtype=gradlab.float64))
    assert net.head.bias.dtype == gradlab.float64
    net.to("cpu", dtype=gradlab.float32).half()
    assert net.head.weight.dtype == gradlab.float16
    assert net.cpu() is net
    with pytest.raises(TypeError, match="only accepts floating point or complex dtypes.*int64"):
        net.to(gradlab.int64)


def test_an_update_made_through_old_references_reaches_the_model_after_to():
    net = nn.Linear(2, 1)
    held = list(net.parameters())  # what an optimizer made before .to() holds
    net.double()
    with gradlab.no_grad():
        held[0].zero_()
    assert not net.weight.numpy(force=True).any()


# --- state_dict ---------------------------------------------------------------------------

@needs_torch
def test_state_dict_keys_match_torch_and_load_gives_the_same_outputs():
    ours, theirs = Net(), torch_net()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    result = ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    assert repr(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(gradlab.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    for (k, v), (k2, v2) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert k == k2
        np.testing.assert_array_equal(v.numpy(), v2.numpy())
    ours.load_state_dict(theirs.state_dict())  # torch tensors themselves load too


def test_state_dict_values_are_detached_and_share_memory():
    layer = nn.Linear(2, 2)
    sd = layer.state_dict()
    assert isinstance(sd, OrderedDict)
    assert not sd["weight"].requires_grad and not isinstance(sd["weight"], nn.Parameter)
    assert sd["weight"].data_ptr() == layer.weight.data_ptr()
    assert layer.state_dict(keep_vars=True)["weight"] is layer.weight
    assert list(layer.state_dict(prefix="fc.")) == ["fc.weight", "fc.bias"]
    assert sd._metadata[""] == {"version": 1}


def test_load_state_dict_round_trip_between_models():
    a, b = Net(), Net()
    b.load_state_dict(a.state_dict())
    x = gradlab.randn(3, 3)
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    assert b.head.weight.data_ptr() != a.head.weight.data_ptr()  # copied, not shared


def test_load_state_dict_errors_name_keys_and_shapes():
    net = Net()
    sd = net.state_dict()
    sd.pop("head.bias")
    sd["head.extra"] = gradlab.ones(1)
    sd["encoder.0.fc1.weight"] = gradlab.ones(5, 3)
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(sd)
    msg = str(info.value)
    assert msg.startswith("Error(s) in loading state_dict for Net:")
    assert 'Missing key(s) in state_dict: "head.bias".' in msg
    assert 'Unexpected key(s) in state_dict: "head.extra".' in msg
    assert ("size mismatch for encoder.0.fc1.weight: copying a param with shape "
            "gradlab.Size([5, 3]) from checkpoint, the shape in current model is "
            "gradlab.Size([4, 3]).") in msg
    sd["encoder.0.fc1.weight"] = gradlab.ones(4, 3)
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["head.bias"] and result.unexpected_keys == ["head.extra"]
    assert net.encoder[0].fc1.weight.numpy(force=True).tolist() == [[1.0] * 3] * 4
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        net.load_state_dict([1, 2])
    with pytest.raises(RuntimeError, match='While copying the parameter named "head.weight"'):
        net.load_state_dict({**net.state_dict(), "head.weight": "oops"})


def test_load_state_dict_assign_replaces_the_parameters():
    layer = nn.Linear(2, 2)
    new = {"weight": gradlab.ones(2, 2, dtype=gradlab.float64), "bias": gradlab.zeros(2)}
    layer.load_state_dict(new, assign=True)
    assert isinstance(layer.weight, nn.Parameter) and layer.weight.dtype == gradlab.float64
    assert layer.weight.data_ptr() == new["weight"].data_ptr()


def test_load_from_state_dict_can_be_customised_with_the_version():
    class Renamed(nn.Module):
        """Version 2 renamed 'w' to 'weight'; old checkpoints still load."""

        _version = 2

        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(gradlab.zeros(2))

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, *args):
            if local_metadata.get("version", 1) < 2 and prefix + "w" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
            super()._load_from_state_dict(state_dict, prefix, local_metadata, *args)

    model = nn.Sequential(Renamed())
    old = OrderedDict([("0.w", gradlab.ones(2))])
    old._metadata = {"0": {"version": 1}}
    model.load_state_dict(old)
    assert model[0].weight.tolist() == [1.0, 1.0]
    assert model.state_dict()._metadata["0"] == {"version": 2}


def test_deepcopy_of_a_model_is_independent():
    net = Net()
    twin = copy.deepcopy(net)
    assert twin.head.weight is not net.head.weight
    assert isinstance(twin.head.weight, nn.Parameter)
    with gradlab.no_grad():
        twin.head.weight.zero_()
    assert net.head.weight.numpy(force=True).any()


# --- repr ---------------------------------------------------------------------------------

@needs_torch
def test_nested_repr_matches_torch_exactly():
    assert repr(Net()) == repr(torch_net())
    ours = nn.Sequential(OrderedDict([("flat", nn.Flatten()), ("fc", nn.Linear(4, 2)),
                                      ("layers", nn.ModuleList([nn.Linear(2, 2)] * 3 +
                                                               [nn.Tanh()]))]))
    theirs = torch.nn.Sequential(OrderedDict([
        ("flat", torch.nn.Flatten()), ("fc", torch.nn.Linear(4, 2)),
        ("layers", torch.nn.ModuleList([torch.nn.Linear(2, 2)] * 3 + [torch.nn.Tanh()]))]))
    assert repr(ours) == repr(theirs)


@needs_torch
def test_multiline_extra_repr_matches_torch():
    def make(base):
        class Custom(base):
            def extra_repr(self):
                return "alpha=1\nbeta=2"
        return Custom()

    ours, theirs = make(nn.Module), make(torch.nn.Module)
    ours.child, theirs.child = nn.ReLU(), torch.nn.ReLU()
    assert repr(ours) == repr(theirs)
    assert repr(make(nn.Module)) == repr(make(torch.nn.Module))


def test_data_parallel_runs_the_module_on_one_device_with_pytorchs_state_dict_keys():
    gradlab.manual_seed(0)
    inner = gradlab.nn.Linear(2, 3)
    model = gradlab.nn.DataParallel(inner)
    assert model is not inner and gradlab.nn.parallel.DataParallel is gradlab.nn.DataParallel
    x = gradlab.randn(4, 2)
    np.testing.assert_array_equal(model(x).detach().numpy(), inner(x).detach().numpy())
    assert list(model.state_dict()) == ["module.weight", "module.bias"]
    assert repr(model).startswith("DataParallel(\n  (module): Linear(")
    with pytest.raises(NotImplementedError, match="one device"):
        gradlab.nn.DataParallel(inner, device_ids=[0, 1])


@needs_torch
def test_data_parallel_checkpoints_load_into_torch():
    model = gradlab.nn.DataParallel(gradlab.nn.Linear(2, 3))
    theirs = torch.nn.DataParallel(torch.nn.Linear(2, 3))
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in model.state_dict().items()})
    x = np.ones((1, 2), dtype=np.float32)
    np.testing.assert_allclose(theirs(torch.tensor(x)).detach().numpy(),
                               model(gradlab.tensor(x)).detach().numpy(), rtol=1e-6)
