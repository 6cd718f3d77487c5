""""Automatic differentiation with torch.autograd"."""

# ruff: noqa: B007 - tutorial code keeps its loop variables (for t in range(2000): ...)
from __future__ import annotations

import numpy as np

import gradlab
from tests.oracle import needs_torch, torch
from tests.tutorials._shared import assert_close_runs

# --- 5. Automatic differentiation with torch.autograd -----------------------------------------


def autograd_basics(torch, start) -> dict:
    w_start, b_start = start
    x = torch.ones(5)  # input tensor
    y = torch.zeros(3)  # expected output
    w = torch.tensor(w_start, requires_grad=True)
    b = torch.tensor(b_start, requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    print(f"Gradient function for z = {z.grad_fn}")
    print(f"Gradient function for loss = {loss.grad_fn}")
    grad_fn_names = tuple(repr(t.grad_fn).split()[0].lstrip("<") for t in (z, loss))

    loss.backward()
    w_grad, b_grad = w.grad.numpy().copy(), b.grad.numpy().copy()

    z = torch.matmul(x, w) + b
    tracked = z.requires_grad
    with torch.no_grad():
        z = torch.matmul(x, w) + b
    untracked = z.requires_grad
    z_det = (torch.matmul(x, w) + b).detach()

    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp + 1).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    first_call = inp.grad.numpy().copy()
    out.backward(torch.ones_like(out), retain_graph=True)
    second_call = inp.grad.numpy().copy()
    inp.grad.zero_()
    out.backward(torch.ones_like(out), retain_graph=True)
    call_after_zeroing_gradients = inp.grad.numpy().copy()
    return {"loss": loss.item(), "w_grad": w_grad, "b_grad": b_grad,
            "grad_fn_names": grad_fn_names, "tracked": tracked, "untracked": untracked,
            "detached": z_det.requires_grad, "first_call": first_call,
            "second_call": second_call, "after_zeroing": call_after_zeroing_gradients}


AUTOGRAD_START = (np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32),
                  np.random.default_rng(1).standard_normal(3).astype(np.float32))


def test_autograd_basics():
    run = autograd_basics(gradlab, AUTOGRAD_START)
    assert run["grad_fn_names"][0] == "AddBackward0"  # the loss's: see KNOWN_GAPS
    assert (run["tracked"], run["untracked"], run["detached"]) == (True, False, False)
    expected_first = 2 * (np.eye(4, 5) + 1)
    np.testing.assert_allclose(run["first_call"], expected_first)
    np.testing.assert_allclose(run["second_call"], 2 * expected_first)
    np.testing.assert_allclose(run["after_zeroing"], expected_first)
    # d loss / d b_j = (sigmoid(z_j) - y_j) / 3 with y = 0 and z = x @ w + b
    w, b = AUTOGRAD_START
    z = w.sum(0) + b
    np.testing.assert_allclose(run["b_grad"], 1 / (1 + np.exp(-z)) / 3, rtol=1e-5)
    np.testing.assert_allclose(run["w_grad"], np.tile(run["b_grad"], (5, 1)), rtol=1e-6)


@needs_torch
def test_autograd_basics_matches_pytorch():
    ours = autograd_basics(gradlab, AUTOGRAD_START)
    theirs = autograd_basics(torch, AUTOGRAD_START)
    assert ours["grad_fn_names"][0] == theirs["grad_fn_names"][0]
    assert_close_runs(ours, theirs, ["loss", "w_grad", "b_grad", "first_call", "second_call",
                                     "after_zeroing"], rtol=1e-5, atol=1e-6)
