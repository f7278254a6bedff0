"""``hermes sessions``: the stored chats, searched, shown, exported, renamed, counted, pruned
and deleted.

Each command opens the home's :class:`~hermes_sdk.runtime.SessionHistory` (no agent, so no
model is needed) for as long as it runs. An unknown or ambiguous id, or a session busy with
a turn, is one line and exit status 1.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal, TypeVar

import click

from hermes_plugin_sessions.render import (
    compaction_mark,
    details,
    list_line,
    list_row,
    search_line,
    session_stats,
    stats_lines,
    transcript_lines,
    write_export,
)
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext
from hermes_sdk.runtime import SessionBusy, SessionHistory, SessionNotFound, SessionSummary
from hermes_sdk.tooling import HistoryQuery

T = TypeVar("T")


def _with_history(work: Callable[[SessionHistory], Awaitable[T]]) -> T:
    """Run ``work`` on this home's history; its domain errors end the command as one line."""
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    open_history = context.open_history
    if open_history is None:
        raise click.ClickException(
            "this Hermes cannot open its session history; upgrade hermes-kernel"
        )

    async def main() -> T:
        async with open_history() as history:
            return await work(history)

    try:
        return asyncio.run(main())
    except (SessionNotFound, SessionBusy) as exc:
        raise click.ClickException(str(exc)) from None


@click.group()
def sessions() -> None:
    """Stored chat sessions. ID may be any unique start of a session id."""


@sessions.command("list")
@click.option("-n", "--limit", default=20, show_default=True, help="How many, newest first.")
@click.option("--source", metavar="NAME", help="Only sessions from this source (cli, ...).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def list_sessions(limit: int, source: str | None, as_json: bool) -> None:
    """The newest sessions: id, start, messages, model, cost and what each is about."""

    async def read(history: SessionHistory) -> list[tuple[SessionSummary, str]]:
        # The reviews of finished turns are listed too: what they learned is visible here.
        found = await history.sessions(source=source, limit=limit, background=True)
        openings = await history.openings([session.session_id for session in found])
        return [(session, openings.get(session.session_id, "")) for session in found]

    listed = _with_history(read)
    if as_json:
        for session, opening in listed:
            click.echo(json.dumps(list_row(session, opening), ensure_ascii=False))
        return
    if not listed:
        click.echo("No sessions yet. Start one with: hermes chat")
        return
    for session, opening in listed:
        click.echo(list_line(session, opening))


@sessions.command("show")
@click.argument("session_id", metavar="ID")
def show(session_id: str) -> None:
    """A session's details, usage and cost, and its whole transcript."""

    async def read(history: SessionHistory) -> list[str]:
        session = await history.find_session(session_id)
        found = session.session_id
        messages = await history.messages(found)
        marks = {mark.boundary_seq: mark for mark in await history.compactions(found)}
        children = await history.children(found)
        lines = [*details(session, await history.spending(found), children, len(marks)), ""]
        for message in messages:
            lines.extend(transcript_lines(message))
            mark = marks.get(message.seq)
            if mark is not None:
                lines.append(compaction_mark(mark))
        return lines

    for line in _with_history(read):
        click.echo(line)


@sessions.command("search")
@click.argument("query")
@click.option("-n", "--limit", default=20, show_default=True, help="How many matches at most.")
@click.option("--session", "session_id", metavar="ID", help="Search one session only.")
@click.option(
    "--mode",
    type=click.Choice(["auto", "words", "trigrams"]),
    default="auto",
    show_default=True,
    help="words: ranked; trigrams: substrings, code, CJK.",
)
def search(
    query: str, limit: int, session_id: str | None, mode: Literal["auto", "words", "trigrams"]
) -> None:
    """Full-text search over every message, with the matches highlighted."""

    async def find(history: SessionHistory) -> list[str]:
        scope = (await history.find_session(session_id)).session_id if session_id else None
        asked = HistoryQuery(text=query, session_id=scope, limit=limit, mode=mode)
        color = sys.stdout.isatty()
        return [
            search_line(hit.session_id, hit.created_at, hit.role, hit.snippet, color=color)
            for hit in await history.search(asked, background=True)
        ]

    lines = _with_history(find)
    if not lines:
        click.echo(f"Nothing matches {query!r}.")
        return
    for line in lines:
        click.echo(line)


@sessions.command("export")
@click.argument("session_id", metavar="ID")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "md"]),
    default="jsonl",
    show_default=True,
    help="jsonl: one message per line; md: a readable Markdown transcript.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here, not stdout.")
