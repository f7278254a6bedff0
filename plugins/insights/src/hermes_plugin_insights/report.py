"""The figures of ``hermes insights``: the history's usage rows summed by day, model,
platform and tool over a window of days, and the same as one JSON object.

The rows come from :meth:`~hermes_sdk.runtime.SessionHistory.usage` and
:meth:`~hermes_sdk.runtime.SessionHistory.tool_usage`; nothing here reads the store.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_commons.text import describe_cost
from hermes_sdk.runtime import SessionHistory, ToolUsage, UsageByDay

__all__ = ["Report", "Tally", "ToolTally", "Window", "build_report"]

EVERY_SESSION = 10_000_000  # "all of them", for the history's limit
_EPOCH = dt.date(1970, 1, 2)  # the first local day every time zone can turn into a timestamp


@dataclass(frozen=True, slots=True)
class Window:
    """The last ``days`` local days, today included."""

    days: int
    first: dt.date
    last: dt.date

    @classmethod
    def ending(cls, today: dt.date, days: int) -> Window:
        back = min(days - 1, (today - dt.date.min).days)  # --days 10000000 is "all of it"
        return cls(days, today - dt.timedelta(days=back), today)

    @property
    def since(self) -> float | None:
        """The Unix time of the first day's local midnight; None: before any record."""
        if self.first < _EPOCH:
            return None
        return time.mktime(self.first.timetuple())


