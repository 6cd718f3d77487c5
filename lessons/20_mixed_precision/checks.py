"""Lesson 20's checks: float16 underflow against gradlab's own cast, autocast's dtypes
against ops run under gradlab.autocast, and loss scaling against gradlab.amp.GradScaler.

Without a GPU, the CUDA cases of ``autocast_dtype`` run on the CPU with CUDA's op lists
put in for the CPU's for a moment (``_cuda_lists``): the same dispatcher, the lists a GPU
would use. Every scale in these checks is a power of two, so multiplying and dividing by
it is exact and the student's step can agree with GradScaler's to the last bit.
"""

import copy
from contextlib import contextmanager

import numpy as np

import gradlab
import gradlab.nn.functional as F
from gradlab import nn
from gradlab.amp import op_lists
from lessons.expect import check, expect, expect_close, expect_equal

FLOATS = (gradlab.float16, gradlab.bfloat16, gradlab.float32, gradlab.float64)


# --- underflow -------------------------------------------------------------------------------

def _lost_in_float16(grads, scale: float) -> float:
    """The reference: gradlab's own cast to float16 says which entries become 0."""
    nonzero = grads != 0
    lost = ((grads * scale).to(gradlab.float16) == 0) & nonzero
    return int(lost.sum()) / max(int(nonzero.sum()), 1)


@check("underflow_fraction")
def underflow_fraction(student, rng):
    n = int(rng.integers(300, 600))
    low, high = int(rng.integers(-34, -30)), int(rng.integers(-12, -6))
    values = rng.choice([-1.0, 1.0], size=n) * 2.0 ** rng.uniform(low, high, size=n)
    values[rng.random(n) < 0.1] = 0.0  # exact zeros: not gradients that were lost
    # Half the smallest subnormal ties and rounds to even, 0; a hair above it does not.
    values[:3] = [2.0**-25, 2.0**-25 * 1.0001, -(2.0**-24)]
    grads = gradlab.tensor(values, dtype=gradlab.float32)
    before = grads.clone()
    nonzero = int((grads != 0).sum())
    for scale in (1.0, 2.0 ** int(rng.integers(4, 12)), 2.0**16):
        got = student.underflow_fraction(grads, scale)
        expect_close(got, _lost_in_float16(grads, scale),
                     f"the share of {nonzero} nonzero gradients (|g| from 2^{low} to 2^{high}) "
                     f"that are 0 after (g × {scale:g}).to(float16), by gradlab's own cast",
                     rtol=0, atol=1e-12)
    closed_form = float(((grads.abs() <= 2.0**-25) & (grads != 0)).sum()) / nonzero
    expect_close(student.underflow_fraction(grads), closed_form, "unscaled, the same share "
                 "in closed form: |g| ≤ 2^-25, half of float16's smallest subnormal 2^-24",
                 rtol=0, atol=1e-12)
    expect_equal(bool((grads == before).all()), True,
                 "grads is left as it was (scale a copy, not the gradient in place)")
    expect_close(student.underflow_fraction(gradlab.zeros(int(rng.integers(2, 6)))), 0.0,
                 "a gradient that is all zeros: nothing was lost")


# --- autocast's dtypes ---------------------------------------------------------------------------

def _targets(x):
    return gradlab.tensor(np.arange(x.shape[0]) % x.shape[1], device=x.device)


# One floating input x of shape (4, 5); each op as gradlab's name for it.
_RUN = {
    "matmul": lambda x: x @ x.T,
    "linear": lambda x: F.linear(x, x),
    "einsum": lambda x: gradlab.einsum("ij,kj->ik", x, x),
    "exp": lambda x: x.exp(),
    "log": lambda x: (x.abs() + 1).log(),
    "sum": lambda x: x.sum(),
    "softmax": lambda x: x.softmax(-1),
    "log_softmax": lambda x: x.log_softmax(-1),
    "layer_norm": lambda x: F.layer_norm(x, (5,)),
    "prod": lambda x: x.prod(),
    "mse_loss": lambda x: F.mse_loss(x, x.detach() * 0.5),
    "cross_entropy": lambda x: F.cross_entropy(x, _targets(x)),
    "relu": lambda x: x.relu(),
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
}
_GROUPS = (("matmul", "linear", "einsum"),                          # products: lowered
           ("exp", "log", "sum", "softmax", "log_softmax", "layer_norm"),  # float32 on cuda
           ("prod", "mse_loss", "cross_entropy"),                  # float32 on both
           ("relu", "tanh", "sigmoid"))                            # as given


@contextmanager
def _cuda_lists():
    """For a moment, the CPU's autocast lists are CUDA's."""
    tables = (op_lists.LOWER, op_lists.FLOAT32, op_lists.WIDEST, op_lists.BANNED)
    saved = [table["cpu"] for table in tables]
    for table in tables:
        table["cpu"] = table["cuda"]
    try:
        yield
    finally:
        for table, lists in zip(tables, saved):
            table["cpu"] = lists


