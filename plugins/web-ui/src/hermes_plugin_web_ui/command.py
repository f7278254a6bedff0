"""``hermes web``: the web UI on its own, in the foreground."""

from __future__ import annotations

import asyncio

import click

from hermes_plugin_web_ui.server import WebUi
from hermes_plugin_web_ui.settings import settings_from
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext
from hermes_sdk.service import ServiceNotConfigured, serve_in_foreground

__all__ = ["web"]


@click.command(help="Open Hermes in the browser: chat, sessions, status (Ctrl+C stops it).")
@click.option(
    "--host", default=None, help="Address to listen on  [default: web_ui.host, 127.0.0.1]"
)
@click.option("--port", type=int, default=None, help="Port  [default: web_ui.port, 8650]")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the browser too.")
def web(host: str | None, port: int | None, open_browser: bool) -> None:
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    try:
        settings = settings_from(
            context.config.get("web_ui") or {},
            context.secrets,
            home=context.home,
            host=host,
            port=port,
        )
    except ServiceNotConfigured as exc:
        raise click.ClickException(str(exc)) from None
    if context.open_runtime is None:
        raise click.ClickException("this Hermes cannot host front-ends (upgrade hermes-kernel)")
    server = WebUi(settings)

    def listening() -> None:
        login = "log in with WEB_UI_KEY" if settings.key else "the URL logs you in"
        click.echo(f"hermes web: {server.login_url} ({login}); Ctrl+C stops it", err=True)
        if open_browser:
            import webbrowser

            webbrowser.open(server.login_url)

    try:
        asyncio.run(
            serve_in_foreground(
                server,
                context.open_runtime,
                server.ready,
                where=f"{settings.host}:{settings.port}",
                on_ready=listening,
            )
        )
    except ServiceNotConfigured as exc:  # the port is taken, the address is not ours ...
        raise click.ClickException(str(exc)) from None
    click.echo("hermes web: stopped", err=True)
