"""``hermes chat``: talk to the agent, interactively or once (``-q``) for scripts."""

from __future__ import annotations

import sys

import click

from hermes_plugin_chat.session import ChatOptions
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext


def read_query(query: str) -> str:
    """``-`` reads the query from stdin."""
    if query != "-":
        return query
    text = sys.stdin.read()
    if not text.strip():
        raise click.UsageError("the query read from stdin is empty")
    return text


@click.command()
@click.option("-q", "--query", metavar="TEXT", help="Ask once, print the reply, exit ('-': stdin).")
@click.option("--json", "as_json", is_flag=True, help="With -q: print one JSON object.")
@click.option("--resume", metavar="ID", help="Continue the session with this id (or prefix).")
@click.option("-c", "--continue", "continue_last", is_flag=True, help="Continue the last chat.")
@click.option("--model", metavar="NAME", help="Use this model (strict: no fallback).")
@click.option("--provider", metavar="NAME", help="Use this provider (strict: no fallback).")
@click.option(
    "--toolsets", metavar="A,B", help="Give the model only these toolsets' tools ('' for none)."
)
@click.option("--yolo", is_flag=True, help="Run dangerous commands without asking for approval.")
@click.pass_context
def chat(
    ctx: click.Context,
    query: str | None,
    as_json: bool,
    resume: str | None,
    continue_last: bool,
    model: str | None,
    provider: str | None,
    toolsets: str | None,
    yolo: bool,
) -> None:
    """Chat with the agent. Without -q: an interactive chat (type /help in it)."""
    if resume and continue_last:
        raise click.UsageError("use --resume ID or --continue, not both")
    options = ChatOptions(
        provider=provider,
        model=model,
        toolsets=None
        if toolsets is None
        else tuple(name.strip() for name in toolsets.split(",") if name.strip()),
        yolo=yolo,
        resume=resume,
        continue_last=continue_last,
    )
    context: CommandContext = ctx.meta[COMMAND_CONTEXT]
    if query is None and not sys.stdin.isatty():
        query = "-"  # piped in: answer it once, like -q -
    if query is not None:
        from hermes_plugin_chat.oneshot import run_oneshot

        _leave(ctx, context, run_oneshot(context, options, read_query(query), as_json))
    if as_json:
        raise click.UsageError("--json needs -q")
    from hermes_plugin_chat.repl import run_interactive

    _leave(ctx, context, run_interactive(context, options))


def _leave(ctx: click.Context, context: CommandContext, code: int) -> None:
    from hermes_sdk.leaving import leave_now_if_stuck

    leave_now_if_stuck(code, context.before_exit)
    ctx.exit(code)
