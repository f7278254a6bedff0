"""``hermes chat``: talk to the agent, interactively or once (``-q``) for scripts."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from hermes_plugin_chat.session import ChatOptions
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext

if TYPE_CHECKING:
    from hermes_sdk.media import Attachment


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
@click.option("-r", "--resume", metavar="ID", help="Continue the session with this id (or prefix).")
@click.option("-c", "--continue", "continue_last", is_flag=True, help="Continue the last chat.")
@click.option("--model", metavar="NAME", help="Use this model (strict: no fallback).")
@click.option("--provider", metavar="NAME", help="Use this provider (strict: no fallback).")
@click.option(
    "--toolsets", metavar="A,B", help="Give the model only these toolsets' tools ('' for none)."
)
@click.option(
    "-s",
    "--skills",
    "skills",
    metavar="A,B",
    multiple=True,
    help="Load these skills into a new session from its start (comma-separated or repeated).",
)
@click.option("--yolo", is_flag=True, help="Run dangerous commands without asking for approval.")
@click.option(
    "--image",
    "images",
    metavar="PATH",
    multiple=True,
    help="Send this image with the (first) message; repeatable.",
)
@click.option(
    "--file",
    "files",
    metavar="PATH",
    multiple=True,
    help="Send this file (a PDF, DOCX, CSV, text, audio) with the (first) message; repeatable.",
)
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
    skills: tuple[str, ...],
    yolo: bool,
    images: tuple[str, ...],
    files: tuple[str, ...],
) -> None:
    """Chat with the agent. Without -q: an interactive chat (type /help in it)."""
    if resume and continue_last:
        raise click.UsageError("use --resume ID or --continue, not both")
    context: CommandContext = ctx.meta[COMMAND_CONTEXT]
    attachments = _attachments(context, images, files) if images or files else ()
    options = ChatOptions(
        provider=provider,
        model=model,
        toolsets=None
        if toolsets is None
        else tuple(name.strip() for name in toolsets.split(",") if name.strip()),
        skills=tuple(
            dict.fromkeys(n.strip() for given in skills for n in given.split(",") if n.strip())
        ),
        yolo=yolo,
        resume=resume,
        continue_last=continue_last,
        attachments=attachments,
    )
    if query is None and not sys.stdin.isatty():
        query = "-"  # piped in: answer it once, like -q -
    if query is not None:
        from hermes_plugin_chat.oneshot import run_oneshot

        _leave(ctx, context, run_oneshot(context, options, read_query(query), as_json))
    if as_json:
        raise click.UsageError("--json needs -q")
    from hermes_plugin_chat.repl import run_interactive

    _leave(ctx, context, run_interactive(context, options))


def _attachments(
    context: CommandContext, images: tuple[str, ...], files: tuple[str, ...]
) -> tuple[Attachment, ...]:
    """The files, checked (type sniffed, size capped) and kept in the media cache; a refused
    one ends the command with its one line, before anything is sent."""
    from hermes_sdk.media import MediaCache, MediaRefused

    cache = MediaCache.of_home(context.home, context.config)
    try:
        return (
            *(cache.ingest_path(path, expect="image") for path in images),
            *(cache.ingest_path(path) for path in files),
        )
    except MediaRefused as exc:
        print(f"hermes: error: {exc}", file=sys.stderr)
        raise click.exceptions.Exit(1) from None


def _leave(ctx: click.Context, context: CommandContext, code: int) -> None:
    from hermes_commons.leaving import leave_now_if_stuck

    leave_now_if_stuck(code, context.before_exit)
    ctx.exit(code)
