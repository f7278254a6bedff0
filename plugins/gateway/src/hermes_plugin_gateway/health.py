"""The gateway's part of ``hermes status``: whether it runs for this home, since when, and
how each platform and service stands (read from the status file the running gateway keeps);
and of ``hermes doctor``: a platform open to anyone who finds the bot, and no delivery plugin
to record messages for it from other processes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path

from hermes_plugin_gateway.status import read_status, running_pid
from hermes_sdk import Finding, HealthContext, Kind, StatusLine


def status_lines(context: HealthContext) -> Iterator[StatusLine]:
    home = Path(context.home)
    report = read_status(home) or {}
    pid = running_pid(home)
    if report.get("state") != "running" or pid is None:
        yield StatusLine(label="Gateway", text="not running (hermes gateway run)")
        return
    started = report.get("started_at")
    since = datetime.fromtimestamp(started).strftime("%Y-%m-%d %H:%M") if started else "?"
    details: list[str] = []
    platforms = report.get("platforms") or {}
    for name, state in sorted(platforms.items()):
        error = f" ({state['error']})" if state.get("error") else ""
        details.append(f"platform {name}: {state.get('state')}{error}")
    if not platforms:
        details.append("no platform is enabled")
    for name, state in sorted((report.get("services") or {}).items()):
        error = f" ({state['error']})" if state.get("error") else ""
        details.append(f"service {name}: {state.get('state')}{error}")
    yield StatusLine(
        label="Gateway", text=f"running (pid {pid}) since {since}", details=tuple(details)
    )


def doctor_checks(context: HealthContext) -> Iterator[Finding]:
    if not context.provided.of(Kind.DELIVERY):
        yield Finding(
            level="warning",
            message="no plugin delivers to chats from other processes: hermes send, and a "
            "scheduled job run with hermes cron run, cannot reach a chat through the gateway",
            fix="hermes plugins install hermes-plugin-delivery",
        )
    platforms = context.config.get("platforms")
    if not isinstance(platforms, Mapping):
        return
    for name, section in sorted(platforms.items()):
        if isinstance(section, Mapping) and section.get("allow_all") is True:
            yield Finding(
                level="warning",
                message=f"platforms.{name}.allow_all is on: anyone who finds the bot can use "
                "the agent and its tools on this machine",
                fix=f"list the people's ids in platforms.{name}.allowed_users (or let them "
                "pair: hermes pairing list), then remove allow_all",
            )
