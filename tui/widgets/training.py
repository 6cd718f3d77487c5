"""The training panel: where the run is (iteration, epoch, speed) and how the loss goes.

The loss curve is a braille line chart of the last ``points`` (iteration,
loss) pairs, its y range written beside it; each metric the script reported
(``gradlab.debug.report(accuracy=...)``) gets its latest value and a
sparkline.
"""

from __future__ import annotations

from textual.content import Content

from gradlab.debug.snapshot import Snapshot

from .charts import TextPanel, flow, format_number, line_chart, sparkline

__all__ = ["TrainingPanel"]


class TrainingPanel(TextPanel):
    """Loss curve, counters and metrics: ``TrainingPanel(points=500, show_rate=True)``.

    ``points``: how many of the latest losses the curve shows; ``show_rate``:
    False leaves steps per second off (for screenshots that must not change).
    """

    DEFAULT_CSS = """
    TrainingPanel { height: 1fr; }
    """

    def __init__(self, *, points: int = 500, show_rate: bool = True, name: str | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.points = points
        self.show_rate = show_rate

    def key(self, snapshot: Snapshot, selected: str | None) -> object:
        # Cheap: lengths and last items, not whole (long) series.
        metrics = tuple((name, len(series), series[-1:])
                        for name, series in snapshot.metrics.items())
        rate = snapshot.steps_per_second if self.show_rate else None
        return (snapshot.iteration, snapshot.epoch, rate, len(snapshot.losses),
                snapshot.losses[-1:], metrics, snapshot.status)

    def build(self, snapshot: Snapshot, selected: str | None, width: int,
              height: int) -> list[Content]:
        counters: list[Content | str] = [
            Content.assemble(("iteration ", "$text-muted"), (str(snapshot.iteration), "bold")),
            Content.assemble(("epoch ", "$text-muted"), str(snapshot.epoch))]
        if self.show_rate and snapshot.steps_per_second is not None:
            counters.append(f"{format_number(snapshot.steps_per_second, 3)} it/s")
        lines = flow(counters, width)
        losses = snapshot.losses[-self.points:]
        if losses:
            last_iteration, last_loss = losses[-1]
            lines.append(Content.assemble(("loss ", "$text-muted"),
                                          (format_number(last_loss), "bold $primary"),
                                          (f" at iteration {last_iteration}", "$text-muted")))
            metric_lines = len(snapshot.metrics) + (1 if snapshot.metrics else 0)
            chart_h = max(3, min(12, height - len(lines) - 1 - metric_lines))
            lines += self._curve(losses, width, chart_h)
        else:
            lines.append(Content.styled("no loss yet: it appears after the first "
                                        "loss.backward() (or a reported loss)", "$text-muted"))
        if snapshot.metrics:
            lines.append(Content.styled("metrics", "bold $primary"))
            lines += self._metrics(snapshot.metrics, width)
        return lines

    @staticmethod
    def _curve(losses: tuple[tuple[int, float], ...], width: int,
               height: int) -> list[Content]:
        values = [loss for _, loss in losses]
        finite = [v for v in values if v == v and abs(v) != float("inf")]
        top = format_number(max(finite), 3) if finite else "-"
        bottom = format_number(min(finite), 3) if finite else "-"
        axis_w = max(len(top), len(bottom))
        chart_w = max(4, width - axis_w - 1)
        rows = line_chart([(float(i), loss) for i, loss in losses], chart_w, height)
        lines = []
        for r, row in enumerate(rows):
            label = top if r == 0 else bottom if r == height - 1 else ""
            lines.append(Content.assemble((label.rjust(axis_w), "$text-muted"),
                                          ("┤" if label else "│", "$text-muted"),
                                          (row, "$primary")))
        first, last = str(losses[0][0]), str(losses[-1][0])
        gap = max(1, chart_w - len(first) - len(last))
        lines.append(Content.styled(" " * (axis_w + 1) + first + " " * gap + last,
                                    "$text-muted"))
        return lines

    @staticmethod
    def _metrics(metrics: dict[str, tuple[tuple[int, float], ...]],
                 width: int) -> list[Content]:
        lines = []
        latest = {name: format_number(series[-1][1]) if series else "-"
                  for name, series in metrics.items()}
        name_w = max(len(name) for name in metrics)
        value_w = max(len(value) for value in latest.values())
        for name, series in metrics.items():
            head = f" {name.ljust(name_w)} {latest[name].rjust(value_w)} "
            spark_w = width - len(head)
            if spark_w >= 4:
                spark = sparkline([v for _, v in series], spark_w)
                lines.append(Content.assemble(head, (spark, "$accent")))
            else:
                lines.append(Content(head))
        return lines
