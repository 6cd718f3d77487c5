"""Lesson 14: RMSprop and Adam (the reference solution)."""

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
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        if not state:  # this parameter's first step: the average starts at zero
            state["step"] = 0
            state["square_avg"] = gradlab.zeros_like(param)
        state["step"] += 1
        square_avg = state["square_avg"]
        # v <- alpha * v + (1 - alpha) * g², in place so the state keeps its identity
        square_avg.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
        # eps is added to the root, outside it: it is in the gradient's units
        param.sub_(grad / (square_avg.sqrt() + eps), alpha=lr)


class Adam(Optimizer):
    """Adam with PyTorch's defaults: momentum's average of the gradient, divided by
    RMSprop's root-mean-square, both corrected for starting at zero."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

    def _update(self, param, grad, state, group):
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = gradlab.zeros_like(param)     # m: the smoothed gradient
            state["exp_avg_sq"] = gradlab.zeros_like(param)  # v: the smoothed squared gradient
        state["step"] += 1
        t = state["step"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
        # Averages that start at zero are too small by the factor 1 - beta**t: undo it.
        m_hat = exp_avg / (1 - beta1**t)
        v_hat = exp_avg_sq / (1 - beta2**t)
        param.sub_(m_hat / (v_hat.sqrt() + eps), alpha=lr)


def first_adam_step(grad, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, bias_correction=True):
    """The change Adam makes to a parameter on its first step (a tensor like grad)."""
    beta1, beta2 = betas
    m = (1 - beta1) * grad          # beta1 * 0 + (1 - beta1) * g
    v = (1 - beta2) * grad * grad   # beta2 * 0 + (1 - beta2) * g²
    if bias_correction:
        m = m / (1 - beta1)         # = grad
        v = v / (1 - beta2)         # = grad²
    return -lr * m / (v.sqrt() + eps)


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
