"""gradlab.func.vmap (a loop: one call per sample, outputs stacked) and stack_module_state:
in_dims/out_dims as pytrees, None and negative dims, nesting, composition with grad/jacrev/
jacfwd/hessian, randomness, errors; PyTorch's two tutorials (per-sample gradients, model
ensembling) against a per-sample loop and against torch.func on the same weights."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab import nn
from gradlab.func import functional_call, grad, jacfwd, jacrev, stack_module_state, vmap
from tests.func._helpers import assert_tree_close, rand
from tests.oracle import needs_torch, torch


def as_lib(lib, tree):
    """A pytree of NumPy arrays as float64 tensors of ``lib`` (gradlab or torch)."""
    if isinstance(tree, np.ndarray):
        return lib.tensor(tree, dtype=lib.float64)
    if isinstance(tree, dict):
        return {k: as_lib(lib, v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(as_lib(lib, v) for v in tree)
    return tree


def outer_sin(a):
    """sin(a) * sum(a): a Jacobian with both a diagonal and a dense part."""
    return a.sin() * a.sum()


def jac_outer_sin(a):
    return np.diag(np.cos(a)) * a.sum() + np.sin(a)[:, None]


# (id, fn(lib, *args), args as NumPy arrays / pytrees, the batched result in NumPy)
CASES = [
    ("dot", lambda lib, x, y: lib.vmap(lib.dot)(x, y),
     (rand(5, 3), rand(5, 3, seed=1)), lambda x, y: (x * y).sum(1)),
    ("none_dim_matrix", lambda lib, a, v: lib.vmap(lib.mv, in_dims=(None, 0))(a, v),
     (rand(2, 3), rand(5, 3, seed=1)), lambda a, v: v @ a.T),
    ("negative_in_dim", lambda lib, x: lib.vmap(lambda s: s.sum(0), in_dims=-1)(x),
     (rand(3, 4, 5),), lambda x: x.sum(0).T),
    ("out_dim_1", lambda lib, x: lib.vmap(lambda s: s * 2, out_dims=1)(x),
     (rand(5, 3),), lambda x: (2 * x).T),
    ("negative_out_dim", lambda lib, x: lib.vmap(lambda s: s.exp(), in_dims=1, out_dims=-1)(x),
     (rand(3, 5, 2),), lambda x: np.moveaxis(np.exp(x), 1, -1)),
    ("0d_samples", lambda lib, x: lib.vmap(lambda s: s * s)(x), (rand(5),), lambda x: x ** 2),
    ("dict_input_with_dict_in_dims",
     lambda lib, d: lib.vmap(lambda p: p["a"] * p["b"], in_dims=({"a": 0, "b": None},))(d),
     ({"a": rand(5, 3), "b": rand(3, seed=1)},), lambda d: d["a"] * d["b"]),
    ("list_input_one_dim_for_all", lambda lib, xs: lib.vmap(lambda ys: ys[0] - ys[1])(xs),
     ([rand(5, 3), rand(5, 3, seed=1)],), lambda xs: xs[0] - xs[1]),
    ("list_in_dims_inside_tuple",
     lambda lib, xs, w: lib.vmap(lambda ys, v: ys[0] @ v + ys[1], in_dims=([0, 1], None))(xs, w),
     ([rand(5, 3), rand(2, 5, seed=1)], rand(3, 2, seed=2)),
     lambda xs, w: xs[0] @ w + xs[1].T),
    ("tuple_output", lambda lib, x, y: lib.vmap(lambda a, b: (a + b, a * b), in_dims=(0, 1))(x, y),
     (rand(5, 3), rand(3, 5, seed=1)), lambda x, y: (x + y.T, x * y.T)),
    ("dict_output_dict_out_dims",
     lambda lib, x: lib.vmap(lambda a: {"s": a.sum(), "d": a * 2}, out_dims={"s": 0, "d": 1})(x),
     (rand(5, 3),), lambda x: {"s": x.sum(1), "d": (2 * x).T}),
    ("output_not_depending_on_the_sample", lambda lib, x, w: lib.vmap(lambda a: w.sum())(x),
     (rand(4, 2), rand(3, seed=1)), lambda x, w: np.full(4, w.sum())),
    ("keyword_and_python_number_args",
     lambda lib, x: lib.vmap(lambda a, p, scale=1.0: a ** p * scale, in_dims=(0, None))(
         x, 2, scale=3.0),
     (rand(4, 3),), lambda x: 3 * x ** 2),
    ("nested_vmap_outer_product",
     lambda lib, x, y: lib.vmap(lib.vmap(lib.mul, in_dims=(0, None)), in_dims=(None, 0))(x, y),
     (rand(4), rand(5, seed=1)), lambda x, y: np.outer(y, x)),
    ("per_sample_grad",
     lambda lib, w, x: lib.vmap(lib.func.grad(lambda v, a: (v * a).sin().sum()),
                                in_dims=(None, 0))(w, x),
     (rand(3), rand(5, 3, seed=1)), lambda w, x: np.cos(w * x) * x),
    ("batched_jacrev", lambda lib, x: lib.vmap(lib.func.jacrev(outer_sin))(x),
     (rand(4, 3),), lambda x: np.stack([jac_outer_sin(a) for a in x])),
    ("batched_jacfwd", lambda lib, x: lib.vmap(lib.func.jacfwd(outer_sin))(x),
     (rand(4, 3),), lambda x: np.stack([jac_outer_sin(a) for a in x])),
    ("batched_hessian", lambda lib, x: lib.vmap(lib.func.hessian(lambda a: (a ** 3).sum()))(x),
     (rand(4, 3),), lambda x: np.stack([np.diag(6 * a) for a in x])),
    ("jacrev_of_vmap", lambda lib, x: lib.func.jacrev(lib.vmap(outer_sin))(x),
     (rand(2, 3),),
     lambda x: np.einsum("ik,ijl->ijkl", np.eye(2), np.stack([jac_outer_sin(a) for a in x]))),
    ("grad_through_vmap",
     lambda lib, x: lib.func.grad(lambda b: lib.vmap(lambda a: a.sin().sum())(b).sum())(x),
     (rand(4, 3),), lambda x: np.cos(x)),
    ("chunk_size_changes_nothing", lambda lib, x: lib.vmap(lambda a: a.tanh(), chunk_size=2)(x),
     (rand(5, 3),), np.tanh),
    ("empty_batch", lambda lib, x: lib.vmap(lambda a: a.sum(0) * 2, out_dims=1)(x),
     (np.zeros((0, 3, 2)),), lambda x: np.zeros((2, 0))),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vmap_matches_the_batched_numpy_result(case):
    _, fn, args, expected = case
    assert_tree_close(fn(gradlab, *as_lib(gradlab, args)), expected(*args))


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vmap_matches_torch(case):
    _, fn, args, _ = case
    assert_tree_close(fn(gradlab, *as_lib(gradlab, args)), fn(torch, *as_lib(torch, args)))


def test_a_vmapped_function_passes_gradcheck_in_every_input():
    w, x = as_lib(gradlab, (rand(3, 2), rand(4, 3, seed=1)))
    w.requires_grad_()
    x.requires_grad_()
    batched = vmap(lambda m, a: (a @ m).tanh(), in_dims=(None, 0))
    assert gradlab.autograd.gradcheck(batched, (w, x))
    assert gradlab.autograd.gradgradcheck(batched, (w, x))


def test_vmap_keeps_the_functions_name_and_calls_it_once_per_sample():
    calls = []

    def square(a):
        calls.append(tuple(a.shape))
        return a * a

    batched = vmap(square, in_dims=1)
    assert batched.__name__ == "square"
    batched(gradlab.ones(2, 5, 3))
    assert calls == [(2, 3)] * 5


def test_a_module_is_a_function_to_vmap():
    model = nn.Linear(3, 2).double()
    x = as_lib(gradlab, rand(4, 3))
    np.testing.assert_allclose(vmap(model)(x).detach().numpy(), model(x).detach().numpy())


def test_out_dims_none_returns_an_output_that_is_the_same_for_every_sample():
    w = as_lib(gradlab, rand(3))
    out, same, label = vmap(lambda a: (a * 2, w, "tag"), out_dims=(0, None, None))(
        as_lib(gradlab, rand(4, 3)))
    assert out.shape == (4, 3) and same is w and label == "tag"


@pytest.mark.parametrize("lib_name", ["gradlab", pytest.param("torch", marks=needs_torch)])
def test_in_place_on_a_batched_input_writes_into_the_batch_as_in_pytorch(lib_name):
    lib = gradlab if lib_name == "gradlab" else torch
    x = lib.ones(3, 2, dtype=lib.float64)
    out = lib.vmap(lambda a: a.mul_(2))(x)
    np.testing.assert_array_equal(x.numpy(), np.full((3, 2), 2.0))
    np.testing.assert_array_equal(out.numpy(), np.full((3, 2), 2.0))


def test_what_the_loop_allows_that_pytorch_rejects():
    """Documented differences: an in-place write of samples into an unbatched tensor just
    accumulates (PyTorch raises), and .item() on a sample works (PyTorch raises)."""
    x = as_lib(gradlab, rand(3, 2))
    buffer = gradlab.zeros(2, dtype=gradlab.float64)
    vmap(lambda a: buffer.add_(a))(x)
    np.testing.assert_allclose(buffer.numpy(), x.numpy().sum(0))
    scaled = vmap(lambda a: a * a.sum().item())(x)
    np.testing.assert_allclose(scaled.numpy(), x.numpy() * x.numpy().sum(1, keepdims=True))


# --- randomness ---------------------------------------------------------------------------------

def rng_position():
    return gradlab.get_rng_state().tolist()


@pytest.mark.parametrize("draw", [
    lambda a: a + gradlab.rand(3),
    lambda a: nn.functional.dropout(a, 0.5, training=True),
    lambda a: vmap(lambda b: b + gradlab.randn(()), randomness="different")(a),
    lambda a: a + gradlab.rand(3, generator=gradlab.Generator().manual_seed(1)),
], ids=["rand", "dropout_training", "inner_vmap_draws", "own_generator"])
def test_randomness_error_raises_and_leaves_the_generator_where_it_was(draw):
    gradlab.manual_seed(0)
    before = rng_position()
    with pytest.raises(RuntimeError, match="called random operation while in randomness error "
                                           "mode"):
        vmap(draw)(gradlab.zeros(4, 3))
    assert rng_position() == before


def test_randomness_error_lets_functions_that_draw_nothing_run():
    x = gradlab.ones(4, 3)
    out = vmap(lambda a: nn.functional.dropout(a, 0.5, training=False))(x)
    np.testing.assert_array_equal(out.numpy(), x.numpy())
    # reading or restoring the generator's position is not a draw
    out = vmap(lambda a: a + gradlab.get_rng_state().float().sum() * 0)(x)
    np.testing.assert_array_equal(out.numpy(), x.numpy())


def test_randomness_different_draws_what_a_loop_draws():
    gradlab.manual_seed(0)
    out = vmap(lambda a: a + gradlab.rand(3), randomness="different")(gradlab.zeros(4, 3))
    gradlab.manual_seed(0)
    loop = np.stack([gradlab.rand(3).numpy() for _ in range(4)])
    np.testing.assert_array_equal(out.numpy(), loop)
    assert len({tuple(row) for row in out.numpy().tolist()}) == 4


def test_randomness_same_gives_every_sample_the_first_samples_numbers():
    gradlab.manual_seed(0)
    out = vmap(lambda a: a + gradlab.rand(3), randomness="same")(gradlab.zeros(4, 3))
    after = gradlab.rand(3).numpy()
    gradlab.manual_seed(0)
    first, second = gradlab.rand(3).numpy(), gradlab.rand(3).numpy()
    np.testing.assert_array_equal(out.numpy(), np.stack([first] * 4))
    np.testing.assert_array_equal(after, second)  # the stream moved on by one sample's draw


@pytest.mark.parametrize("lib_name", ["gradlab", pytest.param("torch", marks=needs_torch)])
def test_randomness_modes_have_torchs_shapes_and_sameness(lib_name):
    lib = gradlab if lib_name == "gradlab" else torch
    same = lib.vmap(lambda a: a + lib.rand(3), randomness="same")(lib.zeros(4, 3))
    different = lib.vmap(lambda a: a + lib.rand(3), randomness="different")(lib.zeros(4, 3))
    assert tuple(same.shape) == tuple(different.shape) == (4, 3)
    assert bool((same == same[0]).all()) and not bool((different == different[0]).all())


# --- errors: the same type and message as PyTorch's ---------------------------------------------

X, Y = rand(3, 4), rand(2, 4, seed=1)
ERRORS = [
    ("sizes", lambda lib, x, y: lib.vmap(lib.add)(x, y), ValueError,
     r"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
     r"\[3, 2\]"),
    ("in_dims_too_short", lambda lib, x, y: lib.vmap(lib.add, in_dims=(0,))(x, x), ValueError,
     "in_dims is not compatible with the structure of `inputs`"),
    ("in_dims_dict_keys", lambda lib, x, y: lib.vmap(lambda d: d["k"], in_dims=({"j": 0},))(
        {"k": x}), ValueError, "in_dims is not compatible with the structure of `inputs`"),
    ("in_dims_list", lambda lib, x, y: lib.vmap(lib.add, in_dims=[0, 0])(x, x), ValueError,
     "expected `in_dims` to be int or a \\(potentially nested\\) tuple"),
    ("in_dim_float", lambda lib, x, y: lib.vmap(lib.add, in_dims=(0.5, 0))(x, x), ValueError,
     "in_dim must be either an integer dimension or None"),
    ("in_dim_out_of_range", lambda lib, x, y: lib.vmap(lib.add, in_dims=(-3, 0))(x, x),
     ValueError, "expected in_dim to satisfy -2 <= in_dim < 2"),
    ("nothing_batched", lambda lib, x, y: lib.vmap(lib.add, in_dims=(None, None))(x, x),
     ValueError, "vmap: Expected at least one Tensor to vmap over"),
    ("non_tensor_batched", lambda lib, x, y: lib.vmap(lambda a: a)(1.0), ValueError,
     "We cannot vmap over non-Tensor arguments, please use None"),
    ("no_inputs", lambda lib, x, y: lib.vmap(lambda: x)(), ValueError, "got no inputs"),
    ("non_tensor_output", lambda lib, x, y: lib.vmap(lambda a: (a, "s"))(x), ValueError,
     "must only return Tensors, got type <class 'str'>. Did you mean to set out_dims= to None"),
    ("out_dim_out_of_range", lambda lib, x, y: lib.vmap(lambda a: a, out_dims=2)(x), IndexError,
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    ("out_dims_structure", lambda lib, x, y: lib.vmap(lambda a: (a, a), out_dims=(0,))(x),
     ValueError, "out_dims is not compatible with the structure of `outputs`"),
    ("out_dims_type", lambda lib, x, y: lib.vmap(lambda a: a, out_dims="x")(x), ValueError,
     "`out_dims` must be an int, None or a python collection of ints"),
    ("out_dim_none_but_batched", lambda lib, x, y: lib.vmap(lambda a: (a, a),
                                                            out_dims=(0, None))(x),
     ValueError, "can not return a BatchedTensor when out_dim is None"),
    ("randomness_value", lambda lib, x, y: lib.vmap(lambda a: a, randomness="bad"), RuntimeError,
     "Only allowed values for randomness are 'error', 'different', or 'same'. Got bad"),
    ("chunk_size", lambda lib, x, y: lib.vmap(lambda a: a, chunk_size=0), ValueError,
     r"vmap: chunk_size should be None or greater than 0. \(got 0\)"),
]
ERROR_IDS = [case[0] for case in ERRORS]


@pytest.mark.parametrize("case", ERRORS, ids=ERROR_IDS)
def test_vmap_errors(case):
    _, fn, error, match = case
    with pytest.raises(error, match=match):
        fn(gradlab, *as_lib(gradlab, (X, Y)))


@needs_torch
@pytest.mark.parametrize("case", ERRORS, ids=ERROR_IDS)
def test_torch_raises_the_same_errors(case):
    _, fn, error, match = case
    with pytest.raises(error, match=match):
        fn(torch, *as_lib(torch, (X, Y)))


def test_errors_only_a_loop_can_meet():
    x = as_lib(gradlab, rand(3, 4))
    with pytest.raises(TypeError, match="vmap: expected a function to transform"):
        vmap(x)
    with pytest.raises(RuntimeError, match="shape \\(1,\\) for sample 0 but a .* shape \\(2,\\) "
                                           "for sample 1"):
        vmap(lambda a: a[:int(a.sum().item())])(gradlab.tensor([[1.0, 0.0], [1.0, 1.0]]))
    with pytest.raises(ValueError, match="returned \\* for sample 0 but \\(\\*, \\*\\) for "
                                         "sample 1"):
        vmap(lambda a: a if a.sum().item() < 0 else (a, a))(gradlab.tensor([[-1.0], [1.0]]))


# --- PyTorch's tutorials -----------------------------------------------------------------------

def small_cnn(lib):
    lib_nn = lib.nn
    return lib_nn.Sequential(lib_nn.Conv2d(1, 4, 3), lib_nn.ReLU(), lib_nn.MaxPool2d(2),
                             lib_nn.Flatten(), lib_nn.Linear(36, 5)).double()


def same_weights(ours):
    """A torch copy of a gradlab model (same class names in torch.nn)."""
    theirs = small_cnn(torch) if isinstance(ours[0], nn.Conv2d) else ensemble_member(torch)
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy())
                            for k, v in ours.state_dict().items()})
    return theirs.eval() if not ours.training else theirs


def per_sample_grads(lib, model, data, targets):
    """The tutorial's code, written once for both libraries."""
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        predictions = lib.func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(predictions, target.unsqueeze(0))

    return lib.func.vmap(lib.func.grad(compute_loss), in_dims=(None, None, 0, 0))(
        params, buffers, data, targets)


