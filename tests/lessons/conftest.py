"""Every lessons test keeps the student's files and progress in its own tmp_path."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _private_home(tmp_path, monkeypatch):
    """Working copies in tmp_path/workspace, progress in tmp_path/data: never the user's."""
    monkeypatch.setenv("GRADLAB_LESSONS_DIR", str(tmp_path / "workspace"))
    monkeypatch.setenv("GRADLAB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
