"""``hermes serve``: the API server on its own, in the foreground."""

from __future__ import annotations

import asyncio

import click

from hermes_plugin_api_server.server import ApiServer
from hermes_plugin_api_server.settings import settings_from
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext
from hermes_sdk.service import ServiceNotConfigured, serve_in_foreground

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
    try:
        asyncio.run(
            serve_in_foreground(
                server,
                context.open_runtime,
                server.ready,
                where=f"{settings.host}:{settings.port}",
                on_ready=lambda: click.echo("hermes serve: Ctrl+C stops it", err=True),
            )
        )
    except ServiceNotConfigured as exc:  # the port is taken, the address is not ours ...
        raise click.ClickException(str(exc)) from None
    click.echo("hermes serve: stopped", err=True)
