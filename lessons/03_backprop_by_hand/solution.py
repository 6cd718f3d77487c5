"""Lesson 3: backprop by hand on a tiny neuron (the reference solution).

The neuron and its loss, one step per line:

    z = w·x + b        (w and x: vectors of n numbers; b, t: numbers)
    y = tanh(z)
    loss = (y - t)**2
"""

import numpy as np

import gradlab


def forward(w, x, b, t):
    """(z, y, loss) of the neuron for one sample x with target t, as floats."""
    z = np.dot(w, x) + b
    y = np.tanh(z)
    loss = (y - t) ** 2
    return float(z), float(y), float(loss)


def local_derivatives(w, x, b, t):
    """Each step's derivative with respect to its own inputs, at this sample."""
    _, y, _ = forward(w, x, b, t)
    return {
        "dloss_dy": 2 * (y - t),                  # d/dy (y - t)²
        "dy_dz": 1 - y**2,                        # d/dz tanh(z) = 1 - tanh(z)², and tanh(z) = y
        "dz_dw": np.array(x, dtype=np.float64),   # z = w1·x1 + ... + wn·xn + b
        "dz_db": 1.0,
        "dz_dx": np.array(w, dtype=np.float64),
    }


def backward(w, x, b, t):
    """(dloss/dw, dloss/db, dloss/dx): the local derivatives chained from the loss back."""
    d = local_derivatives(w, x, b, t)
    dloss_dz = d["dloss_dy"] * d["dy_dz"]  # the chain rule, one step
    return dloss_dz * d["dz_dw"], dloss_dz * d["dz_db"], dloss_dz * d["dz_dx"]


def batch_backward(w, X, b, T):
    """(dloss/dw, dloss/db) for the mean loss over the rows of X (targets T)."""
    m = X.shape[0]
    z = X @ w + b                            # all m samples at once
    y = np.tanh(z)
    dloss_dz = (2 / m) * (y - T) * (1 - y**2)  # per sample; 1/m from the mean
    # w and b take part in every sample: their gradients are sums over the samples.
    return X.T @ dloss_dz, float(dloss_dz.sum())


if __name__ == "__main__":
    # What the app runs when you press r: the neuron of the lesson in gradlab.
    w = gradlab.tensor([0.5, 0.4], dtype=gradlab.float64, requires_grad=True)
    x = gradlab.tensor([2.0, -1.0], dtype=gradlab.float64, requires_grad=True)
    b = gradlab.tensor(0.1, dtype=gradlab.float64, requires_grad=True)
    w.name, x.name, b.name = "w", "x", "b"
    y = (w @ x + b).tanh()
    loss = (y - 1.0) ** 2
    loss.backward()
    print(f"loss = {loss.item():.6f}")
    print("gradlab: dloss/dw =", w.grad.numpy(), " dloss/db =", round(b.grad.item(), 6),
          " dloss/dx =", x.grad.numpy())
    try:
        dw, db, dx = backward(np.array([0.5, 0.4]), np.array([2.0, -1.0]), 0.1, 1.0)
        print("by hand: dloss/dw =", dw, " dloss/db =", round(db, 6), " dloss/dx =", dx)
    except NotImplementedError as todo:
        print(f"{todo} is still a TODO")
