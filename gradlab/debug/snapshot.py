"""What a debug session shows, as frozen plain data: the contract between engine and views.

A :class:`~gradlab.debug.Session` records events on the training thread and
hands views (the terminal app, a notebook, a test) a :class:`Snapshot`: a
consistent, immutable copy of everything it knows, safe to read on another
thread while training goes on. Nothing here refers to live tensors, so a
snapshot never keeps memory alive and never changes under its reader.

Node keys are stable across iterations: the k-th op an iteration records is
``"op<k>"``, a parameter is ``"param:<name>"`` (its module path name, or
``"param:<id>"`` when no module names it), the k-th other leaf or data input
is ``"in<k>"``. The same program therefore gives the same keys and the same
:attr:`GraphSnapshot.shape_key` every iteration, which is what lets a view
lay a graph out once and keep nodes still while stepping.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "TensorSummary", "NodeSnapshot", "EdgeSnapshot", "GraphSnapshot", "MemorySample",
    "DeviceMemorySnapshot", "ParamStateSnapshot", "OptimizerSnapshot", "LogLine", "Position",
    "Snapshot", "NODE_STATES", "STATUSES",
]

NODE_STATES = ("created", "forward", "backward")
"""``created``: known from the graph only (made before the session attached);
``forward``: its op ran; ``backward``: its backward ran (a leaf: its gradient arrived)."""

STATUSES = ("idle", "running", "paused", "finished", "failed", "stopped")
"""``idle``: nothing run yet; ``finished``: the script ended normally; ``failed``: it
raised (see :attr:`Snapshot.error`); ``stopped``: the user stopped it."""


@dataclass(frozen=True)
class TensorSummary:
    """Statistics of one tensor, computed once on its device; only small results are kept.

    Float statistics are None for an empty tensor (and ``std`` for a single
    element); NaN and Inf are left out of them and counted instead.
    """

    shape: tuple[int, ...]
    dtype: str
    device: str
    numel: int
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    std: float | None = None
    norm: float | None = None
    nan: int = 0
    inf: int = 0
    histogram: tuple[tuple[float, ...], tuple[int, ...]] | None = None  # (edges, counts)
    heatmap: tuple[tuple[float, ...], ...] | None = None  # a small 2-D picture, rows of floats
    values: str | None = None  # the values as text, for small tensors only

    @property
    def finite(self) -> bool:
        return self.nan == 0 and self.inf == 0


@dataclass(frozen=True)
class NodeSnapshot:
    """One box of the graph: an op, a parameter, or another leaf / data input."""

    key: str  # "op3", "param:fc1.weight", "in0" (see the module docstring)
    kind: str  # "op", "parameter", "input" (data: needs no grad), "leaf" (requires grad)
    label: str  # op name ("linear", "relu") or tensor name ("fc1.weight", "x")
    state: str  # one of NODE_STATES
    order: int  # position in the iteration's record: forward order for ops
    module: str | None = None  # path of the module whose forward ran it ("0" , "encoder.fc1")
    backward_name: str | None = None  # "MulBackward0"; None for leaves
    node_id: int | None = None  # the autograd node's id (ops only)
    input_shapes: tuple[tuple[int, ...], ...] = ()
    output_shapes: tuple[tuple[int, ...], ...] = ()
    dtype: str | None = None
    device: str | None = None
    value: TensorSummary | None = None  # the (first) output, or the leaf itself
    grad: TensorSummary | None = None  # gradient w.r.t. that value
    grad_inputs: tuple[TensorSummary | None, ...] = ()  # what backward sent to each input
    derivative: str | None = None  # the op's derivative rule in words
    duration: float | None = None  # forward seconds
    tangent: TensorSummary | None = None  # forward mode: the tangent its value carries
    backward_duration: float | None = None  # seconds its backward took (its ops included)


@dataclass(frozen=True)
class EdgeSnapshot:
    source: str  # node key
    target: str
    label: str = ""  # the shape of the tensor passed, "(64, 32)"


@dataclass(frozen=True)
class GraphSnapshot:
    """The graph of one iteration, nodes in record order."""

    iteration: int
    nodes: tuple[NodeSnapshot, ...]
    edges: tuple[EdgeSnapshot, ...]
    shape_key: int  # equal for two iterations with the same nodes and edges (by key and label)
    current: str | None = None  # key of the node the run is at (paused or last seen)
    loss: float | None = None
    truncated: int = 0  # nodes left out because the graph was bigger than the session's limit
    partial: bool = False  # ops of this iteration ran unrecorded (the session began to record in
    #                        full after the iteration began): they show as "created", no values

    def node(self, key: str) -> NodeSnapshot:
        for n in self.nodes:
            if n.key == key:
                return n
        raise KeyError(f"no node {key!r} in the graph of iteration {self.iteration}")


@dataclass(frozen=True)
class MemorySample:
    time: float  # seconds since the session attached
    live_bytes: int


@dataclass(frozen=True)
class DeviceMemorySnapshot:
    device: str  # "cpu", "cuda:0"
    live_bytes: int
    peak_bytes: int
    by_category: dict[str, int]  # parameter, gradient, activation, optimizer, other
    timeline: tuple[MemorySample, ...]  # bounded; oldest first
    pool: dict[str, int] = field(default_factory=dict)  # CuPy pool figures on CUDA


@dataclass(frozen=True)
class ParamStateSnapshot:
    name: str  # "fc1.weight" (or "param <id>")
    shape: tuple[int, ...]
    group: int
    lr: float
    step: int | None = None
    grad_norm: float | None = None
    update_norm: float | None = None
    state_norms: dict[str, float] = field(default_factory=dict)  # "exp_avg": 0.12, ...
    state_scalars: dict[str, float] = field(default_factory=dict)  # "step": 12.0, ...


@dataclass(frozen=True)
class OptimizerSnapshot:
    name: str  # "Adam"
    source: int  # id() of the optimizer
    steps: int
    groups: tuple[dict, ...]  # each group's hyperparameters (no "params")
    params: tuple[ParamStateSnapshot, ...]


@dataclass(frozen=True)
class LogLine:
    seq: int
    kind: str  # "op", "backward", "grad", "update", "memory", "phase", "metric", "output",
    #            "break", "error"
    text: str


@dataclass(frozen=True)
class Position:
    """Where the training thread is (paused there, or was last seen)."""

    event: str  # "op", "backward", "grad", "update", "iteration", "epoch", "phase", "loss"
    description: str  # "forward of relu (op3) in module 1"
    node: str | None = None  # graph node key, when there is one
    seq: int = 0


@dataclass(frozen=True)
class Snapshot:
    """Everything a session knows, at one moment."""

    version: int  # grows with every change; equal versions mean equal snapshots
    status: str  # one of STATUSES
    iteration: int  # iterations begun (the first is 1; 0 before any)
    epoch: int
    position: Position | None
    pause_reason: str | None  # "step: next op", "breakpoint: op relu", "NaN in grad of op4"
    graph: GraphSnapshot | None  # the current iteration
    history: tuple[GraphSnapshot, ...]  # earlier iterations, oldest first (bounded)
    memory: tuple[DeviceMemorySnapshot, ...]
    optimizers: tuple[OptimizerSnapshot, ...]
    losses: tuple[tuple[int, float], ...]  # (iteration, loss), bounded
    metrics: dict[str, tuple[tuple[int, float], ...]]  # reported numbers by name
    steps_per_second: float | None
    log: tuple[LogLine, ...]  # the last lines of the event stream (bounded)
    output: str  # the script's stdout and stderr, last part
    error: str | None  # the script's traceback when it failed
    breakpoints: tuple[str, ...]  # descriptions of the active breakpoints
