"""``python -m gradlab.distributed.run --nproc-per-node N script.py [args]``: start N ranks.

The launcher of ``torchrun``'s shape: it picks a free port on this machine,
starts ``N`` copies of the script with ``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT`` set (what
``init_process_group()`` reads), and waits. If one rank fails, the others are
stopped, and the launcher exits with the failed rank's code after saying
which rank it was.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time

__all__ = ["main", "launch"]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(command: list[str], nproc: int, port: int | None = None,
           poll: float = 0.05) -> int:
    """Run ``command`` as ``nproc`` ranks; return 0, or the first failing rank's exit code."""
    port = port or _free_port()
    procs = []
    for rank in range(nproc):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(nproc),
                   LOCAL_WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen(command, env=env))
    try:
        while True:
            codes = [p.poll() for p in procs]
            failed = [(r, c) for r, c in enumerate(codes) if c not in (None, 0)]
            if failed:
                rank, code = failed[0]
                print(f"gradlab.distributed.run: rank {rank} exited with code {code}; stopping "
                      "the other ranks", file=sys.stderr)
                return code
            if all(c == 0 for c in codes):
                return 0
            time.sleep(poll)
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gradlab.distributed.run",
        description="Start N processes of a training script as one gradlab.distributed group.")
    parser.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1,
                        dest="nproc", help="how many ranks to start (default 1)")
    parser.add_argument("--master-port", "--master_port", type=int, default=None,
                        dest="port", help="rank 0's port (default: a free one)")
    parser.add_argument("script", help="the training script")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    opts = parser.parse_args(argv)
    if opts.nproc < 1:
        parser.error("--nproc-per-node must be at least 1")
    return launch([sys.executable, opts.script, *opts.args], opts.nproc, opts.port)


if __name__ == "__main__":
    sys.exit(main())
