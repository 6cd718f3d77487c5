"""The CPU backend keeps freed host memory for reuse (glibc), unless told not to."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = "import gradlab.backends.numpy_backend as b; print(b.KEEPS_FREED_MEMORY)"


def _probe(**env) -> str:
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                            env={**os.environ, **env}, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt is Linux's")
def test_importing_gradlab_tunes_malloc_on_linux():
    assert _probe() == "True"


def test_the_environment_variable_turns_it_off():
    assert _probe(GRADLAB_KEEP_FREED_MEMORY="0") == "False"


STEP = """
import resource
import gradlab
from gradlab import nn
gradlab.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5),
                      nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 10))
x, y = gradlab.randn(64, 1, 28, 28), gradlab.randint(0, 10, (64,))
def step():
    model.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
for _ in range(3):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    step()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) // 5)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt is Linux's")
def test_a_training_step_stops_faulting_pages_in():
    """The point of it: a small CNN's step faults ~3,000 pages in without it, ~none with it."""
    def faults_per_step(**env) -> int:
        result = subprocess.run([sys.executable, "-c", STEP], capture_output=True, text=True,
                                env={**os.environ, "OPENBLAS_NUM_THREADS": "1", **env},
                                timeout=300)
        assert result.returncode == 0, result.stderr
        return int(result.stdout)

    kept, returned = faults_per_step(), faults_per_step(GRADLAB_KEEP_FREED_MEMORY="0")
    assert returned > 500  # the problem is real on this machine...
    assert kept < returned / 10  # ...and the tuning removes it
