"""``mcp_servers:``: every MCP server's tools, as ``mcp_<server>_<tool>``.

Importing this is cheap: the MCP SDK loads only when servers are configured and start.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import (
    CommandSpec,
    ConfigSectionSpec,
    DashboardPanelSpec,
    Finding,
    HealthContext,
    StatusLine,
    ToolSourceSpec,
    hookimpl,
)
from hermes_sdk.tool_sources import ToolSourceContext

SECTION = "mcp_servers"


class _NoServers:
    """The source when no server is configured: a chat pays no import for MCP."""

    async def start(self) -> None:
        pass

    def tools(self) -> list[Any]:
        return []

    def problems(self) -> list[str]:
        return []

    async def aclose(self) -> None:
        pass


def _source(context: ToolSourceContext) -> Any:
    if not context.config.get(SECTION):
        return _NoServers()
    from hermes_plugin_mcp.source import McpServers

    return McpServers(context)


def _section_model() -> type[Any]:
    from pydantic import RootModel

    from hermes_plugin_mcp.settings import ServerSettings

    class McpServersSection(RootModel[dict[str, ServerSettings]]):
        """MCP servers by name: command (stdio) or url, timeouts, tool filters."""

    return McpServersSection


@hookimpl
def hermes_tool_sources() -> Iterator[ToolSourceSpec]:
    yield ToolSourceSpec(name="mcp", description="the tools of MCP servers", factory=_source)


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="mcp",
        description="List, test, add and remove MCP servers.",
        factory="hermes_plugin_mcp.command:mcp",
    )


@hookimpl
def hermes_dashboard_panels() -> Iterator[DashboardPanelSpec]:
    yield DashboardPanelSpec(
        name="mcp",
        title="MCP servers",
        description="The MCP servers whose tools the agent gets: test, add, remove.",
        factory="hermes_plugin_mcp.panel:McpPanel",
        order=60,
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(name=SECTION, description="MCP servers", model=_section_model)


@hookimpl
def hermes_status_lines(context: HealthContext) -> Iterator[StatusLine]:
    from hermes_plugin_mcp.health import status_lines

    yield from status_lines(context)


@hookimpl
def hermes_doctor_checks(context: HealthContext) -> Iterator[Finding]:
    from hermes_plugin_mcp.health import doctor_checks

    yield from doctor_checks(context)
