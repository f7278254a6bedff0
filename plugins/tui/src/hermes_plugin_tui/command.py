"""``hermes tui``: the full-screen interface, on the runtime this Hermes offers."""

from __future__ import annotations

import sys

import click

from hermes_sdk.events import COMMAND_CONTEXT, CommandContext


@click.command()
@click.option("-r", "--resume", metavar="ID", help="Open this session (id, prefix or title).")
@click.option("-m", "--model", metavar="NAME", help="Use this model (strict: no fallback).")
@click.option("--provider", metavar="NAME", help="Use this provider (strict: no fallback).")
@click.option("--light", is_flag=True, help="Start with the light theme (Ctrl+T switches).")
@click.pass_context
def tui(
    ctx: click.Context, resume: str | None, model: str | None, provider: str | None, light: bool
) -> None:
    """A full-screen terminal interface: sessions on the left, the conversation with tool
    calls folded, approvals as dialogs, a status line; keys in the footer."""
    context: CommandContext = ctx.meta[COMMAND_CONTEXT]
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        raise click.ClickException("hermes tui needs a terminal; use hermes chat -q TEXT")
    if context.open_runtime is None:
        raise click.ClickException("this Hermes offers commands no runtime")
    from hermes_commons.leaving import run_until_done
    from hermes_plugin_tui.app import TuiOptions, run_tui

    options = TuiOptions(resume=resume, provider=provider, model=model, light=light)
    ctx.exit(run_until_done(run_tui(context, options)))
