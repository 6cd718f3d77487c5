"""Seeding: ``manual_seed`` repeats a run's numbers; a ``Generator`` is a stream of its own."""

from __future__ import annotations

import numpy as np
import pytest

import gradlab

DRAWS = [
    lambda **kw: gradlab.rand(5, **kw),
    lambda **kw: gradlab.randn(2, 3, **kw),
    lambda **kw: gradlab.randint(0, 100, (6,), **kw),
    lambda **kw: gradlab.randperm(8, **kw),
    lambda **kw: gradlab.normal(0.0, 1.0, (4,), **kw),
    lambda **kw: gradlab.empty(4).normal_(2.0, 0.5, **kw),
    lambda **kw: gradlab.empty(2, 2).uniform_(-1.0, 1.0, **kw),
    lambda **kw: gradlab.empty(5, dtype=gradlab.float64).exponential_(**kw),
    lambda **kw: gradlab.empty(20).bernoulli_(0.5, **kw),
]
DRAW_IDS = ["rand", "randn", "randint", "randperm", "normal", "normal_", "uniform_",
            "exponential_", "bernoulli_"]


@pytest.mark.parametrize("draw", DRAWS, ids=DRAW_IDS)
def test_same_seed_same_numbers(draw):
    gradlab.manual_seed(123)
    first = [draw().tolist(), draw().tolist()]
    gradlab.manual_seed(123)
    again = [draw().tolist(), draw().tolist()]
    assert first == again
    assert first[0] != first[1]  # the stream moves on between draws
    gradlab.manual_seed(124)
    assert draw().tolist() != first[0]


@pytest.mark.parametrize("draw", DRAWS, ids=DRAW_IDS)
def test_generator_is_independent_of_the_global_stream(draw):
    gradlab.manual_seed(7)
    expected_global = draw().tolist()
    expected_private = draw(generator=gradlab.Generator().manual_seed(1)).tolist()

    gradlab.manual_seed(7)
    gen = gradlab.Generator().manual_seed(1)
    private = draw(generator=gen).tolist()  # drawing from gen ...
    assert draw().tolist() == expected_global  # ... leaves the global stream where it was
    assert private == expected_private

    gradlab.manual_seed(99)  # reseeding the global stream doesn't touch gen
    gen2 = gradlab.Generator().manual_seed(1)
    draw(generator=gen2)
    assert draw(generator=gen).tolist() == draw(generator=gen2).tolist()


def test_generator_api():
    gen = gradlab.Generator("cpu")
    assert gen.device == "cpu"
    assert gen.manual_seed(5) is gen and gen.initial_seed() == 5
    state = gen.get_state()
    a = gradlab.rand(3, generator=gen).tolist()
    gen.set_state(state)
    assert gradlab.rand(3, generator=gen).tolist() == a
    assert "seed=5" in repr(gen)
    s = gen.seed()
    assert gen.initial_seed() == s and s >= 0


def test_like_functions_take_a_generator():
    ref = gradlab.zeros(3)
    a = gradlab.rand_like(ref, generator=gradlab.Generator().manual_seed(3)).tolist()
    b = gradlab.rand_like(ref, generator=gradlab.Generator().manual_seed(3)).tolist()
    assert a == b


def test_initial_seed_and_negative_seeds():
    gradlab.manual_seed(42)
    assert gradlab.initial_seed() == 42
    gradlab.manual_seed(-1)  # PyTorch wraps negative seeds to 64 bits
    assert gradlab.initial_seed() == 2 ** 64 - 1
    x = gradlab.rand(2).tolist()
    gradlab.manual_seed(-1)
    assert gradlab.rand(2).tolist() == x


def test_seed_from_entropy():
    s = gradlab.seed()
    assert gradlab.initial_seed() == s
    a = gradlab.rand(3).tolist()
    gradlab.manual_seed(s)
    assert gradlab.rand(3).tolist() == a


def test_manual_seed_returns_the_cpu_generator():
    assert isinstance(gradlab.manual_seed(0), gradlab.Generator)
    assert gradlab.manual_seed(0).device == "cpu"