def tutorial_batch():
    data = np.random.default_rng(3).normal(size=(6, 1, 8, 8))
    targets = np.array([0, 3, 1, 4, 2, 3])
    return data, targets


def test_per_sample_gradients_equal_a_loop_of_backward_passes():
    gradlab.manual_seed(0)
    model = small_cnn(gradlab)
    data, targets = tutorial_batch()
    x, t = as_lib(gradlab, data), gradlab.tensor(targets)
    grads = per_sample_grads(gradlab, model, x, t)
    for i in range(len(targets)):
        model.zero_grad()
        nn.functional.cross_entropy(model(x[i:i + 1]), t[i:i + 1]).backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(grads[name][i].numpy(), p.grad.numpy(), rtol=1e-10,
                                       atol=1e-12)
    assert all(p.grad is not None for p in model.parameters())  # the loop's, not vmap's


@needs_torch
def test_per_sample_gradients_match_torch_func_on_the_same_weights():
    gradlab.manual_seed(0)
    model = small_cnn(gradlab)
    data, targets = tutorial_batch()
    ours = per_sample_grads(gradlab, model, as_lib(gradlab, data), gradlab.tensor(targets))
    theirs = per_sample_grads(torch, same_weights(model), as_lib(torch, data),
                              torch.tensor(targets))
    assert_tree_close(ours, theirs)
    assert ours["0.weight"].shape == (6, 4, 1, 3, 3) and not model[0].weight.grad