def _observed(op, dtype, device_type, fast) -> tuple:
    """The dtype ``op`` gives under gradlab.autocast, and how it was found."""
    x = gradlab.tensor(np.linspace(-1.5, 2.0, 20).reshape(4, 5), dtype=dtype)
    if device_type == "cpu":
        with gradlab.autocast("cpu", dtype=fast):
            return _RUN[op](x).dtype, "run under gradlab.autocast"
    if gradlab.cuda.is_available():
        with gradlab.autocast("cuda", dtype=fast):
            return _RUN[op](x.cuda()).dtype, "run on the GPU under gradlab.autocast"
    with _cuda_lists(), gradlab.autocast("cpu", dtype=fast):
        return _RUN[op](x).dtype, "run under autocast with CUDA's op lists (no GPU here)"


@check("autocast_dtype")
def autocast_dtype(student, rng):
    cases = []
    for device_type in ("cpu", "cuda"):
        for group in _GROUPS:
            cases.append((str(rng.choice(group)), FLOATS[int(rng.integers(4))], device_type,
                          (gradlab.float16, gradlab.bfloat16)[int(rng.integers(2))]))
    # The cases that tell the categories apart: float64 is never lowered, and only
    # half-precision inputs go up to float32.
    cases.append((str(rng.choice(_GROUPS[0])), gradlab.float64, str(rng.choice(["cpu", "cuda"])),
                  gradlab.float16))
    cases.append((str(rng.choice(_GROUPS[1])), gradlab.float16, "cuda", gradlab.float16))
    cases.append((str(rng.choice(_GROUPS[1])), gradlab.float16, "cpu", gradlab.float16))
    cases.append((str(rng.choice(_GROUPS[2])), gradlab.float64, "cuda", gradlab.bfloat16))
    for op, dtype, device_type, fast in cases:
        got = student.autocast_dtype(op, dtype, device_type, fast)
        want, how = _observed(op, dtype, device_type, fast)
        expect_equal(got, want, f"{op} of a {dtype} input under autocast({device_type!r}, "
                     f"dtype={fast}): {how}")


# --- loss scaling by hand --------------------------------------------------------------------

def _problem(rng):
    """A small model with weights from rng, a batch, a loss and an optimizer's recipe."""
    n, features, hidden, outputs = (int(rng.integers(8, 17)), int(rng.integers(3, 7)),
                                    int(rng.integers(8, 17)), 3)
    model = nn.Sequential(nn.Linear(features, hidden), nn.Tanh(), nn.Linear(hidden, outputs))
    with gradlab.no_grad():
        for p in model.parameters():
            p.copy_(gradlab.tensor(rng.normal(size=tuple(p.shape)) * 0.5, dtype=gradlab.float32))
    x = gradlab.tensor(rng.normal(size=(n, features)), dtype=gradlab.float32)
    if rng.random() < 0.5:
        loss_fn, y = F.cross_entropy, gradlab.tensor(rng.integers(0, outputs, size=n))
        loss_text = "cross-entropy"
    else:
        loss_fn, y = F.mse_loss, gradlab.tensor(rng.normal(size=(n, outputs)),
                                                 dtype=gradlab.float32)
        loss_text = "MSE"
    if rng.random() < 0.5:
        def make(params):
            return gradlab.optim.SGD(params, lr=0.1, momentum=0.9)
        opt_text = "SGD with momentum"
    else:
        def make(params):
            return gradlab.optim.Adam(params, lr=0.01)
        opt_text = "Adam"
    text = f"{features}-{hidden}-{outputs} tanh MLP, {loss_text}, {opt_text}, batch of {n}"
    return model, loss_fn, x, y, make, text


class _Watched:
    """``loss_fn``, noting the dtype of the model output it gets and whether autocast was on."""

    def __init__(self, loss_fn) -> None:
        self.loss_fn, self.seen = loss_fn, []

    def __call__(self, output, target):
        self.seen.append((output.dtype, gradlab.is_autocast_enabled("cpu")))
        return self.loss_fn(output, target)


def _reference_step(model, loss_fn, x, y, optimizer, scale) -> bool:
    """The same step by GradScaler, with a fixed scale; whether it stepped."""
    scaler = gradlab.amp.GradScaler("cpu", init_scale=scale, growth_interval=10**9)
    optimizer.zero_grad()
    with gradlab.autocast("cpu", dtype=gradlab.float16):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return scaler.get_scale() == scale  # halved only after an overflow