def test_generator_of_another_device_is_refused():
    gen = gradlab.Generator("cuda")
    with pytest.raises(RuntimeError, match="generator is for cuda:0 but the tensor goes to cpu"):
        gradlab.rand(2, generator=gen, device="cpu")


# --- in-place random fills: x.normal_(), x.uniform_(), x.exponential_(), x.bernoulli_() ---------

def test_fills_draw_what_randn_and_rand_draw():
    """One stream: after the same seed, x.normal_() holds randn's numbers, x.uniform_() rand's."""
    for fill, factory in ((lambda t: t.normal_(), gradlab.randn),
                          (lambda t: t.uniform_(), gradlab.rand)):
        for dtype in (gradlab.float32, gradlab.float64):
            gradlab.manual_seed(5)
            expected = factory(3, 4, dtype=dtype).tolist()
            gradlab.manual_seed(5)
            assert fill(gradlab.empty(3, 4, dtype=dtype)).tolist() == expected
    gradlab.manual_seed(5)
    expected = (gradlab.randn(6) * 3 + 2).tolist()
    gradlab.manual_seed(5)
    assert gradlab.empty(6).normal_(2, 3).tolist() == expected


FILL_STATISTICS = [  # (fill, mean, std) of the distribution
    (lambda t: t.normal_(2.0, 3.0), 2.0, 3.0),
    (lambda t: t.normal_(), 0.0, 1.0),
    (lambda t: t.uniform_(-1.0, 3.0), 1.0, 4 / 12 ** 0.5),
    (lambda t: t.exponential_(4.0), 0.25, 0.25),
    (lambda t: t.bernoulli_(0.3), 0.3, (0.3 * 0.7) ** 0.5),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("fill, mean, std", FILL_STATISTICS,
                         ids=["normal_", "standard_normal_", "uniform_", "exponential_",
                              "bernoulli_"])
def test_fills_have_their_distributions_mean_and_std(fill, mean, std, dtype):
    gradlab.manual_seed(0)
    t = gradlab.zeros(200, 100, dtype=getattr(gradlab, dtype))
    assert fill(t) is t and t.dtype.name == dtype and t.shape == (200, 100)
    values = t.double().numpy()
    assert abs(values.mean() - mean) < 0.05 * max(std, 1.0)
    assert abs(values.std() - std) < 0.05 * std


def test_fills_stay_in_their_support():
    gradlab.manual_seed(1)
    u = gradlab.empty(10000).uniform_(2.0, 2.5)
    assert 2.0 <= u.min().item() and u.max().item() < 2.5
    assert gradlab.empty(10000).exponential_().min().item() >= 0.0
    b = gradlab.empty(10000).bernoulli_(0.5)
    assert set(np.unique(b.numpy()).tolist()) == {0.0, 1.0}
    assert gradlab.empty(5).normal_(7.0, 0.0).tolist() == [7.0] * 5
    assert gradlab.empty(4).uniform_(3.0, 3.0).tolist() == [3.0] * 4


def test_bernoulli_fills_integers_bools_and_takes_a_tensor_of_probabilities():
    gradlab.manual_seed(2)
    p = gradlab.tensor([0.0, 1.0, 0.0, 1.0])
    for dtype in (gradlab.int64, gradlab.bool, gradlab.float32):
        t = gradlab.full((3, 4), 7, dtype=dtype).bernoulli_(p)
        assert t.dtype is dtype and t.tolist() == [[0, 1, 0, 1]] * 3
    rows = gradlab.empty(2, 5000).bernoulli_(gradlab.tensor([[0.1], [0.9]]))
    np.testing.assert_allclose(rows.mean(1).numpy(), [0.1, 0.9], atol=0.03)


def test_fills_bump_the_version_and_refuse_leaves_that_require_grad():
    for op in ("normal_", "uniform_", "exponential_", "bernoulli_"):
        w = gradlab.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match=rf"{op}: a leaf tensor that requires grad "
                                               r"\(shape \(3,\)\) can't be changed in place"):
            getattr(w, op)()
        assert w._version == 0 and w.tolist() == [1.0, 1.0, 1.0]
        memory = w._data
        with gradlab.no_grad():
            assert getattr(w, op)() is w
        assert w._version == 1 and w._data is memory and w.is_leaf and w.requires_grad


