"""The charts of ``hermes insights`` for usage no quick test home has: months of it, a
narrow terminal, an ASCII-only output, names that would drive the terminal."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import pytest
from hermes_plugin_insights.charts import Style, bar, report_lines
from hermes_plugin_insights.report import Report, Window, build_report

from hermes_sdk.runtime import ToolUsage, UsageByDay

TODAY = dt.date(2026, 12, 3)


def usage(
    day: dt.date,
    tokens: int,
    *,
    model: str = "gpt-4o",
    provider: str | None = "openai",
    cost: float = 0.01,
    unpriced: int = 0,
) -> UsageByDay:
    return UsageByDay(
        day=day.isoformat(),
        source="cli",
        provider=provider,
        model=model,
        model_calls=1 + unpriced,
        sessions=1,
        input_tokens=tokens,
        output_tokens=0,
        cache_read_tokens=0,
        cost_usd=cost,
        unpriced_calls=unpriced,
    )


def report(days: int, rows: Sequence[UsageByDay], tools: Sequence[ToolUsage] = ()) -> Report:
    return build_report(Window.ending(TODAY, days), rows, tools, ["cli"])


def test_bars_are_drawn_to_an_eighth_and_a_little_is_still_seen() -> None:
    assert bar(10, 10, 4) == "████"
    assert bar(5, 10, 3) == "█▌"
    assert bar(1, 1000, 10) == "▏"
    assert bar(0, 10, 10) == ""
    assert bar(5, 10, 4, unicode=False) == "##"


@pytest.mark.parametrize(
    ("days", "span", "title", "first_label"),
    [
        (30, 10, "By day", "2026-11-24"),
        (400, 300, "By week (from Monday)", "2026-02-02"),
        (3000, 1000, "By month", "2024-03"),
    ],
)
def test_a_long_span_is_shown_by_week_or_month(
    days: int, span: int, title: str, first_label: str
) -> None:
    start = TODAY - dt.timedelta(days=span - 1)
    lines = list(report_lines(report(days, [usage(start, 500), usage(TODAY, 1000)]), Style()))
    at = next(i for i, line in enumerate(lines) if line.startswith(title))
    assert lines[at + 1].split()[0] == first_label
    day_rows = lines[at + 1 : lines.index("", at)]
    assert len(day_rows) <= 62
    assert sum(int(line.split()[-2].replace(",", "")) for line in day_rows) == 1500


def test_every_line_fits_a_narrow_terminal_and_an_ascii_one() -> None:
    rows = [usage(TODAY, 123_456_789, model="a-model-with-a-very-long-name-indeed-2025-01-01")]
    tools = [ToolUsage(day=TODAY.isoformat(), tool="terminal", calls=12_345, failed=3)]
    for width in (40, 57, 80, 120):
        lines = list(report_lines(report(30, rows, tools), Style(width=width, unicode=False)))
        assert all(len(line) <= width for line in lines), (width, lines)
        assert all(line.isascii() for line in lines)
        (tool_row,) = [line for line in lines if line.startswith("  terminal")]
        assert tool_row.split()[1].strip("#") == ""  # an ASCII bar
        assert tool_row.split()[-2:] == ["12,345", "3"]


def test_names_from_the_store_cannot_drive_the_terminal() -> None:
    tools = [ToolUsage(day=TODAY.isoformat(), tool="evil\x1b]0;pwned\x07", calls=1, failed=0)]
    lines = list(report_lines(report(30, [usage(TODAY, 10)], tools), Style()))
    assert not any("\x1b" in line or "\x07" in line for line in lines)
    assert any(line.startswith("  evil␛]0;pwned") for line in lines)


def test_an_unpriced_models_name_cannot_drive_the_terminal_either() -> None:
    evil = usage(TODAY, 10, model="m\x1b]0;TITLE\x07", cost=0.0, unpriced=1)
    lines = list(report_lines(report(30, [evil], []), Style()))
    assert not any("\x1b" in line or "\x07" in line for line in lines)
    assert any("no price is known for m␛]0;TITLE" in line for line in lines)


def test_an_unpriced_model_is_unknown_and_a_mix_a_lower_bound() -> None:
    rows = [
        usage(TODAY, 100, cost=0.5),
        usage(TODAY, 100, model="mystery", provider=None, cost=0.0, unpriced=2),
    ]
    built = report(30, rows)
    lines = list(report_lines(built, Style()))
    assert "  cost: $0.5000 + unknown (2 calls unpriced); no price is known for mystery" in lines
    (mystery,) = [line for line in lines if line.startswith("  mystery ")]
    assert mystery.split()[-1] == "unknown"
    (day,) = [line for line in lines if line.startswith(f"  {TODAY.isoformat()}")]
    assert day.split()[-1] == "≥$0.5000"
    as_json = built.as_json()
    assert as_json["totals"]["cost_usd"] == 0.5 and as_json["totals"]["unpriced_calls"] == 2
    (unpriced,) = [m for m in as_json["by_model"] if m["model"] == "mystery"]
    assert unpriced["cost_usd"] is None and unpriced["provider"] is None


def test_only_the_biggest_are_charted_and_the_rest_are_counted() -> None:
    tools = [
        ToolUsage(day=TODAY.isoformat(), tool=f"tool_{n:02}", calls=n, failed=0)
        for n in range(1, 21)
    ]
    lines = list(report_lines(report(30, [usage(TODAY, 10)], tools), Style()))
    charted = [line.split()[0] for line in lines if line.startswith("  tool_")]
    assert charted == [f"tool_{n:02}" for n in range(20, 5, -1)]  # most calls first
    assert "  ... and 5 more (hermes insights --json lists them all)" in lines
    assert len(report(30, [usage(TODAY, 10)], tools).as_json()["by_tool"]) == 20
