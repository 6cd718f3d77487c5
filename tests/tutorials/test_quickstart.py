"""The "Quickstart" tutorial: a Dataset subclass, DataLoader, an nn.Module subclass, SGD,
train/test loops, save/load of the state_dict."""

# ruff: noqa: B007 - tutorial code keeps its loop variables (for t in range(2000): ...)
from __future__ import annotations

import numpy as np

import gradlab
from tests.oracle import needs_torch, torch
from tests.tutorials._shared import as_numpy, assert_close_runs, digits, same_start

# --- 1. Quickstart ------------------------------------------------------------------------------


def quickstart(torch, path, start=None, epochs: int = 10, shuffle: bool = True) -> dict:
    nn = torch.nn  # the tutorial's `from torch import nn` (see IMPORTS below)
    DataLoader, Dataset = torch.utils.data.DataLoader, torch.utils.data.Dataset

    class DigitsDataset(Dataset):
        def __init__(self, images, labels):
            self.images = images
            self.labels = labels

        def __len__(self):
            return len(self.labels)

        def __getitem__(self, idx):
            image = torch.tensor(self.images[idx])
            label = int(self.labels[idx])
            return image, label

    training_data = DigitsDataset(*digits()["train"])
    test_data = DigitsDataset(*digits()["test"])

    batch_size = 64
    train_dataloader = DataLoader(training_data, batch_size=batch_size, shuffle=shuffle)
    test_dataloader = DataLoader(test_data, batch_size=batch_size)

    for X, y in test_dataloader:
        first_batch = (tuple(X.shape), tuple(y.shape), str(y.dtype).split(".")[-1])
        break

    device = "cuda" if torch.cuda.is_available() else "cpu"

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(8 * 8, 64),
                nn.ReLU(),
                nn.Linear(64, 64),
                nn.ReLU(),
                nn.Linear(64, 10),
            )

        def forward(self, x):
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits

    model = NeuralNetwork().to(device)
    initial = same_start(torch, model, start)

    learning_rate = 3e-1
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
    log = []

    def train(dataloader, model, loss_fn, optimizer):
        size = len(dataloader.dataset)
        model.train()
        for batch, (X, y) in enumerate(dataloader):
            X, y = X.to(device), y.to(device)

            # Compute prediction error
            pred = model(X)
            loss = loss_fn(pred, y)

            # Backpropagation
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

            if batch % 10 == 0:
                loss, current = loss.item(), (batch + 1) * len(X)
                log.append(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")

    def test(dataloader, model, loss_fn):
        size = len(dataloader.dataset)
        num_batches = len(dataloader)
        model.eval()
        test_loss, correct = 0, 0
        with torch.no_grad():
            for X, y in dataloader:
                X, y = X.to(device), y.to(device)
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()
        test_loss /= num_batches
        correct /= size
        log.append(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
        return correct, test_loss

    accuracies, test_losses = [], []
    for t in range(epochs):
        log.append(f"Epoch {t+1}\n-------------------------------")
        train(train_dataloader, model, loss_fn, optimizer)
        correct, test_loss = test(test_dataloader, model, loss_fn)
        accuracies.append(correct)
        test_losses.append(test_loss)

    torch.save(model.state_dict(), path)
    trained = as_numpy(model.state_dict())

    model = NeuralNetwork().to(device)
    model.load_state_dict(torch.load(path, weights_only=True))

    classes = [str(digit) for digit in range(10)]
    model.eval()
    x, y = test_data[0][0], test_data[0][1]
    with torch.no_grad():
        x = x.to(device)
        pred = model(x)
        predicted, actual = classes[pred[0].argmax(0)], classes[y]

    return {"first_batch": first_batch, "initial": initial, "trained": trained,
            "reloaded": as_numpy(model.state_dict()), "accuracies": accuracies,
            "test_losses": test_losses, "log": log, "predicted": predicted, "actual": actual,
            "logits": pred.numpy().copy()}


def test_quickstart_learns_digits_and_round_trips_the_state_dict(tmp_path):
    run = quickstart(gradlab, tmp_path / "model.pth")
    assert run["first_batch"] == ((64, 1, 8, 8), (64,), "int64")
    assert run["accuracies"][-1] > 0.9
    assert run["test_losses"][-1] < run["test_losses"][0]
    for name, value in run["trained"].items():
        np.testing.assert_array_equal(run["reloaded"][name], value, err_msg=name)
    assert run["actual"] == str(digits()["test"][1][0])
    assert run["predicted"] == run["actual"]
    assert run["log"][1].startswith("loss: ") and run["log"][1].endswith("/ 1442]")
    assert "Accuracy: " in run["log"][-1]


@needs_torch
def test_quickstart_matches_pytorch(tmp_path):
    ours = quickstart(gradlab, tmp_path / "ours.pth", shuffle=False)
    theirs = quickstart(torch, tmp_path / "theirs.pth", start=ours["initial"], shuffle=False)
    assert ours["first_batch"] == theirs["first_batch"]
    assert_close_runs(ours, theirs, ["test_losses", "logits"])
    np.testing.assert_allclose(ours["accuracies"], theirs["accuracies"], atol=2 / 355)
    for name in ours["trained"]:
        np.testing.assert_allclose(ours["trained"][name], theirs["trained"][name],
                                   rtol=1e-4, atol=1e-5, err_msg=name)
    assert ours["predicted"] == theirs["predicted"]
