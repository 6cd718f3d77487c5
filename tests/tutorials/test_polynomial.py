""""Learning PyTorch with examples": fitting sin(x) with a third-order polynomial, from
manual gradients to a custom autograd.Function, nn, optim and dynamic control flow."""

# ruff: noqa: B007 - tutorial code keeps its loop variables (for t in range(2000): ...)
from __future__ import annotations

import math
import random

import numpy as np
import pytest

import gradlab
from tests.oracle import needs_torch, torch
from tests.tutorials._shared import assert_close_runs, same_start

# --- 3. Learning PyTorch with examples: fitting sin(x) with a third-order polynomial -----------

START_COEFFICIENTS = (0.3, -0.2, 0.1, 0.05)  # the tutorial draws them with torch.randn(())


def polynomial_tensors(torch, steps: int = 400) -> dict:
    dtype = torch.float
    device = torch.device("cpu")

    # Create random input and output data
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)

    # Randomly initialize weights
    a, b, c, d = (torch.tensor(v, device=device, dtype=dtype) for v in START_COEFFICIENTS)

    learning_rate = 1e-6
    losses = []
    for t in range(steps):
        # Forward pass: compute predicted y
        y_pred = a + b * x + c * x ** 2 + d * x ** 3

        # Compute and print loss
        loss = (y_pred - y).pow(2).sum().item()
        losses.append(loss)

        # Backprop to compute gradients of a, b, c, d with respect to loss
        grad_y_pred = 2.0 * (y_pred - y)
        grad_a = grad_y_pred.sum()
        grad_b = (grad_y_pred * x).sum()
        grad_c = (grad_y_pred * x ** 2).sum()
        grad_d = (grad_y_pred * x ** 3).sum()

        # Update weights using gradient descent
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
        c -= learning_rate * grad_c
        d -= learning_rate * grad_d

    result = f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3"
    return {"losses": losses, "coefficients": [a.item(), b.item(), c.item(), d.item()],
            "result": result}


def polynomial_autograd(torch, steps: int = 400, custom_function: bool = False) -> dict:
    class LegendrePolynomial3(torch.autograd.Function):
        """P3(x) = (5x^3 - 3x) / 2, with its derivative written by hand."""

        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    dtype = torch.float
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)
    if custom_function:  # the tutorial starts P3's coefficients near the answer
        a, b, c, d = (torch.full((), v, dtype=dtype, requires_grad=True)
                      for v in (0.0, -1.0, 0.0, 0.3))
        learning_rate = 5e-6
    else:
        a, b, c, d = (torch.tensor(v, dtype=dtype, requires_grad=True)
                      for v in START_COEFFICIENTS)
        learning_rate = 1e-6

    losses = []
    for t in range(steps):
        if custom_function:
            # To apply our Function, we use Function.apply method. We alias this as 'P3'.
            P3 = LegendrePolynomial3.apply
            y_pred = a + b * P3(c + d * x)
        else:
            y_pred = a + b * x + c * x ** 2 + d * x ** 3

        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())

        # Use autograd to compute the backward pass.
        loss.backward()

        # Manually update weights using gradient descent. Wrap in torch.no_grad()
        # because weights have requires_grad=True, but we don't need to track this
        # in autograd.
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad

            # Manually zero the gradients after updating weights
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None

    return {"losses": losses, "coefficients": [a.item(), b.item(), c.item(), d.item()],
            "leaf": [t.is_leaf for t in (a, b, c, d)]}


def polynomial_nn(torch, steps: int = 400, start=None, optimizer_name: str | None = None
                  ) -> dict:
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)

    # For this example, the output y is a linear function of (x, x^2, x^3), so
    # we can consider it as a linear layer neural network. Let's prepare the
    # tensor (x, x^2, x^3).
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)

    model = torch.nn.Sequential(
        torch.nn.Linear(3, 1),
        torch.nn.Flatten(0, 1)
    )
    initial = same_start(torch, model, start)
    loss_fn = torch.nn.MSELoss(reduction="sum")

    learning_rate = 1e-6 if optimizer_name is None else 1e-3
    if optimizer_name == "RMSprop":
        optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)
    losses = []
    for t in range(steps):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        losses.append(loss.item())

        if optimizer_name is None:
            # Zero the gradients before running the backward pass.
            model.zero_grad()
            loss.backward()
            # Update the weights using gradient descent.
            with torch.no_grad():
                for param in model.parameters():
                    param -= learning_rate * param.grad
        else:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    # You can access the first layer of `model` like accessing the first item of a list
    linear_layer = model[0]
    coefficients = [linear_layer.bias.item(), linear_layer.weight[:, 0].item(),
                    linear_layer.weight[:, 1].item(), linear_layer.weight[:, 2].item()]
    return {"initial": initial, "losses": losses, "coefficients": coefficients,
            "xx_dtype": str(xx.dtype).split(".")[-1]}


