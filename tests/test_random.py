"""Seeding: ``manual_seed`` repeats a run's numbers; a ``Generator`` is a stream of its own."""

from __future__ import annotations

import pytest

import gradlab

DRAWS = [
    lambda **kw: gradlab.rand(5, **kw),
    lambda **kw: gradlab.randn(2, 3, **kw),
    lambda **kw: gradlab.randint(0, 100, (6,), **kw),
    lambda **kw: gradlab.randperm(8, **kw),
    lambda **kw: gradlab.normal(0.0, 1.0, (4,), **kw),
]


@pytest.mark.parametrize("draw", DRAWS, ids=["rand", "randn", "randint", "randperm", "normal"])
def test_same_seed_same_numbers(draw):
    gradlab.manual_seed(123)
    first = [draw().tolist(), draw().tolist()]
    gradlab.manual_seed(123)
    again = [draw().tolist(), draw().tolist()]
    assert first == again
    assert first[0] != first[1]  # the stream moves on between draws
    gradlab.manual_seed(124)
    assert draw().tolist() != first[0]


@pytest.mark.parametrize("draw", DRAWS, ids=["rand", "randn", "randint", "randperm", "normal"])
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
