"""``hermes status``: one screen of how this Hermes stands: the model in use, plugins (failed
ones first), what each plugin reports of its own part (``hermes_status_lines``: a
gateway's platforms, jobs, servers ...), sessions and disk."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hermes_kernel.cli.main import app_of
from hermes_sdk import HealthContext, StatusLine

if TYPE_CHECKING:
    from hermes_kernel.app import App

_LABEL = 12


def _line(label: str, text: str) -> None:
    click.echo(f"{label + ':':<{_LABEL}} {text}")


def _contributed(app: App) -> list[StatusLine]:
    """What the plugins report of their own parts, sorted by label; a plugin whose hook
    raised or hung is one line under its own name."""
    settings = app.settings
    context = HealthContext(
        home=str(settings.home), config=settings.raw, secrets=settings.secrets.merged()
    )
    lines: list[tuple[str, str, StatusLine]] = []
    for plugin, answer in app.host.status_lines(context):
        if isinstance(answer, str):
            failed = StatusLine(label=plugin, text=f"its status failed: {answer}")
            lines.append((plugin, plugin, failed))
        else:
            lines.extend((line.label, plugin, line) for line in answer)
    return [line for _, _, line in sorted(lines, key=lambda entry: entry[:2])]


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    if not path.is_dir():
        return 0
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _mb(size: int) -> str:
    return f"{size / 1_048_576:.1f} MB"


def _disk(home: Path) -> str:
    """The home's size and its largest parts (whatever they are: the kernel names none of
    the plugins' folders), the store's write-ahead log counted with the store."""
    parts: dict[str, int] = {}
    if home.is_dir():
        for entry in home.iterdir():
            name = entry.name.removesuffix("-wal").removesuffix("-shm")
            if not entry.is_symlink():
                parts[name] = parts.get(name, 0) + _size(entry)
    shown = 52_429  # what rounds to 0.1 MB: smaller parts would all read "0.0 MB"
    largest = sorted(((size, n) for n, size in parts.items() if size >= shown), reverse=True)
    detail = ", ".join(f"{name} {_mb(size)}" for size, name in largest[:5])
    return f"{_mb(sum(parts.values()))}" + (f" ({detail})" if detail else "")


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


def _sessions(home: Path) -> str:
    from hermes_kernel.store.foreign import ForeignStoreError
    from hermes_kernel.store.state import StateStore, state_db_path

    path = state_db_path(home)
    if not path.exists():
        return "none yet"
    try:
        store = StateStore(path)
    except ForeignStoreError:
        raise  # not a part to report on: the whole home is another tool's (one line)
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
    """One screen: model, plugins, what each plugin reports, sessions, disk."""
    from hermes_kernel.config.home import base_home, chosen_profile

    app = app_of(ctx)
    home = app.settings.home
    sessions = _sessions(home)  # first: another tool's home is one line, not half a screen
    profile, _ = chosen_profile(
        base_home(app.flags.home, os.environ), app.flags.profile, os.environ
    )
    _line("Home", f"{home}  (profile {profile})")
    _line("Model", _model(app))
    first, *more = _plugins(app)
    _line("Plugins", first)
    for line in more:
        click.echo(" " * (_LABEL + 1) + line.strip())
    for contributed in _contributed(app):
        _line(contributed.label, contributed.text)
        for detail in contributed.details:
            click.echo(" " * (_LABEL + 1) + detail.strip())
    _line("Sessions", sessions)
    _line("Disk", _disk(home))
