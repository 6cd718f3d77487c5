"""Shared by the anomaly-detection tests: their warning filters, the check that each test left
detection off, and a leaf of zeros."""

from __future__ import annotations

import pytest

import gradlab
from gradlab import autograd
from gradlab.autograd import anomaly_mode

QUIET_ANOMALY = pytest.mark.filterwarnings(
    "ignore:Anomaly Detection has been enabled", "ignore:invalid value encountered",
    "ignore:divide by zero encountered")


def check_detection_left_off():
    """An autouse fixture in each test file: after a test, the mode must be as it was before."""
    yield
    assert not autograd.is_anomaly_enabled(), "a test left anomaly detection on"
    assert autograd.is_anomaly_check_nan_enabled()
    assert anomaly_mode.anomaly.running is None


def _zeros():
    return gradlab.zeros(3, requires_grad=True)