def ensemble_member(lib):
    lib_nn = lib.nn
    return lib_nn.Sequential(lib_nn.Linear(6, 8), lib_nn.BatchNorm1d(8), lib_nn.ReLU(),
                             lib_nn.Linear(8, 3)).double()


def make_ensemble(count=4):
    gradlab.manual_seed(1)
    models = [ensemble_member(gradlab) for _ in range(count)]
    for i, m in enumerate(models):  # distinct running statistics, so buffers matter
        m[1].running_mean.copy_(gradlab.full((8,), 0.1 * i, dtype=gradlab.float64))
        m[1].running_var.copy_(gradlab.full((8,), 1.0 + i, dtype=gradlab.float64))
        m.eval()
    return models


def run_ensemble(lib, models, minibatches, in_dims):
    """The tutorial's code: one base model, the ensemble's weights stacked and vmapped."""
    params, buffers = lib.func.stack_module_state(models)

    def fmodel(params, buffers, x):
        return lib.func.functional_call(models[0], (params, buffers), (x,))

    return lib.vmap(fmodel, in_dims=in_dims)(params, buffers, minibatches), params


@pytest.mark.parametrize("shared_batch", [True, False], ids=["same_minibatch", "own_minibatch"])
def test_an_ensemble_through_vmap_equals_each_model_on_its_own(shared_batch):
    models = make_ensemble()
    data = rand(5, 6) if shared_batch else rand(4, 5, 6)
    x = as_lib(gradlab, data)
    out, _ = run_ensemble(gradlab, models, x, (0, 0, None if shared_batch else 0))
    assert out.shape == (4, 5, 3)
    for i, m in enumerate(models):
        np.testing.assert_allclose(out[i].detach().numpy(),
                                   m(x if shared_batch else x[i]).detach().numpy(), rtol=1e-12)


