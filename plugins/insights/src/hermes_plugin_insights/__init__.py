"""``insights``: ``hermes insights`` shows what the agent has used over the last days:
tokens and cost by day, by model, by tool and by platform, as bar charts or as JSON.

It reads the figures through the SDK's session history, which needs no model. Importing
this is cheap: click loads when the command runs.
"""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import CommandSpec, DashboardPanelSpec, hookimpl

__all__ = ["hermes_cli_commands", "hermes_dashboard_panels"]


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="insights",
        description="Tokens and cost by day, model, tool and platform, as charts or JSON.",
        factory="hermes_plugin_insights.command:insights",
    )


@hookimpl
def hermes_dashboard_panels() -> Iterator[DashboardPanelSpec]:
    yield DashboardPanelSpec(
        name="insights",
        title="Insights",
        description="Tokens and cost by day, model and platform; tool calls by tool.",
        factory="hermes_plugin_insights.panel:InsightsPanel",
        order=70,
    )
