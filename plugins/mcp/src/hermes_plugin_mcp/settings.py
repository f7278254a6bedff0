"""The ``mcp_servers:`` section (compatible with hermes-agent's): one entry per server, over
stdio (``command``) or HTTP (``url``), with ``${VAR}`` taken from the environment and .env."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hermes_commons.environment import SAFE_VARIABLES, safe_environment
from hermes_commons.sections import section_settings
from hermes_plugin_mcp.defaults import ENABLED, TRANSPORT

__all__ = [
    "SAFE_ENVIRONMENT",
    "ServerSettings",
    "ToolFilter",
    "expand",
    "parse_servers",
    "server_environment",
    "where",
]

SAFE_ENVIRONMENT = tuple(sorted(SAFE_VARIABLES))
"""What a stdio server inherits from Hermes' environment by name (and LC_*, XDG_*): never
keys. The SDK's list (:mod:`hermes_commons.environment`), kept under this name for importers."""

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ToolFilter(BaseModel):
    model_config = ConfigDict(extra="forbid")

    include: list[str] = Field(default_factory=list, description="Only these tools (empty: all).")
    exclude: list[str] = Field(default_factory=list, description="Never these tools.")

    def allows(self, name: str) -> bool:
        if self.include and name not in self.include:
            return False
        return name not in self.exclude


class ServerSettings(BaseModel):
    """One MCP server: ``command`` (stdio) or ``url`` (streamable HTTP, or SSE)."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = Field(default=None, min_length=1, description="Run this over stdio.")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(
        default_factory=dict, description="Its environment, besides PATH..."
    )
    cwd: str | None = None
    url: str | None = Field(default=None, pattern=r"^https?://", description="Or reach it here.")
    transport: Literal["streamable_http", "sse"] = Field(
        default=TRANSPORT, description="For url: streamable HTTP, or the older SSE."
    )
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(default=120.0, gt=0, le=3600, description="Per tool call, seconds.")
    connect_timeout: float = Field(default=60.0, gt=0, le=600, description="Seconds to connect.")
    tools: ToolFilter = Field(default_factory=ToolFilter)
    enabled: bool = ENABLED

    @model_validator(mode="after")
    def _one_way_in(self) -> ServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a stdio server) or url (an HTTP server)")
        return self


def where(settings: ServerSettings) -> str:
    """How a server is reached, in one line: its command line, or its URL and transport."""
    if settings.command is not None:
        return " ".join([settings.command, *settings.args])
    return f"{settings.url} ({settings.transport})"


def expand(text: str, secrets: Mapping[str, str]) -> str:
    """``${VAR}`` replaced from ``secrets``; an unknown one raises KeyError naming it."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in secrets:
            raise KeyError(f"${{{name}}} is not set (the environment or .env)")
        return secrets[name]

    return _VARIABLE.sub(value, text)


def server_environment(settings: ServerSettings, secrets: Mapping[str, str]) -> dict[str, str]:
    """A stdio server's whole environment: the safe part of ours, and its own ``env``."""
    own = {key: expand(value, secrets) for key, value in settings.env.items()}
    return {**safe_environment(), **own}


def parse_servers(raw: Any) -> tuple[dict[str, ServerSettings], list[str]]:
    """The valid servers of ``mcp_servers:``, and one line per entry that is not."""
    if raw is None:
        return {}, []
    if not isinstance(raw, Mapping):
        return {}, ["mcp_servers must be a mapping of server names to settings"]
    servers: dict[str, ServerSettings] = {}
    problems: list[str] = []
    for name, entry in raw.items():
        try:
            servers[str(name)] = section_settings(f"mcp_servers.{name}", ServerSettings, entry)
        except ValueError as exc:
            problems.append(str(exc))
    return servers, problems
