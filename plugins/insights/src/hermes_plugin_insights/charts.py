"""``hermes insights`` as text: the totals, then one bar chart each by day, model, platform
and tool, every line within the terminal's width.

Bars are Unicode blocks drawn to an eighth of a cell; where the output cannot encode them
(an ASCII-only stdout) they are ``#``. Labels come from the store (a model's or a tool's
name, which a model may have made up), so they are made printable and cut to fit.
"""

from __future__ import annotations

import datetime as dt
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from hermes_commons.text import one_line
from hermes_plugin_insights.report import ModelKey, Report, Tally, ToolTally

__all__ = ["Style", "report_lines"]

_EIGHTHS = " ▏▎▍▌▋▊▉"
_MOST_ROWS = 15  # of the model, platform and tool charts; --json has them all
_MOST_DAY_ROWS = 62  # longer spans are shown by week, then by month
_LABEL_WIDTH = 32
_SHORTEST_BAR = 6
_SHORTEST_LABEL = 10  # 2026-12-03


@dataclass(frozen=True, slots=True)
class Style:
    width: int = 80
    """Columns every line fits in."""
    unicode: bool = True
    """False: ``#`` bars and ``>=`` for a lower bound, for an ASCII-only output."""

    @property
    def at_least(self) -> str:
        return "≥" if self.unicode else ">="


@dataclass(frozen=True, slots=True)
class _Row:
    label: str
    value: float
    """What the bar shows."""
    cells: tuple[str, ...]
    """The figures after the bar, right-aligned under their headings."""


