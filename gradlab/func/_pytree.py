"""Pytrees: nested tuples, lists and dicts of tensors, flattened and rebuilt.

A function transform works on tensors, but users hand it structures: a
dict of parameters, a tuple ``(logits, loss)``, a list of layers' weights.
``tree_flatten`` turns any such structure into a flat list of *leaves* and
a :class:`TreeSpec` that remembers the shape of the nesting;
``tree_unflatten`` puts (possibly new) leaves back into that shape::

    leaves, spec = tree_flatten({"w": w, "b": (b1, b2)})   # [w, b1, b2]
    tree_unflatten([gw, gb1, gb2], spec)                   # {"w": gw, "b": (gb1, gb2)}

Containers are ``tuple`` (and named tuples), ``list``, ``dict`` and
``None`` (a container with nothing in it, as in PyTorch's pytrees).
Anything else is a leaf: a tensor, a number, a string.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["TreeSpec", "LEAF", "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves",
           "flatten_as"]


class TreeSpec:
    """The shape of a nesting: a container ``kind`` with its ``context`` and children.

    ``kind`` is None for a leaf, else the container's type (``tuple``,
    ``list``, ``dict``, a named tuple class, or ``type(None)``); ``context``
    is a dict's keys in order; ``children`` are the specs of its items.
    """

    __slots__ = ("kind", "context", "children", "num_leaves")

    def __init__(self, kind, context: tuple = (), children: tuple = ()) -> None:
        self.kind = kind
        self.context = context
        self.children = children
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)

    def is_leaf(self) -> bool:
        return self.kind is None

    def __eq__(self, other) -> bool:
        return isinstance(other, TreeSpec) and self.kind is other.kind and \
            self.context == other.context and self.children == other.children

    def __hash__(self) -> int:
        return hash((self.kind, self.context, self.children))

    def __repr__(self) -> str:
        """A sketch of the structure with ``*`` for each leaf: ``{'w': *, 'b': (*, *)}``."""
        if self.kind is None:
            return "*"
        if self.kind is type(None):
            return "None"
        items = [repr(c) for c in self.children]
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.context, items)) + "}"
        if self.kind is list:
            return "[" + ", ".join(items) + "]"
        if self.kind is tuple:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return f"{self.kind.__name__}(" + ", ".join(items) + ")"


LEAF = TreeSpec(None)


def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def _children(tree) -> tuple[Any, tuple, list] | None:
    """``(kind, context, items)`` of a container, or None for a leaf."""
    if tree is None:
        return type(None), (), []
    kind = type(tree)
    if kind is tuple or kind is list or _is_namedtuple(tree):
        return kind, (), list(tree)
    if kind is dict:
        return dict, tuple(tree.keys()), list(tree.values())
    return None


def tree_flatten(tree) -> tuple[list, TreeSpec]:
    """The leaves of ``tree``, left to right (dicts in key order), and its spec."""
    leaves: list = []
    return leaves, _flatten_into(tree, leaves)


def _flatten_into(tree, leaves: list) -> TreeSpec:
    found = _children(tree)
    if found is None:
        leaves.append(tree)
        return LEAF
    kind, context, items = found
    return TreeSpec(kind, context, tuple(_flatten_into(item, leaves) for item in items))


def tree_unflatten(leaves, spec: TreeSpec):
    """Rebuild the structure ``spec`` describes, filled with ``leaves`` in order."""
    leaves = list(leaves)
    if len(leaves) != spec.num_leaves:
        raise ValueError(f"tree_unflatten: the structure {spec} holds {spec.num_leaves} "
                         f"leaves, but {len(leaves)} were given")
    it = iter(leaves)
    return _build(spec, it)


def _build(spec: TreeSpec, it):
    if spec.kind is None:
        return next(it)
    if spec.kind is type(None):
        return None
    items = [_build(child, it) for child in spec.children]
    if spec.kind is dict:
        return dict(zip(spec.context, items))
    if spec.kind is list:
        return items
    if spec.kind is tuple:
        return tuple(items)
    return spec.kind(*items)  # a named tuple


def tree_leaves(tree) -> list:
    return tree_flatten(tree)[0]


def tree_map(fn: Callable, tree):
    """The same structure with ``fn(leaf)`` in place of each leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


def flatten_as(tree, spec: TreeSpec, what: str, expected: str) -> list:
    """The leaves of ``tree``, which must have the structure ``spec`` (dict keys in any order;
    where ``spec`` has a leaf, ``tree`` must have a leaf, not a container).

    ``what`` and ``expected`` name the two sides in the error, e.g. "cotangents" and
    "the function's output".
    """
    leaves: list = []
    _collect_as(tree, spec, leaves, (what, expected, tree, spec))
    return leaves


def _collect_as(tree, spec, leaves, context) -> None:
    found = _children(tree)
    if spec.kind is None and found is None:
        leaves.append(tree)
        return
    same = found is not None and found[0] is spec.kind and len(found[2]) == len(spec.children)
    if same and spec.kind is dict:
        same = set(tree) == set(spec.context)
    if not same:
        what, expected, whole, whole_spec = context
        raise ValueError(
            f"the structure of the {what} must match {expected}: expected {whole_spec} "
            f"(* is a tensor), got {tree_flatten(whole)[1]}. Fix: nest the {what} exactly "
            f"like {expected}, one tensor in each place")
    if spec.kind is dict:
        for key, child in zip(spec.context, spec.children):
            _collect_as(tree[key], child, leaves, context)
        return
    for item, child in zip(found[2], spec.children):
        _collect_as(item, child, leaves, context)
