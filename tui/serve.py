"""``gradlab serve``: the app in web browsers, through textual-serve (for a classroom).

textual-serve runs one copy of the app per browser tab, each as its own
process started from a shell command; this module builds that command (this
Python, this gradlab) and starts the web server.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Sequence

__all__ = ["serve_command", "serve"]


def serve_command(app_args: Sequence[str] = ()) -> str:
    """The command each visitor's app runs: ``python -m tui [run SCRIPT args]``."""
    app_args = list(app_args)
    if app_args[:1] == ["--"]:
        app_args = app_args[1:]
    if len(app_args) >= 2 and app_args[0] == "run":  # the visitor's process may start elsewhere
        app_args[1] = os.path.abspath(app_args[1])
    return shlex.join([sys.executable, "-m", "tui", *app_args])


def serve(app_args: Sequence[str] = (), *, host: str = "localhost", port: int = 8000) -> None:
    """Serve the app at ``http://host:port`` until Ctrl+C."""
    from textual_serve.server import Server

    Server(serve_command(app_args), host=host, port=port, title="gradlab").serve()