def bar(value: float, most: float, cells: int, unicode: bool = True) -> str:
    """``value`` as a bar ``cells`` long at ``most``; a value above 0 shows at least a sliver."""
    if most <= 0 or value <= 0 or cells <= 0:
        return ""
    eighths = max(1, round(value / most * cells * 8))
    if not unicode:
        return "#" * max(1, eighths // 8)
    whole, part = divmod(eighths, 8)
    return "█" * whole + (_EIGHTHS[part] if part else "")


def _chart(
    title: str, headings: Sequence[str], rows: Sequence[_Row], style: Style
) -> Iterator[str]:
    """A title line with the headings over their columns, then one line per row."""
    widths = [
        max(len(heading), *(len(row.cells[i]) for row in rows))
        for i, heading in enumerate(headings)
    ]
    figures = sum(width + 2 for width in widths)
    longest = min(_LABEL_WIDTH, max(len(row.label) for row in rows))
    # Labels and the bar share what the figures leave. A bar too short to read takes from
    # long labels (down to a date's width); past that the bar goes, then labels are cut.
    free = style.width - 4 - figures
    label_width = min(longest, max(_SHORTEST_LABEL, free - _SHORTEST_BAR))
    cells = free - label_width
    if cells < 1:
        cells, label_width = 0, max(3, min(longest, free))
    head = "".join(f"  {heading:>{width}}" for heading, width in zip(headings, widths, strict=True))
    before_figures = 2 + label_width + 2 + cells
    if len(title) > before_figures:  # the headings go on a line of their own
        yield title
        title = ""
    yield f"{title:<{before_figures}}{head}".rstrip()
    most = max(row.value for row in rows)
    for row in rows:
        label = one_line(row.label, label_width)
        drawn = bar(row.value, most, cells, style.unicode)
        figures_text = "".join(
            f"  {cell:>{width}}" for cell, width in zip(row.cells, widths, strict=True)
        )
        yield f"  {label:<{label_width}}  {drawn:<{cells}}{figures_text}".rstrip()


def _cost(tally: Tally, style: Style) -> str:
    """A row's cost in a few characters: a lower bound is marked, no price is "unknown"."""
    if not tally.used:
        return "-"
    if not tally.cost_known:
        return "unknown"
    text = f"${tally.cost_usd:.4f}"
    return f"{style.at_least}{text}" if tally.unpriced_calls else text


def _usage_cells(tally: Tally, style: Style) -> tuple[str, ...]:
    return (f"{tally.tokens:,}", _cost(tally, style))


def _more(rows: int, style: Style) -> list[str]:
    if rows <= _MOST_ROWS:
        return []
    line = f"  ... and {rows - _MOST_ROWS:,} more (hermes insights --json lists them all)"
    return _wrapped(line, style.width)


def _day_rows(report: Report, style: Style) -> tuple[str, list[_Row]]:
    """Every day from the first used one to today, empty ones included; a span too long
    for one line a day is shown by week (from Monday), or by month."""
    used = [*report.by_day, *report.tools_by_day]
    first = max(report.window.first, min(used))
    last = max(report.window.last, *used)
    span = (last - first).days + 1
    by: Literal["day", "week", "month"] = (
        "day" if span <= _MOST_DAY_ROWS else "week" if span <= _MOST_DAY_ROWS * 7 else "month"
    )

    def key(day: dt.date) -> dt.date:
        if by == "week":
            return day - dt.timedelta(days=day.weekday())
        return day.replace(day=1) if by == "month" else day

    buckets: dict[dt.date, Tally] = {}
    day = first
    while day <= last:
        buckets.setdefault(key(day), Tally())
        day += dt.timedelta(days=1)
    for day, tally in report.by_day.items():
        buckets[key(day)] = buckets.get(key(day), Tally()) + tally
    title = {"day": "By day", "week": "By week (from Monday)", "month": "By month"}[by]
    return title, [
        _Row(
            start.strftime("%Y-%m") if by == "month" else start.isoformat(),
            tally.tokens,
            _usage_cells(tally, style),
        )
        for start, tally in sorted(buckets.items())
    ]


def _wrapped(line: str, width: int) -> list[str]:
    """A long line broken between words, its continuation indented under it."""
    if len(line) <= width:
        return [line]
    indent = " " * (len(line) - len(line.lstrip()))
    return textwrap.wrap(
        line.strip(), width, initial_indent=indent, subsequent_indent=indent + "  "
    )


def _count(number: int, thing: str) -> str:
    return f"{number:,} {thing}{'' if number == 1 else 's'}"


def _model_label(key: ModelKey) -> str:
    model = key.model or "(no model named)"
    return f"{model} ({key.provider})" if key.provider else model


def _totals(report: Report) -> Iterator[str]:
    window = report.window
    span = "today" if window.days == 1 else f"the last {window.days:,} days"
    yield f"Usage over {span} ({window.first.isoformat()} to {window.last.isoformat()})"
    total, tools = report.total, report.tools
    failed = f" ({tools.failed:,} failed)" if tools.failed else ""
    yield (
        f"  {_count(report.sessions, 'session')} started, "
        f"{_count(total.model_calls, 'model call')}, {_count(tools.calls, 'tool call')}{failed}"
    )
    if report.totals_only:
        yield f"  ({report.totals_only:,} of them imported with totals only, not call by call)"
    yield (
        f"  tokens: {total.tokens:,} ({total.input_tokens:,} in, {total.output_tokens:,} out, "
        f"{total.cache_read_tokens:,} cache read)"
    )
    cost = f"  cost: {total.cost_text()}"
    if report.unpriced_models:
        named = ", ".join(one_line(model, 60) for model in report.unpriced_models)
        cost += f"; no price is known for {named}"
    yield cost


def report_lines(report: Report, style: Style) -> Iterator[str]:
    """The whole report, for a home with usage in the window (see :attr:`Report.empty`)."""
    for line in _lines(report, style):
        # An output that cannot encode a name's characters gets "?" for them, not an error.
        yield line if style.unicode else line.encode("ascii", "replace").decode("ascii")


def _lines(report: Report, style: Style) -> Iterator[str]:
    for line in _totals(report):
        yield from _wrapped(line, style.width)
    usage = ("tokens", "cost")
    if report.by_day:
        title, rows = _day_rows(report, style)
        yield ""
        yield from _chart(title, usage, rows, style)
    if report.by_model:
        yield ""
        rows = [
            _Row(_model_label(key), tally.tokens, _usage_cells(tally, style))
            for key, tally in report.by_model[:_MOST_ROWS]
        ]
        yield from _chart("By model", usage, rows, style)
        yield from _more(len(report.by_model), style)
    if report.by_platform:
        yield ""
        rows = [
            _Row(source, tally.tokens, (f"{sessions:,}", *_usage_cells(tally, style)))
            for source, sessions, tally in report.by_platform[:_MOST_ROWS]
        ]
        yield from _chart("By platform", ("sessions", *usage), rows, style)
        yield from _more(len(report.by_platform), style)
    if report.by_tool:
        yield ""
        yield from _chart("By tool", ("calls", "failed"), _tool_rows(report), style)
        yield from _more(len(report.by_tool), style)
    if any(tally.unpriced_calls and tally.cost_known for tally in _tallies(report)):
        yield ""
        yield f"{style.at_least}: some calls have no known price; the cost is at least this."


def _tool_rows(report: Report) -> list[_Row]:
    def row(tool: str, tally: ToolTally) -> _Row:
        return _Row(tool, tally.calls, (f"{tally.calls:,}", f"{tally.failed:,}"))

    return [row(tool, tally) for tool, tally in report.by_tool[:_MOST_ROWS]]


def _tallies(report: Report) -> Iterator[Tally]:
    yield from report.by_day.values()
    yield from (tally for _, tally in report.by_model)
    yield from (tally for _, _, tally in report.by_platform)
