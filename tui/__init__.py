"""tui: gradlab's terminal app (Textual), a view over a gradlab.debug session.

Presentation only: the session records and computes; screens and widgets draw
its snapshots. ``gradlab`` (or ``python -m tui``) opens the app.
"""
