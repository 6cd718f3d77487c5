"""gradlab.examples: real training runs that must reach their accuracy on held-out data."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import numpy as np
import pytest

import gradlab
from gradlab import cli
from gradlab.examples import EXAMPLES, digits_cnn, moons_mlp


def test_moons_mlp_reaches_97_percent_test_accuracy(capsys):
    accuracy = moons_mlp.main([])
    printed = capsys.readouterr().out
    assert accuracy >= 0.97
    assert printed.startswith("two moons: 800 training and 200 test points")
    assert "epoch  20  train loss" in printed
    assert f"two moons: test accuracy {accuracy:.1%} after 20 epochs" in printed


def test_digits_cnn_reaches_95_percent_test_accuracy(capsys):
    accuracy = digits_cnn.main(["--quiet"])
    printed = capsys.readouterr().out
    assert accuracy >= 0.95
    assert printed.startswith(f"digits: test accuracy {accuracy:.1%} after 10 epochs")
    assert printed.count("\n") == 1  # --quiet: only the result line


def test_digits_cnn_model_shapes():
    model = digits_cnn.DigitsCNN()
    assert model(gradlab.zeros(3, 1, 8, 8)).shape == (3, 10)
    assert sum(p.numel() for p in model.parameters()) == 6186


def _state(path) -> dict[str, np.ndarray]:
    return {name: value.numpy() for name, value in gradlab.load(path).items()}


def test_same_seed_same_weights_other_seed_other_weights(tmp_path, capsys):
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        moons_mlp.main(["--epochs", "2", "--quiet", "--seed", str(seed),
                        "--save", str(tmp_path / f"{name}.safetensors")])
    a, b, c = (_state(tmp_path / f"{name}.safetensors") for name in "abc")
    assert list(a) == ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"]
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert not np.array_equal(a["0.weight"], c["0.weight"])
    assert capsys.readouterr().out.count("saved the weights to") == 3


def test_saved_weights_reload_into_the_model_with_the_same_accuracy(tmp_path, capsys):
    path = tmp_path / "digits.safetensors"
    accuracy = digits_cnn.main(["--epochs", "2", "--batch-size", "64", "--quiet",
                                "--save", str(path)])
    model = digits_cnn.DigitsCNN()
    model.load_state_dict(gradlab.load(path))
    test_loader = gradlab.utils.data.DataLoader(gradlab.datasets.Digits(train=False),
                                                batch_size=100)
    assert digits_cnn.evaluate(model, test_loader) == accuracy
    assert capsys.readouterr().out.endswith(f"saved the weights to {path}\n")


def test_options_change_the_run(capsys):
    moons_mlp.main(["--epochs", "1", "--lr", "0.003", "--batch-size", "100"])
    printed = capsys.readouterr().out
    assert "Adam lr=0.003, batch size 100" in printed
    assert "after 1 epoch (" in printed


def test_bad_option_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        digits_cnn.main(["--epochs", "two"])
    assert exit_info.value.code == 2
    assert "invalid int value: 'two'" in capsys.readouterr().err


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_has_the_same_interface(name):
    module = importlib.import_module(f"gradlab.examples.{name}")
    assert callable(module.main) and callable(module.run) and callable(module.evaluate)
    args = module.add_arguments(argparse.ArgumentParser()).parse_args([])
    assert {"epochs", "lr", "batch_size", "seed", "save", "quiet"} <= set(vars(args))


def test_cli_demo_moons_and_digits_train_and_report(capsys):
    assert cli.main(["demo", "moons", "--epochs", "2", "--seed", "3"]) == 0
    printed = capsys.readouterr().out
    assert "two moons: 800 training" in printed and "epoch   2  train loss" in printed
    assert "two moons: test accuracy" in printed
    assert cli.main(["demo", "digits", "--epochs", "1", "--batch-size", "128"]) == 0
    printed = capsys.readouterr().out
    assert "DigitsCNN(" in printed and "Conv2d(1, 16, kernel_size=(3, 3)" in printed
    assert "epoch   1  train loss" in printed and "after 1 epoch (" in printed


def test_examples_run_as_modules():
    result = subprocess.run([sys.executable, "-m", "gradlab.examples.moons_mlp", "--epochs",
                             "1", "--quiet"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("two moons: test accuracy")
    assert result.stderr == ""  # no progress bar when stderr isn't a terminal