@needs_torch
@pytest.mark.parametrize("shared_batch", [True, False], ids=["same_minibatch", "own_minibatch"])
def test_an_ensemble_matches_torch_and_trains_through_the_stacked_parameters(shared_batch):
    models = make_ensemble()
    data = rand(5, 6) if shared_batch else rand(4, 5, 6)
    in_dims = (0, 0, None if shared_batch else 0)
    ours, our_params = run_ensemble(gradlab, models, as_lib(gradlab, data), in_dims)
    theirs, their_params = run_ensemble(torch, [same_weights(m) for m in models],
                                        as_lib(torch, data), in_dims)
    assert_tree_close(ours, theirs)
    ours.pow(2).sum().backward()
    theirs.pow(2).sum().backward()
    assert_tree_close({k: p.grad for k, p in our_params.items()},
                      {k: p.grad for k, p in their_params.items()})


def test_stack_module_state_makes_new_leaves_stacked_by_name():
    models = make_ensemble(3)
    params, buffers = stack_module_state(models)
    assert list(params) == [name for name, _ in models[0].named_parameters()]
    assert list(buffers) == ["1.running_mean", "1.running_var", "1.num_batches_tracked"]
    for name, stacked in params.items():
        assert stacked.is_leaf and stacked.requires_grad and stacked.grad_fn is None
        for i, m in enumerate(models):
            np.testing.assert_array_equal(stacked[i].detach().numpy(),
                                          dict(m.named_parameters())[name].detach().numpy())
    assert not buffers["1.running_var"].requires_grad
    np.testing.assert_array_equal(buffers["1.running_var"][:, 0].numpy(), [1.0, 2.0, 3.0])
    stacked_weight = params["0.weight"]
    stacked_weight.sum().backward()
    assert all(m[0].weight.grad is None for m in models)


