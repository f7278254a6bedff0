"""``hermes status``: one screen of how this Hermes stands: the model in use, plugins (failed
ones first), the gateway and its platforms, scheduled jobs, MCP servers, sessions and disk."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hermes_kernel.cli.main import app_of
from hermes_sdk import Kind

if TYPE_CHECKING:
    from hermes_kernel.app import App

_LABEL = 12


def _line(label: str, text: str) -> None:
    click.echo(f"{label + ':':<{_LABEL}} {text}")


def _jobs(app: App, home: Path) -> str:
    """HERMES_HOME/cron/jobs.json (hermes-agent's format, which the scheduler plugin keeps)
    in one line: how many, and how many failed last time."""
    path = home / "cron" / "jobs.json"
    if not path.exists():
        return "none"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        jobs = [job for job in data.get("jobs", []) if isinstance(job, dict)]
    except (OSError, ValueError, AttributeError):
        return f"{path} cannot be read"
    line = f"{len(jobs)} scheduled"
    failed = sum(1 for job in jobs if job.get("last_status") == "error")
    if failed:
        line += f", {failed} failed on their last run (see: hermes cron status)"
    if "cron" not in app.host.declared(Kind.SERVICE):
        line += "; no scheduler plugin is installed to run them"
    return line


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    if not path.is_dir():
        return 0
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _mb(size: int) -> str:
    return f"{size / 1_048_576:.1f} MB"


def _model(app: App) -> str:
    from hermes_kernel.providers.routes import run_ladder

    report, _ = run_ladder(app.host, app.settings, None, None)
    if report.choice is None:
        return f"none: {report.failure} (hermes model --explain)"
    return f"{report.choice.endpoint.name} / {report.choice.model}  ({report.choice.source})"


def _plugins(app: App) -> list[str]:
    from hermes_kernel.cli.plugin_rows import plugin_rows
    from hermes_kernel.plugins.status_cache import read_status

    rows = plugin_rows(app.host, read_status(app.settings.home))
    failed = [r for r in rows if r.state == "failed" or (r.last_load and not r.last_load.get("ok"))]
    disabled = [r for r in rows if r.state == "disabled"]
    summary = f"{len(rows)} installed, {len(rows) - len(disabled)} enabled"
    summary += f", {len(disabled)} disabled, {len(failed)} failed"
    lines = [summary]
    for row in failed:  # failed ones first: they are what needs doing
        error = row.error or (row.last_load or {}).get("error") or "failed to load"
        lines.append(f"  failed: {row.name}: {error}")
    return lines


def _gateway(home: Path) -> list[str]:
    # Until plugins contribute their own status lines, the gateway plugin's status file
    # (HERMES_HOME/gateway/status.json) is read here; its pid is alive only while it runs.
    report = _read_json(home / "gateway" / "status.json")
    pid = report.get("pid")
    if report.get("state") != "running" or not isinstance(pid, int) or not _alive(pid):
        return ["not running (hermes gateway run)"]
    started = report.get("started_at")
    since = datetime.fromtimestamp(started).strftime("%Y-%m-%d %H:%M") if started else "?"
    lines = [f"running (pid {pid}) since {since}"]
    platforms = report.get("platforms") or {}
    for name, state in sorted(platforms.items()):
        error = f" ({state['error']})" if state.get("error") else ""
        lines.append(f"  platform {name}: {state.get('state')}{error}")
    if not platforms:
        lines.append("  no platform is enabled")
    for name, state in sorted((report.get("services") or {}).items()):
        error = f" ({state['error']})" if state.get("error") else ""
        lines.append(f"  service {name}: {state.get('state')}{error}")
    return lines


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sessions(home: Path) -> str:
    from hermes_kernel.store.foreign import ForeignStoreError
    from hermes_kernel.store.state import StateStore, state_db_path

    path = state_db_path(home)
    if not path.exists():
        return "none yet"
    try:
        store = StateStore(path)
    except ForeignStoreError:
        raise  # not a part to report on: the whole home is hermes-agent's (one line)
    except Exception as exc:  # noqa: BLE001 - a status screen reports, it does not fail
        return f"{path} cannot be opened: {' '.join(str(exc).split())[:120]}"
    try:
        count = store.sessions.count()
        latest = store.sessions.latest()
    finally:
        store.close()
    if latest is None:
        return f"{count} stored"
    title = latest.title or latest.id
    return f"{count} stored; the latest: {title} ({latest.source})"


@click.command()
@click.pass_context
def status(ctx: click.Context) -> None:
    """One screen: model, plugins, gateway, scheduled jobs, MCP servers, sessions, disk."""
    from hermes_kernel.config.home import base_home, chosen_profile

    app = app_of(ctx)
    home = app.settings.home
    sessions = _sessions(home)  # first: a hermes-agent home is one line, not half a screen
    profile, _ = chosen_profile(
        base_home(app.flags.home, os.environ), app.flags.profile, os.environ
    )
    _line("Home", f"{home}  (profile {profile})")
    _line("Model", _model(app))
    first, *more = _plugins(app)
    _line("Plugins", first)
    for line in more:
        click.echo(" " * (_LABEL + 1) + line.strip())
    first, *more = _gateway(home)
    _line("Gateway", first)
    for line in more:
        click.echo(" " * (_LABEL + 1) + line.strip())
    _line("Jobs", _jobs(app, home))
    servers = app.settings.raw.get("mcp_servers") or {}
    _line(
        "MCP",
        f"{len(servers)} configured, no MCP plugin installed" if servers else "none configured",
    )
    _line("Sessions", sessions)
    parts = {
        name: _size(home / name) for name in ("state.db", "logs", "cache", "skills", "memories")
    }
    parts["state.db"] += _size(home / "state.db-wal")
    total = _size(home)
    detail = ", ".join(f"{name} {_mb(size)}" for name, size in parts.items() if size)
    _line("Disk", f"{_mb(total)}" + (f" ({detail})" if detail else ""))
