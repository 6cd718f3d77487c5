"""Optimizers on a 2-D loss surface: the contour of f(x, y) and the path each optimizer takes.

Each path is a real run of a ``gradlab.optim`` optimizer on one parameter
``p = (x, y)``: ``loss = f(p[0], p[1])``, ``loss.backward()``, ``opt.step()``.
So the picture shows what the library's SGD, momentum, RMSprop and Adam do,
not a re-implementation of them.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ._common import finish, is_tensor, new_axes, series_style, styled, surface_cmap

__all__ = ["SURFACES", "Surface", "Trajectory", "optimizer_trajectories", "plot_optimizer_paths"]

WHO = "plot_optimizer_paths"


@dataclass(frozen=True)
class Surface:
    """A test function f(x, y) written with gradlab ops, with a good window and start point.

    ``lrs`` are learning rates per optimizer name that make a readable picture
    on this surface (each optimizer needs its own: SGD's step is lr * gradient,
    Adam's is about lr whatever the gradient).
    """

    name: str
    fn: Callable[[Any, Any], Any]
    xlim: tuple[float, float]
    ylim: tuple[float, float]
    start: tuple[float, float]
    minima: tuple[tuple[float, float], ...] = ()
    lrs: Mapping[str, float] = field(default_factory=dict)
    log_levels: bool = False
    steps: int = 200  # enough for the paths to tell the optimizers apart


def _rosenbrock(x, y):
    """Rosenbrock's banana: a curved flat valley; min 0 at (1, 1)."""
    return (1 - x) ** 2 + 100 * (y - x ** 2) ** 2


def _beale(x, y):
    """Beale's function: flat plateaus and steep walls; min 0 at (3, 0.5)."""
    return (1.5 - x + x * y) ** 2 + (2.25 - x + x * y ** 2) ** 2 + (2.625 - x + x * y ** 3) ** 2


def _quadratic(x, y):
    """An elongated bowl, curvature 1 along x and 20 along y: SGD zig-zags, momentum helps."""
    return 0.5 * x ** 2 + 10 * y ** 2


def _himmelblau(x, y):
    """Himmelblau's function: four minima of 0; where you end depends on where you start."""
    return (x ** 2 + y - 11) ** 2 + (x + y ** 2 - 7) ** 2


SURFACES: dict[str, Surface] = {
    "quadratic": Surface("quadratic bowl", _quadratic, (-5.0, 5.0), (-2.5, 2.5), (-4.5, 2.0),
                         ((0.0, 0.0),), {"sgd": 0.09, "momentum": 0.01, "nesterov": 0.01,
                                         "rmsprop": 0.05, "adam": 0.1, "adagrad": 1.0},
                         steps=100),
    "rosenbrock": Surface("Rosenbrock", _rosenbrock, (-2.0, 2.0), (-1.0, 3.0), (-1.2, 1.0),
                          ((1.0, 1.0),), {"sgd": 1e-3, "momentum": 4e-4, "nesterov": 4e-4,
                                          "rmsprop": 0.01, "adam": 0.1, "adagrad": 0.5},
                          log_levels=True, steps=500),
    "beale": Surface("Beale", _beale, (-4.5, 4.5), (-4.5, 4.5), (1.0, 1.5), ((3.0, 0.5),),
                     {"sgd": 0.004, "momentum": 0.001, "nesterov": 0.001, "rmsprop": 0.01,
                      "adam": 0.05, "adagrad": 0.5}, log_levels=True, steps=300),
    "himmelblau": Surface("Himmelblau", _himmelblau, (-5.0, 5.0), (-5.0, 5.0), (-0.5, -0.5),
                          ((3.0, 2.0), (-2.805118, 3.131312), (-3.779310, -3.283186),
                           (3.584428, -1.848127)),
                          {"sgd": 0.005, "momentum": 0.001, "nesterov": 0.001, "rmsprop": 0.03,
                           "adam": 0.1, "adagrad": 1.0}, log_levels=True, steps=200),
}

_DEFAULT_OPTIMIZERS = ("sgd", "momentum", "rmsprop", "adam")
_LABELS = {"sgd": "SGD", "momentum": "SGD+momentum", "nesterov": "SGD+Nesterov",
           "rmsprop": "RMSprop", "adam": "Adam", "adagrad": "Adagrad"}


def _factory(name: str, lr: float) -> Callable[[list], Any]:
    from gradlab import optim

    return {
        "sgd": lambda ps: optim.SGD(ps, lr=lr),
        "momentum": lambda ps: optim.SGD(ps, lr=lr, momentum=0.9),
        "nesterov": lambda ps: optim.SGD(ps, lr=lr, momentum=0.9, nesterov=True),
        "rmsprop": lambda ps: optim.RMSprop(ps, lr=lr),
        "adam": lambda ps: optim.Adam(ps, lr=lr),
        "adagrad": lambda ps: optim.Adagrad(ps, lr=lr),
    }[name]


@dataclass
class Trajectory:
    """Where one optimizer went: ``points`` (k, 2) from the start, ``losses`` (k,) there."""

    points: np.ndarray
    losses: np.ndarray
    lr: float | None
    diverged: bool


def _resolve_surface(surface: Any) -> Surface:
    if isinstance(surface, Surface):
        return surface
    if isinstance(surface, str):
        key = surface.lower()
        if key not in SURFACES:
            raise ValueError(f"{WHO}: unknown surface {surface!r}; built in: "
                             f"{', '.join(SURFACES)}, or pass your own f(x, y) written with "
                             f"gradlab ops")
        return SURFACES[key]
    if callable(surface):
        name = getattr(surface, "__name__", "f")
        return Surface(name if name != "<lambda>" else "f(x, y)", surface, (-3.0, 3.0),
                       (-3.0, 3.0), (-2.5, 2.5))
    raise TypeError(f"{WHO}: surface must be a name ({', '.join(SURFACES)}), a Surface, or a "
                    f"function f(x, y) of gradlab tensors; got {type(surface).__name__}")


def _resolve_optimizers(optimizers: Any, surface: Surface, lr: float | None
                        ) -> dict[str, Callable[[list], Any]]:
    if optimizers is None:
        optimizers = _DEFAULT_OPTIMIZERS
    if isinstance(optimizers, str):
        optimizers = (optimizers,)
    if isinstance(optimizers, Mapping):
        items = list(optimizers.items())
    elif isinstance(optimizers, Sequence):
        items = [(o, o) if isinstance(o, str) else (getattr(o, "__name__", f"optimizer {i}"), o)
                 for i, o in enumerate(optimizers)]
    else:
        raise TypeError(f"{WHO}: optimizers must be a list of names ({', '.join(_LABELS)}) or "
                        f"a dict {{label: lambda params: gradlab.optim.Adam(params, lr=0.1)}}; "
                        f"got {type(optimizers).__name__}")
    out = {}
    for label, spec in items:
        if isinstance(spec, str):
            key = spec.lower()
            if key not in _LABELS:
                raise ValueError(f"{WHO}: unknown optimizer {spec!r}; by name: "
                                 f"{', '.join(_LABELS)}, or pass {{label: lambda params: "
                                 f"gradlab.optim.X(params, ...)}}")
            rate = lr if lr is not None else surface.lrs.get(key, 0.01)
            out[_LABELS[key] if label == spec else str(label)] = _factory(key, rate)
        elif callable(spec):
            out[str(label)] = spec
        else:
            raise TypeError(f"{WHO}: optimizer {label!r} must be a name or a factory "
                            f"lambda params: gradlab.optim.X(params, ...); got "
                            f"{type(spec).__name__}")
    return out


def _scalar_loss(fn: Callable, p) -> Any:
    loss = fn(p[0], p[1])
    if not is_tensor(loss):
        raise TypeError(f"{WHO}: f(x, y) returned {type(loss).__name__}, not a gradlab tensor; "
                        f"write it with gradlab ops and operators (x ** 2, gradlab.sin(x), ...), "
                        f"not math or NumPy, so it can be differentiated")
    if loss.numel() != 1:
        raise ValueError(f"{WHO}: f(x, y) must return one number, got shape "
                         f"{tuple(loss.shape)}")
    return loss.reshape(())


def optimizer_trajectories(surface: Any = "rosenbrock", optimizers: Any = None, *,
                           start: Sequence[float] | None = None, steps: int | None = None,
                           lr: float | None = None, escape: float = 1e6
                           ) -> dict[str, Trajectory]:
    """Run each optimizer from ``start`` for ``steps`` steps on ``surface``.

    ``optimizers``: names (sgd, momentum, nesterov, rmsprop, adam, adagrad; the
    surface suggests each one's lr unless ``lr`` is given) or ``{label: factory}``
    where ``factory(params)`` builds any gradlab optimizer. A run stops early
    (``diverged=True``) once the point is non-finite or beyond ``escape``.
    """
    import gradlab

    surf = _resolve_surface(surface)
    factories = _resolve_optimizers(optimizers, surf, lr)
    steps = surf.steps if steps is None else steps
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"{WHO}: steps must be a non-negative integer, got {steps!r}")
    start = surf.start if start is None else start
    if len(start) != 2:
        raise ValueError(f"{WHO}: start must be a point (x, y), got {start!r}")
    out = {}
    for label, factory in factories.items():
        p = gradlab.nn.Parameter(gradlab.tensor([float(start[0]), float(start[1])],
                                                dtype=gradlab.float64))
        opt = factory([p])

        def closure(opt=opt, p=p):
            opt.zero_grad()
            loss = _scalar_loss(surf.fn, p)
            loss.backward()
            return loss

        points = [p.detach().numpy().copy()]
        losses = []
        diverged = False
        for _ in range(steps):
            losses.append(float(opt.step(closure)))  # the loss at the point before the step
            point = p.detach().numpy().copy()
            if not np.all(np.isfinite(point)) or np.abs(point).max() > escape:
                diverged = True
                break
            points.append(point)
        with gradlab.no_grad():
            if not diverged:
                losses.append(float(_scalar_loss(surf.fn, p)))
        rate = opt.param_groups[0].get("lr") if getattr(opt, "param_groups", None) else None
        out[label] = Trajectory(np.asarray(points), np.asarray(losses[:len(points)]),
                                rate, diverged)
    return out