@check("scaled_step")
def scaled_step(student, rng):
    model, loss_fn, x, y, make, text = _problem(rng)
    reference = copy.deepcopy(model)
    optimizer, ref_optimizer = make(model.parameters()), make(reference.parameters())
    scales = [2.0 ** int(k) for k in rng.integers(0, 17, size=3)]
    scales.insert(int(rng.integers(1, 4)), 2.0**40)  # far too large: float16 overflows
    for k, scale in enumerate(scales, start=1):
        before = [p.detach().clone() for p in model.parameters()]
        watched = _Watched(loss_fn)
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: NaN, as expected
            got = student.scaled_step(model, watched, x, y, optimizer, scale)
            want = _reference_step(reference, loss_fn, x, y, ref_optimizer, scale)
        where = f"step {k}, scale 2^{int(np.log2(scale))}"
        expect(len(watched.seen) == 1, f"{where}: loss_fn is called once",
               "once", f"{len(watched.seen)} times")
        expect_equal(watched.seen[0], (gradlab.float16, True),
                     f"{where}: (dtype of the model's output, autocast on) as the loss gets it")
        expect_equal(bool(got) if got in (True, False) else got, want,
                     f"{where}: stepped? GradScaler "
                     f"{'steps' if want else 'finds an inf/NaN gradient and skips the step'}")
        for (name, p), q, old in zip(model.named_parameters(), reference.parameters(), before):
            if want:
                expect_close(p.grad, q.grad, f"{where}: {name}.grad, unscaled, against "
                             f"GradScaler's ({text})", rtol=1e-6, atol=1e-12)
                expect_close(p, q, f"{where}: {name} after the step, against GradScaler's",
                             rtol=1e-6, atol=1e-9)
            else:
                expect_close(p, old, f"{where}: {name} is left as it was (the step is "
                             "skipped)", rtol=0, atol=0)


# --- the dynamic scale -----------------------------------------------------------------------

def _scaler_schedule(init, tracker, overflows, **settings) -> tuple[list, list]:
    """GradScaler's (scales, trackers) after each step, an inf gradient where ``overflows``
    says so."""
    scaler = gradlab.amp.GradScaler("cpu", init_scale=init, **settings)
    state = scaler.state_dict()
    state["_growth_tracker"] = tracker
    scaler.load_state_dict(state)
    weight = nn.Parameter(gradlab.zeros(2))
    optimizer = gradlab.optim.SGD([weight], lr=0.0)
    scales, trackers = [], []
    for overflow in overflows:
        scaler.scale(gradlab.tensor(1.0))
        weight.grad = gradlab.tensor([float("inf") if overflow else 1.0, 0.5])
        scaler.step(optimizer)
        scaler.update()
        scales.append(scaler.get_scale())
        trackers.append(scaler.state_dict()["_growth_tracker"])
    return scales, trackers


def _student_schedule(student, init, tracker, overflows, *settings) -> tuple[list, list]:
    scales, trackers = [], []
    scale = init
    for overflow in overflows:
        scale, tracker = student.update_scale(scale, bool(overflow), tracker, *settings)
        scales.append(scale)
        trackers.append(tracker)
    return scales, trackers


@check("update_scale")
def update_scale(student, rng):
    interval = int(rng.integers(2, 6))
    growth, backoff = float(rng.choice([2.0, 4.0])), float(rng.choice([0.5, 0.25]))
    init = 2.0 ** int(rng.integers(10, 20))
    steps = int(rng.integers(24, 33))
    overflows = rng.random(steps) < 0.2
    overflows[:interval] = False                             # it grows once at least,
    overflows[interval + int(rng.integers(0, 3))] = True     # then overflows
    want_scales, want_trackers = _scaler_schedule(
        init, 0, overflows, growth_factor=growth, backoff_factor=backoff,
        growth_interval=interval)
    got_scales, got_trackers = _student_schedule(student, init, 0, overflows, growth, backoff,
                                                 interval)
    pattern = "".join("x" if o else "." for o in overflows)
    settings = f"growth ×{growth:g}, backoff ×{backoff:g}, growth_interval {interval}"
    expect_close(got_scales, want_scales, f"the scale after each of {steps} steps, from "
                 f"2^{int(np.log2(init))}, {settings}; overflows at x in {pattern}: against "
                 "GradScaler", rtol=0, atol=0)
    expect_equal(list(got_trackers), want_trackers, "the tracker (clean steps in a row) after "
                 "each step, against GradScaler's _growth_tracker")
    # PyTorch's defaults: halve, double, 2000 steps. The edge of an interval, and an overflow
    # that ends a long clean run.
    init = 2.0 ** int(rng.integers(8, 24))
    for tracker, overflows in ((1999, [False, False]), (int(rng.integers(500, 1999)), [True]),
                               (int(rng.integers(0, 1998)), [False])):
        want = _scaler_schedule(init, tracker, overflows)
        got = _student_schedule(student, init, tracker, overflows)
        kinds = ", ".join("overflow" if o else "clean" for o in overflows)
        expect_equal(list(zip(*got)), list(zip(*want)),
                     f"(scale, tracker) after each step with the defaults, from scale "
                     f"2^{int(np.log2(init))} and tracker {tracker}; steps: {kinds}")
