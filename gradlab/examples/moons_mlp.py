"""Two moons: a multi-layer perceptron learns a boundary no straight line can draw.

The data are two interleaved half circles with noise. A linear classifier
tops out around 85% accuracy on them; hidden layers of ReLUs bend the
decision boundary around the moons and reach about 98% on test points (the
noise pushes a few points across any sensible boundary).

This is the whole PyTorch training recipe in miniature: data in a
``DataLoader``, a model built from ``nn`` layers, a loss, an optimizer, and
the loop ``zero_grad -> forward -> loss -> backward -> step``. Run it with::

    python -m gradlab.examples.moons_mlp            # or: gradlab demo moons
    python -m gradlab.examples.moons_mlp --epochs 5 --lr 0.05 --save moons.safetensors
"""

from __future__ import annotations

import argparse
import time

import gradlab
from gradlab import nn
from gradlab.datasets import make_moons
from gradlab.utils.data import DataLoader, TensorDataset, random_split
from gradlab.utils.progress import progress


def make_data(n_samples: int = 1000, noise: float = 0.15, test_fraction: float = 0.2):
    """The moons as a training and a test dataset (a random, seeded split)."""
    X, y = make_moons(n_samples, noise=noise)
    dataset = TensorDataset(X, y)  # item i is the pair (X[i], y[i])
    # Accuracy on points the model never trained on is the number that matters:
    # keep them out of training altogether.
    n_test = int(n_samples * test_fraction)
    return random_split(dataset, [n_samples - n_test, n_test])


def make_model(hidden: int = 32) -> nn.Module:
    """2 inputs (the point's x, y) -> two hidden layers -> 2 outputs (one score per moon)."""
    return nn.Sequential(
        nn.Linear(2, hidden),
        nn.ReLU(),  # without a non-linearity, stacked Linear layers collapse into one
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, 2),  # raw scores ("logits"): CrossEntropyLoss applies softmax itself
    )


def train_one_epoch(model, loader, loss_fn, optimizer, desc: str = "", quiet: bool = False):
    """One pass over the training data; returns the mean loss."""
    model.train()  # layers such as Dropout/BatchNorm behave differently in training
    total_loss, n_seen = 0.0, 0
    bar = progress(loader, desc=desc, leave=False, disable=True if quiet else None)
    for X, y in bar:
        optimizer.zero_grad()        # gradients add up in .grad: clear last step's
        loss = loss_fn(model(X), y)  # forward pass, then one number to minimise
        loss.backward()              # backprop: d loss / d every parameter
        optimizer.step()             # move each parameter against its gradient
        total_loss += loss.item() * len(y)
        n_seen += len(y)
        bar.set_postfix(loss=loss)
    return total_loss / n_seen


def evaluate(model, loader) -> float:
    """Accuracy of ``model`` on ``loader``'s data, in [0, 1]."""
    model.eval()
    correct = 0
    with gradlab.no_grad():  # no training here: don't record the graph for backward
        for X, y in loader:
            correct += (model(X).argmax(1) == y).sum().item()
    return correct / len(loader.dataset)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of this example (shared with ``gradlab demo moons``)."""
    parser.add_argument("--epochs", type=int, default=20, help="passes over the training "
                        "data (default 20)")
    parser.add_argument("--lr", type=float, default=0.01, help="Adam's learning rate "
                        "(default 0.01)")
    parser.add_argument("--batch-size", type=int, default=32, help="points per step "
                        "(default 32)")
    parser.add_argument("--seed", type=int, default=0, help="random seed: same seed, same "
                        "result (default 0)")
    parser.add_argument("--save", metavar="PATH", help="save the trained weights there "
                        "(gradlab.save of the state_dict)")
    parser.add_argument("--quiet", action="store_true", help="print only the final result")
    return parser


def run(args: argparse.Namespace) -> float:
    """Train with the options in ``args``; prints progress and returns the test accuracy."""
    gradlab.manual_seed(args.seed)  # seeds the data, the split, the weights and the shuffling
    train_set, test_set = make_data()
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=256)

    model = make_model()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = gradlab.optim.Adam(model.parameters(), lr=args.lr)
    if not args.quiet:
        print(f"two moons: {len(train_set)} training and {len(test_set)} test points, "
              f"Adam lr={args.lr}, batch size {args.batch_size}\n{model}")

    start = time.perf_counter()
    accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        loss = train_one_epoch(model, train_loader, loss_fn, optimizer,
                               desc=f"epoch {epoch}", quiet=args.quiet)
        accuracy = evaluate(model, test_loader)
        if not args.quiet and (epoch == 1 or epoch % 5 == 0 or epoch == args.epochs):
            print(f"epoch {epoch:3d}  train loss {loss:.4f}  test accuracy {accuracy:6.1%}")

    print(f"two moons: test accuracy {accuracy:.1%} after {args.epochs} "
          f"epoch{'s' if args.epochs != 1 else ''} "
          f"({time.perf_counter() - start:.1f} s)")
    if args.save:
        gradlab.save(model.state_dict(), args.save)
        print(f"saved the weights to {args.save}")
    return accuracy


def main(argv: list[str] | None = None) -> float:
    """Parse the command line (``argv``, default ``sys.argv[1:]``), train, return the accuracy."""
    parser = argparse.ArgumentParser(prog="python -m gradlab.examples.moons_mlp",
                                     description=__doc__.split("\n\n")[0])
    return run(add_arguments(parser).parse_args(argv))


if __name__ == "__main__":
    main()
