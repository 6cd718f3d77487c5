"""Lesson 18's checks: device-agnostic code, run on the CPU; the CUDA comparison when a GPU
is there.

Two stand-ins let the CPU checks see what the code would do on a GPU machine:
``_pretend_gpu`` makes gradlab.cuda report a GPU (or none), and ``_recording_moves``
replaces ``Tensor.to`` for a moment by one that records where each tensor was sent
(and copies it on the CPU), so "move to cuda" can be checked without a GPU.
"""

import copy
from contextlib import contextmanager

import numpy as np

import gradlab
import gradlab.nn.functional as F
from gradlab import nn
from gradlab.backends import get_backend
from gradlab.ops.conversion import parse_to_args
from lessons.expect import check, expect, expect_close, expect_equal, skip

CUDA = gradlab.device("cuda")


@contextmanager
def _pretend_gpu(available: bool):
    """gradlab.cuda.is_available() (and device_count, accelerator) say ``available``."""
    backend = get_backend("cuda")
    had = "device_count" in vars(backend)
    before = vars(backend).get("device_count")
    backend.device_count = (lambda: 1) if available else (lambda: 0)
    try:
        yield
    finally:
        if had:
            backend.device_count = before
        else:
            del backend.device_count


@contextmanager
def _recording_moves():
    """Tensor.to records (source tensor, target device) and returns a CPU copy."""
    real = gradlab.Tensor.to
    moves = {}

    def to(self, *args, **kwargs):
        device, _ = parse_to_args(args, dict(kwargs))
        copied = real(self.detach(), "cpu", copy=True)
        moves[id(copied)] = (self, None if device is None else gradlab.device(device), copied)
        return copied

    gradlab.Tensor.to = to
    try:
        yield moves
    finally:
        gradlab.Tensor.to = real


def _as_device(value):
    try:
        return gradlab.device(value)
    except (TypeError, ValueError, RuntimeError):
        return None


@check("pick_device")
def pick_device(student, rng):
    for available, want in ((True, CUDA), (False, gradlab.device("cpu"))):
        with _pretend_gpu(available):
            got = student.pick_device()
        expect(_as_device(got) is want, f"pick_device() when gradlab.cuda.is_available() is "
               f"{available}", repr(want), repr(got))
    got = student.pick_device()
    ok = isinstance(got, (gradlab.device, str))
    expect(ok, "pick_device() returns a gradlab.device (or a device string)", "a device",
           "a device" if ok else type(got).__name__)
    # What the device is for: tensors go there and keep their values.
    x = gradlab.tensor(rng.standard_normal(int(rng.integers(2, 6))))
    expect_close(x.to(got), x, "a random tensor moved with .to(pick_device()) keeps its values")


def _batch(rng):
    """A random nested batch: tensors in a dict, a tuple and a list, plus non-tensors."""
    n = int(rng.integers(2, 6))
    return {"image": gradlab.randn(n, 3), "label": gradlab.randint(0, 5, (n,)),
            "extra": (gradlab.rand(n), [gradlab.zeros(2), "id-7", 3]),
            "name": f"batch-{int(rng.integers(100))}", "weight": None}


def _compare(got, given, moves, where):
    """``got`` has ``given``'s structure; each of its tensors is a move of the given one."""
    if isinstance(given, gradlab.Tensor):
        record = moves.get(id(got))
        ok = record is not None and record[0] is given
        seen = "a moved copy" if ok else "the same tensor, not moved" if got is given else \
            f"a {type(got).__name__} that is not a .to() copy of it"
        expect(ok, f"{where}: the tensor was moved with .to()", "a moved copy", seen)
        expect(record[1] is CUDA, f"{where}: moved to the device asked for", repr(CUDA),
               repr(record[1]))
        return
    if isinstance(given, dict):
        expect(isinstance(got, dict), f"{where}: still a dict", "a dict", f"a {type(got).__name__}")
        expect_equal(sorted(got), sorted(given), f"{where}: the same keys")
        for key in given:
            _compare(got[key], given[key], moves, f"{where}[{key!r}]")
        return
    if isinstance(given, (list, tuple)):
        expect(type(got) is type(given), f"{where}: still a {type(given).__name__}",
               type(given).__name__, type(got).__name__)
        expect_equal(len(got), len(given), f"{where}: the same length")
        for k, (a, b) in enumerate(zip(got, given)):
            _compare(a, b, moves, f"{where}[{k}]")
        return
    expect(got is given, f"{where}: a non-tensor ({given!r}) is left as it is", repr(given),
           repr(got))


@check("to_device")
def to_device(student, rng):
    batch = _batch(rng)
    with _recording_moves() as moves:
        got = student.to_device(batch, "cuda")
    _compare(got, batch, moves, "batch")
    pair = (gradlab.randn(4, 2), gradlab.arange(4))
    with _recording_moves() as moves:
        got = student.to_device(pair, CUDA)
    _compare(got, pair, moves, "(inputs, targets)")
    # And for real, on the CPU: same values, same structure.
    got = student.to_device(batch, gradlab.device("cpu"))
    expect_close(got["image"], batch["image"], "to_device(batch, cpu): the values are kept")
    expect_equal(got["image"].device, gradlab.device("cpu"), "to_device(batch, cpu): on the CPU")


