"""The panels' text pictures: exact characters for small known inputs."""

from __future__ import annotations

import math

import pytest

from tui.widgets.charts import (
    bar,
    column_chart,
    flow,
    format_bytes,
    format_number,
    format_shape,
    format_value,
    heatmap,
    histogram,
    line_chart,
    sparkline,
    table,
    wrap_words,
)


@pytest.mark.parametrize("n, text", [(0, "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"),
                                     (2 * 1024 ** 2, "2.0 MiB"), (3 * 1024 ** 3, "3.0 GiB"),
                                     (-2048, "-2.0 KiB")])
def test_format_bytes(n, text):
    assert format_bytes(n) == text


def test_format_number_and_shapes():
    assert format_number(None) == "-"
    assert format_number(3) == "3"
    assert format_number(0.000123456) == "0.0001235"
    assert format_number(123456.0) == "1.235e+05"
    assert format_number(float("nan")) == "nan"
    assert format_number(float("-inf")) == "-inf"
    assert format_shape((64, 32)) == "(64, 32)"
    assert format_shape((5,)) == "(5,)"
    assert format_shape(()) == "()"
    assert format_value((0.9, 0.999)) == "(0.9, 0.999)"
    assert format_value(False) == "False"


def test_sparkline_levels():
    assert sparkline([1, 2, 3, 4]) == "▁▃▆█"
    assert sparkline(list(range(8))) == "▁▂▃▄▅▆▇█"
    assert sparkline([5, 5, 5]) == "▄▄▄"  # constant: mid height
    assert sparkline([0, math.nan, 1]) == "▁ █"  # a gap for NaN
    assert sparkline([]) == ""
    assert sparkline([1, 2, 3, 4, 5], width=2) == "▁█"  # only the last values fit


def test_bar_eighths():
    assert bar(1.0, 4) == "████"
    assert bar(0.5, 4) == "██  "
    assert bar(0.3, 4) == "█▎  "  # 0.3 * 32 eighths = 9.6 -> 10 eighths
    assert bar(0.0, 3) == "   "
    assert bar(2.0, 2) == "██"  # clipped


def test_column_chart_and_histogram():
    assert column_chart([1, 2, 4, 8], height=2) == ["   █", "▂▄██"]
    assert column_chart([0, 0], height=1) == ["  "]
    rows = histogram([0.0, 1.0, 2.0, 3.0, 4.0], [1, 2, 4, 8], width=8, height=1)
    # 4 bins in 8 cells: each bin two cells wide, then the axis from the first to the last edge
    assert rows == ["▁▁▂▂▄▄██", "0      4"]


def test_heatmap_extremes():
    plain = [line.plain for line in heatmap([[0, 1], [2, 4]])]
    assert plain == [" ░", "▒█"]  # minimum blank, maximum full
    signed = heatmap([[-2, 0], [1, 2]])
    assert [line.plain for line in signed] == ["█ ", "▒█"]  # shade = magnitude
    styles = [span.style for line in signed for span in line.spans]
    assert "#0072B2" in styles and "#D55E00" in styles  # negative and positive colours
    assert [line.plain for line in heatmap([[1, 1]])] == ["▒▒"]  # constant: mid shade
    bad = heatmap([[math.nan, 1.0]], cell=2)
    assert bad[0].plain == "??▒▒"
    assert any("$error" in str(span.style) for span in bad[0].spans)


def test_line_chart_braille():
    # a line falling from the top-left to the bottom-right of a 4x2 cell chart
    assert line_chart([(0, 1.0), (1, 0.5), (2, 0.0)], 4, 2) == ["⠑⢄  ", "  ⠑⢄"]
    # two points in one cell: dots (0,3) and (1,0) joined through (0,2) and (1,1)
    assert line_chart([(0, 0.0), (1, 1.0)], 1, 1) == [chr(0x2800 + 0x40 + 0x04 + 0x10 + 0x08)]
    assert line_chart([], 3, 2) == ["   ", "   "]
    flat = line_chart([(0, 2.0), (1, 2.0)], 2, 1)
    assert flat == ["⠤⠤"]  # a constant series runs through the middle


def test_flow_table_and_wrap():
    assert [line.plain for line in flow(["aaa", "bbb", "ccc"], 8)] == ["aaa  bbb", "ccc"]
    assert [line.plain for line in flow(["a", "b"], 10, indent=2)] == ["  a  b"]
    lines = table(["name", "v"], [["w", "1"], ["bias", "22"]], 20)
    assert [line.plain for line in lines] == ["name   v", "w      1", "bias  22"]
    assert table(["name", "v"], [["a" * 30, "1"]], 20) is None  # too wide
    assert wrap_words("one two three four", 9) == ["one two", "three", "four"]
