"""``hermes chat``: talk to the agent, interactively or once (``-q``) for scripts."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from hermes_plugin_chat.session import ChatOptions
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext

if TYPE_CHECKING:
    from hermes_plugin_chat.worktree import Worktree
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
    "-w",
    "--worktree",
    is_flag=True,
    help="Work in a new git worktree of this repository, so your checkout is not touched.",
)
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
    worktree: bool,
    images: tuple[str, ...],
    files: tuple[str, ...],
) -> None:
    """Chat with the agent. Without -q: an interactive chat (type /help in it)."""
    if resume and continue_last:
        raise click.UsageError("use --resume ID or --continue, not both")
    if worktree and (resume or continue_last):
        raise click.UsageError(
            "--worktree starts a new session in a new worktree; a session continued with "
            "--resume or --continue keeps working where it was"
        )
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
        # Text piped in is data, not the user's words: its @-words are never attached.
        references=query != "-" and (query is not None or sys.stdin.isatty()),
    )
    if query is None and not sys.stdin.isatty():
        query = "-"  # piped in: answer it once, like -q -
    if query is None and as_json:
        raise click.UsageError("--json needs -q")
    made = _worktree() if worktree else None
    try:
        if query is not None:
            from hermes_plugin_chat.oneshot import run_oneshot

            code = run_oneshot(context, options, read_query(query), as_json)
        else:
            from hermes_plugin_chat.repl import run_interactive

            code = run_interactive(context, options)
    finally:
        if made is not None:
            print(f"hermes: {_finish(made)}", file=sys.stderr)
    _leave(ctx, context, code)


def _worktree() -> Worktree:
    """Make the session's worktree and work in it; a failure ends the command in one line."""
    import os
    from pathlib import Path

    from hermes_plugin_chat.worktree import WorktreeError, make_worktree

    try:
        made = make_worktree(Path.cwd())
    except WorktreeError as exc:
        print(f"hermes: error: {exc}", file=sys.stderr)
        raise click.exceptions.Exit(1) from None
    os.chdir(made.path)
    print(f"hermes: working in {made.path} (branch {made.branch})", file=sys.stderr)
    return made


def _finish(made: Worktree) -> str:
    from hermes_plugin_chat.worktree import WorktreeError

    try:
        return made.finish()
    except WorktreeError as exc:
        return f"the worktree {made.path} is kept ({exc})"


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
