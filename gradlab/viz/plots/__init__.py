"""matplotlib figures of a training run: curves, gradients, memory, lr schedules, optimizers.

Every ``plot_*`` function is one call that returns a ``matplotlib.figure.Figure``
(headless: nothing pops up, nothing stays registered with pyplot), saves it
when given ``path=`` (.png, .svg or .pdf, written atomically), and draws into
an existing ``ax=`` where one axes is enough. Inputs are plain lists and dicts,
gradlab tensors and models, or the events a debug session records.

In Jupyter a returned Figure displays itself; in a script, save it with
``path=`` or ``fig.savefig(...)``.
"""

from ._common import save_figure
from .curves import plot_curves, smooth
from .layers import capture_activations, plot_grad_norms, plot_histograms
from .memory import memory_timeline, plot_memory
from .schedules import lr_schedule, plot_lr_schedule
from .surfaces import SURFACES, Surface, Trajectory, optimizer_trajectories, plot_optimizer_paths

__all__ = [
    "plot_curves", "plot_grad_norms", "plot_histograms", "plot_memory", "plot_lr_schedule",
    "plot_optimizer_paths", "optimizer_trajectories", "lr_schedule", "memory_timeline",
    "capture_activations", "smooth", "save_figure", "SURFACES", "Surface", "Trajectory",
]
