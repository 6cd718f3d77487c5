"""DataLoader with worker processes: same batches as in-process, errors that arrive, no leftovers.

Worker start-up is the cost here, so datasets are tiny and each test runs few loaders.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import textwrap
from collections import namedtuple

import numpy as np
import pytest

import gradlab
from gradlab.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info

pytestmark = pytest.mark.timeout(60)

Pair = namedtuple("Pair", "x y")


class Squares(Dataset):
    """Sample i: a dict with a float vector, an int label, a string and a namedtuple."""

    def __init__(self, n: int = 13) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        return {"x": gradlab.full((2,), float(i)), "label": i * i, "name": f"s{i}",
                "pair": Pair(np.float32(i), i % 2 == 0)}


class Noisy(Dataset):
    """A random transform: its values depend on the worker's seeded global generators."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, i):
        return gradlab.rand(2).tolist() + [float(np.random.rand())]


class FailsAt(Dataset):
    def __init__(self, bad: int) -> None:
        self.bad = bad

    def __len__(self) -> int:
        return 12

    def __getitem__(self, i):
        if i == self.bad:
            raise ValueError(f"sample {i} is corrupt")
        return i


class ExitsAt(Dataset):
    """Sample 5 ends its worker: with exit code 3, or killed by SIGKILL (as the OOM killer)."""

    def __init__(self, kill: bool = False) -> None:
        self.kill = kill

    def __len__(self) -> int:
        return 12

    def __getitem__(self, i):
        if i == 5:
            if self.kill:
                os.kill(os.getpid(), signal.SIGKILL)
            os._exit(3)
        return i


class Sleeps(Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i):
        import time

        time.sleep(1.0)
        return i


