"""``hermes serve``: the API server on its own, in the foreground."""

from __future__ import annotations

import asyncio
import contextlib
import signal

import click

from hermes_plugin_api_server.server import ApiServer
from hermes_plugin_api_server.settings import settings_from
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext
from hermes_sdk.service import ServiceNotConfigured

__all__ = ["serve"]


@click.command(help="Serve the agent as an OpenAI-compatible HTTP API (Ctrl+C stops it).")
@click.option(
    "--host", default=None, help="Address to listen on  [default: api_server.host, 127.0.0.1]"
)
@click.option("--port", type=int, default=None, help="Port  [default: api_server.port, 8642]")
@click.option(
    "--no-auth",
    is_flag=True,
    default=None,
    help="Serve without API keys (refused unless the host is a loopback address).",
)
def serve(host: str | None, port: int | None, no_auth: bool | None) -> None:
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    try:
        settings = settings_from(
            context.config.get("api_server") or {},
            context.secrets,
            host=host,
            port=port,
            no_auth=no_auth,
        )
    except ServiceNotConfigured as exc:
        raise click.ClickException(str(exc)) from None
    if context.open_runtime is None:
        raise click.ClickException("this Hermes cannot host front-ends (upgrade hermes-kernel)")
    server = ApiServer(settings)
    asyncio.run(_serve(server, context))


async def _serve(server: ApiServer, context: CommandContext) -> None:
    assert context.open_runtime is not None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    async with context.open_runtime() as runtime:
        serving = asyncio.ensure_future(server.run(runtime))
        ready = asyncio.ensure_future(server.ready.wait())
        await asyncio.wait({serving, ready}, return_when=asyncio.FIRST_COMPLETED)
        if serving.done():
            ready.cancel()
            try:
                serving.result()
            except OSError as exc:  # the port is taken, the address is not ours ...
                where = f"{server.settings.host}:{server.settings.port}"
                reason = exc.strerror or exc
                raise click.ClickException(f"cannot listen on {where}: {reason}") from None
        click.echo("hermes serve: Ctrl+C stops it", err=True)
        await asyncio.wait(
            {serving, asyncio.ensure_future(stop.wait())}, return_when=asyncio.FIRST_COMPLETED
        )
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
    click.echo("hermes serve: stopped", err=True)
