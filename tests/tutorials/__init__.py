"""``import gradlab as torch`` runs PyTorch tutorial code (one tutorial per test module).

Each program below is a PyTorch tutorial, retold on data that ships with
gradlab (the 8x8 digits instead of FashionMNIST/CIFAR-10) and shortened
where the tutorial trains for minutes. Each is a function of the library,
``torch``, so the very same code runs on gradlab and on PyTorch:

* ``quickstart``: the "Quickstart" (a Dataset subclass, DataLoader, an
  nn.Module subclass, SGD, train/test loops, save/load of the state_dict);
* ``cnn_classifier``: "Training a classifier" (a CNN with F.relu, pooling,
  torch.flatten, SGD with momentum, ``torch.max(outputs.data, 1)``) plus the
  "saving and loading a general checkpoint" recipe and an LR scheduler;
* ``polynomial_*``: "Learning PyTorch with examples" (tensors with manual
  gradients, autograd, a custom autograd.Function, nn, optim, a custom
  Module, dynamic control flow with weight sharing);
* ``lstm_tagger``: "Sequence models and LSTM networks" (Embedding + LSTM
  part-of-speech tagger) and ``sine_lstm``: a batch_first LSTM regressor
  with gradient clipping and Adam;
* ``autograd_basics``: "Automatic differentiation with torch.autograd".

With gradlab alone, each test checks that the program learns what it should.
Where PyTorch is installed, the program also runs on PyTorch from the same
starting weights (the only line a tutorial doesn't have: ``same_start``),
and the losses, accuracies and weights must agree.

The one thing such code meets that gradlab cannot change (``from torch
import nn`` after ``import gradlab as torch``) is in ``test_import_alias.py``.
"""