def export(session_id: str, fmt: str, output: str | None) -> None:
    """Write a session's transcript as JSONL or Markdown."""

    async def read(history: SessionHistory) -> int:
        session = await history.find_session(session_id)
        messages = await history.messages(session.session_id)
        if not output:
            write_export(sys.stdout, fmt, session, messages)
            return len(messages)
        try:
            with Path(output).open("w", encoding="utf-8") as handle:
                write_export(handle, fmt, session, messages)
        except OSError as exc:
            raise click.ClickException(f"cannot write {output}: {exc.strerror}") from None
        return len(messages)

    written = _with_history(read)
    if output:
        click.echo(f"wrote {written} messages to {output}", err=True)


@sessions.command("delete")
@click.argument("session_ids", metavar="ID...", nargs=-1, required=True)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
def delete(session_ids: tuple[str, ...], yes: bool) -> None:
    """Delete sessions with their messages; search forgets them too."""

    async def remove(history: SessionHistory) -> list[str]:
        found = [(await history.find_session(ref)).session_id for ref in session_ids]
        if not yes:
            click.confirm(f"Delete {len(found)} session(s) ({', '.join(found)})?", abort=True)
        # All or none: a turn running on any of them deletes nothing (SessionBusy).
        await history.delete_sessions(found)
        return list(dict.fromkeys(found))

    for deleted in _with_history(remove):
        click.echo(f"deleted {deleted}")


@sessions.command("rename")
@click.argument("session_id", metavar="ID")
@click.argument("title")
def rename(session_id: str, title: str) -> None:
    """Give a session a title (an empty TITLE removes it)."""

    async def retitle(history: SessionHistory) -> SessionSummary:
        session = await history.find_session(session_id)
        return await history.set_title(session.session_id, title)

    renamed = _with_history(retitle)
    shown = f"titled {renamed.title!r}" if renamed.title else "untitled"
    click.echo(f"{renamed.session_id}: {shown}")


_EVERY = 10_000_000  # "all of them", for the history's limit


@sessions.command("prune")
@click.option(
    "--older-than",
    "days",
    type=click.FloatRange(min=0, min_open=True),
    required=True,
    metavar="DAYS",
    help="Delete sessions that ended more than DAYS days ago.",
)
@click.option("--source", metavar="NAME", help="Only sessions from this source (cli, ...).")
@click.option("--dry-run", is_flag=True, help="Only say what would be deleted.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
def prune(days: float, source: str | None, dry_run: bool, yes: bool) -> None:
    """Delete the sessions that ended, and last had a message, more than DAYS days ago, with
    their messages. A session that never ended (a chat still open, or one a crash left), one
    resumed since, and one running a turn are kept."""
    cutoff = time.time() - days * 86_400

    async def work(history: SessionHistory) -> tuple[list[SessionSummary], int, list[str]]:
        found = await history.sessions(source=source, limit=_EVERY, background=True)
        ended = [s for s in found if s.ended_at is not None and s.ended_at < cutoff]
        old = []
        for session in ended:  # one resumed since it ended is in use: its last word counts
            messages = await history.messages(session.session_id)
            if not messages or messages[-1].created_at < cutoff:
                old.append(session)
        never_ended = sum(1 for s in found if s.ended_at is None and s.started_at < cutoff)
        if dry_run or not old:
            return old, never_ended, []
        if not yes:
            click.confirm(
                f"Delete {len(old)} session(s) that ended over {days:g} days ago?", abort=True
            )
        busy = []
        for start in range(0, len(old), 200):
            batch = [s.session_id for s in old[start : start + 200]]
            try:
                await history.delete_sessions(batch)
            except SessionBusy:  # all or none: one by one, keeping the busy ones
                for session_id in batch:
                    try:
                        await history.delete_sessions([session_id])
                    except SessionBusy:
                        busy.append(session_id)
        return old, never_ended, busy

    old, never_ended, busy = _with_history(work)
    verb = "would delete" if dry_run else "deleted"
    click.echo(f"{verb} {len(old) - len(busy)} session(s) that ended over {days:g} days ago")
    if dry_run:
        for session in old:
            click.echo(
                f"  {session.session_id}  {session.source}  {session.message_count} messages"
            )
    for session_id in busy:
        click.echo(f"kept {session_id}: a turn runs on it now")
    if never_ended:
        click.echo(
            f"kept {never_ended} session(s) started over {days:g} days ago that never ended "
            "(still open, or left by a crash): hermes sessions delete ID removes one"
        )


@sessions.command("stats")
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
def stats(as_json: bool) -> None:
    """How many sessions, messages, tool calls, tokens and how much cost, by source."""

    async def read(history: SessionHistory) -> list[SessionSummary]:
        return await history.sessions(limit=_EVERY, background=True)

    report = session_stats(_with_history(read))
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False))
        return
    for line in stats_lines(report):
        click.echo(line)
