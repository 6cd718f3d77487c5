"""The process group: which process is which, and the sockets between them.

``init_process_group`` joins this process to a group of ``world_size``
processes, each with its ``rank`` (0 to world_size - 1), as
``torch.distributed`` does. gradlab's one backend, ``"gloo"`` (PyTorch's
name for its CPU backend; ``"tcp"`` is accepted too), is written here in
plain sockets: rank 0 listens on ``MASTER_ADDR:MASTER_PORT`` and every other
rank connects to it, so the group is a star with rank 0 at its centre. The
collectives (:mod:`.collectives`) send NumPy bytes along those sockets;
nothing is pickled.

A star costs rank 0 one message per rank per collective, which is fine for
the few processes of one machine this is for; it keeps every reduction in
one place and in one order (rank 0, 1, 2 ...), so results are the same on
every run.
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import struct
import time

import numpy as np

__all__ = ["init_process_group", "destroy_process_group", "is_initialized", "is_available",
           "get_rank", "get_world_size", "get_backend", "Group", "DistributedError"]

BACKENDS = ("gloo", "tcp")


class DistributedError(RuntimeError):
    """A collective failed: a peer left, timed out, or called a different collective."""


class Group:
    """This process's place in the group and its sockets (rank 0: one per other rank)."""

    def __init__(self, rank: int, world_size: int, backend: str, peers: dict,
                 timeout: float) -> None:
        self.rank, self.world_size, self.backend = rank, world_size, backend
        self.peers = peers  # rank -> socket (rank 0 holds all; the others hold {0: socket})
        self.timeout = timeout
        self.count = 0  # collectives so far: every rank must agree on each one

    # --- messages: a length-prefixed JSON header, then the array's raw bytes ---------------
    def send(self, peer: int, header: dict, array: np.ndarray | None = None) -> None:
        data = b"" if array is None else np.ascontiguousarray(array).tobytes()
        if array is not None:
            header = dict(header, dtype=array.dtype.str, shape=list(array.shape))
        text = json.dumps(header).encode()
        try:
            self.peers[peer].sendall(struct.pack("<II", len(text), len(data)) + text + data)
        except OSError as error:
            raise self._lost(peer, error) from None

    def receive(self, peer: int) -> tuple[dict, np.ndarray | None]:
        sock = self.peers[peer]
        try:
            sizes = _read_exactly(sock, 8)
            text_len, data_len = struct.unpack("<II", sizes)
            header = json.loads(_read_exactly(sock, text_len))
            data = _read_exactly(sock, data_len) if data_len else b""
        except (OSError, EOFError, ValueError) as error:
            raise self._lost(peer, error) from None
        if "dtype" not in header:
            return header, None
        array = np.frombuffer(data, dtype=np.dtype(header["dtype"])).reshape(header["shape"])
        return header, array.copy()

    def _lost(self, peer: int, error: Exception) -> DistributedError:
        what = "timed out" if isinstance(error, TimeoutError) else f"failed ({error})"
        return DistributedError(
            f"rank {self.rank}: talking to rank {peer} {what} during collective "
            f"#{self.count}. Its process may have ended or be stuck (did every rank call the "
            f"same collectives?); the timeout is {self.timeout:.0f} s "
            "(init_process_group(timeout=...))")

    def close(self) -> None:
        for sock in self.peers.values():
            try:
                sock.close()
            except OSError:
                pass
        self.peers = {}


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise EOFError("connection closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


_group: Group | None = None


def _current(op: str) -> Group:
    if _group is None:
        raise RuntimeError(
            f"{op}: the default process group has not been initialized. Fix: call "
            "gradlab.distributed.init_process_group('gloo') first, in every process (start "
            "them with python -m gradlab.distributed.run --nproc-per-node N script.py)")
    return _group


def is_available() -> bool:
    """True: gradlab's socket backend needs nothing beyond the standard library."""
    return True


def is_initialized() -> bool:
    return _group is not None


def get_rank(group=None) -> int:
    return _current("get_rank").rank


def get_world_size(group=None) -> int:
    return _current("get_world_size").world_size


def get_backend(group=None) -> str:
    return _current("get_backend").backend


def init_process_group(backend: str | None = "gloo", init_method: str | None = None,
                       timeout: datetime.timedelta | None = None, world_size: int = -1,
                       rank: int = -1, store=None, group_name: str = "",
                       device_id=None) -> None:
    """Join the group: ``env://`` (the default) reads ``MASTER_ADDR``, ``MASTER_PORT``,
    ``RANK`` and ``WORLD_SIZE`` as the launcher sets them; ``tcp://host:port`` takes the
    address from the URL and ``rank``/``world_size`` from the arguments."""
    global _group
    if _group is not None:
        raise RuntimeError("init_process_group: this process is already in a group. Fix: "
                           "call destroy_process_group() first")
    backend = (backend or "gloo").lower()
    if backend not in BACKENDS:
        hint = " (NCCL is CUDA's, and gradlab's GPUs sit behind CuPy)" if backend == "nccl" \
            else ""
        raise ValueError(f"init_process_group: unknown backend {backend!r}{hint}; gradlab "
                         f"has {', '.join(BACKENDS)}")
    if store is not None:
        raise NotImplementedError("init_process_group: store= is not supported; use "
                                  "init_method='env://' or 'tcp://host:port'")
    host, port, rank, world_size = _rendezvous_address(init_method, rank, world_size)
    seconds = timeout.total_seconds() if timeout is not None else 300.0
    peers = _connect(host, port, rank, world_size, seconds)
    _group = Group(rank, world_size, backend, peers, seconds)


def _rendezvous_address(init_method, rank: int, world_size: int) -> tuple:
    method = init_method or "env://"
    if method.startswith("env://"):
        missing = [k for k in ("MASTER_ADDR", "MASTER_PORT") if k not in os.environ]
        if rank < 0:
            missing += [] if "RANK" in os.environ else ["RANK"]
        if world_size < 0:
            missing += [] if "WORLD_SIZE" in os.environ else ["WORLD_SIZE"]
        if missing:
            raise ValueError(
                f"init_process_group: init_method='env://' needs the environment variables "
                f"{', '.join(missing)}. Fix: start the processes with python -m "
                "gradlab.distributed.run --nproc-per-node N script.py, which sets them")
        host, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
        rank = rank if rank >= 0 else int(os.environ["RANK"])
        world_size = world_size if world_size >= 0 else int(os.environ["WORLD_SIZE"])
    elif method.startswith("tcp://"):
        host, _, port = method[len("tcp://"):].rpartition(":")
        port = int(port)
        if rank < 0 or world_size < 0:
            raise ValueError("init_process_group: with init_method='tcp://...' pass rank= "
                             "and world_size=")
    else:
        raise ValueError(f"init_process_group: init_method {method!r} is not supported; use "
                         "'env://' or 'tcp://host:port'")
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"init_process_group: rank {rank} is not in [0, {world_size - 1}] "
                         f"(world_size={world_size})")
    return host, port, rank, world_size


