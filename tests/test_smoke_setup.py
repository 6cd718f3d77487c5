"""The set-up works: gradlab imports from this checkout and has its CLI entry point."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_gradlab_imports_from_this_checkout():
    import gradlab
    import gradlab.cli

    assert any(Path(p).resolve() == REPO / "gradlab" for p in gradlab.__path__)
    assert callable(gradlab.cli.main)
