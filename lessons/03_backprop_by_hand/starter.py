"""Lesson 3: backprop by hand on a tiny neuron.

Fill in the four functions marked TODO with plain NumPy (no gradlab inside them:
the point is to do gradlab's job yourself), then check them with `gradlab check 3`
(or press k in the app). Run this file under the debugger with r in the app.

The neuron and its loss, one step per line:

    z = w·x + b        (w and x: vectors of n numbers; b, t: numbers)
    y = tanh(z)
    loss = (y - t)**2
"""

import numpy as np

import gradlab


def forward(w, x, b, t):
    """(z, y, loss) of the neuron for one sample x with target t, as floats."""
    # TODO: z = w·x + b, y = tanh(z), loss = (y - t)**2 (np.dot, np.tanh)
    raise NotImplementedError("forward")


def local_derivatives(w, x, b, t):
    """Each step's derivative with respect to its own inputs, at this sample.

    Returns a dict with the keys
        "dloss_dy"  d loss / d y   (a float)
        "dy_dz"     d y / d z      (a float)
        "dz_dw"     d z / d w      (a vector of n numbers)
        "dz_db"     d z / d b      (a float)
        "dz_dx"     d z / d x      (a vector of n numbers)
    """
    # TODO: run forward to get y, then write each step's derivative on its own
    raise NotImplementedError("local_derivatives")


def backward(w, x, b, t):
    """(dloss/dw, dloss/db, dloss/dx): the local derivatives chained from the loss back.

    dloss/dw and dloss/dx are NumPy vectors of n numbers, dloss/db a float.
    """
    # TODO: dloss/dz = dloss/dy · dy/dz, then one more factor for w, b and x
    raise NotImplementedError("backward")


def batch_backward(w, X, b, T):
    """(dloss/dw, dloss/db) for the mean loss over the rows of X (targets T).

    X has shape (m, n): m samples of n inputs. loss = mean over i of (y_i - T_i)**2.
    """
    # TODO: forward for all rows at once, dloss/dz_i for each sample, then sum the
    #       contributions of every sample to the gradients of w and b
    raise NotImplementedError("batch_backward")


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
