"""Waiting in tests for something another thread does, without sleeping longer than needed."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(condition: Callable[[], object], timeout: float = 10.0) -> bool:
    """Poll ``condition`` every 10 ms until it is true (True) or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
