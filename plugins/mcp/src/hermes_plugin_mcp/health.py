"""What ``hermes status`` and ``hermes doctor`` say about the MCP servers: each configured
server and its state (enabled, disabled, or what stops it), from ``mcp_servers:`` alone.
Nothing is started or reached: a server that answers is ``hermes mcp test NAME``'s job.

``hermes status`` reads the section as plain data (validating it would import pydantic,
a large part of a status screen's time); ``hermes doctor`` validates it anyway."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_plugin_mcp.defaults import ENABLED, TRANSPORT
from hermes_sdk import Finding, HealthContext, StatusLine

if TYPE_CHECKING:
    from hermes_plugin_mcp.settings import ServerSettings

SECTION = "mcp_servers"
LABEL = "MCP"
_WIDTH = 60


def _short(text: str) -> str:
    return text if len(text) <= _WIDTH else text[: _WIDTH - 3] + "..."


_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _blockers(
    command: str | None, cwd: str | None, texts: list[str], context: HealthContext
) -> list[str]:
    """What keeps an enabled server from starting, found without starting it: its command
    not on PATH, its folder missing, a ``${VAR}`` of its args, env or headers not set."""
    found: list[str] = []
    if command is not None and shutil.which(command) is None:
        found.append(f"command {command!r} is not found")
    if cwd is not None and not Path(cwd).expanduser().is_dir():
        found.append(f"its folder {cwd} does not exist")
    named = {match.group(1) for text in texts for match in _VARIABLE.finditer(text)}
    unset = sorted(name for name in named if name not in context.secrets)
    if unset:
        found.append("${" + "}, ${".join(unset) + "} not set")
    return found


def _texts(entry: Mapping[str, Any]) -> list[str]:
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    maps = [entry.get(key) for key in ("env", "headers")]
    values = [v for m in maps if isinstance(m, Mapping) for v in m.values()]
    return [str(text) for text in [*(args or []), *values]]


def _line(name: str, entry: Any, context: HealthContext) -> tuple[str, bool]:
    """One server's detail line, and whether it is enabled."""
    if not isinstance(entry, Mapping):
        return f"{name}: invalid: not a mapping of settings", False
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        return f"{name}: invalid: give either command or url (see: hermes config validate)", False
    if command is not None:
        args = entry.get("args") if isinstance(entry.get("args"), list) else []
        where = " ".join([str(command), *map(str, args or [])])
    else:
        where = f"{url} ({entry.get('transport') or TRANSPORT})"
    if entry.get("enabled", ENABLED) is False:
        return f"{name}: disabled ({_short(where)})", False
    cwd = entry.get("cwd")
    blockers = _blockers(
        str(command) if command is not None else None,
        str(cwd) if cwd is not None else None,
        _texts(entry),
        context,
    )
    state = f"cannot start: {'; '.join(blockers)}" if blockers else "enabled"
    return f"{name}: {state} ({_short(where)})", True


def status_lines(context: HealthContext) -> Iterator[StatusLine]:
    servers = context.config.get(SECTION)
    if not servers:
        yield StatusLine(label=LABEL, text="none configured (hermes mcp add NAME ...)")
        return
    if not isinstance(servers, Mapping):
        yield StatusLine(label=LABEL, text=f"{SECTION} is not a mapping (see: hermes doctor)")
        return
    lines = [_line(str(name), entry, context) for name, entry in servers.items()]
    enabled = sum(1 for _, on in lines if on)
    yield StatusLine(
        label=LABEL,
        text=f"{len(lines)} configured, {enabled} enabled",
        details=tuple(line for line, _ in lines),
    )


def _settings_blockers(settings: ServerSettings, context: HealthContext) -> list[str]:
    texts = [*settings.args, *settings.env.values(), *settings.headers.values()]
    return _blockers(settings.command, settings.cwd, texts, context)


def doctor_checks(context: HealthContext) -> Iterator[Finding]:
    from hermes_plugin_mcp.settings import parse_servers, where

    # Invalid entries are the config check's findings already (the section's model).
    servers, _ = parse_servers(context.config.get(SECTION))
    for name, settings in servers.items():
        if not settings.enabled:
            continue
        blockers = _settings_blockers(settings, context)
        if not blockers:
            yield Finding(level="ok", message=f"MCP server {name!r} ({_short(where(settings))})")
            continue
        for blocker in blockers:
            yield Finding(
                level="warning",
                message=f"MCP server {name!r}: {blocker}, so its tools are missing",
                fix=f"fix mcp_servers.{name} in config.yaml (then: hermes mcp test {name}), "
                f"or remove it: hermes mcp remove {name}",
            )
