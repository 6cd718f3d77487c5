"""Complete training scripts, written the way a PyTorch tutorial writes them.

Each example is one short file that runs on its own
(``python -m gradlab.examples.moons_mlp``) or through the CLI
(``gradlab demo moons``), trains in seconds on a laptop CPU, and is
reproducible: a fixed seed gives the same accuracy every run.

* :mod:`gradlab.examples.moons_mlp`: a multi-layer perceptron separates two
  interleaved half circles (``nn.Sequential``, ``CrossEntropyLoss``, ``Adam``).
* :mod:`gradlab.examples.digits_cnn`: a small convolutional network reads 8x8
  handwritten digits (``nn.Module`` subclass, ``Conv2d``, ``MaxPool2d``,
  ``BatchNorm2d``, ``Dropout``, an LR scheduler).

Read them top to bottom: the comments explain the choices a beginner asks about.
"""

EXAMPLES = ("moons_mlp", "digits_cnn")
