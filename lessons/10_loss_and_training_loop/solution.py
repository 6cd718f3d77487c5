"""Lesson 10: loss and the training loop (the reference solution)."""

import gradlab
from gradlab import nn
from gradlab.datasets import make_blobs


def mse_loss(pred, target):
    """Mean squared error: the mean over all elements of (pred - target)**2."""
    return ((pred - target) ** 2).mean()


def cross_entropy(logits, targets):
    """Mean over the batch of -log softmax(logits)[target], for logits (N, C) and
    integer targets (N,), stable for any size of logits."""
    # The max trick: softmax(z) = softmax(z - c) for any c. With c = the row's max the
    # largest exponent is exp(0) = 1, so nothing overflows, and the sum is at least 1,
    # so its log is finite. No gradient needs to flow through c (it cancels), hence detach.
    shifted = logits - logits.amax(dim=1, keepdim=True).detach()
    log_sum_exp = shifted.exp().sum(dim=1, keepdim=True).log()
    log_probs = shifted - log_sum_exp                       # log softmax, (N, C)
    picked = log_probs.gather(1, targets.unsqueeze(1))      # log p[target], (N, 1)
    return -picked.mean()


def train(model, X, y, steps, lr):
    """Full-batch SGD on cross_entropy(model(X), y) for ``steps`` steps; the loss of
    each step as a list of Python floats."""
    optimizer = gradlab.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()               # 1. forget the last step's gradients
        logits = model(X)                   # 2. forward
        loss = cross_entropy(logits, y)     # 3. how wrong, as one number
        loss.backward()                     # 4. d loss / d parameter, into each .grad
        optimizer.step()                    # 5. parameter -= lr * grad
        losses.append(loss.item())          # a float: keeps no graph alive
    return losses


if __name__ == "__main__":
    # Press c to run: the Training panel draws the loss curve. Or step one
    # iteration at a time with i, one optimizer update with o.
    gradlab.manual_seed(0)
    centers = [[-2.0, 0.0], [2.0, 0.0], [0.0, 2.5]]
    X, y = make_blobs(150, centers=centers, cluster_std=0.8)
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 3))
    losses = train(model, X, y, steps=60, lr=0.2)
    with gradlab.no_grad():
        accuracy = (model(X).argmax(dim=1) == y).float().mean().item()
    print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f} in {len(losses)} steps; "
          f"accuracy {accuracy:.0%}")
