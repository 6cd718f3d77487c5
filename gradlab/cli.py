"""The ``gradlab`` command.

    gradlab                      the default: ``gradlab demo``
    gradlab demo [--steps N --lr X]
                                 the engine demo: raw tensor ops train an MLP on two
                                 moons, then a count of what the engine did per step
    gradlab demo engine          the same, by name
    gradlab demo moons [options] gradlab.examples.moons_mlp: nn + optim + DataLoader
    gradlab demo digits [options]
                                 gradlab.examples.digits_cnn: a CNN on 8x8 digits

Each command is one ``Command`` in ``COMMANDS`` (a name, a help line, a function
that adds its arguments and one that runs it), and each demo one ``Command`` in
``_demos()``; the debugger app, ``run``, ``render`` and ``lesson`` join the same
way in later parts of the project.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

import gradlab

from .examples import digits_cnn, moons_mlp


@dataclass(frozen=True)
class Command:
    """One subcommand: ``add_arguments(parser)`` declares its options, ``run(args)`` runs it."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], object]
    run: Callable[[argparse.Namespace], object]
    description: str = ""


# --- gradlab demo ... ----------------------------------------------------------------------
def _engine_arguments(parser: argparse.ArgumentParser, defaults: bool = True) -> None:
    # Under ``gradlab demo engine`` the defaults are SUPPRESSed, so that
    # ``gradlab demo --steps 50 engine`` keeps the 50 given before the name.
    steps = 300 if defaults else argparse.SUPPRESS
    lr = 0.5 if defaults else argparse.SUPPRESS
    parser.add_argument("--steps", type=int, default=steps, help="training steps (default 300)")
    parser.add_argument("--lr", type=float, default=lr, help="learning rate (default 0.5)")


def _run_engine(args: argparse.Namespace) -> None:
    from . import demo

    demo.run(steps=getattr(args, "steps", 300), lr=getattr(args, "lr", 0.5))


def _example(module) -> Command:
    """A demo that is one of gradlab.examples: its options and ``run`` come from the module."""
    name = module.__name__.rsplit(".", 1)[-1]
    summary, details = module.__doc__.split("\n\n")[:2]
    return Command(name, f"{summary} ({name}.py)", module.add_arguments, module.run,
                   description=f"{details} Source: {module.__name__}.")


def _demos() -> dict[str, Command]:
    return {
        "engine": Command(
            "engine", "raw tensor ops train an MLP on two moons, then a count of what the "
            "engine did in one step (the default)", lambda p: _engine_arguments(p, False),
            _run_engine, description="A 2-16-16-2 MLP learns two moons with raw tensor ops "
            "and a hand-written SGD step, while an event listener counts the forward ops, "
            "backward nodes and gradient accumulations of each step."),
        "moons": _example(moons_mlp),
        "digits": _example(digits_cnn),
    }


def _demo_arguments(parser: argparse.ArgumentParser) -> None:
    _engine_arguments(parser)  # ``gradlab demo --steps N`` runs the engine demo
    names = parser.add_subparsers(dest="demo", metavar="[NAME]",
                                  title="demos (without a NAME: engine)")
    for name, command in _demos().items():
        sub = names.add_parser(name, help=command.help,
                               description=command.description or command.help)
        command.add_arguments(sub)
        sub.set_defaults(demo_command=command)


def _run_demo(args: argparse.Namespace) -> None:
    command = getattr(args, "demo_command", None)
    (command.run if command is not None else _run_engine)(args)


COMMANDS = [
    Command("demo", "train a built-in demo in the terminal (the default): engine, moons "
            "or digits", _demo_arguments, _run_demo,
            description="Train one of the built-in demos in the terminal. Without a NAME, "
            "or with `engine`, the raw-ops engine demo runs with --steps and --lr."),
]
DEFAULT_COMMAND = "demo"


# --- the parser ----------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gradlab", description="gradlab: a deep-learning engine you can watch think.")
    parser.add_argument("--version", action="version", version=f"gradlab {gradlab.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command_parser = sub.add_parser(command.name, help=command.help,
                                        description=command.description or command.help)
        command.add_arguments(command_parser)
        command_parser.set_defaults(run=command.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:  # plain ``gradlab``: the default command with its defaults
        args = parser.parse_args([DEFAULT_COMMAND])
    args.run(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
