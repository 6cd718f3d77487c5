"""The in-place forms and aliases of gradlab/ops/inplace_forms.py and nn_inplace.py, against
PyTorch: values, gradients through the in-place op on a non-leaf (``y = x * 1; y.cos_()``),
forward mode, through views, what they refuse (leaves, dtype casts, changed saved tensors),
and the ``inplace=True`` flags of the activation and dropout layers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, broadcastable_shapes

import gradlab
from gradlab.ops import inplace_forms, nn_inplace
from tests.oracle import OpCase, away_from_zero, needs_torch, standard_op_tests, torch


def _inplace(name, *args, **kwargs):
    """fn(lib, x, *others): a non-leaf copy of x changed by ``name``, returned."""
    def fn(lib, x, *others):
        y = x * 1
        out = getattr(y, name)(*args, *others, **kwargs)
        assert out is y
        return y
    return fn


def _ints(rng, dtype, shapes):
    return [rng.integers(-3, 4, s).astype(np.int64) for s in shapes]


def _pos(rng, dtype, shapes):
    return [rng.uniform(0.5, 2.0, s).astype(dtype) for s in shapes]


def _spd(rng, dtype, shapes):  # mvlgamma with p=2 needs x > 0.5
    return [rng.uniform(1.0, 3.0, s).astype(dtype) for s in shapes]


VARIANTS = (((),), ((0, 3),))
# Flat almost everywhere: the first derivative is a constant 0, nothing to differentiate again.
COMPARISONS = ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "less_", "not_equal_",
               "greater_equal_", "less_equal_")
STEPS = ("floor_", "ceil_", "round_", "trunc_", "fix_", "sign_") + COMPARISONS
UNARY = [  # name, args, domain or inputs
    ("cos_", (), None), ("sin_", (), None), ("tan_", (), (-1.2, 1.2)),
    ("floor_", (), None), ("ceil_", (), None), ("round_", (), None), ("trunc_", (), None),
    ("fix_", (), None), ("sign_", (), None), ("exp2_", (), None), ("expm1_", (), None),
    ("log10_", (), _pos), ("log1p_", (), _pos), ("log2_", (), _pos), ("rsqrt_", (), _pos),
    ("reciprocal_", (), away_from_zero), ("square_", (), None), ("negative_", (), None),
    ("clamp_min_", (0.3,), None), ("clamp_max_", (-0.2,), None),
    ("tril_", (), None), ("triu_", (1,), None), ("cumsum_", (1,), None),
    ("cumprod_", (0,), None), ("renorm_", (2, 0, 1.0), None), ("mvlgamma_", (2,), _spd),
    ("polygamma_", (1,), _pos), ("eq_", (0.5,), None), ("ne_", (0.5,), None),
    ("lt_", (0.1,), None), ("le_", (0.1,), None), ("gt_", (0.1,), None),
    ("ge_", (0.1,), None), ("greater_", (0.1,), None), ("less_", (0.1,), None),
    ("not_equal_", (0.5,), None), ("greater_equal_", (0.1,), None),
    ("less_equal_", (0.1,), None),
]
CASES = [OpCase(name, _inplace(name, *args), ((3, 4),),
                domain=dom if isinstance(dom, tuple) else (-2.0, 2.0),
                inputs=dom if callable(dom) else None,
                variants=() if name in ("tril_", "triu_", "renorm_", "cumsum_", "cumprod_")
                else VARIANTS,
                gradgrad=name not in STEPS,
                # eq_ ... under torch.func.jvp: PyTorch has no forward rule for them in place
                jvp=name not in COMPARISONS)
         for name, args, dom in UNARY]
CASES += [
    OpCase("round_decimals", _inplace("round_", decimals=2), ((3, 4),), domain=(-3.0, 3.0),
           gradgrad=False),
    OpCase("round_negative_decimals", _inplace("round_", decimals=-1), ((5,),),
           domain=(-300.0, 300.0), gradgrad=False),
    OpCase("remainder_", _inplace("remainder_"), ((3, 4), (4,)), inputs=lambda r, d, s: [
        r.uniform(-2, 2, s[0]).astype(d), away_from_zero(r, d, [s[1]])[0]]),
    OpCase("true_divide_", _inplace("true_divide_"), ((3, 4), (4,)),
           inputs=lambda r, d, s: away_from_zero(r, d, s)),
    OpCase("divide_", _inplace("divide_"), ((3, 4), (3, 1)),
           inputs=lambda r, d, s: away_from_zero(r, d, s)),
    OpCase("divide_trunc", _inplace("divide_", rounding_mode="trunc"), ((3, 4), (4,)),
           inputs=lambda r, d, s: away_from_zero(r, d, s), grad_inputs=(0,), gradgrad=False),
    OpCase("multiply_", _inplace("multiply_"), ((3, 4), (3, 4))),
    OpCase("subtract_", _inplace("subtract_", alpha=2), ((3, 4), ())),
    OpCase("copysign_", _inplace("copysign_"), ((3, 4), (3, 4)),
           inputs=lambda r, d, s: away_from_zero(r, d, s)),
    OpCase("nextafter_", _inplace("nextafter_"), ((3, 4), (3, 4)), grad_inputs=(0,),
           jvp=False, gradgrad=False),  # torch.func.jvp: nextafter has no forward rule in PyTorch
    OpCase("float_power_", lambda lib, x, e: (x * 1).float_power_(e), ((3, 4), (3, 4)),
           inputs=lambda r, d, s: [r.uniform(0.5, 2, s[0]), r.uniform(-2, 2, s[1])]),
    OpCase("addmm_", _inplace("addmm_", beta=0.5, alpha=2.0), ((3, 4), (3, 2), (2, 4))),
    OpCase("addmv_", _inplace("addmv_", beta=2.0), ((3,), (3, 2), (2,))),
    OpCase("addbmm_", _inplace("addbmm_"), ((3, 4), (2, 3, 5), (2, 5, 4))),
    OpCase("baddbmm_", _inplace("baddbmm_", alpha=0.5), ((2, 3, 4), (2, 3, 5), (2, 5, 4))),
    # exponents >= 0: PyTorch's ldexp gradient 2^e is computed in integers (0 for e < 0)
    OpCase("ldexp_", lambda lib, x, e: (x * 1).ldexp_(e), ((3, 4), (4,)),
           inputs=lambda r, d, s: [r.uniform(-2, 2, s[0]).astype(d), r.integers(0, 3, s[1])]),
    # through views: the base's history is rebased too (values and gradients of the base)
    OpCase("cos_through_a_view", lambda lib, x: _through_view(x, "cos_"), ((3, 4),)),
    OpCase("addmm_through_a_transposed_view",
           lambda lib, x, a, b: _through_view(x, "addmm_", a, b, view="t"),
           ((3, 4), (4, 2), (2, 3))),
    OpCase("lt_through_a_view", lambda lib, x: _through_view(x, "lt_", 0.0), ((3, 4),),
           jvp=False, gradgrad=False),  # as lt_ above
    # module-level forms, where PyTorch has torch.<name>_
    OpCase("torch.cos_function_form", lambda lib, x: lib.cos_(x * 2), ((5,),)),
    OpCase("torch.addmv_function_form", lambda lib, x, m, v: lib.addmv_(x * 1, m, v),
           ((3,), (3, 2), (2,))),
]


def _through_view(x, name, *args, view="rows"):
    y = x * 1
    part = y[1:] if view == "rows" else y.t()
    getattr(part, name)(*args)
    return y


globals().update(standard_op_tests(CASES))


BROADCASTING = ["remainder_", "copysign_", "floor_divide_", "multiply_", "clamp_max_", "lt_"]


@needs_torch
@settings(max_examples=25, deadline=None)
@given(data=st.data(), name=st.sampled_from(BROADCASTING))
def test_the_operand_broadcasts_to_the_tensors_shape(data, name):
    shape = data.draw(array_shapes(min_dims=0, max_dims=3, max_side=3))
    other_shape = data.draw(broadcastable_shapes(shape, max_dims=3))
    rng = np.random.default_rng(len(shape))
    x, other = rng.uniform(-2, 2, shape), away_from_zero(rng, np.float64, [other_shape])[0]
    ours, theirs = gradlab.tensor(x), torch.tensor(x)
    grown = np.broadcast_shapes(shape, other_shape) != shape
    if grown:  # the operand would grow the tensor: PyTorch refuses too
        op = ALIAS_OF.get(name, name)
        with pytest.raises(RuntimeError, match=rf"{op}: the result has shape .* an in-place "
                                               r"op can't change a tensor's shape"):
            getattr(ours, name)(gradlab.tensor(other))
        with pytest.raises(RuntimeError):
            getattr(theirs, name)(torch.tensor(other))
        return
    getattr(ours, name)(gradlab.tensor(other))
    getattr(theirs, name)(torch.tensor(other))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_forward_mode_through_a_comparison_in_place_gives_a_zero_tangent():
    from gradlab.autograd import forward_ad as fwAD

    with fwAD.dual_level():
        y = fwAD.make_dual(gradlab.tensor([0.5, -1.0]), gradlab.tensor([1.0, 2.0])) * 3
        y.lt_(0.0)
        tangent = fwAD.unpack_dual(y).tangent
        y.cos_()  # and the next in-place op starts from that zero tangent
        after = fwAD.unpack_dual(y).tangent
    assert y.tolist() == [1.0, np.cos(1.0)] or np.allclose(y.numpy(), [1.0, np.cos(1.0)])
    assert tangent is None or not np.any(tangent.numpy())
    assert after is None or not np.any(after.numpy())


# --- the names -------------------------------------------------------------------------------

METHOD_NAMES = [m if isinstance(m, str) else m[0] for m in inplace_forms.TENSOR_METHODS]


@needs_torch
@pytest.mark.parametrize("name", METHOD_NAMES)
def test_methods_exist_in_pytorch_and_here(name):
    assert hasattr(torch.Tensor, name) and hasattr(gradlab.Tensor, name)


@needs_torch
@pytest.mark.parametrize("name", inplace_forms.__all__ + nn_inplace.__all__)
def test_module_level_names_are_pytorchs(name):
    assert hasattr(torch, name) and hasattr(gradlab, name)


@needs_torch
@pytest.mark.parametrize("name", nn_inplace.FUNCTIONAL)
def test_functional_names_are_pytorchs(name):
    assert hasattr(torch.nn.functional, name) and hasattr(gradlab.nn.functional, name)


@needs_torch
@pytest.mark.parametrize("alias, op", [("greater", "gt"), ("greater_equal", "ge"),
                                       ("less", "lt"), ("less_equal", "le"),
                                       ("not_equal", "ne"), ("fix", "trunc")])
def test_aliases_are_the_ops_and_agree_with_torch(alias, op):
    assert getattr(gradlab, alias) is getattr(gradlab, op)
    values = np.array([-1.5, 0.0, 0.5, 2.7])
    args = () if alias == "fix" else (0.5,)
    ours = getattr(gradlab.tensor(values), alias)(*args)
    theirs = getattr(torch.tensor(values), alias)(*args)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_module_level_forms_are_the_methods():
    assert gradlab.index_put_ is gradlab.Tensor.index_put_
    assert gradlab.detach_ is gradlab.Tensor.detach_
    assert gradlab.fix_ is gradlab.Tensor.fix_ and gradlab.cos_ is gradlab.Tensor.cos_


@needs_torch
def test_ger_is_outer():
    a, b = np.arange(3.0), np.array([1.0, -2.0])
    np.testing.assert_array_equal(gradlab.tensor(a).ger(gradlab.tensor(b)).numpy(),
                                  torch.ger(torch.tensor(a), torch.tensor(b)).numpy())


# --- integers and bools: same values and dtype as PyTorch -----------------------------------------

INTEGER_FORMS = [
    ("floor_", ()), ("ceil_", ()), ("round_", ()), ("trunc_", ()), ("sign_", ()), ("square_", ()),
    ("negative_", ()), ("floor_divide_", (2,)), ("remainder_", (3,)), ("gcd_", ("t",)),
    ("lcm_", ("t",)), ("bitwise_and_", ("t",)), ("bitwise_or_", ("t",)),
    ("bitwise_xor_", ("t",)), ("bitwise_not_", ()), ("bitwise_left_shift_", (1,)),
    ("bitwise_right_shift_", (1,)), ("divide_", ("t",), {"rounding_mode": "floor"}),
    ("clamp_min_", (0,)), ("clamp_max_", (1,)), ("eq_", (1.5,)), ("lt_", (0.5,)),
    ("logical_and_", ("t",)), ("logical_not_", ()), ("cumsum_", (0,)), ("tril_", ()),
]


@needs_torch
@pytest.mark.parametrize("form", INTEGER_FORMS, ids=[f[0] for f in INTEGER_FORMS])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_integer_forms_match_torch(form, dtype):
    name, args, kwargs = (*form, {}) if len(form) == 2 else form
    shape = (2, 3) if name == "tril_" else (6,)
    values = np.array([-3, -1, 0, 1, 2, 5]).reshape(shape)
    other = np.array([2, 3, 1, 4, 2, 3]).reshape(shape)
    results = []
    for lib in (gradlab, torch):
        x = lib.tensor(values, dtype=getattr(lib, dtype))
        full = [lib.tensor(other, dtype=getattr(lib, dtype)) if a == "t" else a for a in args]
        out = getattr(x, name)(*full, **kwargs)
        assert out is x
        results.append(x)
    assert results[0].dtype.name == str(results[1].dtype).replace("torch.", "")
    np.testing.assert_array_equal(results[0].numpy(), results[1].numpy())


@needs_torch
@pytest.mark.parametrize("op", ["eq_", "ne_", "lt_", "ge_", "logical_or_", "logical_xor_"])
def test_comparisons_in_place_write_one_and_zero_in_the_tensors_dtype(op):
    """A float tensor holds 1.0/0.0; a bool tensor compares with the operand as given
    (True == 1.5 is False), before any cast, as PyTorch."""
    for values, dtype, other in [([0.5, 1.5, -2.0], "float32", [1.5, 1.5, 0.0]),
                                 ([True, False, True], "bool", [1.5, 0.0, 1.0])]:
        ours = gradlab.tensor(values, dtype=getattr(gradlab, dtype))
        theirs = torch.tensor(values, dtype=getattr(torch, dtype))
        getattr(ours, op)(gradlab.tensor(other))
        getattr(theirs, op)(torch.tensor(other))
        assert ours.dtype.name == dtype
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# --- what they refuse ----------------------------------------------------------------------------

REFUSED = [  # what, gradlab's message; PyTorch refuses each too
    (lambda lib: lib.tensor([1, 2]).reciprocal_(), r"reciprocal_: the result type "
     r"gradlab.float32 can't be cast to the tensor's dtype gradlab.int64 in place.*Fix"),
    (lambda lib: lib.tensor([1, 2]).cos_(), r"cos_: the result type gradlab.float32 can't"),
    (lambda lib: lib.tensor([1, 2]).floor_divide_(2.5), r"floor_divide_: the result type "
     r"gradlab.float32 can't be cast"),
    (lambda lib: lib.tensor([1, 2]).clamp_min_(1.5), r"clamp_min_: the result type"),
    (lambda lib: lib.tensor([1, 2]).ldexp_(lib.tensor([1, 1])), r"ldexp_: the result type"),
    (lambda lib: lib.tensor([1, 2]).copysign_(-1), r"copysign_: the result type"),
    (lambda lib: lib.tensor([1, 2]).divide_(2), r"div_: true division of a gradlab.int64"),
    (lambda lib: lib.tensor([True, False]).square_(), r"square_: the result type gradlab."
     r"int64 can't be cast to the tensor's dtype gradlab.bool"),
    (lambda lib: lib.tensor([1.0, 2.0]).float_power_(2), r"float_power_: the result is "
     r"float64 .* can't be stored in place in this gradlab.float32 tensor. Fix: x = x.double"),
    (lambda lib: lib.ones(3).cumsum_(0, dtype=lib.float64), r"cumsum_: dtype=gradlab.float64 "
     r"would give a result of another dtype than the tensor's \(gradlab.float32\).*Fix"),
    (lambda lib: lib.tensor([1, 2]).round_(decimals=1), r"round_?: decimals=1 needs a floating "
     r"point tensor, got gradlab.int64.*Fix"),
    (lambda lib: lib.tensor([1, 2]).remainder_(0), r"remainder: integer division by zero"),
    (lambda lib: lib.tensor([1.0, 2.0]).gcd_(lib.tensor([1.0, 2.0])), r"gcd"),
]


@pytest.mark.parametrize("make, match", REFUSED, ids=[m[:14] for _, m in REFUSED])
def test_refused_in_place_calls_teach(make, match):
    with pytest.raises((RuntimeError, TypeError), match=match):
        make(gradlab)
    if torch is not None:
        with pytest.raises((RuntimeError, NotImplementedError)):
            make(torch)


def test_a_refused_cast_leaves_the_tensor_unchanged():
    x = gradlab.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.reciprocal_()
    assert x.tolist() == [1, 2] and x._version == 0


def test_comparison_form_checks_its_operand_count():
    with pytest.raises(TypeError, match=r"eq_: expected one operand, got 0"):
        gradlab.ones(2).eq_()
    with pytest.raises(TypeError, match=r"logical_not_: expected no operand, got 1"):
        gradlab.ones(2).logical_not_(1)


CALLS = {  # one call per form, for the leaf and version tests
    "cos_": (), "floor_": (), "round_": (), "reciprocal_": (), "square_": (), "sign_": (),
    "remainder_": (0.7,), "divide_": (2.0,), "multiply_": (3.0,), "subtract_": (1.0,),
    "copysign_": (-1.0,), "float_power_": (2.0,), "clamp_min_": (0.0,), "cumsum_": (0,),
    "cumprod_": (0,), "tril_": (), "renorm_": (2, 0, 1.0), "polygamma_": (1,), "eq_": (1.0,),
    "logical_and_": ("m",), "addmm_": ("m", "m"), "rsqrt_": (), "log1p_": (),
}


def _args(lib, args):
    return [lib.ones(2, 2, dtype=lib.float64) if a == "m" else a for a in args]


ALIAS_OF = {"divide_": "div_", "multiply_": "mul_", "subtract_": "sub_"}  # named as the op


@pytest.mark.parametrize("name", CALLS)
def test_a_leaf_that_requires_grad_is_refused(name):
    w = gradlab.ones(2, 2, dtype=gradlab.float64, requires_grad=True)
    op = ALIAS_OF.get(name, name)
    with pytest.raises(RuntimeError, match=rf"{op}: a leaf tensor that requires grad "
                                           r"\(shape \(2, 2\)\) can't be changed in place"):
        getattr(w, name)(*_args(gradlab, CALLS[name]))
    assert w._version == 0
    # (PyTorch lets logical_and_ change such a leaf, keeping no history: gradlab refuses)
    if torch is not None and name != "logical_and_":
        t = torch.ones(2, 2, dtype=torch.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable"):
            getattr(t, name)(*_args(torch, CALLS[name]))


@pytest.mark.parametrize("name", CALLS)
def test_changing_a_saved_tensor_is_caught_in_backward(name):
    x = gradlab.full((2, 2), 0.5, dtype=gradlab.float64, requires_grad=True)
    y = x * 1
    z = y * y  # saves y
    getattr(y, name)(*_args(gradlab, CALLS[name]))
    assert y._version == 1
    with pytest.raises(RuntimeError, match=r"modified by an in-place operation.*saved at "
                                           r"version 0 and is now at version 1"):
        z.sum().backward()


def test_a_form_that_needs_the_old_values_keeps_a_copy():
    """rsqrt_'s backward needs its result, cos_'s the old values: second derivatives too."""
    values = np.array([0.3, 1.1, 2.0])
    grads = []
    for lib in (gradlab, torch) if torch is not None else (gradlab,):
        x = lib.tensor(values, requires_grad=True)
        y = x * 2
        y.cos_()
        (d1,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (d2,) = lib.autograd.grad(d1.sum(), x)
        grads.append((d1.detach().numpy(), d2.numpy()))
    np.testing.assert_allclose(grads[0][0], -2 * np.sin(2 * values), rtol=1e-12)
    np.testing.assert_allclose(grads[0][1], -4 * np.cos(2 * values), rtol=1e-12)
    for ours, theirs in zip(grads[0], grads[-1]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_the_graph_shows_the_in_place_node():
    y = gradlab.tensor([0.5], requires_grad=True) * 1
    y.cos_()
    assert y.grad_fn.op == "cos_" and y.grad_fn.name() == "CosBackward0"
    y.eq_(0.5)
    assert y.grad_fn.name() == "EqBackward0" and y._version == 2


# --- operators: x //= y and friends change x itself --------------------------------------------

@needs_torch
@pytest.mark.parametrize("op", ["//=", "%=", "&=", "|=", "^=", "<<=", ">>="])
def test_augmented_operators_change_the_tensor_in_place(op):
    results = []
    for lib in (gradlab, torch):
        base = lib.tensor([[7, -5, 12], [3, 9, -8]])
        x = base[1]  # a view: the base must see the change
        names = {"lib": lib, "x": x}
        exec(f"x {op} lib.tensor([2, 3, 1])", names)
        assert names["x"] is x
        results.append(base.numpy().copy())
    np.testing.assert_array_equal(*results)


# --- activation and dropout layers: inplace=True really writes into the input --------------------

MODULES = [("ReLU", {}), ("ReLU6", {}), ("LeakyReLU", {"negative_slope": 0.2}),
           ("ELU", {"alpha": 0.7}), ("SELU", {}), ("CELU", {"alpha": 1.3}), ("SiLU", {}),
           ("Mish", {}), ("Hardtanh", {"min_val": -0.5, "max_val": 0.8}), ("Hardswish", {}),
           ("Hardsigmoid", {}), ("RReLU", {}), ("Threshold", {"threshold": 0.1, "value": -2.0})]


@needs_torch
@pytest.mark.parametrize("name, kwargs", MODULES, ids=[m[0] for m in MODULES])
def test_inplace_activation_layers_write_into_their_input(name, kwargs):
    values = np.random.default_rng(0).uniform(-4, 4, (3, 5))
    outs = []
    for lib in (gradlab, torch):
        layer = getattr(lib.nn, name)(**kwargs, inplace=True).eval()
        x = lib.tensor(values, requires_grad=True)
        y = x * 1
        out = layer(y)
        assert out is y and y._version >= 1
        out.sum().backward()
        outs.append((y.detach().numpy().copy(), x.grad.numpy().copy()))
    assert repr(getattr(gradlab.nn, name)(**kwargs, inplace=True)) == \
        repr(getattr(torch.nn, name)(**kwargs, inplace=True))
    for ours, theirs in zip(*outs):  # (PyTorch's float64 celu and hardsigmoid: float32 steps)
        np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-12)


FUNCTIONAL = [("elu_", (0.5,)), ("celu_", (2.0,)), ("selu_", ()), ("leaky_relu_", (0.3,)),
              ("hardtanh_", (-0.5, 1.5)), ("threshold_", (0.2, 9.0))]


@needs_torch
@pytest.mark.parametrize("name, args", FUNCTIONAL, ids=[f[0] for f in FUNCTIONAL])
def test_functional_in_place_activations_match_torch(name, args):
    values = np.linspace(-3, 3, 13)
    outs = []
    for lib in (gradlab, torch):
        x = lib.tensor(values, requires_grad=True)
        y = x * 1
        assert getattr(lib.nn.functional, name)(y, *args) is y
        (y * y).sum().backward()
        outs.append((y.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*outs):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["dropout_", "alpha_dropout_", "feature_alpha_dropout_"])
def test_module_level_dropout_forms_write_into_their_input(name):
    x = gradlab.ones(4, 50)
    assert getattr(gradlab, name)(x, 0.5, False) is x and x._version == 0  # eval: identity
    assert getattr(gradlab, name)(x, 0.5, True) is x and x._version == 1
    assert len(np.unique(x.numpy())) == 2  # dropped and kept values (kept ones rescaled)


@pytest.mark.parametrize("layer", [lambda: gradlab.nn.Dropout(0.5, inplace=True),
                                   lambda: gradlab.nn.Dropout2d(0.5, inplace=True)])
def test_inplace_dropout_layers_write_into_their_input(layer):
    x = gradlab.ones(2, 8, 3, 3, requires_grad=True)
    y = x * 1
    assert layer()(y) is y and y._version == 1
    assert set(np.unique(y.detach().numpy())) == {0.0, 2.0}
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())  # the mask · 2
