"""Shared fixtures: every device test runs on each available device."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import gradlab  # noqa: E402

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
