"""``python -m lessons``: the lesson commands without the app (see lessons/cli.py)."""

from .cli import main

raise SystemExit(main())