class Sharded(IterableDataset):
    """range(n), split into contiguous blocks, one per worker."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        per = -(-self.n // info.num_workers)
        return iter(range(info.id * per, min(self.n, (info.id + 1) * per)))


def as_lists(batches):
    """Batches as nested Python values, for exact comparison."""
    def plain(x):
        if isinstance(x, gradlab.Tensor):
            return (x.dtype.name, x.tolist())
        if isinstance(x, np.ndarray):
            return ("ndarray", x.dtype.name, x.tolist())
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return type(x)(plain(v) for v in x) if not hasattr(x, "_fields") else \
                (type(x).__name__, [plain(v) for v in x])
        return x
    return [plain(b) for b in batches]


def no_children() -> bool:
    """No worker process is left. Collect first: a caught exception's traceback holds the
    iterator in a reference cycle until the garbage collector runs, as in PyTorch."""
    gc.collect()
    return mp.active_children() == []


def run_both(make_loader):
    """The batches of make_loader(num_workers) for 0 and 2 workers."""
    return as_lists(make_loader(0)), as_lists(make_loader(2))


def test_shuffled_dict_samples_match_in_process_loading():
    ds = Squares()
    def make(nw):
        g = gradlab.Generator().manual_seed(7)
        return DataLoader(ds, batch_size=3, shuffle=True, drop_last=True, generator=g,
                          num_workers=nw)
    single, multi = run_both(make)
    assert single == multi
    assert len(single) == 4  # 13 // 3 with drop_last
    labels = [i for b in single for i in b["label"][1]]
    assert len(set(labels)) == 12 and labels != sorted(labels)
    assert single[0]["pair"][0] == "Pair" and single[0]["pair"][1][0][0] == "float32"
    assert single[0]["name"] == [f"s{int(v[0])}" for v in single[0]["x"][1]]
    assert no_children()


def test_custom_collate_fn_and_no_batching_match():
    ds = TensorDataset(gradlab.arange(10), gradlab.arange(10) * 10)
    def total(samples):
        return {"sum": sum(int(x) for x, _ in samples), "ys": np.array([int(y) for _, y in
                                                                         samples])}
    single, multi = run_both(lambda nw: DataLoader(ds, batch_size=4, collate_fn=total,
                                                   num_workers=nw))
    assert single == multi
    assert [b["sum"] for b in single] == [6, 22, 17]
    assert multi[0]["ys"][0] == "ndarray"  # arrays stay arrays across the wire
    single, multi = run_both(lambda nw: DataLoader(ds, batch_size=None, num_workers=nw))
    assert single == multi == [[("int64", i), ("int64", 10 * i)] for i in range(10)]


def test_iterable_dataset_sharded_by_worker_info():
    single = as_lists(DataLoader(Sharded(10), batch_size=3))
    multi = as_lists(DataLoader(Sharded(10), batch_size=3, num_workers=2))
    flat = sorted(v for _, b in multi for v in b)
    assert flat == list(range(10)) == [v for _, b in single for v in b]
    # Batches alternate between the workers (0, 1, 0, 1, ...) until each runs out.
    assert [b for _, b in multi] == [[0, 1, 2], [5, 6, 7], [3, 4], [8, 9]]
    assert no_children()


def test_random_transforms_are_reproducible_per_worker_seed():
    def run():
        g = gradlab.Generator().manual_seed(3)
        return as_lists(DataLoader(Noisy(), batch_size=2, num_workers=2, generator=g))
    first, second = run(), run()
    assert first == second
    assert first[0] != first[1]  # the two workers have different seeds
    g = gradlab.Generator().manual_seed(4)
    assert as_lists(DataLoader(Noisy(), batch_size=2, num_workers=2, generator=g)) != first


def test_worker_error_names_worker_batch_and_sample():
    loader = DataLoader(FailsAt(7), batch_size=2, num_workers=2)
    with pytest.raises(ValueError, match=r"(?s)worker process 1 while loading sample index 7 "
                                         r"\(batch index 3\).*sample 7 is corrupt"):
        list(loader)
    it = iter(DataLoader(FailsAt(1), batch_size=2, num_workers=2))
    with pytest.raises(ValueError, match=r"(?s)Original Traceback.*in __getitem__"):
        next(it)
    assert next(it).tolist() == [2, 3]  # like PyTorch, the loader goes on after an error
    del it


def test_worker_init_fn_error_is_reported():
    def init(worker_id):
        raise KeyError(f"no config for worker {worker_id}")
    with pytest.raises(KeyError, match="(?s)while starting.*no config for worker 0"):
        next(iter(DataLoader(FailsAt(99), batch_size=2, num_workers=1, worker_init_fn=init)))


def test_worker_exit_is_an_error_not_a_hang():
    with pytest.raises(RuntimeError, match=r"DataLoader worker 0 \(pid \d+\) exited "
                                           "unexpectedly with exit code 3"):
        list(DataLoader(ExitsAt(), batch_size=2, num_workers=2))
    assert no_children()
    if hasattr(signal, "SIGKILL"):
        with pytest.raises(RuntimeError, match=r"worker 0 .*signal SIGKILL \(exit code -9\)"):
            list(DataLoader(ExitsAt(kill=True), batch_size=2, num_workers=2))
        assert no_children()


def test_timeout_raises_and_stops_workers():
    with pytest.raises(RuntimeError, match="timed out after 0.3 seconds.*batch index 0"):
        next(iter(DataLoader(Sleeps(), batch_size=1, num_workers=1, timeout=0.3)))
    assert no_children()


def test_no_children_after_break_del_and_epoch_end():
    ds = Squares(8)
    for _ in DataLoader(ds, batch_size=2, num_workers=2):
        break
    assert no_children()
    it = iter(DataLoader(ds, batch_size=2, num_workers=2))
    next(it)
    assert len(mp.active_children()) == 2
    del it
    assert no_children()
    assert len(list(DataLoader(ds, batch_size=2, num_workers=2))) == 4
    assert no_children()


def test_persistent_workers_survive_epochs():
    loader = DataLoader(Sharded(6), batch_size=2, num_workers=2, persistent_workers=True)
    first = [b.tolist() for b in loader]
    pids = sorted(p.pid for p in mp.active_children())
    assert len(pids) == 2
    second = [b.tolist() for b in loader]
    assert first == second == [[0, 1], [3, 4], [2], [5]]
    assert sorted(p.pid for p in mp.active_children()) == pids
    partial = iter(loader)
    next(partial)  # abandon this epoch early: the next one must start clean
    assert [b.tolist() for b in loader] == first
    del loader, partial
    assert no_children()


def test_spawn_start_method_gives_the_same_batches():
    """'spawn' starts fresh interpreters (about a second): the dataset travels pickled."""
    single, multi = run_both(lambda nw: DataLoader(
        Squares(5), batch_size=2, num_workers=nw and 1,
        multiprocessing_context="spawn" if nw else None))
    assert single == multi and len(single) == 3
    assert no_children()


def test_spawn_needs_picklable_arguments():
    loader = DataLoader(Squares(4), batch_size=2, num_workers=1, multiprocessing_context="spawn",
                        collate_fn=lambda b: b)
    with pytest.raises(TypeError, match="can't start worker processes with the 'spawn' start "
                                        "method.*module level"):
        iter(loader)
    assert no_children()


def test_get_worker_info_is_none_in_main_process():
    assert get_worker_info() is None


def test_workers_stop_at_interpreter_exit(tmp_path):
    script = tmp_path / "leave.py"
    script.write_text(textwrap.dedent("""
        import gradlab, multiprocessing as mp
        from gradlab.utils.data import DataLoader, TensorDataset
        ds = TensorDataset(gradlab.arange(20))
        it = iter(DataLoader(ds, batch_size=2, num_workers=2))
        next(it)
        print(" ".join(str(p.pid) for p in mp.active_children()), flush=True)
        # exit with the iterator still alive
    """))
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=30, env=env)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 2
    for pid in pids:
        assert not _running(pid), f"worker {pid} outlived the interpreter"


def _running(pid: int) -> bool:
    """True if ``pid`` exists and isn't a zombie (Linux /proc; elsewhere: signal 0)."""
    status = f"/proc/{pid}/status"
    if os.path.exists("/proc"):
        try:
            with open(status) as f:
                return "\nState:\tZ" not in f.read()
        except FileNotFoundError:
            return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True