def polynomial_module(torch, steps: int = 400, dynamic: bool = False) -> dict:
    class Polynomial3(torch.nn.Module):
        def __init__(self):
            """Instantiate four parameters and assign them as member parameters."""
            super().__init__()
            self.a, self.b, self.c, self.d = (torch.nn.Parameter(torch.tensor(v))
                                              for v in START_COEFFICIENTS)

        def forward(self, x):
            return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

        def string(self):
            return (f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + "
                    f"{self.d.item()} x^3")

    class DynamicNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c, self.d = (torch.nn.Parameter(torch.tensor(v))
                                              for v in START_COEFFICIENTS)
            self.e = torch.nn.Parameter(torch.tensor(0.01))

        def forward(self, x):
            """Chooses 4, 5 or 6 terms at random, reusing self.e for the 4th and higher."""
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, random.randint(4, 6)):
                y = y + self.e * x ** exp
            return y

    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    model = DynamicNet() if dynamic else Polynomial3()
    criterion = torch.nn.MSELoss(reduction="sum")
    if dynamic:
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    random.seed(0)  # both libraries see the same random choices of terms
    losses = []
    for t in range(steps):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    names = [name for name, _ in model.named_parameters()]
    return {"losses": losses, "names": names, "string": None if dynamic else model.string(),
            "coefficients": [p.item() for p in model.parameters()]}


POLYNOMIAL_PROGRAMS = {
    "tensors": polynomial_tensors,
    "autograd": polynomial_autograd,
    "custom_function": lambda torch: polynomial_autograd(torch, custom_function=True),
    "nn": polynomial_nn,
    "optim_rmsprop": lambda torch, **kw: polynomial_nn(torch, optimizer_name="RMSprop", **kw),
    "custom_module": polynomial_module,
    "dynamic_net": lambda torch: polynomial_module(torch, dynamic=True),
}


@pytest.mark.parametrize("variant", list(POLYNOMIAL_PROGRAMS))
def test_polynomial_fit_gets_closer_to_sine(variant):
    run = POLYNOMIAL_PROGRAMS[variant](gradlab)
    losses = run["losses"]
    assert all(math.isfinite(loss) for loss in losses)
    assert losses[-1] < 0.5 * losses[0]
    if variant == "nn":
        assert run["xx_dtype"] == "float32"  # float32 ** int64 stays float32
    if variant == "custom_module":
        assert run["names"] == ["a", "b", "c", "d"]
        assert run["string"].startswith("y = ")
    if variant == "autograd":
        assert run["leaf"] == [True] * 4  # in-place updates under no_grad keep them leaves


def test_least_squares_is_where_the_polynomial_fit_heads():
    """The fitted cubic approaches the least-squares cubic for sin on [-pi, pi]."""
    x = np.linspace(-np.pi, np.pi, 2000)
    best = np.polynomial.polynomial.polyfit(x, np.sin(x), 3)
    run = polynomial_nn(gradlab, steps=2000, optimizer_name="RMSprop")
    np.testing.assert_allclose(run["coefficients"], best, atol=0.02)


@needs_torch
@pytest.mark.parametrize("variant", list(POLYNOMIAL_PROGRAMS))
def test_polynomial_fit_matches_pytorch(variant):
    program = POLYNOMIAL_PROGRAMS[variant]
    if variant in ("nn", "optim_rmsprop"):
        ours = program(gradlab)
        theirs = program(torch, start=ours["initial"])
    else:
        ours, theirs = program(gradlab), program(torch)
    assert_close_runs(ours, theirs, ["losses", "coefficients"], rtol=2e-4, atol=1e-5)
    if "names" in ours:
        assert ours["names"] == theirs["names"]
