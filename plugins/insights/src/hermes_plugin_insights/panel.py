"""The Insights page of the dashboard: what ``hermes insights`` charts, by day, model,
platform and tool, for the last 7, 30 or 90 days."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from hermes_plugin_insights.report import Report, Tally, Window, read_report
from hermes_sdk.dashboard import (
    Bar,
    Bars,
    Button,
    Facts,
    Outcome,
    PanelContext,
    PanelError,
    PanelView,
    Row,
    Section,
    Table,
    Text,
)
from hermes_sdk.runtime import SessionHistory

__all__ = ["InsightsPanel"]

WINDOWS = ("7", "30", "90")


def _figures(tally: Tally) -> str:
    return f"{tally.tokens:,} tok · {tally.cost_text()}"


class InsightsPanel:
    def __init__(self, context: PanelContext) -> None:
        self.history: SessionHistory = context.runtime

    async def view(self, query: Mapping[str, str]) -> PanelView:
        days = query.get("days", "30")
        if days not in WINDOWS:
            days = "30"
        window = Window.ending(dt.date.today(), int(days))
        report, any_session = await read_report(self.history, window)
        choose = Table(
            columns=("window",),
            rows=(
                Row(
                    cells=(f"the last {days} days",),
                    buttons=tuple(
                        Button(action="", label=f"{n} days", values={"days": n}, navigate=True)
                        for n in WINDOWS
                        if n != days
                    ),
                ),
            ),
        )
        if report.empty:
            said = (
                "no usage in these days"
                if any_session
                else "no usage yet: this home has no sessions (start one in the Chat)"
            )
            return PanelView(sections=(Section(title="Usage", blocks=(choose, Text(text=said))),))
        return PanelView(sections=(self._totals(report, choose), *self._charts(report)))

    def _totals(self, report: Report, choose: Table) -> Section:
        total = report.total
        facts = [
            ("sessions", f"{report.sessions:,}"),
            ("model calls", f"{total.model_calls:,}"),
            (
                "tokens",
                f"{total.tokens:,} ({total.input_tokens:,} in, {total.output_tokens:,} out)",
            ),
            ("cost", total.cost_text()),
            ("tool calls", f"{report.tools.calls:,} ({report.tools.failed:,} failed)"),
        ]
        blocks: tuple[Facts | Table | Text, ...] = (choose, Facts(items=tuple(facts)))
        if report.unpriced_models:
            blocks += (
                Text(
                    text="no known price for "
                    + ", ".join(report.unpriced_models)
                    + ": their cost is not counted (never as free)",
                    level="warn",
                ),
            )
        return Section(title="Totals", blocks=blocks)

    def _charts(self, report: Report) -> tuple[Section, ...]:
        days = Bars(
            title="tokens by day",
            bars=tuple(
                Bar(label=day.strftime("%a %d %b"), value=tally.tokens, text=_figures(tally))
                for day, tally in report.by_day.items()
            ),
        )
        models = Bars(
            title="tokens by model",
            bars=tuple(
                Bar(
                    label=f"{key.provider or '?'} / {key.model or '?'}",
                    value=tally.tokens,
                    text=_figures(tally),
                )
                for key, tally in report.by_model
            ),
        )
        platforms = Bars(
            title="tokens by platform",
            bars=tuple(
                Bar(
                    label=f"{source} ({sessions} session{'s' if sessions != 1 else ''})",
                    value=tally.tokens,
                    text=_figures(tally),
                )
                for source, sessions, tally in report.by_platform
            ),
        )
        tools = Bars(
            title="tool calls by tool",
            bars=tuple(
                Bar(
                    label=tool,
                    value=tally.calls,
                    text=f"{tally.calls:,} calls"
                    + (f", {tally.failed} failed" if tally.failed else ""),
                )
                for tool, tally in report.by_tool
            ),
        )
        return (
            Section(title="By day", blocks=(days,)),
            Section(title="By model", blocks=(models,)),
            Section(title="By platform", blocks=(platforms,)),
            Section(title="By tool", blocks=(tools,)),
        )

    async def act(self, action: str, values: Mapping[str, str]) -> Outcome:
        raise PanelError("insights are read-only")
