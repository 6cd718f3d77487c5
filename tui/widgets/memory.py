"""The memory panel: live bytes per device and category, the peak, and a line over time.

Categories are the engine's (gradlab.memory): parameters, their gradients,
activations saved for backward, optimizer state, and other tensors. The bars
show each category's share of the device's live bytes; the sparkline is the
session's bounded timeline of live bytes; on CUDA, CuPy's pool figures follow.
"""

from __future__ import annotations

from textual.content import Content

from gradlab.debug.snapshot import DeviceMemorySnapshot, Snapshot
from gradlab.viz.theme import MEMORY_COLORS

from .charts import TextPanel, bar, flow, format_bytes, format_number, sparkline

__all__ = ["MemoryPanel", "CATEGORY_LABELS"]

CATEGORY_LABELS = {  # category: (short label, long label)
    "parameter": ("params", "parameters"),
    "gradient": ("grads", "gradients"),
    "activation": ("saved acts", "activations saved for backward"),
    "optimizer": ("optim state", "optimizer state"),
    "other": ("other", "other"),
}
# The shared memory colours, except the light grey of "other", which would vanish on a light
# theme: it takes the theme's muted text colour instead.
_BAR_STYLES = {**MEMORY_COLORS, "other": "$text-muted"}


class MemoryPanel(TextPanel):
    """Memory by device and category: ``MemoryPanel(show_times=True, id="memory")``.

    ``show_times``: False leaves the timeline off, its span in seconds and
    its samples, which depend on when the clock sampled them (for screenshots
    that must not change). :meth:`show` rebuilds the text only when the memory
    figures changed.
    """

    DEFAULT_CSS = """
    MemoryPanel { height: 1fr; }
    """

    def __init__(self, *, show_times: bool = True, name: str | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.show_times = show_times

    def key(self, snapshot: Snapshot, selected: str | None) -> object:
        return snapshot.memory

    def build(self, snapshot: Snapshot, selected: str | None, width: int,
              height: int) -> list[Content]:
        if not snapshot.memory:
            return [Content.styled("no memory figures yet: they appear once the script "
                                   "allocates tensors", "$text-muted")]
        lines: list[Content] = []
        for device in snapshot.memory:
            if lines:
                lines.append(Content(""))
            lines += self._device(device, width, self.show_times)
        return lines

    @staticmethod
    def _device(device: DeviceMemorySnapshot, width: int,
                show_times: bool = True) -> list[Content]:
        lines = flow([Content.styled(device.device, "bold $primary"),
                      Content.assemble(("live ", "$text-muted"), format_bytes(device.live_bytes)),
                      Content.assemble(("peak ", "$text-muted"), format_bytes(device.peak_bytes))],
                     width)
        long = width >= 64
        labels = {c: CATEGORY_LABELS.get(c, (c, c))[1 if long else 0] for c in device.by_category}
        order = [c for c in CATEGORY_LABELS if c in device.by_category]
        order += [c for c in device.by_category if c not in CATEGORY_LABELS]
        total = max(device.live_bytes, sum(device.by_category.values()), 1)
        label_w = max((len(labels[c]) for c in order), default=0)
        bytes_w = max((len(format_bytes(device.by_category[c])) for c in order), default=0)
        bar_w = max(4, width - label_w - bytes_w - 3)
        for category in order:
            size = device.by_category[category]
            lines.append(Content.assemble(
                " " + labels[category].ljust(label_w) + " ",
                (bar(size / total, bar_w), _BAR_STYLES.get(category, "$accent")),
                " " + format_bytes(size).rjust(bytes_w)))
        if device.timeline and show_times:
            live = [sample.live_bytes for sample in device.timeline]
            shown = live[-(width - 1):]
            lines.append(Content.assemble(" ", (sparkline(shown), "$primary")))
            span = device.timeline[-1].time - device.timeline[-len(shown)].time
            lines += flow([Content.styled(f"last {format_number(span, 3)} s", "$text-muted"),
                           f"{format_bytes(min(shown))} .. {format_bytes(max(shown))}"],
                          width, indent=1)
        if device.pool:
            cells = [Content.styled("pool", "$text-muted")]
            for name, value in device.pool.items():
                shown_value = format_bytes(value) if "byte" in name else str(value)
                cells.append(f"{name.replace('_bytes', '').replace('_', ' ')} {shown_value}")
            lines += flow(cells, width, indent=1)
        return lines
