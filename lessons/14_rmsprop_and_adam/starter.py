"""Lesson 14: RMSprop and Adam.

Write the update rules of two optimizers (PyTorch's formulas and defaults) and Adam's
first step by hand; the TODOs say where. Check with `gradlab check 14` (or press k in
the app); press r in the app to train the little model below with your Adam.

gradlab's Optimizer.step() loops over the parameter groups and their parameters for
you, under no_grad, and calls _update(param, grad, state, group) for each parameter
that has a gradient: state is that parameter's dict (empty on its first step), group
its group's options (group["lr"], ...). Change param and the state tensors in place.
"""

import gradlab
from gradlab import nn
from gradlab.optim import Optimizer


class RMSprop(Optimizer):
    """RMSprop with PyTorch's defaults: each step divided by the root of a running
    mean of the squared gradient, so every coordinate moves about lr."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps))

    def _update(self, param, grad, state, group):
        """One parameter's step (gradlab's Optimizer.step calls this under no_grad)."""
        # TODO: on the first step, state["step"] = 0 and state["square_avg"] = zeros like param
        # TODO: count the step; square_avg <- alpha * square_avg + (1 - alpha) * grad**2,
        #       in place; then param <- param - lr * grad / (sqrt(square_avg) + eps)
        raise NotImplementedError("RMSprop._update")


class Adam(Optimizer):
    """Adam with PyTorch's defaults: momentum's average of the gradient, divided by
    RMSprop's root-mean-square, both corrected for starting at zero."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

    def _update(self, param, grad, state, group):
        # TODO: state "step", "exp_avg" (m) and "exp_avg_sq" (v), zeros at first
        # TODO: t = the step number (from 1); m <- beta1 m + (1 - beta1) g,
        #       v <- beta2 v + (1 - beta2) g², both in place
        # TODO: param <- param - lr * m_hat / (sqrt(v_hat) + eps), where
        #       m_hat = m / (1 - beta1**t) and v_hat = v / (1 - beta2**t)
        raise NotImplementedError("Adam._update")


def first_adam_step(grad, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, bias_correction=True):
    """The change Adam makes to a parameter on its first step (a tensor like grad)."""
    # TODO: m and v after one step from zero; divide them by 1 - beta1 and 1 - beta2
    #       when bias_correction is True; return -lr * m / (sqrt(v) + eps)
    raise NotImplementedError("first_adam_step")


def make_data(n=64):
    """Two inputs of very different scales: the weight on the small one gets small gradients."""
    gen = gradlab.Generator().manual_seed(14)
    x = gradlab.randn(n, 2, generator=gen) * gradlab.tensor([10.0, 0.1])
    y = x @ gradlab.tensor([[0.3], [20.0]]) + 1.0
    return x, y


if __name__ == "__main__":
    # What the app runs when you press r: step updates with o, iterations with i.
    x, y = make_data()
    gradlab.manual_seed(0)
    model = nn.Linear(2, 1)
    optimizer = Adam(model.parameters(), lr=0.5)
    for step in range(1, 101):
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 20 == 0:
            print(f"step {step:3d}  loss {loss.item():8.4f}  weight {model.weight.tolist()}")
    print("first Adam step for gradients 1e-3 and 1e3:",
          first_adam_step(gradlab.tensor([1e-3, 1e3])).tolist())