def _connect(host: str, port: int, rank: int, world_size: int, timeout: float) -> dict:
    """Rank 0 accepts one connection per other rank; each says its rank first."""
    deadline = time.monotonic() + timeout
    if rank == 0:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((host, port))
        server.listen(world_size)
        server.settimeout(timeout)
        peers = {}
        try:
            while len(peers) < world_size - 1:
                try:
                    conn, _ = server.accept()
                except TimeoutError:
                    waiting = sorted(set(range(1, world_size)) - set(peers))
                    raise DistributedError(
                        f"init_process_group: rank 0 waited {timeout:.0f} s for ranks "
                        f"{waiting} to connect to {host}:{port}") from None
                conn.settimeout(timeout)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                hello = json.loads(_read_exactly(conn, struct.unpack(
                    "<I", _read_exactly(conn, 4))[0]))
                if hello.get("world_size") != world_size or hello.get("rank") in peers:
                    raise DistributedError(
                        f"init_process_group: a process said it is rank {hello.get('rank')} of "
                        f"{hello.get('world_size')}, but rank 0 has world_size {world_size}"
                        + (" and that rank already joined" if hello.get("rank") in peers
                           else ""))
                peers[hello["rank"]] = conn
        finally:
            server.close()
        return peers
    while True:
        try:
            conn = socket.create_connection((host, port), timeout=timeout)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise DistributedError(f"init_process_group: rank {rank} could not reach rank "
                                       f"0 at {host}:{port} within {timeout:.0f} s") from None
            time.sleep(0.05)
    conn.settimeout(timeout)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    hello = json.dumps({"rank": rank, "world_size": world_size}).encode()
    conn.sendall(struct.pack("<I", len(hello)) + hello)
    return {0: conn}


def destroy_process_group(group=None) -> None:
    """Leave the group and close the sockets."""
    global _group
    if _group is not None:
        _group.close()
        _group = None