def _problem(rng, dtype=gradlab.float32):
    """A small classifier, its optimizer, and a batch (inputs, targets), all on the CPU."""
    n, features, classes = int(rng.integers(4, 9)), int(rng.integers(2, 6)), 3
    model = nn.Sequential(nn.Linear(features, 8), nn.Tanh(), nn.Linear(8, classes)).to(dtype)
    batch = (gradlab.tensor(rng.standard_normal((n, features)), dtype=dtype),
             gradlab.tensor(rng.integers(0, classes, size=n)))
    return model, batch, f"batch of {n}, {features} features, {classes} classes"


def _reference_steps(model, batch, steps, lr=0.1):
    """What the steps should do: SGD with momentum on cross-entropy; the losses."""
    optimizer = gradlab.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(batch[0]), batch[1])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@check("train_step")
def train_step(student, rng):
    model, batch, text = _problem(rng, gradlab.float64)
    reference = copy.deepcopy(model)
    want = _reference_steps(reference, batch, 2)
    optimizer = gradlab.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    got = [student.train_step(model, batch, optimizer) for _ in range(2)]
    expect(all(isinstance(v, float) for v in got), "train_step returns the loss as a Python "
           "float", "floats", ", ".join(type(v).__name__ for v in got), "use loss.item()")
    expect_close(got, want, f"losses of two steps, SGD with momentum ({text})", rtol=1e-10)
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        expect_close(p, q, f"{name} after two steps vs the same steps done here", rtol=1e-10)
    # On a GPU machine the model may still be on the CPU: the device comes from the model.
    with _pretend_gpu(True):
        try:
            student.train_step(model, batch, optimizer)
            moved = ""
        except RuntimeError as error:
            moved = str(error).split(";")[0][:120]
    expect(not moved, "train_step on a machine with a GPU, the model on the CPU: it stays on "
           "the CPU", "it runs on the model's device",
           f"it tried another device ({moved})" if moved else "it runs on the model's device",
           "take the device from the model: next(model.parameters()).device")


@check("timed_steps")
def timed_steps(student, rng):
    steps = int(rng.integers(2, 5))
    model, batch, text = _problem(rng)
    reference = copy.deepcopy(model)
    want = _reference_steps(reference, batch, steps + 1)
    optimizer = gradlab.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    result = student.timed_steps(model, batch, optimizer, steps)
    ok = isinstance(result, tuple) and len(result) == 2
    expect(ok, "timed_steps returns (losses, seconds per step)", "a pair",
           "a pair" if ok else repr(result)[:60])
    losses, seconds = result
    expect_equal(len(losses), steps, f"one loss per timed step ({steps} steps)")
    early = np.allclose(losses, want[:-1], rtol=1e-5) and not np.allclose(want[:-1], want[1:])
    timed = f"losses of steps 2 to {steps + 1}"
    expect(not early, "the first step is an untimed warm-up", timed,
           f"losses of steps 1 to {steps}" if early else timed,
           "run one train_step before starting the clock, and don't keep its loss")
    expect_close(losses, want[1:], f"on the CPU: the losses after one warm-up step ({text})",
                 rtol=1e-5)
    expect(isinstance(seconds, float) and 0 < seconds < 5, "seconds per step: a positive "
           "float", "between 0 and 5 s", repr(seconds))
    if not gradlab.cuda.is_available():
        skip("needs a CUDA GPU")
    # The same code on the GPU: the same losses and weights, up to float32 rounding.
    on_gpu = copy.deepcopy(model).to("cuda")
    on_cpu = model
    gpu_optimizer = gradlab.optim.SGD(on_gpu.parameters(), lr=0.1, momentum=0.9)
    cpu_optimizer = gradlab.optim.SGD(on_cpu.parameters(), lr=0.1, momentum=0.9)
    real_sync, calls = gradlab.cuda.synchronize, []

    def counting_sync(device=None):
        calls.append(device)
        real_sync(device)

    gradlab.cuda.synchronize = counting_sync
    try:
        gpu_losses, gpu_seconds = student.timed_steps(on_gpu, batch, gpu_optimizer, steps)
    finally:
        gradlab.cuda.synchronize = real_sync
    cpu_losses, _ = student.timed_steps(on_cpu, batch, cpu_optimizer, steps)
    expect(all(p.device.type == "cuda" for p in on_gpu.parameters()),
           "after the GPU run the model is still on the GPU", "cuda",
           ", ".join(sorted({str(p.device) for p in on_gpu.parameters()})))
    expect_close(gpu_losses, cpu_losses, f"losses on cuda vs cpu, {steps} steps", rtol=1e-4,
                 atol=1e-6)
    for (name, p), q in zip(on_gpu.named_parameters(), on_cpu.parameters()):
        expect_close(p, q, f"{name} after the steps: cuda vs cpu", rtol=1e-4, atol=1e-5)
    expect(len(calls) >= 2, "the GPU timing waits for the GPU before reading the clock",
           "gradlab.cuda.synchronize() before start and stop", f"{len(calls)} call(s)",
           "CUDA work is queued: without synchronize you time the queueing, not the work")
    expect(np.isfinite(gpu_seconds) and gpu_seconds > 0, "seconds per step on the GPU",
           "a positive number", repr(gpu_seconds))
