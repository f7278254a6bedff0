"""Every configured MCP server as one tool source: each server's tools as
``mcp_<server>_<tool>`` in toolset ``mcp-<server>``, its resources and prompts through four
generic tools when it has them, and, when a server failed, a tool whose description names it,
so the model is told rather than left to improvise.

A server whose offer is remembered from an earlier run (:mod:`hermes_plugin_mcp.offers`) is
started by the first call that needs it; the others are connected in parallel at start."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_plugin_mcp.connection import ConnectError, ServerConnection, ToolFailed
from hermes_plugin_mcp.names import tool_name, toolset_name
from hermes_plugin_mcp.offers import OfferMemory
from hermes_plugin_mcp.settings import parse_servers
from hermes_sdk import ToolSpec
from hermes_sdk.tool_sources import ToolSourceContext

__all__ = ["McpServers"]

log = logging.getLogger("hermes.mcp")

STATUS_TOOL = "mcp_servers"


class McpServers:
    """The :class:`~hermes_sdk.tool_sources.ToolSource` of ``mcp_servers:``."""

    def __init__(self, context: ToolSourceContext) -> None:
        servers, self._problems = parse_servers(context.config.get("mcp_servers"))
        logs = Path(context.home) / "logs"
        memory = OfferMemory.in_home(context.home)
        self.connections = {
            name: ServerConnection(
                name, settings, context.secrets, context.cwd, logs, memory=memory
            )
            for name, settings in servers.items()
            if settings.enabled
        }
        self.failed: dict[str, str] = {}
        self.remembered: set[str] = set()
        """Servers listed from memory, started by their first call."""
        for name, connection in self.connections.items():
            connection.offer = memory.recall(name, connection.settings)
            if connection.offer is not None:
                self.remembered.add(name)

    async def start(self) -> None:
        names = [name for name in self.connections if name not in self.remembered]
        outcomes = await asyncio.gather(
            *(self.connections[name].connect() for name in names), return_exceptions=True
        )
        for name, outcome in zip(names, outcomes, strict=True):
            if isinstance(outcome, ConnectError):
                self.failed[name] = str(outcome)
            elif isinstance(outcome, BaseException):
                self.failed[name] = f"{type(outcome).__name__}: {outcome}"
        for name, reason in self.failed.items():
            self._problems.append(f"MCP server {name!r} did not start: {reason}")

    def problems(self) -> Sequence[str]:
        return list(self._problems)

    def tools(self) -> list[ToolSpec]:
        specs: list[ToolSpec] = []
        taken: set[str] = set()
        for server, connection in self.connections.items():
            if server in self.failed:
                continue
            specs += self._server_tools(server, connection, taken)
        if self.failed:
            specs.append(self._status_tool())
        return specs

    def _server_tools(
        self, server: str, connection: ServerConnection, taken: set[str]
    ) -> list[ToolSpec]:
        toolset = toolset_name(server)
        offer = connection.offer
        if offer is None:
            return []
        specs = []
        for tool in offer.tools:
            if not connection.settings.tools.allows(tool.name):
                continue
            name = tool_name(server, tool.name)
            if name in taken:
                log.warning("MCP server %s: tool %s clashes with another; left out", server, name)
                continue
            taken.add(name)
            specs.append(
                ToolSpec(
                    name=name,
                    description=f"{tool.description or tool.name} (MCP server {server})",
                    handler=_caller(connection, tool.name),
                    parameters=tool.parameters,
                    toolset=toolset,
                    # Side effects unless the server says otherwise: persisted before they run.
                    parallel_safe=tool.read_only,
                    # The server's own timeout (and a reconnect) rules; the kernel's is a backstop.
                    timeout_seconds=connection.settings.timeout
                    + connection.settings.connect_timeout
                    + 5,
                )
            )
        generic: list[ToolSpec] = []
        if offer.resources:
            generic += _resource_tools(server, connection, toolset)
        if offer.prompts:
            generic += _prompt_tools(server, connection, toolset)
        prefix = tool_name(server, "")
        # tools: {include, exclude} applies to these too, by their short names (read_resource).
        allows = connection.settings.tools.allows
        return specs + [spec for spec in generic if allows(spec.name.removeprefix(prefix))]

    def _status_tool(self) -> ToolSpec:
        failed = "; ".join(f"{name} ({reason})" for name, reason in self.failed.items())

        async def status() -> str:
            lines = []
            for name, connection in self.connections.items():
                tools = len(connection.offer.tools) if connection.offer is not None else 0
                if name in self.failed:
                    lines.append(f"{name}: did not start ({self.failed[name]})")
                elif connection.client is not None:
                    lines.append(f"{name}: connected, {tools} tools")
                elif connection.error is None:
                    lines.append(f"{name}: not started yet ({tools} tools); starts on first call")
                else:
                    lines.append(f"{name}: down ({connection.error}); reconnected on next call")
            return "\n".join(lines)

        return ToolSpec(
            name=STATUS_TOOL,
            description=(
                f"MCP servers that could not be started, so their tools are missing: {failed}. "
                "Tell the user which one and why; do not imitate its tools another way. Call "
                "this for the state of every MCP server."
            ),
            handler=status,
            toolset="mcp",
            parallel_safe=True,
        )

    async def aclose(self) -> None:
        await asyncio.gather(
            *(connection.aclose() for connection in self.connections.values()),
            return_exceptions=True,
        )


def _caller(connection: ServerConnection, tool: str) -> Any:
    async def call(**arguments: Any) -> str:
        try:
            return await connection.call(tool, arguments)
        except ToolFailed as exc:
            raise RuntimeError(str(exc)) from None

    call.__name__ = f"mcp_{tool}"
    return call


async def _request(connection: ServerConnection, method: str, **arguments: Any) -> Any:
    """A request to the server; its failure is the error result the model reads."""
    try:
        return await connection.request(method, **arguments)
    except ToolFailed as exc:
        raise RuntimeError(str(exc)) from None


def _resource_tools(server: str, connection: ServerConnection, toolset: str) -> list[ToolSpec]:
    async def list_resources() -> str:
        listed = await _request(connection, "list_resources")
        rows = [f"{r.uri}  {r.name}  {r.mime_type or ''}".rstrip() for r in listed.resources]
        return "\n".join(rows) or "(no resources)"

    async def read_resource(uri: str) -> str:
        read = await _request(connection, "read_resource", uri=uri)
        parts = []
        for content in read.contents:
            text = getattr(content, "text", None)
            parts.append(text if text is not None else f"[{content.mime_type or 'binary'} data]")
        return "\n".join(parts) or "(empty)"

    return [
        ToolSpec(
            name=tool_name(server, "list_resources"),
            description=f"List the resources MCP server {server} offers (uri, name, type).",
            handler=list_resources,
            toolset=toolset,
            parallel_safe=True,
        ),
        ToolSpec(
            name=tool_name(server, "read_resource"),
            description=f"Read one resource of MCP server {server} by its uri.",
            handler=read_resource,
            parameters={
                "type": "object",
                "properties": {"uri": {"type": "string", "description": "the resource's uri"}},
                "required": ["uri"],
            },
            toolset=toolset,
            parallel_safe=True,
        ),
    ]


def _prompt_tools(server: str, connection: ServerConnection, toolset: str) -> list[ToolSpec]:
    async def list_prompts() -> str:
        listed = await _request(connection, "list_prompts")
        rows = []
        for prompt in listed.prompts:
            names = ", ".join(a.name for a in prompt.arguments or [])
            rows.append(f"{prompt.name}({names}): {prompt.description or ''}".rstrip(": "))
        return "\n".join(rows) or "(no prompts)"

    async def get_prompt(name: str, arguments: dict[str, str] | None = None) -> str:
        got = await _request(connection, "get_prompt", name=name, arguments=arguments or {})
        lines = []
        for message in got.messages:
            content = message.content
            text = getattr(content, "text", None)
            lines.append(
                f"[{message.role}] {text if text is not None else json.dumps(str(content))}"
            )
        return "\n".join(lines) or "(an empty prompt)"

    return [
        ToolSpec(
            name=tool_name(server, "list_prompts"),
            description=f"List the prompts MCP server {server} offers, with their arguments.",
            handler=list_prompts,
            toolset=toolset,
            parallel_safe=True,
        ),
        ToolSpec(
            name=tool_name(server, "get_prompt"),
            description=f"Get one prompt of MCP server {server}, filled with its arguments.",
            handler=get_prompt,
            parameters={
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "arguments": {"type": "object", "additionalProperties": {"type": "string"}},
                },
                "required": ["name"],
            },
            toolset=toolset,
            parallel_safe=True,
        ),
    ]
