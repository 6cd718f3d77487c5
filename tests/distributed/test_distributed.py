"""gradlab.distributed and DistributedDataParallel, with real processes talking over sockets.

Each test forks a few ranks that join a group on a free local port and
report back through a queue. The central check: DDP over two ranks, each on
half of every batch, trains exactly as one process does on the whole batch.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import numpy as np
import pytest

import gradlab
import gradlab.distributed as dist
import gradlab.nn as nn
import gradlab.nn.functional as F

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="forks worker processes")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank, world, port, body, queue, timeout):
    try:
        import datetime

        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=world,
                                timeout=datetime.timedelta(seconds=timeout))
        try:
            queue.put((rank, "ok", body(rank, world)))
        finally:
            dist.destroy_process_group()
    except BaseException as error:  # report it: the test reads every rank's outcome
        queue.put((rank, "error", f"{type(error).__name__}: {error}\n"
                                  f"{traceback.format_exc(limit=2)}"))


def run_ranks(body, world: int = 2, timeout: float = 20.0) -> dict:
    """Run ``body(rank, world)`` in ``world`` forked ranks; {rank: (status, result)}."""
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_worker, args=(r, world, port, body, queue, timeout))
             for r in range(world)]
    for p in procs:
        p.start()
    results = {}
    for _ in range(world):
        rank, status, value = queue.get(timeout=60)
        results[rank] = (status, value)
    for p in procs:
        p.join(timeout=30)
    return results


def _ok(results: dict) -> list:
    for rank, (status, value) in sorted(results.items()):
        assert status == "ok", f"rank {rank}: {value}"
    return [value for _, (_, value) in sorted(results.items())]


# --- collectives ----------------------------------------------------------------------------

def _collectives(rank, world):
    out = {}
    for op in ("sum", "avg", "max", "min", "product"):
        t = gradlab.tensor([rank + 1.0, -(rank + 1.0)], dtype=gradlab.float64)
        version = t._version
        dist.all_reduce(t, op=op)
        out[op] = t.tolist()
        out["version_moved"] = t._version > version
    b = gradlab.full((2, 2), float(rank), dtype=gradlab.float32)
    dist.broadcast(b, src=world - 1)
    out["broadcast"] = (b.tolist(), str(b.dtype))
    parts = [gradlab.zeros(2, dtype=gradlab.int64) for _ in range(world)]
    dist.all_gather(parts, gradlab.tensor([rank, 10 * rank]))
    out["gather"] = [p.tolist() for p in parts]
    out["work"] = dist.barrier(async_op=True).wait()
    out["rank"], out["world"] = dist.get_rank(), dist.get_world_size()
    return out


def test_collectives_give_every_rank_the_groups_answer():
    results = _ok(run_ranks(_collectives, world=3))
    for rank, out in enumerate(results):
        assert (out["rank"], out["world"]) == (rank, 3)
        assert out["sum"] == [6.0, -6.0]
        assert out["avg"] == [2.0, -2.0]
        assert out["max"] == [3.0, -1.0] and out["min"] == [1.0, -3.0]
        assert out["product"] == [6.0, -6.0]
        assert out["version_moved"]
        assert out["broadcast"] == ([[2.0, 2.0], [2.0, 2.0]], "gradlab.float32")
        assert out["gather"] == [[0, 0], [1, 10], [2, 20]]
        assert out["work"] is True


def _mismatched(rank, world):
    t = gradlab.ones(3)
    if rank == 0:
        dist.all_reduce(t)
    else:
        dist.broadcast(t, src=0)


def _wrong_shape(rank, world):
    dist.all_reduce(gradlab.ones(3 + rank))


@pytest.mark.parametrize("body, message", [
    (_mismatched, r"rank 0 called all_reduce\(reduce=sum\) on a float32 tensor of shape \(3,\) "
                  r"but rank 1 called broadcast\(src=0\)"),
    (_wrong_shape, r"shape \(3,\) but rank 1 called all_reduce\(reduce=sum\) on a float32 "
                   r"tensor of shape \(4,\)"),
])
def test_ranks_calling_different_collectives_all_raise_the_same_error(body, message):
    results = run_ranks(body)
    import re
    for rank in (0, 1):
        status, text = results[rank]
        assert status == "error" and "DistributedError" in text, text
        assert re.search(message, text), text


def _leaves_early(rank, world):
    if rank == 1:
        return "gone"
    dist.all_reduce(gradlab.ones(2))


def test_a_rank_that_leaves_is_named_instead_of_a_hang():
    results = run_ranks(_leaves_early, timeout=20)
    assert results[1] == ("ok", "gone")
    status, text = results[0]
    assert status == "error" and "talking to rank 1 failed" in text and "collective #1" in text


def test_a_rank_that_never_comes_is_reported_after_the_timeout():
    import datetime

    with pytest.raises(dist.DistributedError, match=r"rank 0 waited 1 s for ranks \[1\]"):
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{_free_port()}", rank=0,
                                world_size=2, timeout=datetime.timedelta(seconds=1))
    assert not dist.is_initialized()


def test_errors_outside_a_group_teach(monkeypatch):
    with pytest.raises(RuntimeError, match="has not been initialized.*init_process_group"):
        dist.all_reduce(gradlab.ones(2))
    with pytest.raises(RuntimeError, match="DistributedDataParallel: the default process group"):
        nn.parallel.DistributedDataParallel(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="'nccl'.*NCCL is CUDA's"):
        dist.init_process_group("nccl")
    for key in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(ValueError, match=r"needs the environment variables MASTER_ADDR, "
                                         r"MASTER_PORT, RANK, WORLD_SIZE.*gradlab.distributed.run"):
        dist.init_process_group("gloo")
    with pytest.raises(RuntimeError, match="DistributedSampler: no num_replicas/rank"):
        gradlab.utils.data.DistributedSampler(range(4))


# --- DistributedDataParallel ----------------------------------------------------------------

def _train(rank, world, steps=4, accumulate=False):
    """Train on rows rank, rank + world, ... of a fixed batch; return the parameters."""
    gradlab.manual_seed(100 + rank)  # different on purpose: DDP starts all from rank 0
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).double()
    net = nn.parallel.DistributedDataParallel(model) if world > 1 else model
    opt = gradlab.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(0)
    x, y = gradlab.tensor(rng.normal(size=(16, 4))), gradlab.tensor(rng.integers(0, 3, 16))
    for _ in range(steps):
        opt.zero_grad()
        if accumulate:  # two micro-batches: the first without syncing
            with net.no_sync():
                F.cross_entropy(net(x[rank:8:world]), y[rank:8:world]).div(2).backward()
            F.cross_entropy(net(x[8 + rank::world]), y[8 + rank::world]).div(2).backward()
        else:
            F.cross_entropy(net(x[rank::world]), y[rank::world]).backward()
        opt.step()
    return [p.detach().numpy().copy() for p in model.parameters()]


def _start_from(seed_rank):
    gradlab.manual_seed(100 + seed_rank)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).double()
    return model


@pytest.mark.parametrize("accumulate", [False, True], ids=["plain", "no_sync"])
def test_ddp_on_two_ranks_trains_as_one_process_on_the_whole_batch(accumulate):
    ranks = _ok(run_ranks(lambda r, w: _train(r, w, accumulate=accumulate)))
    for a, b in zip(*ranks):
        np.testing.assert_array_equal(a, b)  # the copies stayed identical
    # one process, same start (rank 0's weights), the whole batch per step
    model = _start_from(0)
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(0)
    x, y = gradlab.tensor(rng.normal(size=(16, 4))), gradlab.tensor(rng.integers(0, 3, 16))
    for _ in range(4):
        opt.zero_grad()
        if accumulate:
            F.cross_entropy(model(x[:8]), y[:8]).div(2).backward()
            F.cross_entropy(model(x[8:]), y[8:]).div(2).backward()
        else:
            F.cross_entropy(model(x), y).backward()
        opt.step()
    for got, want in zip(ranks[0], model.parameters()):
        np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-12, atol=1e-14)


class _TwoBranches(nn.Module):
    """A model whose forward takes one of two heads: rank 1 never uses ``b`` here."""

    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 6)
        self.a = nn.Linear(6, 3)
        self.b = nn.Linear(6, 3)
        self.never = nn.Linear(6, 3)  # used by no rank: its grad stays None

    def forward(self, x, head):
        return getattr(self, head)(self.body(x).tanh())


def _heads(rank, step):
    return "a" if rank == 1 or step % 2 else "b"


def _train_unused(rank, world, steps=3):
    gradlab.manual_seed(7)
    model = _TwoBranches().double()
    net = nn.parallel.DistributedDataParallel(model, find_unused_parameters=True)
    opt = gradlab.optim.SGD(net.parameters(), lr=0.1)
    x, y = _unused_data()
    grads = []
    for step in range(steps):
        opt.zero_grad()
        F.cross_entropy(net(x[rank::world], _heads(rank, step)), y[rank::world]).backward()
        grads.append({n: None if p.grad is None else p.grad.numpy().copy()
                      for n, p in model.named_parameters()})
        opt.step()
    return grads


def _unused_data():
    rng = np.random.default_rng(1)
    return gradlab.tensor(rng.normal(size=(8, 4))), gradlab.tensor(rng.integers(0, 3, 8))


def test_ddp_find_unused_parameters_averages_what_any_rank_used():
    ranks = _ok(run_ranks(_train_unused))
    gradlab.manual_seed(7)
    model = _TwoBranches().double()
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    x, y = _unused_data()
    for step, (g0, g1) in enumerate(zip(*ranks)):
        opt.zero_grad()
        # one process: the mean over both ranks' losses, each rank's half through its head
        loss = sum(F.cross_entropy(model(x[r::2], _heads(r, step)), y[r::2]) for r in (0, 1))
        (loss / 2).backward()
        for name, p in model.named_parameters():
            assert (g0[name] is None) == (g1[name] is None) == (p.grad is None), name
            if p.grad is not None:
                np.testing.assert_array_equal(g0[name], g1[name])
                np.testing.assert_allclose(g0[name], p.grad.numpy(), rtol=1e-12, atol=1e-14)
        opt.step()
    assert ranks[0][0]["never.weight"] is None and ranks[0][0]["b.weight"] is not None


def _unused_without_the_flag(rank, world):
    gradlab.manual_seed(7)
    net = nn.parallel.DistributedDataParallel(_TwoBranches().double())
    x, y = _unused_data()
    F.cross_entropy(net(x[rank::world], "a" if rank else "b"), y[rank::world]).backward()


def test_ddp_without_find_unused_parameters_names_the_mismatch():
    """Heads a and b have the same shapes: without the check their gradients would be
    averaged together silently."""
    results = run_ranks(_unused_without_the_flag, timeout=5.0)
    for status, message in results.values():
        assert status == "error" and message.startswith("DistributedError")
        assert "the gradient of b.bias" in message and "the gradient of a.bias" in message
        assert "find_unused_parameters=True" in message


def _buffers_and_keys(rank, world):
    gradlab.manual_seed(rank)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    ddp = nn.parallel.DistributedDataParallel(model)
    ddp(gradlab.randn(5, 3) + rank)  # rank 0's running stats are broadcast before forward
    sampler = gradlab.utils.data.DistributedSampler(range(10), shuffle=False)
    return (list(ddp.state_dict())[:2], model[0].weight.detach().numpy().copy(),
            list(sampler))


def test_ddp_copies_rank_0_and_wraps_the_module_as_pytorch_does():
    (keys0, w0, s0), (keys1, w1, s1) = _ok(run_ranks(_buffers_and_keys))
    assert keys0 == keys1 == ["module.0.weight", "module.0.bias"]  # PyTorch's "module." prefix
    np.testing.assert_array_equal(w0, w1)
    assert s0 == [0, 2, 4, 6, 8] and s1 == [1, 3, 5, 7, 9]  # the sampler asks the group


def _bn_model(sync: bool):
    gradlab.manual_seed(3)
    norm = nn.SyncBatchNorm(6) if sync else nn.BatchNorm1d(6)
    return nn.Sequential(nn.Linear(4, 6), norm, nn.Tanh(), nn.Linear(6, 3)).double()


def _bn_data():
    rng = np.random.default_rng(5)
    return gradlab.tensor(rng.normal(size=(12, 4)) * 3 + 1), gradlab.tensor(rng.integers(0, 3, 12))


def _sync_bn_training(rank, world):
    model = _bn_model(sync=True)
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = gradlab.optim.SGD(ddp.parameters(), lr=0.1)
    x, y = _bn_data()
    rows = slice(rank * 6, rank * 6 + 6)  # a contiguous half each: rank 0 rows 0-5, 1 rows 6-11
    outputs = []
    for _ in range(3):
        opt.zero_grad()
        out = ddp(x[rows])
        outputs.append(out.detach().numpy().copy())
        F.cross_entropy(out, y[rows]).backward()
        opt.step()
    return outputs, {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def test_sync_batchnorm_on_two_ranks_is_batchnorm_on_the_whole_batch():
    (out0, state0), (out1, state1) = _ok(run_ranks(_sync_bn_training))
    model = _bn_model(sync=False)
    opt = gradlab.optim.SGD(model.parameters(), lr=0.1)
    x, y = _bn_data()
    for step in range(3):
        opt.zero_grad()
        out = model(x)
        np.testing.assert_allclose(np.concatenate([out0[step], out1[step]]),
                                   out.detach().numpy(), rtol=1e-12, atol=1e-12)
        F.cross_entropy(out, y).backward()
        opt.step()
    for (key, want), got0, got1 in zip(model.state_dict().items(), state0.values(),
                                       state1.values()):
        np.testing.assert_allclose(got0, want.detach().numpy(), rtol=1e-11, atol=1e-12,
                                   err_msg=key)
        np.testing.assert_array_equal(got0, got1, err_msg=key)


def test_convert_sync_batchnorm_keeps_the_tensors_and_falls_back_alone():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Sequential(nn.BatchNorm1d(3)))
    weight, mean = model[1].weight, model[1].running_mean
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(converted[1], nn.SyncBatchNorm)
    assert isinstance(converted[2][0], nn.SyncBatchNorm)
    assert converted[1].weight is weight and converted[1].running_mean is mean
    x = gradlab.randn(4, 1, 5, 5)  # no process group: exactly BatchNorm
    reference = nn.BatchNorm2d(2)
    np.testing.assert_allclose(converted[1](x[:, :1].expand(4, 2, 5, 5)).detach().numpy(),
                               reference(x[:, :1].expand(4, 2, 5, 5)).detach().numpy())


# --- the launcher ---------------------------------------------------------------------------

SCRIPT = textwrap.dedent("""
    import sys
    import gradlab, gradlab.distributed as dist
    dist.init_process_group()
    t = gradlab.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(t)
    print(f"rank {dist.get_rank()} of {dist.get_world_size()}: {t.item():g}", flush=True)
    if sys.argv[1:] == ["fail"] and dist.get_rank() == 1:
        sys.exit(3)
    dist.destroy_process_group()
""")


def _readme_example() -> str:
    """The README's data-parallel example (a plain block: it needs the launcher to run)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("### Data parallel: gradlab.distributed"):]
    return section.split("```\n", 2)[1]


def test_the_launcher_runs_the_readme_example_and_reports_a_failing_rank(tmp_path):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    launcher = [sys.executable, "-m", "gradlab.distributed.run", "--nproc-per-node", "2"]
    example = tmp_path / "train_ddp.py"
    example.write_text(_readme_example())
    done = subprocess.run(launcher + [str(example)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [line.split()[0] for line in done.stdout.split("\n") if line] == ["0", "1", "2"]
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    failed = subprocess.run(launcher + [str(script), "fail"], capture_output=True, text=True,
                            timeout=120, env=env)
    assert failed.returncode == 3
    assert "rank 1 of 2: 3" in failed.stdout
    assert "rank 1 exited with code 3" in failed.stderr
