"""``hermes chat``: talk to the agent, interactively or once (``-q``) for scripts."""

from __future__ import annotations

import sys

import click

from hermes_kernel.cli.main import app_of


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
@click.option(
    "--yolo", is_flag=True, help="Tools do not ask before dangerous commands (for tools that ask)."
)
@click.option("--safe-mode", is_flag=True, help="Load no plugins but those in HERMES_LOAD_PLUGINS.")
@click.option("--profile", metavar="NAME", help="Use the named profile.")
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
    safe_mode: bool,
    profile: str | None,
) -> None:
    """Chat with the agent. Without -q: an interactive chat (type /help in it)."""
    from hermes_kernel.chat.agent import ChatOptions

    root = ctx.find_root()
    if safe_mode:
        root.params["safe_mode"] = True
    if profile:
        root.params["profile"] = profile
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
    app = app_of(ctx)
    if query is None and not sys.stdin.isatty():
        query = "-"  # piped in: answer it once, like -q -
    if query is not None:
        from hermes_kernel.chat.oneshot import run_oneshot

        _leave(ctx, run_oneshot(app, options, read_query(query), as_json))
    if as_json:
        raise click.UsageError("--json needs -q")
    from hermes_kernel.chat.repl import run_interactive

    _leave(ctx, run_interactive(app, options))


def _leave(ctx: click.Context, code: int) -> None:
    from hermes_kernel.chat.loop import leave_now_if_stuck

    leave_now_if_stuck(code, app_of(ctx).close)
    ctx.exit(code)
