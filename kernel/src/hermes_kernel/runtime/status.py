"""How this Hermes stands, as facts: what ``hermes status`` prints and a front-end's
``Runtime.status()`` and ``Runtime.plugins()`` return (one computation, two readers).

The lines: the model in use, plugins (failed ones first), what each plugin reports of its
own part (``hermes_status_lines``: a front-end's platforms, jobs, servers ...), sessions and
disk. Everything here blocks (it reads the home, opens the store, may load plugins): a
runtime calls it in a worker thread.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from hermes_kernel.plugins.rows import PluginRow, plugin_rows
from hermes_kernel.plugins.status_cache import read_status
from hermes_sdk import HealthContext, StatusLine
from hermes_sdk.runtime import PluginState

if TYPE_CHECKING:
    from hermes_kernel.app import App
    from hermes_kernel.plugins.host import PluginHost

__all__ = ["plugin_states", "status_lines"]

_State = Literal["loaded", "enabled", "disabled", "failed"]


def _one_line(text: str) -> str:
    """``text`` on one line (a status line's text or detail never spans two)."""
    return " ".join(part.strip() for part in text.splitlines()) if "\n" in text else text


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
            failed = StatusLine(label=plugin, text=f"its status failed: {_one_line(answer)}")
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
    from hermes_kernel.providers.routing import NoModel, routing_view

    try:
        view = routing_view(app.host, app.settings)
    except NoModel as exc:
        return f"none: {exc}"
    if view.choice is None:
        return f"none: {view.failure} (hermes model --explain)"
    return f"{view.choice.endpoint.name} / {view.choice.model}  ({view.choice.source})"


def _backend(app: App) -> str:
    """The terminal backend tools run commands in, and whether a plugin provides it (how it
    is doing is its plugin's line)."""
    from hermes_kernel.tooling.environment import DEFAULT_BACKEND, backend_name
    from hermes_sdk import Kind

    name = backend_name(app.settings.raw)
    if name not in app.host.declared(Kind.BACKEND):
        return (
            f"{name}: no enabled plugin provides it, so no tool can run a command "
            f"(hermes plugins list; or: hermes config set agent.backend {DEFAULT_BACKEND})"
        )
    return name


def _last_error(row: PluginRow) -> str | None:
    """Why the plugin failed, here or the last time it was loaded; None if it did not."""
    if row.error:
        return row.error
    if row.last_load and not row.last_load.get("ok"):
        return str(row.last_load.get("error") or "failed to load")
    return None


def _plugins(app: App) -> StatusLine:
    rows = plugin_rows(app.host, read_status(app.settings.home))
    failed = [r for r in rows if r.state == "failed" or (r.last_load and not r.last_load.get("ok"))]
    disabled = [r for r in rows if r.state == "disabled"]
    summary = f"{len(rows)} installed, {len(rows) - len(disabled)} enabled"
    summary += f", {len(disabled)} disabled, {len(failed)} failed"
    details = tuple(  # failed ones first: they are what needs doing
        _one_line(f"failed: {row.name}: {_last_error(row) or 'failed to load'}") for row in failed
    )
    return StatusLine(label="Plugins", text=summary, details=details)


def _sessions(app: App) -> str:
    from hermes_kernel.plugins.store_engines import open_state_store, store_exists
    from hermes_kernel.store.errors import ForeignStoreError

    host, home, config = app.host, app.settings.home, app.settings.document.data
    try:
        if not store_exists(host, home, config):
            return "none yet"
        store = open_state_store(host, home, config)
    except ForeignStoreError:
        raise  # not a part to report on: the whole home is another tool's (one line)
    except Exception as exc:  # noqa: BLE001 - a status screen reports, it does not fail
        return f"the store cannot be opened: {' '.join(str(exc).split())[:160]}"
    try:
        count = store.sessions.count()
        latest = store.sessions.latest()
    finally:
        store.close()
    if latest is None:
        return f"{count} stored"
    title = latest.title or latest.id
    return f"{count} stored; the latest: {title} ({latest.source})"


def status_lines(app: App) -> list[StatusLine]:
    """One screen of how this Hermes stands, in the order ``hermes status`` prints it.
    Raises ForeignStoreError when the home is another tool's (before anything else)."""
    from hermes_kernel.config.home import base_home, chosen_profile

    home = app.settings.home
    sessions = _sessions(app)  # first: another tool's home is one line, not half a screen
    profile, _ = chosen_profile(
        base_home(app.flags.home, os.environ), app.flags.profile, os.environ
    )
    return [
        StatusLine(label="Home", text=f"{home}  (profile {profile})"),
        StatusLine(label="Model", text=_one_line(_model(app))),
        StatusLine(label="Backend", text=_one_line(_backend(app))),
        _plugins(app),
        *_contributed(app),
        StatusLine(label="Sessions", text=_one_line(sessions)),
        StatusLine(label="Disk", text=_disk(home)),
    ]


def plugin_states(host: PluginHost, home: Path) -> list[PluginState]:
    """Every installed plugin as ``hermes plugins list`` sees it, by name."""
    states = []
    for row in sorted(plugin_rows(host, read_status(home)), key=lambda row: row.name):
        error = _last_error(row)
        states.append(
            PluginState(
                name=row.name,
                distribution=row.distribution,
                version=row.version,
                summary=row.summary,
                state=cast(_State, row.state),  # PluginRow.state holds one of these four
                reason=row.reason,
                error=_one_line(error) if error is not None else None,
                load_ms=row.load_ms,
                isolated=row.isolated,
                run_time=row.run_time,
                provides=tuple(row.provides if row.provides is not None else row.declares),
            )
        )
    return states