def test_stack_module_state_errors():
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0"):
        stack_module_state([])
    with pytest.raises(RuntimeError, match="Expected all models to have the same training/eval"):
        stack_module_state([nn.Linear(2, 2), nn.Linear(2, 2).eval()])
    with pytest.raises(RuntimeError, match="Expected all models to be of the same class"):
        stack_module_state([nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 2))])
    frozen = nn.Linear(2, 2)
    frozen.bias.requires_grad_(False)
    with pytest.raises(RuntimeError, match="Expected bias from each model to have the same "
                                           ".requires_grad"):
        stack_module_state([nn.Linear(2, 2), frozen])


def test_functional_call_grad_vmap_compose_without_touching_the_model():
    model = nn.Linear(3, 1).double()
    before = {k: v.detach().numpy().copy() for k, v in model.named_parameters()}
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = as_lib(gradlab, (rand(4, 3), rand(4, 1, seed=1)))

    def loss(p, a, b):
        return (functional_call(model, p, (a,)) - b).pow(2).sum()

    grads = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    residual = x.numpy() @ before["weight"].T + before["bias"] - y.numpy()
    np.testing.assert_allclose(grads["weight"].numpy(), 2 * residual[:, :, None] *
                               x.numpy()[:, None, :], rtol=1e-12)
    np.testing.assert_allclose(grads["bias"].numpy(), 2 * residual, rtol=1e-12)
    for k, v in model.named_parameters():
        np.testing.assert_array_equal(v.detach().numpy(), before[k])
        assert v.grad is None
    jac = vmap(jacrev(lambda a: functional_call(model, params, (a,))))(x)
    np.testing.assert_allclose(jac.numpy(), np.broadcast_to(before["weight"], (4, 1, 3)))
    fwd = vmap(jacfwd(lambda a: functional_call(model, params, (a,))))(x)
    np.testing.assert_allclose(fwd.numpy(), jac.numpy())


def test_the_randomness_check_skips_a_generator_that_never_drew():
    """A CUDA generator registered by an earlier call (a refused cuda draw, say) has no
    position to read, and reading it must not reach for CuPy: vmap runs on a CPU-only machine."""
    gradlab.random.get_generator("cuda")
    assert gradlab.vmap(lambda x: x * 2)(gradlab.ones(3, 2)).shape == (3, 2)