def _grid_values(surf: Surface, resolution: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import gradlab

    xs = np.linspace(*surf.xlim, resolution)
    ys = np.linspace(*surf.ylim, resolution)
    gx, gy = np.meshgrid(xs, ys)
    with gradlab.no_grad():
        z = surf.fn(gradlab.tensor(gx), gradlab.tensor(gy))
    if not is_tensor(z) or tuple(z.shape) != gx.shape:
        raise ValueError(f"{WHO}: f(x, y) must work elementwise on tensors (called on a "
                         f"{resolution}x{resolution} grid it returned "
                         f"{tuple(getattr(z, 'shape', ())) or type(z).__name__}); use "
                         f"elementwise gradlab ops, no .item() or reductions")
    return gx, gy, z.numpy()


def _levels(z: np.ndarray, n: int, log: bool) -> np.ndarray:
    finite = z[np.isfinite(z)]
    lo, hi = float(finite.min()), float(finite.max())
    if log and lo >= 0:
        floor = max(lo, hi * 1e-6, 1e-12)
        return np.unique(np.concatenate([[lo], np.geomspace(floor, hi, n)]))
    return np.linspace(lo, hi, n)


@styled
def plot_optimizer_paths(surface: Any = "rosenbrock", optimizers: Any = None, *,
                         start: Sequence[float] | None = None, steps: int | None = None,
                         lr: float | None = None, xlim: tuple[float, float] | None = None,
                         ylim: tuple[float, float] | None = None, levels: int = 30,
                         log_levels: bool | None = None, resolution: int = 200,
                         title: str | None = None, ax: Axes | None = None,
                         path: str | os.PathLike | None = None) -> Figure:
    """Contour of ``surface`` and one path per optimizer, for comparing how they move.

    ``surface`` is a built-in name (``"rosenbrock"``, ``"beale"``,
    ``"quadratic"``, ``"himmelblau"``), a :class:`Surface`, or your own
    ``f(x, y)`` written with gradlab ops (it is called on tensors, so plain
    operators work: ``lambda x, y: x ** 2 + 3 * y ** 2``). ``optimizers`` and
    the rest are as in :func:`optimizer_trajectories`. Contour levels are
    spaced logarithmically on surfaces with a deep narrow valley (``log_levels``).
    """
    surf = _resolve_surface(surface)
    if xlim is not None or ylim is not None:
        surf = dataclasses.replace(surf, xlim=tuple(xlim or surf.xlim),
                                   ylim=tuple(ylim or surf.ylim))
    if not isinstance(resolution, int) or resolution < 10:
        raise ValueError(f"{WHO}: resolution must be an integer >= 10, got {resolution!r}")
    paths = optimizer_trajectories(surf, optimizers, start=start, steps=steps, lr=lr)
    gx, gy, z = _grid_values(surf, resolution)
    log = surf.log_levels if log_levels is None else log_levels
    fig, ax = new_axes(WHO, ax, figsize=(7.0, 5.6))
    lv = _levels(z, levels, log)
    norm = None
    if log and lv[0] >= 0:
        from matplotlib.colors import SymLogNorm

        norm = SymLogNorm(linthresh=max(lv[1], 1e-12), vmin=lv[0], vmax=lv[-1])
    ax.contourf(gx, gy, z, levels=lv, cmap=surface_cmap(), norm=norm)
    ax.contour(gx, gy, z, levels=lv, colors="0.55", linewidths=0.4)
    steps = surf.steps if steps is None else steps
    for i, (label, traj) in enumerate(paths.items()):
        style = series_style(i, steps + 1)  # markers every steps/10: equal progress, all paths
        rate = f" (lr={traj.lr:g})" if isinstance(traj.lr, (int, float)) else ""
        legend = f"{label}{rate}" + (" - diverged" if traj.diverged else "")
        ax.plot(traj.points[:, 0], traj.points[:, 1], label=legend, gid=label, linewidth=1.8,
                **style)
        ax.plot(*traj.points[-1], marker=style["marker"], markersize=9, color=style["color"],
                markeredgecolor="black", linestyle="none", label="_nolegend_",
                gid=f"{label}:end")
    start_point = paths[next(iter(paths))].points[0] if paths else np.asarray(surf.start)
    ax.plot(*start_point, marker="o", markersize=8, color="white", markeredgecolor="black",
            linestyle="none", label="start", gid="start")
    if surf.minima:
        mins = np.asarray(surf.minima)
        ax.plot(mins[:, 0], mins[:, 1], marker="*", markersize=14, color="black",
                linestyle="none", label="minimum" if len(mins) == 1 else "minima", gid="minima")
    ax.set_xlim(*surf.xlim)
    ax.set_ylim(*surf.ylim)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.grid(False)
    ax.legend(loc="best", fontsize=8)
    ax.set_title(title or f"{surf.name}: {steps} steps")
    return finish(WHO, fig, path)

