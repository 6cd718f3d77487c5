"""The engine's side of the ``gradlab`` command: the commands that need no app.

    gradlab demo [--steps N --lr X]
                                 the engine demo: raw tensor ops train an MLP on two
                                 moons, then a count of what the engine did per step
    gradlab demo engine          the same, by name
    gradlab demo moons [options] gradlab.examples.moons_mlp: nn + optim + DataLoader
    gradlab demo digits [options]
                                 gradlab.examples.digits_cnn: a CNN on 8x8 digits
    gradlab render SCRIPT [script args] -o FILE [--view forward|backward] [--depth N]
                   [--values] [--grads] [--step K]
                                 run a training script and draw the graph of its K-th
                                 backward into FILE (.svg, .png, .pdf or .dot)
    gradlab profile SCRIPT [script args] [--steps N] [--skip K] [--sort KEY] [--rows N]
                   [--shapes] [--modules] [--memory] [-o TRACE.json]
                                 run a training script under gradlab.profiler and print
                                 the table of where N steps spent their time

Each command is one ``Command`` in ``COMMANDS`` (a name, a help line, a function
that adds its arguments and one that runs it), and each demo one ``Command`` in
``_demos()``; ``lesson`` joins the same way in a later part of the project.

The ``gradlab`` console script itself is :mod:`tui.cli`: it adds the app's commands
(the home screen, ``run``, ``serve``) to these. DESIGN.md puts the whole command line
here, but the engine never imports the UI, so the commands that open the app live
with the app, and this module stays importable (and fast) without Textual.
"""

from __future__ import annotations

import argparse
import os
import sys
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


# --- gradlab render SCRIPT ... ------------------------------------------------------------
def _render_options(parser: argparse.ArgumentParser, defaults: bool = True) -> None:
    default = (lambda value: value) if defaults else (lambda value: argparse.SUPPRESS)
    parser.add_argument("-o", "--output", default=default(None), metavar="FILE",
                        help="where to write the graph: .svg, .png, .pdf or .dot (required)")
    parser.add_argument("--view", choices=("forward", "backward"), default=default("forward"),
                        help="forward: inputs, parameters, ops; backward: the grad_fn graph "
                        "with saved tensors (default forward)")
    parser.add_argument("--depth", type=int, default=default(None), metavar="N",
                        help="draw each module N levels down as one box (0: the whole model "
                        "as one box)")
    parser.add_argument("--values", action="store_true", default=default(False),
                        help="print the values of small tensors")
    parser.add_argument("--grads", action="store_true", default=default(False),
                        help="print the gradients of small tensors")
    parser.add_argument("--step", type=int, default=default(1), metavar="K",
                        help="draw the K-th backward pass (default 1)")


def _script_arguments(parser: argparse.ArgumentParser, script_help: str, add_options) -> None:
    """SCRIPT and its own arguments, then the command's options (``add_options``)."""
    parser.add_argument("script", help=script_help)
    parser.add_argument("script_args", nargs=argparse.REMAINDER, metavar="...",
                        help="the script's own arguments; the options above may follow "
                        "them; after `--` everything goes to the script")
    add_options(parser)


def _render_arguments(parser: argparse.ArgumentParser) -> None:
    _script_arguments(parser, "the Python script to run (it must call backward)",
                      _render_options)


def _split_own_args(args: argparse.Namespace, prog: str, add_options) -> list[str]:
    """Take the command's own options (``add_options``) out of the script's arguments (up
    to a ``--``) into ``args``; return the script's arguments."""
    rest = list(args.script_args)
    after = []
    if "--" in rest:
        cut = rest.index("--")
        rest, after = rest[:cut], rest[cut + 1:]
    parser = argparse.ArgumentParser(prog=prog, add_help=False, allow_abbrev=False)
    add_options(parser, defaults=False)
    ours, script_args = parser.parse_known_args(rest)
    for name, value in vars(ours).items():
        setattr(args, name, value)
    return script_args + after


def _run_render(args: argparse.Namespace) -> int:
    from .viz import GraphvizNotFound
    from .viz.dot import to_digraph, write
    from .viz.graph import build
    from .viz.script import NoBackward, ScriptFailed, capture_script

    script_args = _split_own_args(args, "gradlab render", _render_options)
    if args.depth is not None and args.depth < 0:
        print(f"gradlab render: --depth must be 0 or more, got {args.depth}", file=sys.stderr)
        return 2
    if not args.output:
        print("gradlab render: give the output file with -o FILE (.svg, .png, .pdf or .dot)",
              file=sys.stderr)
        return 2
    try:
        cap = capture_script(args.script, script_args, step=args.step)
    except (NoBackward, FileNotFoundError, ValueError) as error:
        print(f"gradlab {error}", file=sys.stderr)
        return 1
    except ScriptFailed as failed:
        error = failed.error
        if isinstance(error, SystemExit):
            how = "exited before backward()" if error.code in (None, 0) else \
                f"exited with status {error.code}"
            print(f"gradlab render: {args.script} {how}; no graph written", file=sys.stderr)
            return 1
        sys.stderr.write(failed.script_traceback())  # the script's error, as Python shows it
        print(f"gradlab render: {args.script} raised {type(error).__name__}; no graph "
              "written", file=sys.stderr)
        return 1
    try:
        graph = build(cap, view=args.view, show_values=args.values, show_grads=args.grads,
                      depth=args.depth)
        write(to_digraph(graph), args.output)
    except (GraphvizNotFound, ValueError) as error:
        print(f"gradlab render: {error}", file=sys.stderr)
        return 1
    print(f"gradlab render: wrote the {args.view} graph of backward #{args.step} "
          f"({len(cap.ops)} ops) to {args.output}")
    return 0


