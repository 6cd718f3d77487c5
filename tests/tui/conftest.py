"""Fixtures shared by the app's tests: ``runs`` (the sessions a test started, all
stopped and joined afterwards) lives in test_app.py and is offered to every file here."""

from tests.tui.test_app import runs  # noqa: F401
