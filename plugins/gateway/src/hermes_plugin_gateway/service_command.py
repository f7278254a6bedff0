"""``hermes gateway install | uninstall | start | restart``, and the service's part of ``stop``
and ``status``: the gateway of this home as a service of the user's service manager (a
systemd user service, a launchd agent). Each either does all it says or, with one line
saying why and what to do, nothing: no unit is left half-written or half-installed."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import click

from hermes_plugin_gateway.service import (
    ActiveState,
    ServiceError,
    ServiceManager,
    changes,
    manager_for,
    plan_service,
    service_slug,
)
from hermes_plugin_gateway.settings import gateway_settings
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext

__all__ = ["install", "restart", "service_state", "start", "stop_service", "uninstall"]

SERVING_SECONDS = 30.0
"""How long start waits for the gateway to say it serves (its status file)."""


def _context() -> CommandContext:
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    return context


def _manager(home: Path) -> ServiceManager:
    return manager_for(service_slug(home, Path.home()), os.environ)


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
    from hermes_plugin_gateway.status import running_pid

    pid = running_pid(home)
    if pid is not None and pid != manager.main_pid():
        raise ServiceError(
            f"a gateway started by hand runs for this home (pid {pid}); "
            "stop it first: hermes gateway stop"
        )


def _wait_serving(home: Path, manager: ServiceManager) -> int:
    """The gateway's pid once its status file says it serves; ServiceError if it fails."""
    from hermes_plugin_gateway.status import read_status, running_pid

    deadline = time.monotonic() + SERVING_SECONDS
    state: ActiveState | None = "starting"
    while time.monotonic() < deadline:
        pid = running_pid(home)
        report = read_status(home) or {}
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
        settings = gateway_settings(context.config)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        plan = plan_service(
            Path(context.home),
            drain_seconds=settings.drain_seconds,
            configured_cwd=settings.cwd,
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
            _put_back(manager, old)
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


def _put_back(manager: ServiceManager, old: str | None) -> None:
    """The manager refused the new file: what was there before is there again."""
    if old is None:
        manager.path.unlink(missing_ok=True)
    else:
        _write(manager.path, old)
    manager.forget()


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
            click.echo(f"No {manager.kind} is installed for this home ({manager.path}).")
            return
        try:
            manager.reachable()
        except ServiceError:
            if manager.enabled_on_disk():
                raise
            # Never enabled (install --no-start) and no manager to ask: only the file is left.
            manager.path.unlink()
            click.echo(f"Removed {manager.path} (it was never enabled).")
            return
        manager.remove()
        manager.path.unlink()
        manager.forget()
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


def stop_service(home: Path) -> bool:
    """Stop this home's service if it runs; False if there is none to stop (not installed,
    not running, or no manager to ask), and ``hermes gateway stop`` stops by pid."""
    try:
        manager = _manager(home)
        if not manager.path.exists() or manager.state() not in ("active", "starting"):
            return False
        manager.stop()
    except ServiceError as exc:
        raise _fail(exc) from None
    click.echo(
        f"Stopped the gateway ({manager.name}); it starts again at the next login, "
        "or with: hermes gateway start"
    )
    return True


def service_state(home: Path) -> dict[str, str | None] | None:
    """This home's service for ``hermes gateway status``: None when none is installed."""
    try:
        manager = _manager(home)
    except ServiceError:
        return None
    if not manager.path.exists():
        return None
    return {
        "name": manager.name,
        "kind": manager.kind,
        "path": str(manager.path),
        "state": manager.state(),
    }
