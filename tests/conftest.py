"""Shared fixtures: every device test runs on each available device."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import gradlab  # noqa: E402

# Property tests draw the same examples on every run unless asked to explore: a suite run
# (and CI) is reproducible, and a red run is never a new random draw that no one can
# replay. HYPOTHESIS_PROFILE=explore draws fresh examples (and keeps failures in
# .hypothesis/ to replay), for a session spent hunting edge cases.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

DEVICES = ["cpu"] + (["cuda"] if gradlab.cuda.is_available() else [])


@pytest.fixture(params=DEVICES)
def device(request) -> str:
    """The device a test runs on: "cpu", and "cuda" where a GPU is present."""
    return request.param


@pytest.fixture(autouse=True)
def _seeded():
    """Each test starts from the same random state, so failures reproduce."""
    gradlab.manual_seed(0)
    yield
