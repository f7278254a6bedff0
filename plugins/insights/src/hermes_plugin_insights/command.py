"""``hermes insights``: what the agent used over the last days, as bar charts or JSON.

It opens the home's :class:`~hermes_sdk.runtime.SessionHistory` (no agent, so no model is
needed) and reads the usage by day the store keeps; every figure comes from there.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import shutil
import sys
from typing import IO, Any

import click

from hermes_plugin_insights.charts import Style, report_lines
from hermes_plugin_insights.report import Report, Window, read_report
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext

__all__ = ["insights"]

_DEFAULT_DAYS = 30
_WIDEST = 120  # wider bars say no more; they are only harder to read


class _OneLine(click.BadParameter):
    """A bad option value as one line (``Error: ...``), without the usage click adds."""

    def show(self, file: IO[Any] | None = None) -> None:
        click.ClickException.show(self, file)


class _Days(click.IntRange):
    """A whole number of days, 1 or more; anything else is one line."""

    def __init__(self) -> None:
        super().__init__(min=1)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            days: int = super().convert(value, param, ctx)
        except click.BadParameter:
            raise _OneLine(f"{str(value)!r} is not a whole number of days, 1 or more.") from None
        return days


def _style() -> Style:
    width = shutil.get_terminal_size((80, 24)).columns or 80
    encoding = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        "█▏≥".encode(encoding)
        unicode = True
    except (LookupError, UnicodeEncodeError):
        unicode = False
    return Style(width=max(40, min(width, _WIDEST)), unicode=unicode)


@click.command()
@click.option(
    "--days",
    type=_Days(),
    metavar="N",
    default=_DEFAULT_DAYS,
    show_default=True,
    help="The last N days, today included.",
)
@click.option("--json", "as_json", is_flag=True, help="The same figures as one JSON object.")
def insights(days: int, as_json: bool) -> None:
    """Tokens and cost by day, model, platform (cli, telegram, cron ...) and tool calls by
    tool, as bar charts. Costs of models without a known price are never shown as free."""
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    open_history = context.open_history
    if open_history is None:
        raise click.ClickException(
            "this Hermes cannot open its session history; upgrade hermes-kernel"
        )
    window = Window.ending(dt.date.today(), days)

    async def main() -> tuple[Report, bool]:
        async with open_history() as history:
            return await read_report(history, window)

    report, any_session = asyncio.run(main())
    if as_json:
        click.echo(json.dumps(report.as_json(), ensure_ascii=False))
        return
    if report.empty:
        click.echo(_nothing(window, any_session))
        return
    for line in report_lines(report, _style()):
        click.echo(line)


def _nothing(window: Window, any_session: bool) -> str:
    if not any_session:
        return "No usage yet: this home has no sessions. Start one with: hermes chat"
    span = "today" if window.days == 1 else f"in the last {window.days:,} days"
    since = "" if window.days == 1 else f" (since {window.first.isoformat()})"
    longer = max(365, window.days * 4)
    return f"No usage {span}{since}; hermes insights --days {longer} looks further back."