@dataclass(frozen=True, slots=True)
class Tally:
    """Model usage summed over some rows. The cost is a lower bound when ``unpriced_calls``
    is not 0: those calls' model has no known price (never counted as free)."""

    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0

    @classmethod
    def of(cls, row: UsageByDay) -> Tally:
        return cls(
            row.model_calls,
            row.input_tokens,
            row.output_tokens,
            row.cache_read_tokens,
            row.cost_usd,
            row.unpriced_calls,
        )

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            self.model_calls + other.model_calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            round(self.cost_usd + other.cost_usd, 8),
            self.unpriced_calls + other.unpriced_calls,
        )

    @property
    def tokens(self) -> int:
        """Every token: input, output and cache reads (providers report those apart)."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens

    @property
    def used(self) -> bool:
        return bool(self.tokens or self.model_calls or self.cost_usd or self.unpriced_calls)

    @property
    def cost_known(self) -> bool:
        """False: no call of it was priced, so there is no figure at all."""
        return not (self.unpriced_calls and not self.cost_usd)

    def cost_text(self) -> str:
        return describe_cost(self.cost_usd, self.unpriced_calls)

    def as_json(self) -> dict[str, Any]:
        """As :meth:`hermes_commons.text.Totals.as_json` says cost: null when nothing was
        priced; a figure with ``unpriced_calls`` above 0 is a lower bound."""
        return {
            "model_calls": self.model_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd if self.cost_known else None,
            "unpriced_calls": self.unpriced_calls,
        }


@dataclass(frozen=True, slots=True)
class ToolTally:
    calls: int = 0
    failed: int = 0

    def __add__(self, other: ToolTally) -> ToolTally:
        return ToolTally(self.calls + other.calls, self.failed + other.failed)


@dataclass(frozen=True, slots=True)
class ModelKey:
    provider: str | None
    model: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    """Every figure ``hermes insights`` shows, for one window."""

    window: Window
    total: Tally
    sessions: int
    """Sessions started in the window (of every source, background reviews included)."""
    tools: ToolTally
    by_day: Mapping[dt.date, Tally]
    """Days with usage only, oldest first."""
    tools_by_day: Mapping[dt.date, ToolTally]
    by_model: Sequence[tuple[ModelKey, Tally]]
    """Most tokens first."""
    by_platform: Sequence[tuple[str, int, Tally]]
    """(source, sessions started, usage), most tokens first."""
    by_tool: Sequence[tuple[str, ToolTally]]
    """Most calls first."""
    unpriced_models: tuple[str, ...] = field(default=())
    """The models some of whose calls have no known price."""
    totals_only: int = 0
    """Sessions whose usage came as totals, not call by call (imported from another tool):
    their tokens and cost count, their model calls do not."""

    @property
    def empty(self) -> bool:
        return not self.by_day and not self.tools_by_day

    def as_json(self) -> dict[str, Any]:
        days = sorted({*self.by_day, *self.tools_by_day})
        return {
            "days": self.window.days,
            "from": self.window.first.isoformat(),
            "to": self.window.last.isoformat(),
            "totals": {
                "sessions": self.sessions,
                "sessions_with_totals_only": self.totals_only,
                **self.total.as_json(),
                "tool_calls": self.tools.calls,
                "failed_tool_calls": self.tools.failed,
            },
            "by_day": [
                {
                    "day": day.isoformat(),
                    **self.by_day.get(day, Tally()).as_json(),
                    "tool_calls": self.tools_by_day.get(day, ToolTally()).calls,
                    "failed_tool_calls": self.tools_by_day.get(day, ToolTally()).failed,
                }
                for day in days
            ],
            "by_model": [
                {"provider": key.provider, "model": key.model, **tally.as_json()}
                for key, tally in self.by_model
            ],
            "by_platform": [
                {"source": source, "sessions": sessions, **tally.as_json()}
                for source, sessions, tally in self.by_platform
            ],
            "by_tool": [
                {"tool": tool, "calls": tally.calls, "failed": tally.failed}
                for tool, tally in self.by_tool
            ],
            "unpriced_models": list(self.unpriced_models),
        }


def build_report(
    window: Window,
    usage: Iterable[UsageByDay],
    tool_usage: Iterable[ToolUsage],
    session_sources: Iterable[str],
) -> Report:
    """Sum the rows. ``session_sources``: the source of each session started in the window."""
    total = Tally()
    by_day: dict[dt.date, Tally] = {}
    by_model: dict[ModelKey, Tally] = {}
    by_platform: dict[str, Tally] = {}
    unpriced: set[str] = set()
    totals_only = 0
    for row in usage:
        tally = Tally.of(row)
        day = dt.date.fromisoformat(row.day)
        key = ModelKey(row.provider, row.model)
        total += tally
        by_day[day] = by_day.get(day, Tally()) + tally
        by_model[key] = by_model.get(key, Tally()) + tally
        by_platform[row.source] = by_platform.get(row.source, Tally()) + tally
        if row.unpriced_calls:
            unpriced.add(row.model or "(no model named)")
        if not row.model_calls and tally.used:
            totals_only += row.sessions
    tools = ToolTally()
    tools_by_day: dict[dt.date, ToolTally] = {}
    by_tool: dict[str, ToolTally] = {}
    for tool_row in tool_usage:
        counted = ToolTally(tool_row.calls, tool_row.failed)
        day = dt.date.fromisoformat(tool_row.day)
        tools += counted
        tools_by_day[day] = tools_by_day.get(day, ToolTally()) + counted
        by_tool[tool_row.tool] = by_tool.get(tool_row.tool, ToolTally()) + counted
    started: dict[str, int] = {}
    for source in session_sources:
        started[source] = started.get(source, 0) + 1
    platforms = [
        (source, started.get(source, 0), by_platform.get(source, Tally()))
        for source in {*by_platform, *started}
    ]
    return Report(
        window=window,
        total=total,
        sessions=sum(started.values()),
        tools=tools,
        by_day=dict(sorted(by_day.items())),
        tools_by_day=dict(sorted(tools_by_day.items())),
        by_model=sorted(
            by_model.items(),
            key=lambda item: (-item[1].tokens, str(item[0].model), str(item[0].provider)),
        ),
        by_platform=sorted(platforms, key=lambda item: (-item[2].tokens, -item[1], item[0])),
        by_tool=sorted(by_tool.items(), key=lambda item: (-item[1].calls, item[0])),
        unpriced_models=tuple(sorted(unpriced)),
        totals_only=totals_only,
    )


async def read_report(history: SessionHistory, window: Window) -> tuple[Report, bool]:
    """The report of ``window`` from a home's history, and whether the home has any session
    at all (to say why an empty window is empty)."""
    since = window.since
    usage = await history.usage(since)
    tools = await history.tool_usage(since)
    sessions = await history.sessions(limit=EVERY_SESSION, background=True)
    started = [s.source for s in sessions if since is None or s.started_at >= since]
    return build_report(window, usage, tools, started), bool(sessions)
