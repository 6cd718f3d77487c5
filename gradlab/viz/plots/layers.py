"""Per-layer views: gradient norms, and histograms of gradients, weights or activations.

Each takes a model after ``loss.backward()`` (its ``named_parameters()`` and their
``.grad``) or a plain ``{layer name: values}`` dict, e.g. what a debug session
recorded, or what :func:`capture_activations` returns.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ._common import (
    COLORS,
    LINESTYLES,
    check_choice,
    finish,
    grid_figure,
    is_tensor,
    new_axes,
    series_style,
    styled,
    to_numpy,
)

__all__ = ["capture_activations", "plot_grad_norms", "plot_histograms"]


def _is_module(obj: Any) -> bool:
    return callable(getattr(obj, "named_parameters", None)) and \
        callable(getattr(obj, "named_modules", None))


def _from_module(who: str, module: Any, which: str) -> dict[str, Any]:
    check_choice(who, "which", which, ("grad", "param"))
    params = dict(module.named_parameters())
    if not params:
        raise ValueError(f"{who}: {type(module).__name__} has no parameters to show")
    if which == "param":
        return params
    grads = {name: p.grad for name, p in params.items()}
    if all(g is None for g in grads.values()):
        raise ValueError(f"{who}: no parameter of {type(module).__name__} has a .grad yet; run "
                         f"loss.backward() first (and don't zero_grad() before plotting), or "
                         f"pass which='param' to show the weights")
    return grads


def _named_values(who: str, source: Any, which: str) -> dict[str, Any]:
    if _is_module(source):
        return _from_module(who, source, which)
    if isinstance(source, Mapping):
        if not source:
            raise ValueError(f"{who}: got an empty dict; pass {{layer name: values}}")
        return {str(k): v for k, v in source.items()}
    raise TypeError(f"{who}: expected a gradlab nn.Module (after loss.backward()) or a dict "
                    f"{{layer name: values or tensors}}, got {type(source).__name__}")


def _flat(who: str, name: str, value: Any) -> np.ndarray:
    """All numbers of a tensor, an array, or a list of numbers/tensors, as one flat array."""
    if isinstance(value, Sequence) and not isinstance(value, str) and value and \
            any(is_tensor(v) or isinstance(v, np.ndarray) for v in value):
        return np.concatenate([_flat(who, name, v) for v in value])
    return to_numpy(value, who, f"the values of {name!r}").ravel()


def _norm(x: np.ndarray, norm_type: float) -> float:
    if norm_type == math.inf:
        return float(np.abs(x).max()) if x.size else 0.0
    return float(np.sum(np.abs(x) ** norm_type) ** (1.0 / norm_type))


def _layer_of(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else name


def _group(norms: dict[str, Any], norm_type: float) -> dict[str, Any]:
    """Combine parameter norms into one norm per layer: ``(sum_i n_i^p)^(1/p)``."""
    layers: dict[str, list] = {}
    for name, n in norms.items():
        if n is not None:
            layers.setdefault(_layer_of(name), []).append(np.asarray(n, dtype=np.float64))
        else:
            layers.setdefault(_layer_of(name), [])
    out: dict[str, Any] = {}
    for layer, parts in layers.items():
        if not parts:
            out[layer] = None
        elif norm_type == math.inf:
            out[layer] = np.max(parts, axis=0)
        else:
            out[layer] = np.sum([p ** norm_type for p in parts], axis=0) ** (1.0 / norm_type)
    return out


def _is_history(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


@styled
def plot_grad_norms(source: Any, *, norm_type: float = 2.0, by: str = "parameter",
                    log_scale: bool = True, title: str | None = None, ax: Axes | None = None,
                    path: str | os.PathLike | None = None) -> Figure:
    """Gradient norm per parameter (or per layer): spot vanishing and exploding gradients.

    ``source`` is a model after ``loss.backward()``, or ``{name: value}`` where
    each value is either one gradient (a tensor or array: one horizontal bar of
    its norm) or a history over steps (a list of norms, or of gradient tensors:
    one line per name). ``by="layer"`` merges a layer's weight and bias into
    one norm ``(sum_i ||g_i||^p)^(1/p)``. Norms span orders of magnitude, so
    the norm axis is logarithmic unless ``log_scale=False``.
    """
    who = "plot_grad_norms"
    check_choice(who, "by", by, ("parameter", "layer"))
    if not (norm_type == math.inf or (isinstance(norm_type, (int, float)) and norm_type > 0)):
        raise ValueError(f"{who}: norm_type must be a positive number or math.inf, got "
                         f"{norm_type!r}")
    named = _named_values(who, source, "grad")
    history = [_is_history(v) for v in named.values()]
    if any(history) and not all(history):
        raise TypeError(f"{who}: mix of snapshots and histories: give every name either one "
                        f"gradient (a tensor) or a list over steps, not both")
    fig, ax = new_axes(who, ax, figsize=(7.0, 4.2) if all(history) else
                       (7.0, 1.2 + 0.32 * len(named)))
    if all(history):
        norms = {}
        for name, steps in named.items():
            if any(is_tensor(v) or (isinstance(v, np.ndarray) and v.ndim) for v in steps):
                norms[name] = np.array([_norm(_flat(who, name, v), norm_type) for v in steps])
            else:
                norms[name] = to_numpy(steps, who, f"the norms of {name!r}").ravel()
        if by == "layer":
            norms = _group(norms, norm_type)
        for i, (name, n) in enumerate(norms.items()):
            ax.plot(np.arange(1, len(n) + 1), n, label=name, gid=name,
                    **series_style(i, len(n)))
        ax.set_xlabel("step")
        ax.set_ylabel(f"gradient norm (L{_p(norm_type)})")
        if log_scale:
            ax.set_yscale("log")
        if len(norms) > 1:
            ax.legend(fontsize=8, ncols=2 if len(norms) > 8 else 1)
    else:
        norms = {name: None if v is None else _norm(_flat(who, name, v), norm_type)
                 for name, v in named.items()}
        if by == "layer":
            norms = {k: None if v is None else float(v) for k, v in
                     _group(norms, norm_type).items()}
        names = list(norms)
        drawn = [i for i, n in enumerate(names) if norms[n] is not None]
        values = [norms[names[i]] for i in drawn]
        bars = ax.barh(drawn, values, color=COLORS[0], edgecolor="black", linewidth=0.5)
        for bar, value in zip(bars, values):
            ax.annotate(f"{value:.3g}", (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                        xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
        ax.set_yticks(range(len(names)),
                      [n if norms[n] is not None else f"{n} (no grad)" for n in names])
        ax.invert_yaxis()  # model order, top to bottom
        ax.set_xlabel(f"gradient norm (L{_p(norm_type)})")
        ax.grid(axis="y", visible=False)
        if log_scale:
            if any(v <= 0 for v in values):
                raise ValueError(f"{who}: some gradients are exactly zero, which a log scale "
                                 f"can't show; pass log_scale=False (a zero gradient often "
                                 f"means a dead ReLU or a detached branch)")
            ax.set_xscale("log")
        ax.margins(x=0.15)
    if title:
        ax.set_title(title)
    return finish(who, fig, path)


def _p(norm_type: float) -> str:
    return "inf" if norm_type == math.inf else f"{norm_type:g}"


@styled
def plot_histograms(source: Any, *, which: str = "grad", bins: int = 50, log_count: bool = False,
                    ncols: int = 3, title: str | None = None, ax: Axes | None = None,
                    path: str | os.PathLike | None = None) -> Figure:
    """Histograms of values per layer: gradients, weights, or activations.

    ``source`` is a model (``which="grad"``: its ``.grad``s after backward,
    ``which="param"``: its weights) or ``{name: values}`` where values are a
    tensor, an array, or a list of numbers or tensors (pooled). Each name gets
    its own panel with mean, std and the share of exact zeros (dead ReLUs show
    up there); NaN and inf are counted, not drawn. With ``ax=`` all names are
    overlaid as outlines on that one axes.
    """
    who = "plot_histograms"
    if not isinstance(bins, int) or bins < 1:
        raise ValueError(f"{who}: bins must be a positive integer, got {bins!r}")
    named = {k: v for k, v in _named_values(who, source, which).items() if v is not None}
    data = {name: _flat(who, name, v) for name, v in named.items()}
    for name, x in data.items():
        if x.size == 0:
            raise ValueError(f"{who}: {name!r} has no values to draw")
    if ax is not None:
        fig, ax = new_axes(who, ax)
        for i, (name, x) in enumerate(data.items()):
            finite = x[np.isfinite(x)]
            ax.hist(finite, bins=bins, histtype="step", linewidth=1.4, label=name,
                    color=COLORS[i % len(COLORS)], linestyle=LINESTYLES[i % len(LINESTYLES)],
                    log=log_count)
        if len(data) > 1:
            ax.legend()
        ax.set_xlabel("value")
        ax.set_ylabel("count")
        if title:
            ax.set_title(title)
        return finish(who, fig, path)
    fig, axes = grid_figure(len(data), ncols=ncols)
    for panel, (name, x) in zip(axes, data.items()):
        finite = x[np.isfinite(x)]
        # few values, few bins: 2*sqrt(n) keeps ten biases from looking like a barcode
        panel.hist(finite, bins=min(bins, max(5, 2 * math.ceil(math.sqrt(finite.size)))),
                   color=COLORS[0], edgecolor="black", linewidth=0.3, log=log_count)
        panel.set_title(name, fontsize=10)
        stats = [f"n={x.size}"]
        if finite.size:
            stats.append(f"mean={finite.mean():.3g}  std={finite.std():.3g}")
            stats.append(f"zeros={np.mean(finite == 0):.0%}")
        if finite.size < x.size:
            stats.append(f"non-finite: {x.size - finite.size}")
        panel.set_xlabel("   ".join(stats), fontsize=7.5)  # under the axis: never over the bars
        panel.tick_params(labelsize=8)
    kind = {"grad": "gradients", "param": "weights"}.get(which, which)
    fig.suptitle(title or (f"{kind} per layer" if _is_module(source) else "values per layer"))
    return finish(who, fig, path)


def capture_activations(module: Any, *inputs: Any, **kwargs: Any) -> dict[str, Any]:
    """Run ``module(*inputs)`` once (no graph) and return ``{leaf module path: its output}``.

    Only leaf modules (no children) are recorded, in the order they ran; the
    hooks are removed afterwards. Feed the result to :func:`plot_histograms`.
    """
    import gradlab

    if not _is_module(module):
        raise TypeError(f"capture_activations: expected a gradlab nn.Module, got "
                        f"{type(module).__name__}")
    outputs: dict[str, Any] = {}
    handles = []
    for name, sub in module.named_modules():
        if name and not any(True for _ in sub.children()):
            def hook(mod, args, out, name=name):
                if isinstance(out, (tuple, list)):  # e.g. an RNN's (output, h_n)
                    out = next((o for o in out if is_tensor(o)), None)
                if out is not None:
                    outputs[name] = out.detach()
            handles.append(sub.register_forward_hook(hook))
    try:
        with gradlab.no_grad():
            module(*inputs, **kwargs)
    finally:
        for handle in handles:
            handle.remove()
    return outputs
