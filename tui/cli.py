"""The ``gradlab`` command: the app's commands, then the engine's (:mod:`gradlab.cli`).

    gradlab                      the app: a home screen with the demo, the lessons and
                                 a script to open in the debugger
    gradlab run SCRIPT [args]    the debugger on SCRIPT (run as ``python SCRIPT args``)
    gradlab lesson [N]           the lessons with your progress; N opens lesson N
                                 beside the debugger on your working copy
    gradlab check N [--file PATH] [--watch]
                                 run lesson N's checks (lessons/cli.py)
    gradlab serve [--port 8000] [-- run SCRIPT args]
                                 serve the app to web browsers (a classroom): each
                                 visitor gets their own copy of the app
    gradlab demo ... / render ... / profile ...
                                 the engine's commands, see gradlab/cli.py

The commands that open the app live here rather than in gradlab/cli.py so that the
engine never imports the UI. Textual itself is imported only when the app opens, so
``gradlab demo``, ``gradlab render`` and ``gradlab profile`` start fast.
"""

from __future__ import annotations

import argparse
import os
import sys

from gradlab.cli import COMMANDS as ENGINE_COMMANDS
from gradlab.cli import Command, build_parser, run_command
from lessons.cli import check_arguments, lesson_arguments

__all__ = ["main", "COMMANDS"]


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-pause", dest="pause", action="store_false",
                        help="start running at once (default: paused before the first op)")
    parser.add_argument("script", help="the Python script to debug")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, metavar="...",
                        help="the script's own arguments")


def _open_app(script: str | None = None, script_args=(), pause: bool = True) -> int:
    from .app import GradlabApp

    result = GradlabApp(script=script, script_args=script_args, pause_at_start=pause).run()
    session = getattr(result, "run_on", None)
    if session is None:
        _let_stopped_runs_end()
        return 0
    if session.run is None:
        session.detach("continue")
        return 0
    return _wait_for(session.run, release=lambda: session.detach("continue"))


def _wait_for(run, poll: float = 0.2, out=None, release=None) -> int:
    """Wait for a script the user let run on after quitting the app, printing its output.

    The app leaves the script paused, so that what it printed in the app comes
    first; ``release()`` (detaching the session) then lets it run on.
    """
    out = out or sys.stdout
    print(f"gradlab: {run.name} runs on without the debugger (Ctrl+C stops it)", file=out)
    shown = run.output
    out.write(shown)
    out.flush()
    if release is not None:
        release()
    try:
        while not run.wait(poll):
            shown = _print_new(run.output, shown, out)
    except KeyboardInterrupt:
        out.flush()
        os._exit(130)  # nobody listens to its events any more: only ending the process stops it
    _print_new(run.output, shown, out)
    if run.traceback:
        out.write(run.traceback)
    print(f"gradlab: {run.name} {run.status}", file=out)
    return run.exit_code or 0


def _let_stopped_runs_end(out=None, notice_after: float = 1.0, poll: float = 0.1) -> None:
    """Wait for the scripts the user stopped as the app closed, saying so when it takes long.

    A stopped script ends at its next gradlab event or Python statement, but one blocked in
    a call Python can't interrupt (``time.sleep``, ``input()``) ends only when the call
    returns; Python would wait for it silently at exit. Ctrl+C ends the process at once.
    """
    from gradlab.debug.runner import live_runs

    out = out or sys.stderr
    waited, said = 0.0, False
    try:
        while True:
            busy = [run for run in live_runs() if run.stopping]
            if not busy:
                return
            if waited >= notice_after and not said:
                names = ", ".join(run.name for run in busy)
                print(f"gradlab: waiting for {names} to stop: it is inside a call Python "
                      "can't interrupt (time.sleep, input, a blocking read). Ctrl+C ends it "
                      "now.", file=out)
                said = True
            busy[0].wait(poll)
            waited += poll
    except KeyboardInterrupt:
        out.flush()
        os._exit(130)


def _print_new(text: str, shown: str, out) -> str:
    """Print what ``text`` (the last part of an output) has beyond ``shown``."""
    if text.startswith(shown):
        out.write(text[len(shown):])
    else:  # the bounded buffer dropped its oldest part: find where ``shown`` ended
        tail = shown[-200:]
        cut = text.rfind(tail) if tail else -1
        out.write(text[cut + len(tail):] if cut >= 0 else text)
    out.flush()
    return text


def _run_run(args: argparse.Namespace) -> int:
    if not os.path.isfile(args.script):
        print(f"gradlab run: no such script: {args.script}", file=sys.stderr)
        return 2
    return _open_app(args.script, args.script_args, pause=args.pause)


def _open_lesson(lesson, path) -> int:
    from .app import GradlabApp

    GradlabApp(lesson=lesson.number).run()
    _let_stopped_runs_end()
    return 0


def _run_lesson(args: argparse.Namespace) -> int:
    from lessons.cli import run_lesson

    return run_lesson(args, open_app=_open_lesson)


def _run_check(args: argparse.Namespace) -> int:
    from lessons.cli import run_check

    return run_check(args)


def _serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="localhost",
                        help="address to listen on (default localhost; 0.0.0.0 for a "
                        "classroom network)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("app_args", nargs=argparse.REMAINDER, metavar="-- run SCRIPT ...",
                        help="what each visitor opens: nothing for the home screen, or "
                        "`-- run SCRIPT args` for the debugger on a script")


def _run_serve(args: argparse.Namespace) -> int:
    from .serve import serve

    print(f"gradlab serve: open http://{args.host}:{args.port} in a browser (Ctrl+C stops)",
          flush=True)
    serve(args.app_args, host=args.host, port=args.port)
    return 0


COMMANDS = [
    Command("run", "open the debugger on a training script", _run_arguments, _run_run,
            description="Run SCRIPT (with its arguments) under the debugger: the graph, "
            "tensors, memory and optimizer state as it trains; step op by op. Starts paused "
            "before the first op: press c to continue, n/b/o/i/e to step, ? for help."),
    Command("lesson", "the lessons: list them, or open lesson N in the app",
            lesson_arguments, _run_lesson,
            description="With no number: the lessons and your progress. With a number: the "
            "lesson's text beside the debugger running your working copy of it (made from "
            "the starter the first time, in ~/gradlab-lessons or $GRADLAB_LESSONS_DIR). In the "
            "app, k checks, h gives a hint, r reruns your file, R resets it."),
    Command("check", "run a lesson's checks on your file", check_arguments, _run_check,
            description="Run lesson N's checks on your working copy (or --file PATH) and print "
            "each task with what was expected and what your code gave. Exits 0 only when "
            "every task passes. --watch checks again on every save."),
    Command("serve", "serve the app to web browsers (for a classroom)", _serve_arguments,
            _run_serve, description="Serve the gradlab app over HTTP with textual-serve: "
            "every browser that opens the page gets its own copy. Example: gradlab serve "
            "--host 0.0.0.0 --port 8000 -- run train.py --epochs 3"),
    *ENGINE_COMMANDS,
]


def main(argv: list[str] | None = None) -> int:
    args = build_parser(COMMANDS).parse_args(argv)
    if args.command is None:  # plain ``gradlab``: the app's home screen
        return _open_app()
    return run_command(args)


if __name__ == "__main__":
    raise SystemExit(main())
