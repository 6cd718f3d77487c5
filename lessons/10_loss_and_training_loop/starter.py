"""Lesson 10: loss and the training loop.

Write mse_loss, a numerically stable cross_entropy from gradlab ops, and train(),
the five-line training loop with SGD. Check your work with `gradlab check 10`
(or press k in the app); run this file under the debugger with r and watch the
Training panel draw the loss curve.
"""

import gradlab
from gradlab import nn
from gradlab.datasets import make_blobs


def mse_loss(pred, target):
    """Mean squared error: the mean over all elements of (pred - target)**2."""
    # TODO: one line of tensor ops
    raise NotImplementedError("mse_loss")


def cross_entropy(logits, targets):
    """Mean over the batch of -log softmax(logits)[target], for logits (N, C) and
    integer targets (N,), stable for any size of logits."""
    # TODO: 1. subtract each row's max (logits.amax(dim=1, keepdim=True), detached)
    #       2. log_probs = shifted - log(sum(exp(shifted))) along dim 1
    #       3. pick each row's target entry (gather, or indexing with arange(N))
    #       4. return minus their mean
    raise NotImplementedError("cross_entropy")


def train(model, X, y, steps, lr):
    """Full-batch SGD on cross_entropy(model(X), y) for ``steps`` steps; the loss of
    each step as a list of Python floats."""
    # TODO: make a gradlab.optim.SGD over model.parameters() with this lr; then, each
    #       step: zero_grad, forward, loss, backward, step, and keep loss.item()
    raise NotImplementedError("train")


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
