"""``hermes gateway install | uninstall | start | restart``: the gateway of this home as a
service of the user's service manager (a systemd user service, a launchd agent). Each
either does all it says or, with one line saying why and what to do, nothing: no unit is
left half-written or half-installed.

They are subcommands of the gateway plugin's ``hermes gateway`` (``command.gateway.install``
...), and know the gateway by what it documents, not by its code: the command that runs it
(``hermes gateway run``), two keys of its section (``gateway.drain_seconds``,
``gateway.cwd``), and its pid and status files (:mod:`hermes_commons.running`, name
``gateway``)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from hermes_commons.running import read_status, record_service, running_pid
from hermes_plugin_service_host.manager import ActiveState, ServiceError, ServiceManager
from hermes_plugin_service_host.plan import changes, manager_for, plan_service, service_slug
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext

__all__ = ["GATEWAY", "install", "restart", "start", "uninstall"]

GATEWAY = "gateway"
"""The long-running process this installs: its name for :mod:`hermes_commons.running`, its
config section, and its command (``hermes gateway run``)."""

DRAIN_SECONDS = 30.0
"""``gateway.drain_seconds`` when config.yaml leaves it out (the gateway's default)."""

SERVING_SECONDS = 30.0
"""How long start waits for the gateway to say it serves (its status file)."""


def _context() -> CommandContext:
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    return context


def _manager(home: Path) -> ServiceManager:
    return manager_for(service_slug(home, Path.home()), os.environ)


def gateway_keys(config: Mapping[str, Any]) -> tuple[float, str | None]:
    """``gateway.drain_seconds`` and ``gateway.cwd`` from config.yaml: how long a stop may
    take, and where sessions start. ServiceError (one line) when either is not what the
    gateway takes."""
    section = config.get(GATEWAY)
    if section is None:
        return DRAIN_SECONDS, None
    if not isinstance(section, Mapping):
        raise ServiceError("config.yaml: gateway must be a mapping of settings")
    drain = section.get("drain_seconds", DRAIN_SECONDS)
    if isinstance(drain, bool) or not isinstance(drain, int | float) or not 0 <= drain <= 3600:
        raise ServiceError(
            f"config.yaml: gateway.drain_seconds must be a number of seconds from 0 to 3600, "
            f"not {drain!r}"
        )
    cwd = section.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ServiceError(f"config.yaml: gateway.cwd must be a folder's path, not {cwd!r}")
    return float(drain), cwd


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ServiceError(f"cannot read {path}: {exc}") from None


def _refuse_hand_started(home: Path, manager: ServiceManager) -> None:
    """A gateway started by hand holds this home: the service would fail on its lock (and be
    restarted every 10 s), so it is stopped first."""
    pid = running_pid(home, GATEWAY)
    if pid is not None and pid != manager.main_pid():
        raise ServiceError(
            f"a gateway started by hand runs for this home (pid {pid}); "
            "stop it first: hermes gateway stop"
        )


def _wait_serving(home: Path, manager: ServiceManager) -> int:
    """The gateway's pid once its status file says it serves; ServiceError if it fails."""
    deadline = time.monotonic() + SERVING_SECONDS
    state: ActiveState | None = "starting"
    while time.monotonic() < deadline:
        pid = running_pid(home, GATEWAY)
        report = read_status(home, GATEWAY) or {}
        if pid is not None and report.get("pid") == pid and report.get("state") == "running":
            return pid
        state = manager.state()
        if state in ("failed", "inactive"):
            break
        time.sleep(0.5)
    return _not_serving(manager, state)


def _not_serving(manager: ServiceManager, state: ActiveState | None) -> int:
    if state in ("starting", "active"):
        what = f"does not serve yet after {SERVING_SECONDS:g} s (it may keep failing)"
    else:
        what = f"did not start ({state or 'state unknown'})"
    raise ServiceError(
        f"{manager.name} is installed but the gateway {what}: see `hermes logs "
        f"gateway-output`, `hermes logs gateway` and `{manager.inspect}`"
    )


def _fail(exc: ServiceError) -> click.ClickException:
    return click.ClickException(str(exc))


@click.command()
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where sessions start (default: gateway.cwd, else the current folder).",
)
@click.option(
    "--writable",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="One more folder the agent may change (repeatable); the home and the working "
    "folder always are, the rest of the system is read-only to it (systemd).",
)
@click.option("--force", is_flag=True, help="Replace a unit that differs from this one.")
@click.option("--no-start", is_flag=True, help="Write and check it; do not enable or start it.")
def install(workdir: Path | None, writable: tuple[Path, ...], force: bool, no_start: bool) -> None:
    """Run the gateway as a service: a systemd user service (Linux) or a launchd agent
    (macOS), started now and at each login. Its output: hermes logs gateway-output."""
    context = _context()
    try:
        drain_seconds, configured_cwd = gateway_keys(context.config)
        plan = plan_service(
            Path(context.home),
            drain_seconds=drain_seconds,
            configured_cwd=configured_cwd,
            workdir=workdir,
            writable=writable,
            argv0=sys.argv[0],
            environ=os.environ,
        )
        manager = manager_for(plan.slug, os.environ)
        text = manager.render(plan)
        old = _read(manager.path)
        if old is not None and old != text and not force:
            raise _differs(manager.path, old, text)
        if not no_start:
            manager.reachable()
            _refuse_hand_started(plan.home, manager)
        checker = manager.verify(text)
        try:
            plan.output.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ServiceError(f"cannot create {plan.output.parent}: {exc.strerror}") from None
        if old != text:
            _write(manager.path, text)
        _record(plan.home, manager)
        checked = f"checked with {checker}" if checker else "not checked: no checker here"
        done = "unchanged" if old == text else "replaced" if old is not None else "wrote"
        written = [
            f"{done.capitalize()} {manager.path} ({checked}).",
            f"Sessions start in {plan.workdir}; its output: hermes logs gateway-output.",
        ]
        if no_start:
            click.echo(
                "\n".join([*written, "Start it (now and at each login): hermes gateway start"])
            )
            return
        try:
            manager.load()
        except ServiceError:
            _put_back(plan.home, manager, old)
            raise
        click.echo("\n".join(written))
        try:
            if old is not None and old != text:
                manager.restart()  # drains running turns, then runs as now written
            else:
                manager.start()
        except ServiceError as exc:
            raise ServiceError(
                f"{exc}; {manager.name} is installed: see `{manager.inspect}`, "
                "then: hermes gateway start"
            ) from None
        pid = _wait_serving(plan.home, manager)
    except ServiceError as exc:
        raise _fail(exc) from None
    click.echo(f"The gateway runs (pid {pid}) as the {manager.kind} {manager.name}.")
    note = manager.note()
    if note:
        click.echo(note)