def test_a_fill_cuts_the_gradient_as_in_pytorch():
    """The old values are gone: what was computed from x before the fill gets zero gradient."""
    x = gradlab.ones(3, requires_grad=True)
    y = x * 2
    y.normal_()
    assert y.grad_fn.name() == "NormalBackward0" and y.grad_fn.op == "normal_"
    (y * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())  # only the direct x


def test_a_fill_of_a_view_changes_its_base():
    base = gradlab.zeros(3, 4)
    base[1].uniform_(5.0, 6.0)
    values = base.numpy()
    assert (values[1] >= 5.0).all() and (values[[0, 2]] == 0.0).all()
    assert base._version == 1


def test_a_saved_tensor_changed_by_a_fill_is_caught_in_backward():
    x = gradlab.ones(3, requires_grad=True)
    y = x * 1
    z = y * y  # saves y
    y.normal_()
    with pytest.raises(RuntimeError, match=r"modified by an in-place operation.*"
                                           r"saved at version 0 and is now at version 1"):
        z.sum().backward()


@pytest.mark.parametrize("call, error, match", [
    (lambda: gradlab.zeros(3, dtype=gradlab.int64).normal_(), RuntimeError,
     r"normal_: expected a floating point tensor, got gradlab.int64 with shape \(3,\)"),
    (lambda: gradlab.zeros(3, dtype=gradlab.int32).uniform_(), RuntimeError,
     r"uniform_: expected a floating point tensor"),
    (lambda: gradlab.zeros(3, dtype=gradlab.bool).exponential_(), RuntimeError,
     r"exponential_: expected a floating point tensor"),
    (lambda: gradlab.zeros(3).normal_(0.0, -1.0), RuntimeError,
     r"normal_: std must be >= 0, got -1.0"),
    (lambda: gradlab.zeros(3).uniform_(2.0, 1.0), RuntimeError,
     r"uniform_: expects a finite range \[from, to\) with from <= to, got from=2.0, to=1.0"),
    (lambda: gradlab.zeros(3).uniform_(0.0, float("inf")), RuntimeError,
     r"uniform_: expects a finite range"),
    (lambda: gradlab.zeros(3).exponential_(0.0), RuntimeError,
     r"exponential_: expects lambd > 0 \(the rate\), got lambd=0.0"),
    (lambda: gradlab.zeros(3).bernoulli_(1.5), RuntimeError,
     r"bernoulli_: expects p in \[0, 1\], got p=1.5"),
    (lambda: gradlab.zeros(3).bernoulli_(gradlab.tensor([0.5, 2.0, 0.1])), RuntimeError,
     r"bernoulli_: expects p in \[0, 1\], got a p of shape \(3,\) with values outside it"),
    (lambda: gradlab.zeros(3).bernoulli_(gradlab.tensor([1, 0, 1])), RuntimeError,
     r"bernoulli_: p must be a float tensor of probabilities, got gradlab.int64.*p.float"),
    (lambda: gradlab.zeros(2, 3).bernoulli_(gradlab.full((2, 2), 0.5)), RuntimeError,
     r"bernoulli_: p of shape \(2, 2\) can't be broadcast to the tensor's shape \(2, 3\)"),
    (lambda: gradlab.zeros(3).normal_(generator=gradlab.Generator("cuda")), RuntimeError,
     r"normal_: the generator is for cuda:0 but the tensor is on cpu"),
    (lambda: gradlab.Tensor.uniform_([1.0]), TypeError,
     r"uniform_: expected a Tensor to change, got list"),
])
def test_fill_errors_teach(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("op", ["normal_", "uniform_", "exponential_", "bernoulli_"])
def test_fills_of_scalars_and_empty_tensors(op):
    scalar, empty = gradlab.full((), -5.0), gradlab.zeros(0, 3)
    assert getattr(scalar, op)() is scalar and scalar.shape == () and scalar._version == 1
    assert scalar.item() != -5.0
    assert getattr(empty, op)() is empty and empty.shape == (0, 3) and empty._version == 1
