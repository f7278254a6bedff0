"""The MCP servers page of the dashboard: the servers of ``mcp_servers:``, each tested with
one timed connection that lists its tools, added (checked as ``hermes mcp add`` checks) or
removed; config.yaml is changed through the runtime's checked edit."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from hermes_plugin_mcp.settings import ServerSettings, parse_servers, where
from hermes_sdk.dashboard import (
    Button,
    Field,
    Form,
    Outcome,
    PanelContext,
    PanelError,
    PanelView,
    Row,
    Section,
    Table,
    Text,
)

__all__ = ["McpPanel"]

SECTION = "mcp_servers"
NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$")
TOOLS_SHOWN = 12


def _shown(settings: ServerSettings) -> str:
    """How a server is reached, with no token a URL or an argument carries."""
    from hermes_commons.redact import redact_text, url_without_password

    text = where(settings)
    if settings.url is not None:
        text = text.replace(settings.url, url_without_password(settings.url.split("?")[0]))
    return redact_text(text)


class McpPanel:
    def __init__(self, context: PanelContext) -> None:
        self.context = context
        self.runtime = context.runtime

    async def _servers(self) -> tuple[dict[str, ServerSettings], list[str]]:
        try:
            config = await self.runtime.read_config()
        except ValueError as exc:
            raise PanelError(str(exc)) from None
        return parse_servers(config.get(SECTION))

    async def view(self, query: Mapping[str, str]) -> PanelView:
        servers, problems = await self._servers()
        rows = tuple(
            Row(
                cells=(name, _shown(settings), "on" if settings.enabled else "off"),
                buttons=(
                    Button(action="test", label="Test", values={"name": name}),
                    Button(
                        action="remove",
                        label="Remove",
                        values={"name": name},
                        confirm=f"Remove the MCP server {name!r}?",
                        danger=True,
                    ),
                ),
            )
            for name, settings in servers.items()
        )
        return PanelView(
            sections=(
                Section(
                    title="Servers",
                    blocks=(
                        Table(
                            columns=("name", "how it is reached", "enabled"),
                            rows=rows,
                            empty="no MCP servers yet: add one below",
                        ),
                        *(Text(text=problem, level="error") for problem in problems),
                        Text(
                            text="New sessions get a server's tools; a restart of the "
                            "gateway or the chat starts what was added."
                        ),
                    ),
                ),
                Section(
                    title="Add a server",
                    blocks=(
                        Form(
                            action="add",
                            submit="Add",
                            fields=(
                                Field(
                                    name="name", label="Name", required=True, placeholder="files"
                                ),
                                Field(
                                    name="command",
                                    label="Command (a stdio server)",
                                    placeholder="npx",
                                ),
                                Field(
                                    name="args",
                                    label="Arguments, one per line",
                                    kind="textarea",
                                    placeholder="-y\n@modelcontextprotocol/server-filesystem",
                                ),
                                Field(
                                    name="url",
                                    label="Or the URL of an HTTP server",
                                    placeholder="https://mcp.example.org/mcp",
                                ),
                                Field(
                                    name="env",
                                    label="Environment, KEY=VALUE per line",
                                    kind="textarea",
                                    help="${VAR} is read from .env when the server starts: "
                                    "keep secrets there, not here.",
                                ),
                            ),
                        ),
                    ),
                ),
            )
        )

    async def act(self, action: str, values: Mapping[str, str]) -> Outcome:
        name = values.get("name", "").strip()
        if action == "add":
            return await self._add(name, values)
        servers, _ = await self._servers()
        if name not in servers:
            raise PanelError(f"no MCP server {name!r} in {SECTION}")
        if action == "remove":
            return await self._change({f"{SECTION}.{name}": None}, f"removed MCP server {name!r}")
        if action == "test":
            return await self._test(name, servers[name])
        raise PanelError(f"no action {action!r} on this page: reload it")

    async def _add(self, name: str, values: Mapping[str, str]) -> Outcome:
        if not NAME.fullmatch(name):
            raise PanelError("name it with letters, digits, - and _ (files, github-issues)")
        command = values.get("command", "").strip()
        url = values.get("url", "").strip()
        entry: dict[str, Any] = {"command": command} if command else {"url": url or None}
        args = [line.strip() for line in values.get("args", "").splitlines() if line.strip()]
        if args:
            entry["args"] = args
        env_lines = [line.strip() for line in values.get("env", "").splitlines() if line.strip()]
        pairs = [line.partition("=") for line in env_lines]
        if any(not sep or not key.strip() for key, sep, _ in pairs):
            raise PanelError("write each environment line as KEY=VALUE")
        if pairs:
            entry["env"] = {key.strip(): value for key, _, value in pairs}
        try:
            ServerSettings.model_validate(entry)
        except ValueError as exc:
            raise PanelError(f"{name}: {str(exc).splitlines()[-1].strip()}") from None
        return await self._change(
            {f"{SECTION}.{name}": json.dumps(entry)},
            f"added MCP server {name!r}; test it from its row",
        )

    async def _change(self, changes: dict[str, str | None], said: str) -> Outcome:
        try:
            await self.runtime.change_config(changes, save=True)
        except ValueError as exc:
            raise PanelError(str(exc)) from None
        return Outcome(message=said)

    async def _test(self, name: str, settings: ServerSettings) -> Outcome:
        from hermes_plugin_mcp.connection import ConnectError
        from hermes_plugin_mcp.probe import probe

        try:
            seconds, tools = await probe(
                name, settings, self.context.secrets, self.context.home, os.getcwd()
            )
        except ConnectError as exc:
            raise PanelError(f"{name}: {exc} (its stderr: logs/mcp-{name}.log)") from None
        names = ", ".join(tool.name for tool in tools[:TOOLS_SHOWN])
        more = f" and {len(tools) - TOOLS_SHOWN} more" if len(tools) > TOOLS_SHOWN else ""
        return Outcome(
            message=f"{name}: connected in {seconds:.1f} s, {len(tools)} tools: {names}{more}"
        )
