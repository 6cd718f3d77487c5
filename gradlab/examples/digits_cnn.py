"""Handwritten digits: a small convolutional network reads 8x8 images.

The data are 1,797 scans of the digits 0-9, each 8x8 grey levels, shipped
with gradlab (``gradlab.datasets.Digits``: 1,442 for training, 355 for
testing). A CNN looks at small patches with shared weights, so a stroke is
recognised wherever it sits in the image; two convolution blocks and one
linear layer reach about 99% test accuracy in a few seconds.

New compared to ``moons_mlp``: a model written as an ``nn.Module`` subclass,
``Conv2d``/``MaxPool2d`` for images, ``BatchNorm2d`` and ``Dropout`` (layers
that behave differently in ``train()`` and ``eval()`` mode), and a learning
rate scheduler. Run it with::

    python -m gradlab.examples.digits_cnn           # or: gradlab demo digits
    python -m gradlab.examples.digits_cnn --epochs 3 --save digits.safetensors
"""

from __future__ import annotations

import argparse
import time

import gradlab
from gradlab import nn
from gradlab.datasets import Digits
from gradlab.optim.lr_scheduler import CosineAnnealingLR
from gradlab.utils.data import DataLoader
from gradlab.utils.progress import progress


class DigitsCNN(nn.Module):
    """(N, 1, 8, 8) images -> (N, 10) class scores.

    Shapes along the way: 1x8x8 -> conv -> 16x8x8 -> pool -> 16x4x4
    -> conv -> 32x4x4 -> pool -> 32x2x2 -> flatten -> 128 -> linear -> 10.
    """

    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()  # always first: it sets up the registries for parameters
        self.features = nn.Sequential(
            # padding=1 keeps 8x8: a 3x3 kernel needs one pixel of border on each side
            nn.Conv2d(1, 16, kernel_size=3, padding=1),
            nn.BatchNorm2d(16),  # normalise each channel over the batch: faster, steadier training
            nn.ReLU(),
            nn.MaxPool2d(2),     # keep the strongest response in each 2x2 block: 8x8 -> 4x4
            nn.Conv2d(16, 32, kernel_size=3, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.MaxPool2d(2),     # 4x4 -> 2x2
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),        # (N, 32, 2, 2) -> (N, 128)
            nn.Dropout(0.25),    # randomly zero features while training: less overfitting
            nn.Linear(32 * 2 * 2, num_classes),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def train_one_epoch(model, loader, loss_fn, optimizer, desc: str = "", quiet: bool = False):
    """One pass over the training data; returns the mean loss."""
    model.train()  # BatchNorm uses batch statistics, Dropout drops
    total_loss, n_seen = 0.0, 0
    bar = progress(loader, desc=desc, leave=False, disable=True if quiet else None)
    for images, labels in bar:
        optimizer.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        total_loss += loss.item() * len(labels)
        n_seen += len(labels)
        bar.set_postfix(loss=loss)
    return total_loss / n_seen


def evaluate(model, loader) -> float:
    """Accuracy of ``model`` on ``loader``'s data, in [0, 1]."""
    model.eval()  # BatchNorm uses its running statistics, Dropout passes everything through
    correct = 0
    with gradlab.no_grad():
        for images, labels in loader:
            correct += (model(images).argmax(1) == labels).sum().item()
    return correct / len(loader.dataset)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of this example (shared with ``gradlab demo digits``)."""
    parser.add_argument("--epochs", type=int, default=10, help="passes over the training "
                        "data (default 10)")
    parser.add_argument("--lr", type=float, default=0.01, help="Adam's initial learning "
                        "rate, annealed to 0 over the epochs (default 0.01)")
    parser.add_argument("--batch-size", type=int, default=32, help="images per step "
                        "(default 32)")
    parser.add_argument("--seed", type=int, default=0, help="random seed: same seed, same "
                        "result (default 0)")
    parser.add_argument("--save", metavar="PATH", help="save the trained weights there "
                        "(gradlab.save of the state_dict)")
    parser.add_argument("--quiet", action="store_true", help="print only the final result")
    return parser


def run(args: argparse.Namespace) -> float:
    """Train with the options in ``args``; prints progress and returns the test accuracy."""
    gradlab.manual_seed(args.seed)  # seeds the weights, the shuffling and Dropout
    train_set, test_set = Digits(train=True), Digits(train=False)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=256)

    model = DigitsCNN()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = gradlab.optim.Adam(model.parameters(), lr=args.lr)
    # Big steps early, small steps late: the lr follows half a cosine down to 0.
    scheduler = CosineAnnealingLR(optimizer, T_max=args.epochs)
    if not args.quiet:
        n_params = sum(p.numel() for p in model.parameters())
        print(f"digits: {len(train_set)} training and {len(test_set)} test images, "
              f"{n_params:,} parameters, Adam lr={args.lr}, batch size {args.batch_size}\n"
              f"{model}")

    start = time.perf_counter()
    accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        loss = train_one_epoch(model, train_loader, loss_fn, optimizer,
                               desc=f"epoch {epoch}", quiet=args.quiet)
        scheduler.step()  # once per epoch, after the optimizer's steps
        accuracy = evaluate(model, test_loader)
        if not args.quiet:
            print(f"epoch {epoch:3d}  train loss {loss:.4f}  test accuracy {accuracy:6.1%}")

    print(f"digits: test accuracy {accuracy:.1%} after {args.epochs} "
          f"epoch{'s' if args.epochs != 1 else ''} "
          f"({time.perf_counter() - start:.1f} s)")
    if args.save:
        gradlab.save(model.state_dict(), args.save)
        print(f"saved the weights to {args.save}")
    return accuracy


def main(argv: list[str] | None = None) -> float:
    """Parse the command line (``argv``, default ``sys.argv[1:]``), train, return the accuracy."""
    parser = argparse.ArgumentParser(prog="python -m gradlab.examples.digits_cnn",
                                     description=__doc__.split("\n\n")[0])
    return run(add_arguments(parser).parse_args(argv))


if __name__ == "__main__":
    main()
