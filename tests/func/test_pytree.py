"""gradlab.func._pytree: flatten and rebuild tuples, lists, dicts, named tuples and None."""

from __future__ import annotations

from collections import namedtuple

import pytest

from gradlab.func._pytree import flatten_as, tree_flatten, tree_map, tree_unflatten

Pair = namedtuple("Pair", "first second")


def test_flatten_and_unflatten_round_trip():
    tree = {"b": (1, [2, None, 3]), "a": Pair(4, {"c": 5}), "d": 6}
    leaves, spec = tree_flatten(tree)
    assert leaves == [1, 2, 3, 4, 5, 6]  # dicts in insertion order, None holds nothing
    rebuilt = tree_unflatten([x * 10 for x in leaves], spec)
    assert rebuilt == {"b": (10, [20, None, 30]), "a": Pair(40, {"c": 50}), "d": 60}
    assert type(rebuilt["a"]) is Pair and type(rebuilt["b"][1]) is list
    assert repr(spec) == "{'b': (*, [*, None, *]), 'a': Pair(*, {'c': *}), 'd': *}"
    assert spec.num_leaves == 6 and tree_flatten(tree)[1] == spec


def test_a_leaf_is_its_own_tree():
    leaves, spec = tree_flatten("x")
    assert leaves == ["x"] and spec.is_leaf() and tree_unflatten(["y"], spec) == "y"
    assert tree_map(lambda v: v + 1, (1, (2,))) == (2, (3,))


def test_unflatten_wants_one_leaf_per_slot():
    _, spec = tree_flatten((1, 2))
    with pytest.raises(ValueError, match=r"\(\*, \*\) holds 2 leaves, but 3 were given"):
        tree_unflatten([1, 2, 3], spec)


def test_flatten_as_follows_the_spec_and_names_the_mismatch():
    _, spec = tree_flatten({"x": 1, "y": (2, 3)})
    assert flatten_as({"y": ("b", "c"), "x": "a"}, spec, "tangents", "the primals") == \
        ["a", "b", "c"]
    with pytest.raises(ValueError, match=r"tangents must match the primals: expected "
                                         r"\{'x': \*, 'y': \(\*, \*\)\}.*got \{'x': \*, 'y': \*\}"):
        flatten_as({"x": 1, "y": 2}, spec, "tangents", "the primals")
    with pytest.raises(ValueError, match="got"):
        flatten_as({"x": 1, "z": (2, 3)}, spec, "tangents", "the primals")
