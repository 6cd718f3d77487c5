"""The ``gradlab`` command.

For now ``gradlab`` (or ``gradlab demo``) trains the built-in demo in the
terminal; the debugger app, ``run``, ``render`` and ``lesson`` arrive with
later parts of the project.
"""

from __future__ import annotations

import argparse

import gradlab


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gradlab", description="gradlab: a deep-learning engine you can watch think.")
    parser.add_argument("--version", action="version", version=f"gradlab {gradlab.__version__}")
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="train a small MLP on two moons and show what the "
                                       "engine did (the default)")
    demo.add_argument("--steps", type=int, default=300, help="training steps (default 300)")
    demo.add_argument("--lr", type=float, default=0.5, help="learning rate (default 0.5)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from . import demo

    if args.command in (None, "demo"):
        demo.run(steps=getattr(args, "steps", 300), lr=getattr(args, "lr", 0.5))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
