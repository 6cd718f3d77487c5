"""``python -m tui [run SCRIPT args]``: the app, as the ``gradlab`` command opens it."""

from .cli import main

raise SystemExit(main())