def _differs(path: Path, old: str, text: str) -> click.ClickException:
    """Refused: the user's edits, or another install's unit, are not overwritten unasked."""
    return click.ClickException(
        "\n".join(
            [
                f"{path} differs from what install writes now (- there, + install):",
                *changes(old, text),
                "Keep it, or replace it with: hermes gateway install --force",
            ]
        )
    )


def _write(path: Path, text: str) -> None:
    from hermes_commons.files import atomic_write_text

    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise ServiceError(f"cannot write {path}: {exc.strerror or exc}") from None


def _put_back(home: Path, manager: ServiceManager, old: str | None) -> None:
    """The manager refused the new file: what was there before is there again."""
    if old is None:
        manager.path.unlink(missing_ok=True)
        _record(home, None)
    else:
        _write(manager.path, old)
    manager.forget()


def _record(home: Path, manager: ServiceManager | None) -> None:
    """What ``hermes gateway status`` says of the service (:mod:`hermes_commons.running`).
    Only a note: one that cannot be written is said in one line, and changes nothing else."""
    service = None
    if manager is not None:
        service = {"name": manager.name, "kind": manager.kind, "path": str(manager.path)}
    try:
        record_service(home, GATEWAY, service)
    except OSError as exc:
        click.echo(
            f"Note: cannot write {home / GATEWAY / 'service.json'} ({exc.strerror or exc}): "
            "hermes gateway status will not name the service (hermes status does).",
            err=True,
        )


def _installed(home: Path) -> ServiceManager:
    manager = _manager(home)
    if not manager.path.exists():
        raise ServiceError(
            f"no {manager.kind} is installed for this home ({manager.path}); install it with: "
            "hermes gateway install (or run it in the foreground: hermes gateway run)"
        )
    return manager


@click.command()
def uninstall() -> None:
    """Stop the gateway's service, and remove it: it no longer starts at login."""
    home = Path(_context().home)
    try:
        manager = _manager(home)
        if not manager.path.exists():
            _record(home, None)
            click.echo(f"No {manager.kind} is installed for this home ({manager.path}).")
            return
        try:
            manager.reachable()
        except ServiceError:
            if manager.enabled_on_disk():
                raise
            # Never enabled (install --no-start) and no manager to ask: only the file is left.
            manager.path.unlink()
            _record(home, None)
            click.echo(f"Removed {manager.path} (it was never enabled).")
            return
        manager.remove()
        manager.path.unlink()
        manager.forget()
        _record(home, None)
    except ServiceError as exc:
        raise _fail(exc) from None
    click.echo(
        f"Stopped and removed {manager.name} ({manager.path}); its logs stay in {home / 'logs'}."
    )


def _bring_up(restart: bool) -> tuple[ServiceManager, int]:
    """Start (or restart) this home's installed service and wait until it serves."""
    home = Path(_context().home)
    try:
        manager = _installed(home)
        manager.reachable()
        _refuse_hand_started(home, manager)
        _record(home, manager)  # installed by an older Hermes, or by hand: named from now on
        manager.load()
        if restart:
            manager.restart()
        else:
            manager.start()
        return manager, _wait_serving(home, manager)
    except ServiceError as exc:
        raise _fail(exc) from None


@click.command()
def start() -> None:
    """Start the gateway's service (installed with hermes gateway install), now and at each
    login."""
    manager, pid = _bring_up(restart=False)
    click.echo(f"The gateway runs (pid {pid}) as {manager.name}.")


@click.command()
def restart() -> None:
    """Restart the gateway's service: running turns finish (up to gateway.drain_seconds), the
    rest resume once it is back. After an upgrade of Hermes or a plugin."""
    manager, pid = _bring_up(restart=True)
    click.echo(f"Restarted: the gateway runs (pid {pid}) as {manager.name}.")
