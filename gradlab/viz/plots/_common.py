"""What every plot shares: the style, a fresh headless Figure, input conversion, saving.

Library code never touches ``matplotlib.pyplot``: pyplot keeps a global list of
open figures (which leak memory in a training loop) and may pick an
interactive backend that opens windows. A bare ``matplotlib.figure.Figure``
draws with Agg when saved, belongs to nobody, and is freed with its last
reference. Styles are applied with ``rc_context`` so the user's own
``rcParams`` are neither read by surprise nor changed.
"""

from __future__ import annotations

import functools
import os
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

# --------------------------------------------------------------------------- the palette
# One place for every colour, line style, marker and hatch, so the whole set of
# plots can be re-themed at once. Okabe & Ito's colour-blind-safe colours, in an
# order whose grey levels differ; line styles and markers tell series apart in a
# grayscale print even where the colours don't.
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
          "#F0E442")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (8, 2)),
              (0, (3, 1, 1, 1)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
HATCHES = ("", "//", "..", "xx", "\\\\", "++", "oo", "--")
# Memory categories keep the same look in every plot (and, through the theme, in the app).
CATEGORY_COLORS = {"parameter": "#0072B2", "optimizer": "#CC79A7", "gradient": "#D55E00",
                   "activation": "#009E73", "other": "#BBBBBB"}
CATEGORY_HATCHES = {"parameter": "", "optimizer": "xx", "gradient": "//", "activation": "..",
                    "other": "\\\\"}
SURFACE_SHADES = (1.0, 0.8)  # contour fill from white (low) to light grey (high): paths stand out


def surface_cmap():
    """A white-to-light-grey colormap for loss surfaces (dark fills would hide the paths)."""
    from matplotlib.colors import LinearSegmentedColormap

    lo, hi = (str(v) for v in SURFACE_SHADES)
    return LinearSegmentedColormap.from_list("gradlab_surface", [lo, hi])

try:  # the shared theme (gradlab/viz/theme.py), when it is there, overrides the palette
    from .. import theme as _theme
except ImportError:  # pragma: no cover - depends on what else is installed
    _theme = None
if _theme is not None:  # take whatever it defines under these names, keep the rest
    COLORS = tuple(getattr(_theme, "SERIES_COLORS", COLORS))
    CATEGORY_COLORS = dict(getattr(_theme, "MEMORY_COLORS", CATEGORY_COLORS))

RC = {
    "axes.grid": True, "grid.alpha": 0.35, "grid.linewidth": 0.6,
    "axes.spines.top": False, "axes.spines.right": False,
    "axes.titlesize": 11, "axes.labelsize": 10, "legend.fontsize": 9, "legend.framealpha": 0.9,
    "xtick.labelsize": 9, "ytick.labelsize": 9, "lines.linewidth": 1.6,
    "svg.hashsalt": "gradlab", "svg.fonttype": "path", "hatch.linewidth": 0.6,
}


def series_style(i: int, n_points: int = 0, markers: bool = True) -> dict[str, Any]:
    """Colour, line style and (spaced-out) marker of the i-th series."""
    style = {"color": COLORS[i % len(COLORS)], "linestyle": LINESTYLES[i % len(LINESTYLES)],
             "marker": MARKERS[i % len(MARKERS)] if markers else "", "markersize": 4.5}
    if n_points > 12:  # ~10 markers per line: enough to identify it, few enough to read it
        style["markevery"] = max(1, n_points // 10)
    return style


def styled(fn: Callable) -> Callable:
    """Run a plot function under gradlab's rc settings (restored afterwards)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(RC):
            return fn(*args, **kwargs)
    return wrapper


# --------------------------------------------------------------------------- figures

def new_axes(who: str, ax: Axes | None, figsize: tuple[float, float] = (7.0, 4.2)
             ) -> tuple[Figure, Axes]:
    """The figure and axes to draw into: ``ax`` and its figure, or a fresh headless pair."""
    if ax is None:
        fig = Figure(figsize=figsize, layout="constrained")
        return fig, fig.add_subplot()
    if not isinstance(ax, Axes):
        raise TypeError(f"{who}: ax must be a matplotlib Axes (e.g. fig.add_subplot()), got "
                        f"{type(ax).__name__}")
    return ax.get_figure(root=True), ax


def grid_figure(n: int, ncols: int = 3, panel: tuple[float, float] = (3.4, 2.6)
                ) -> tuple[Figure, list[Axes]]:
    """A fresh figure with ``n`` small panels in rows of ``ncols``; unused cells are removed."""
    ncols = max(1, min(ncols, n))
    nrows = -(-n // ncols)
    fig = Figure(figsize=(panel[0] * ncols, panel[1] * nrows), layout="constrained")
    axes = list(fig.subplots(nrows, ncols, squeeze=False).ravel())
    for extra in axes[n:]:
        extra.remove()
    return fig, axes[:n]


SAVE_FORMATS = ("png", "svg", "pdf")


def finish(who: str, fig: Figure, path: str | os.PathLike | None, dpi: int = 150) -> Figure:
    """Save ``fig`` to ``path`` if given (format from the extension, atomically); return it."""
    if path is not None:
        save_figure(fig, path, dpi=dpi, who=who)
    return fig


def save_figure(fig: Figure, path: str | os.PathLike, *, dpi: int = 150,
                who: str = "save_figure") -> Path:
    """Write ``fig`` as PNG, SVG or PDF (by ``path``'s extension), all or nothing.

    The image goes to a temporary sibling first and is renamed over ``path``,
    so a crash mid-write never leaves a half-written file behind. SVG and PDF
    carry no date, so the same figure gives the same file.
    """
    path = Path(os.fspath(path))
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in SAVE_FORMATS:
        raise ValueError(f"{who}: can't tell the image format of {str(path)!r}: the file name "
                         f"must end in .png, .svg or .pdf, got {path.suffix or 'no extension'!r}")
    folder = path.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"{who}: can't write {path}: the folder {folder} does not exist. "
                                "Fix: create it first, e.g. os.makedirs(folder)")
    metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(fmt)
    tmp = folder / f".{path.name}.{secrets.token_hex(4)}.tmp"
    try:
        with open(tmp, "xb") as stream, matplotlib.rc_context(RC):
            fig.savefig(stream, format=fmt, dpi=dpi, metadata=metadata)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


# --------------------------------------------------------------------------- input conversion

def is_tensor(value: Any) -> bool:
    from gradlab.tensor import Tensor

    return isinstance(value, Tensor)


def to_numpy(value: Any, who: str, what: str) -> np.ndarray:
    """A float64 NumPy copy of a gradlab tensor, NumPy array, number or list of numbers."""
    if is_tensor(value):
        return value.detach().cpu().numpy().astype(np.float64, copy=True)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and \
            any(is_tensor(v) for v in value):  # a list of 0-d tensors, e.g. recorded losses
        return np.array([to_numpy(v, who, what) for v in value], dtype=np.float64)
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{who}: {what} must be numbers, a list of numbers, a NumPy array or a "
                        f"gradlab tensor, got {type(value).__name__}") from None


def as_named(who: str, data: Any, default_name: str) -> dict[str, Any]:
    """``{name: series}`` from a mapping, or ``{default_name: data}`` for a single series."""
    if isinstance(data, Mapping):
        if not data:
            raise ValueError(f"{who}: got an empty mapping; pass at least one series, e.g. "
                             f"{{'train': [0.9, 0.5, 0.3]}}")
        return {str(k): v for k, v in data.items()}
    return {default_name: data}


def check_choice(who: str, name: str, value: Any, choices: Iterable[str]) -> None:
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{who}: {name} must be one of {', '.join(map(repr, choices))}; "
                         f"got {value!r}")
