"""The profiler's text table: PyTorch's columns, with one more line saying where the rest went."""

from __future__ import annotations

__all__ = ["format_table", "format_time", "format_memory"]


def format_time(us: float) -> str:
    """Microseconds as PyTorch's profiler prints them: ``12.345us``, ``1.234ms``, ``2.000s``."""
    if abs(us) >= 1e6:
        return f"{us / 1e6:.3f}s"
    if abs(us) >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes: int) -> str:
    """Bytes as PyTorch's profiler prints them: ``512 b``, ``1.50 Kb``, ``2.00 Mb``."""
    for unit, size in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} b"


def _percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.2f}%" if whole else "0.00%"


def format_table(events, rows, *, name_width: int, shapes_width: int,
                 header: str | None) -> str:
    """``rows`` (events or averages, already sorted and cut) as a table; ``events`` is the
    whole list, for the percentages and the totals."""
    self_total = events.self_cpu_time_total
    uses_device = any(getattr(r, "device_memory_usage", 0) for r in events)
    columns = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if events.profile_memory:
        columns += ["CPU Mem", "Self CPU Mem"]
        if uses_device:
            columns += ["CUDA Mem", "Self CUDA Mem"]
    columns.append("# of Calls")
    if events.with_modules:
        columns.append("Module")
    if events.with_shapes:
        columns.append("Input Shapes")

    lines = []
    for r in rows:
        count = getattr(r, "count", 1)
        total, own = r.cpu_time_total, r.self_cpu_time_total
        cells = [_cut(r.key, name_width), _percent(own, self_total), format_time(own),
                 _percent(total, self_total), format_time(total), format_time(total / count)]
        if events.profile_memory:
            cells += [format_memory(r.cpu_memory_usage), format_memory(r.self_cpu_memory_usage)]
            if uses_device:
                cells += [format_memory(r.device_memory_usage),
                          format_memory(r.self_device_memory_usage)]
        cells.append(str(count))
        if events.with_modules:
            cells.append(r.module or "")
        if events.with_shapes:
            cells.append(_cut(str(r.input_shapes or []), shapes_width))
        lines.append(cells)

    widths = [max([len(columns[k])] + [len(cells[k]) for cells in lines])
              for k in range(len(columns))]
    left = {0, len(columns) - 1} if events.with_shapes else {0}
    if events.with_modules:
        left.add(columns.index("Module"))

    def row(cells):
        return "  ".join(c.ljust(w) if k in left else c.rjust(w)
                         for k, (c, w) in enumerate(zip(cells, widths))).rstrip()

    rule = "  ".join("-" * w for w in widths)
    out = [header] if header else []
    out += [rule, row(columns), rule, *(row(cells) for cells in lines), rule,
            f"Self CPU time total: {format_time(self_total)}"]
    wall = events.wall_us
    if wall:
        out.append(
            f"Wall time profiled: {format_time(wall)}; the rows' self times cover "
            f"{_percent(min(self_total, wall), wall)} of it. An op's time is its NumPy/CuPy "
            "call alone; the rest ran in Python outside every op, backward node and range "
            "(the dispatcher's and autograd's bookkeeping, your own code).")
    return "\n".join(out)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(width - 3, 1)] + "..."
