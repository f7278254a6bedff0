"""``hermes web``: the web UI on its own, in the foreground."""

from __future__ import annotations

import asyncio
import contextlib
import signal

import click

from hermes_plugin_web_ui.server import WebUi
from hermes_plugin_web_ui.settings import settings_from
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext
from hermes_sdk.service import ServiceNotConfigured

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
    asyncio.run(_serve(WebUi(settings), context, open_browser))


async def _serve(server: WebUi, context: CommandContext, open_browser: bool) -> None:
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
                raise click.ClickException(
                    f"cannot listen on {where}: {exc.strerror or exc}"
                ) from None
        login = "log in with WEB_UI_KEY" if server.settings.key else "the URL logs you in"
        click.echo(f"hermes web: {server.login_url} ({login}); Ctrl+C stops it", err=True)
        if open_browser:
            import webbrowser

            webbrowser.open(server.login_url)
        await asyncio.wait(
            {serving, asyncio.ensure_future(stop.wait())}, return_when=asyncio.FIRST_COMPLETED
        )
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
    click.echo("hermes web: stopped", err=True)
