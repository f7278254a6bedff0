"""``hermes gateway``: run the process that serves chat platforms, see how it is doing, stop it.
Installing it as a service of the user's service manager (``hermes gateway install``,
``start``, ``restart``, ``uninstall``) comes from the service-host plugin, which adds those
subcommands to this group."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from datetime import datetime
from pathlib import Path

import click

from hermes_plugin_gateway.settings import GatewayConfig, gateway_settings
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext

__all__ = ["gateway"]


def _context() -> CommandContext:
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    return context


@click.group()
def gateway() -> None:
    """Serve the agent on chat platforms (Telegram ...): run, status, stop. With the
    service-host plugin, install it as a service (systemd, launchd), then start, restart,
    uninstall."""


@gateway.command()
def run() -> None:
    """Run the gateway in the foreground until stopped (SIGTERM or Ctrl+C drain it)."""
    from hermes_plugin_gateway.status import AlreadyRunning, PidLock

    context = _context()
    try:
        settings = gateway_settings(context.config)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    context.log_to("gateway")
    lock = PidLock(Path(context.home))
    try:
        lock.acquire()
    except AlreadyRunning as exc:
        raise click.ClickException(str(exc)) from None
    try:
        asyncio.run(_serve(context, settings))
    finally:
        lock.release()


async def _serve(context: CommandContext, settings: GatewayConfig) -> None:
    from hermes_commons.leaving import Leaving
    from hermes_plugin_gateway.gateway import open_gateway

    stop = asyncio.Event()
    async with open_gateway(context, settings) as service:

        def stopping() -> None:
            service.runtime.stop_hooks()  # hooks get a short deadline while turns drain
            stop.set()

        # Draining may take drain_seconds, background reviews as long again, closing the
        # rest a few seconds more: then it leaves anyway.
        Leaving(stopping, 2 * settings.drain_seconds + 15).install(asyncio.get_running_loop())
        click.echo(
            f"hermes gateway running (pid {os.getpid()}); stop with: hermes gateway stop",
            err=True,
        )
        await service.run(stop)
    click.echo("hermes gateway stopped", err=True)


def _ago(timestamp: float | None) -> str:
    if not timestamp:
        return "-"
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")


@gateway.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Whether the gateway runs, and how each platform is doing. Exit status 1 if stopped."""
    from hermes_plugin_gateway.status import installed_service, read_status, running_pid

    home = Path(_context().home)
    pid = running_pid(home)
    report = read_status(home) or {}
    service = installed_service(home)
    report = {**report, "running": pid is not None, "pid": pid, "service": service}
    if as_json:
        click.echo(json.dumps(report, indent=2))
        ctx.exit(0 if pid else 1)
    if pid is None:
        how = "hermes gateway start" if service else "hermes gateway run"
        click.echo(f"The gateway is not running. Start it with: {how}")
        _service_line(service)
        ctx.exit(1)
    click.echo(f"The gateway runs (pid {pid}) since {_ago(report.get('started_at'))}.")
    _service_line(service)
    _worker_line(report)
    platforms = report.get("platforms") or {}
    if not platforms:
        click.echo("No platform is enabled.")
    _states(platforms)
    services = report.get("services") or {}
    if services:
        click.echo("Services:")
        _states(services)
    click.echo(
        f"Turns running: {report.get('turns_running', 0)}; messages waiting: "
        f"{report.get('inbox_queued', 0)}; replies not yet delivered: "
        f"{report.get('outbox_pending', 0) + report.get('outbox_attempting', 0)}; "
        f"abandoned (last week): {report.get('outbox_abandoned', 0)}."
    )


def _worker_line(report: dict[str, object]) -> None:
    """Among workers sharing a store in PostgreSQL: this one's part (alone: nothing)."""
    peers = int(str(report.get("peers") or 0))
    if not peers and report.get("leading") is not False:
        return
    part = (
        "holds the chat platforms"
        if report.get("leading")
        else "runs turns; another worker holds the chat platforms"
    )
    others = f"{peers} other worker{'s' if peers != 1 else ''}"
    click.echo(f"This worker ({report.get('worker')}) {part}; {others} share the store.")


def _service_line(service: dict[str, str] | None) -> None:
    if service is not None:
        kind = service.get("kind") or "service"
        click.echo(f"Service: {service['name']} ({kind}), {service.get('path', '?')}")


def _states(parts: dict[str, dict[str, object]]) -> None:
    for name, state in sorted(parts.items()):
        line = f"  {name}: {state.get('state')}"
        if state.get("error"):
            line += f" ({state['error']})"
        if state.get("restarts"):
            line += f"; restarted {state['restarts']} times"
        click.echo(line)


@gateway.command()
@click.option(
    "--timeout",
    type=float,
    help="Seconds to wait for it to finish (default: as long as its drain may take, "
    "2 x gateway.drain_seconds + 30).",
)
def stop(timeout: float | None) -> None:
    """Stop the gateway: running turns finish (up to gateway.drain_seconds), the rest resume
    at the next start. Its service, if installed, starts it again at the next login."""
    from hermes_plugin_gateway.status import installed_service, running_pid

    context = _context()
    home = Path(context.home)
    if timeout is None:
        try:
            timeout = 2 * gateway_settings(context.config).drain_seconds + 30
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
    pid = running_pid(home)
    if pid is None:
        service = installed_service(home)
        where = (
            f" (its service {service['name']} may be starting: hermes status)" if service else ""
        )
        click.echo(f"The gateway is not running.{where}")
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if running_pid(home) is None:
            click.echo(f"Stopped the gateway (pid {pid}).{_again(installed_service(home))}")
            return
        time.sleep(0.2)
    raise click.ClickException(
        f"the gateway (pid {pid}) is still draining after {timeout:.0f} s; "
        f"wait, or end it with: kill -9 {pid} (interrupted turns resume at the next start)"
    )


def _again(service: dict[str, str] | None) -> str:
    """Run by a service, it left cleanly (the manager does not restart it): when it is back."""
    if service is None:
        return ""
    return (
        f" Its service {service['name']}, if enabled, starts it again at the next login; "
        "now: hermes gateway start"
    )
