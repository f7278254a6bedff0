"""``hermes mcp list | test NAME | add NAME | remove NAME``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from hermes_plugin_mcp.settings import ServerSettings, parse_servers, where
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext

SECTION = "mcp_servers"


def _context() -> CommandContext:
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    return context


@click.group()
def mcp() -> None:
    """MCP servers (mcp_servers: in config.yaml)."""


@mcp.command("list")
def list_servers() -> None:
    """The configured servers."""
    servers, problems = parse_servers(_context().config.get(SECTION))
    for problem in problems:
        click.echo(f"error: {problem}", err=True)
    if not servers and not problems:
        click.echo("No MCP servers. Add one: hermes mcp add NAME --command CMD [ARG ...]")
    for name, settings in servers.items():
        state = "" if settings.enabled else "  (disabled)"
        click.echo(f"{name}  {where(settings)}{state}")


@mcp.command("test")
@click.argument("name")
def test(name: str) -> None:
    """Connect to one server and list its tools."""
    from hermes_plugin_mcp.connection import ConnectError
    from hermes_plugin_mcp.probe import probe

    context = _context()
    servers, _problems = parse_servers(context.config.get(SECTION))
    if name not in servers:
        known = ", ".join(servers) or "none"
        raise click.ClickException(f"no MCP server {name!r} in mcp_servers (configured: {known})")
    try:
        seconds, tools = asyncio.run(
            probe(name, servers[name], context.secrets, context.home, str(Path.cwd()))
        )
    except ConnectError as exc:
        raise click.ClickException(f"{name}: {exc} (its stderr: logs/mcp-{name}.log)") from None
    click.echo(f"{name}: connected in {seconds:.1f} s, {len(tools)} tools")
    for tool in tools:
        first = (tool.description or "").strip().splitlines()
        click.echo(f"  {tool.name}  {first[0][:80] if first else ''}".rstrip())


@mcp.command("add")
@click.argument("name")
@click.option("--command", "command", help="A stdio server: the program to run.")
@click.option("--arg", "args", multiple=True, help="One argument for it (repeat).")
@click.option("--url", help="An HTTP server's URL.")
@click.option("--env", "env", multiple=True, help="KEY=VALUE for a stdio server (${VAR} kept).")
def add(
    name: str, command: str | None, args: tuple[str, ...], url: str | None, env: tuple[str, ...]
) -> None:
    """Add (or replace) a server in config.yaml."""
    entry: dict[str, Any] = {"command": command} if command else {"url": url}
    if args:
        entry["args"] = list(args)
    if env:
        pairs = [item.partition("=") for item in env]
        if any(not sep for _, sep, _ in pairs):
            raise click.ClickException("--env takes KEY=VALUE")
        entry["env"] = {key: value for key, _, value in pairs}
    try:
        ServerSettings.model_validate(entry)
    except ValueError as exc:
        raise click.ClickException(f"{name}: {str(exc).splitlines()[-1].strip()}") from None
    _edit(lambda servers: servers.__setitem__(name, entry))
    click.echo(f"added MCP server {name!r}; try it: hermes mcp test {name}")


@mcp.command("remove")
@click.argument("name")
def remove(name: str) -> None:
    """Remove a server from config.yaml."""
    removed: list[str] = []

    def drop(servers: Any) -> None:
        if name in servers:
            del servers[name]
            removed.append(name)

    _edit(drop)
    if not removed:
        raise click.ClickException(f"no MCP server {name!r} in mcp_servers")
    click.echo(f"removed MCP server {name!r}")


def _edit(change: Any) -> None:
    """Change mcp_servers in config.yaml: checked, atomic, its comments and order kept
    (``CommandContext.edit_config``)."""
    from ruamel.yaml.comments import CommentedMap

    def within(document: Any) -> None:
        servers = document.get(SECTION)
        if servers is None:
            servers = document[SECTION] = CommentedMap()
        change(servers)

    edit = _context().edit_config
    if edit is None:
        raise click.ClickException("this Hermes cannot edit config.yaml; upgrade hermes-kernel")
    edit(within)
