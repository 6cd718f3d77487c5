"""gradlab.multiprocessing: the standard library's API under PyTorch's name, and spawn."""

from __future__ import annotations

import os

import numpy as np
import pytest

import gradlab
import gradlab.multiprocessing as mp


def _all_reduce_worker(rank: int, world_size: int, port: int, out_dir: str) -> None:
    """What DDP tutorials spawn: join the group with rank/world_size, all_reduce, report."""
    import gradlab.distributed as dist

    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    t = gradlab.tensor([float(rank + 1), 10.0 * rank])
    dist.all_reduce(t)
    np.save(os.path.join(out_dir, f"rank{rank}.npy"), t.numpy())
    dist.destroy_process_group()


def _failing_worker(rank: int) -> None:
    if rank == 1:
        raise ValueError(f"worker {rank} found a bad batch")


def _exiting_worker(rank: int) -> None:
    os._exit(3 if rank == 0 else 0)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_standard_library_api_is_there():
    import multiprocessing

    for name in ("Process", "Queue", "Pool", "set_start_method", "get_context", "cpu_count"):
        assert getattr(mp, name) is getattr(multiprocessing, name)
    assert gradlab.multiprocessing is mp  # reachable after `import gradlab`, as torch's


def test_spawn_runs_data_parallel_workers(tmp_path):
    mp.spawn(_all_reduce_worker, args=(2, _free_port(), str(tmp_path)), nprocs=2)
    for rank in range(2):
        np.testing.assert_array_equal(np.load(tmp_path / f"rank{rank}.npy"), [3.0, 10.0])


def test_a_worker_that_raises_reaches_the_parent_with_its_traceback():
    with pytest.raises(mp.ProcessRaisedException, match=r"(?s)Process 1 terminated with the "
                                                        r"following error.*ValueError: worker "
                                                        r"1 found a bad batch") as caught:
        mp.spawn(_failing_worker, nprocs=2)
    assert caught.value.error_index == 1


def test_a_worker_that_exits_badly_is_named_and_join_false_returns_the_context():
    context = mp.spawn(_exiting_worker, nprocs=2, join=False)
    assert len(context.pids()) == 2
    with pytest.raises(mp.ProcessExitedException, match="process 0 exited with exit code 3"):
        while not context.join():
            pass


def test_spawn_checks_its_arguments():
    with pytest.raises(ValueError, match="nprocs must be a positive int"):
        mp.spawn(_failing_worker, nprocs=0)
    with pytest.raises(TypeError, match="fn must be callable"):
        mp.spawn(3)