# --- gradlab profile SCRIPT ... -----------------------------------------------------------
def _profile_options(parser: argparse.ArgumentParser, defaults: bool = True) -> None:
    default = (lambda value: value) if defaults else (lambda value: argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=default(3), metavar="N",
                        help="training steps (backward passes) to record (default 3)")
    parser.add_argument("--skip", type=int, default=default(1), metavar="K",
                        help="steps to run unrecorded first: they pay one-time costs "
                        "(default 1)")
    parser.add_argument("--sort", default=default("self_cpu_time_total"), metavar="KEY",
                        help="the column to sort by: self_cpu_time_total (default), "
                        "cpu_time_total, cpu_time, count, cpu_memory_usage ...")
    parser.add_argument("--rows", type=int, default=default(25), metavar="N",
                        help="rows in the table (default 25)")
    parser.add_argument("--shapes", action="store_true", default=default(False),
                        help="one row per op and input shapes")
    parser.add_argument("--modules", action="store_true", default=default(False),
                        help="one row per op and module path")
    parser.add_argument("--memory", action="store_true", default=default(False),
                        help="count the bytes each op allocates")
    parser.add_argument("-o", "--output", default=default(None), metavar="FILE",
                        help="also write a Chrome trace (JSON) to FILE, for ui.perfetto.dev")


def _profile_arguments(parser: argparse.ArgumentParser) -> None:
    _script_arguments(parser, "the Python script to run (a training loop)", _profile_options)


def _run_profile(args: argparse.Namespace) -> int:
    from .profiler.event_list import SORT_KEYS
    from .profiler.script import profile_script

    script_args = _split_own_args(args, "gradlab profile", _profile_options)
    if args.sort not in SORT_KEYS:
        print(f"gradlab profile: --sort must be one of {', '.join(SORT_KEYS)}; got "
              f"{args.sort!r}", file=sys.stderr)
        return 2
    try:
        found = profile_script(args.script, script_args, skip=args.skip, steps=args.steps,
                               record_shapes=args.shapes, profile_memory=args.memory)
    except (FileNotFoundError, ValueError) as error:
        print(f"gradlab {error}", file=sys.stderr)
        return 2
    if found.error is not None and not (isinstance(found.error, SystemExit) and
                                        found.error.code in (None, 0)):
        sys.stderr.write(found.script_traceback(os.path.abspath(args.script)))
    if found.profile is None:
        print(f"gradlab profile: {args.script} ended after fewer than {args.skip} backward "
              f"passes (the ones --skip leaves out); nothing was recorded. Try --skip 0",
              file=sys.stderr)
        return 1
    events = found.profile.events()
    for e in events:  # one row for all the steps: their self time is the Python around ops
        if e.kind == "range" and e.name.startswith("ProfilerStep#"):
            e.name = "ProfilerStep*"
    table = events.key_averages(group_by_input_shape=args.shapes, group_by_module=args.modules)
    print(f"gradlab profile: {args.script}, {found.steps} step(s) recorded after skipping "
          f"{args.skip}")
    print(table.table(sort_by=args.sort, row_limit=args.rows))
    if args.output:
        found.profile.export_chrome_trace(args.output)
        print(f"gradlab profile: wrote the timeline to {args.output} (open it in "
              "https://ui.perfetto.dev)")
    return 1 if found.error is not None and not isinstance(found.error, SystemExit) else 0


COMMANDS = [
    Command("demo", "train a built-in demo in the terminal, without the app: engine, moons "
            "or digits", _demo_arguments, _run_demo,
            description="Train one of the built-in demos in the terminal. Without a NAME, "
            "or with `engine`, the raw-ops engine demo runs with --steps and --lr."),
    Command("render", "run a training script and draw the graph of its K-th backward into an "
            "image (.svg, .png, .pdf) or DOT file", _render_arguments, _run_render,
            description="Run SCRIPT (with its arguments) in this process and write the "
            "graph of its K-th backward pass to FILE. The script stops once the graph is "
            "captured. Example: gradlab render train.py --epochs 3 -o graph.svg --depth 1"),
    Command("profile", "run a training script under gradlab.profiler and print where its "
            "steps spend their time, op by op", _profile_arguments, _run_profile,
            description="Run SCRIPT (with its arguments) in this process, skip its first "
            "--skip training steps, record the next --steps (a step ends at each backward "
            "pass), stop the script, and print the profiler's table. Example: gradlab "
            "profile train.py --steps 5 --memory -o trace.json"),
]


# --- the parser ----------------------------------------------------------------------------
def build_parser(commands: list[Command]) -> argparse.ArgumentParser:
    """The ``gradlab`` parser with one subcommand per ``Command``."""
    parser = argparse.ArgumentParser(
        prog="gradlab", description="gradlab: a deep-learning engine you can watch think.")
    parser.add_argument("--version", action="version", version=f"gradlab {gradlab.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in commands:
        command_parser = sub.add_parser(command.name, help=command.help,
                                        description=command.description or command.help)
        command.add_arguments(command_parser)
        command_parser.set_defaults(run=command.run)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """Run the subcommand ``args`` was parsed for; its exit status."""
    status = args.run(args)
    return status if isinstance(status, int) else 0


def main(argv: list[str] | None = None) -> int:
    """The engine's commands only (``python -m gradlab.cli``); ``gradlab`` adds the app's."""
    parser = build_parser(COMMANDS)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        print("\nThe app (home screen, `run`, `serve`) is the `gradlab` command "
              "(python -m tui).")
        return 2
    return run_command(args)


if __name__ == "__main__":
    raise SystemExit(main())
