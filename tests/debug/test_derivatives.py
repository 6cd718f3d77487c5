"""derivative_rule(): each common op's derivative, in words."""

from __future__ import annotations

import pytest

from gradlab.debug.derivatives import RULES, derivative_rule

COMMON = [
    "add", "sub", "mul", "div", "neg", "pow", "sqrt", "exp", "log", "abs", "sin", "cos",
    "matmul", "linear", "relu", "leaky_relu", "gelu", "sigmoid", "tanh", "softmax",
    "log_softmax", "cross_entropy", "nll_loss", "mse_loss", "sum", "mean", "max", "convolution",
    "max_pool2d", "avg_pool2d", "batch_norm", "layer_norm", "dropout", "embedding", "reshape",
    "view", "transpose", "permute", "expand", "index", "getitem", "cat", "stack", "where",
    "clamp", "squeeze", "unsqueeze", "gather", "split_with_sizes",
]


@pytest.mark.parametrize("op", COMMON)
def test_common_ops_have_a_rule_in_words(op):
    rule = derivative_rule(op)
    assert isinstance(rule, str) and len(rule) > 25
    assert rule == RULES[op]


def test_rules_say_the_actual_derivative():
    assert "b" in derivative_rule("mul") and "other input" in derivative_rule("mul")
    assert "y * (1 - y)" in derivative_rule("sigmoid")
    assert "1 - y^2" in derivative_rule("tanh")
    assert "x > 0" in derivative_rule("relu")
    assert "softmax" in derivative_rule("cross_entropy")
    assert "B^T" in derivative_rule("matmul") and "A^T" in derivative_rule("matmul")
    assert "1/n" in derivative_rule("mean")


def test_aliases_and_in_place_forms_share_the_rule():
    assert derivative_rule("add_") == derivative_rule("add")
    assert derivative_rule("mul_") == RULES["mul"]
    assert derivative_rule("conv2d") == RULES["convolution"]
    assert derivative_rule("mm") == RULES["matmul"]


def test_unknown_ops_have_no_rule():
    assert derivative_rule("frobnicate") is None
    assert derivative_rule("__add__") is None


def test_about_eighty_rules_all_distinct_enough():
    assert len(RULES) >= 80
    assert all(isinstance(v, str) and v for v in RULES.values())
