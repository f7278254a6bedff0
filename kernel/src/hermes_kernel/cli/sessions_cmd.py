"""``hermes sessions``: the stored chats, searched, shown, exported and deleted."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from hermes_kernel.cli.main import app_of

if TYPE_CHECKING:
    from hermes_kernel.store.compactions import CompactionRecord
    from hermes_kernel.store.messages import Message
    from hermes_kernel.store.sessions import Session
    from hermes_kernel.store.state import StateStore


@contextmanager
def _store(ctx: click.Context) -> Iterator[StateStore]:
    from hermes_kernel.store.state import StateStore, state_db_path

    store = StateStore(state_db_path(app_of(ctx).settings.home))
    try:
        yield store
    finally:
        store.close()


def _find(store: StateStore, reference: str) -> Session:
    try:
        found = store.sessions.find(reference)
    except KeyError as exc:
        raise click.ClickException(str(exc.args[0])) from None
    if found is None:
        raise click.ClickException(
            f"no session {reference!r}; list them with: hermes sessions list"
        )
    return found


@click.group()
def sessions() -> None:
    """Stored chat sessions. ID may be any unique start of a session id."""


@sessions.command("list")
@click.option("-n", "--limit", default=20, show_default=True, help="How many, newest first.")
@click.option("--source", metavar="NAME", help="Only sessions from this source (cli, ...).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.pass_context
def list_sessions(ctx: click.Context, limit: int, source: str | None, as_json: bool) -> None:
    """The newest sessions: id, start, messages, model, cost and what each is about."""
    from hermes_sdk.text import Totals, one_line, when

    with _store(ctx) as store:
        found = store.sessions.recent(limit, source)
        openings = store.sessions.openings([session.id for session in found])
    if as_json:
        for session in found:
            row = {
                "id": session.id,
                "title": session.title,
                "opening": openings.get(session.id, ""),
                "source": session.source,
                "parent_session_id": session.parent_session_id,
                "started_at": session.started_at,
                "ended_at": session.ended_at,
                "messages": session.message_count,
                "provider": session.provider,
                "model": session.model,
                "usage": Totals.of(session).as_json(),
            }
            click.echo(json.dumps(row, ensure_ascii=False))
        return
    if not found:
        click.echo("No sessions yet. Start one with: hermes chat")
        return
    for session in found:
        about = session.title or one_line(openings.get(session.id, "") or "(empty)", 50)
        click.echo(
            f"{session.id}  {when(session.started_at)}  {session.message_count:>4} msgs  "
            f"{Totals.of(session).cost_text():>8}  {session.model or '-'}  {about}"
        )


def _transcript_lines(message: Message) -> Iterator[str]:
    from hermes_sdk.text import one_line, printable

    if message.role == "tool":
        status = message.disposition or "ok"
        yield f"[tool {message.tool_name} · {status}] {one_line(message.content or '', 300)}"
        return
    label = message.role
    if message.finish_reason == "interrupted":
        label += " (interrupted)"
    if message.content:
        yield f"{label}: {printable(message.content)}"
    for call in message.tool_calls or []:
        function = call.get("function", call)
        yield printable(f"{label} calls {function.get('name')}({function.get('arguments', '')})")


@sessions.command("show")
@click.argument("session_id", metavar="ID")
@click.pass_context
def show(ctx: click.Context, session_id: str) -> None:
    """A session's details, usage and cost, and its whole transcript."""
    from hermes_kernel.engine.budget import budget_from_config, spending_line
    from hermes_sdk.text import Totals, when

    with _store(ctx) as store:
        session = _find(store, session_id)
        messages = store.messages.of_session(session.id)
        compactions = {c.boundary_seq: c for c in store.compactions.of_session(session.id)}
        children = store.sessions.children(session.id)
    click.echo(f"Session {session.id}: {session.title or '(untitled)'}")
    click.echo(f"  source: {session.source}; model: {session.provider} / {session.model}")
    ended = f"{when(session.ended_at)} ({session.end_reason})" if session.ended_at else "open"
    click.echo(f"  started: {when(session.started_at)}; ended: {ended}")
    if session.cwd:
        click.echo(f"  directory: {session.cwd}")
    click.echo(f"  {session.message_count} messages, {session.tool_call_count} tool calls")
    click.echo(f"  usage: {Totals.of(session).line()}")
    spending = spending_line(budget_from_config(app_of(ctx).settings.raw.get("budget")), session)
    if spending is not None:
        click.echo(f"  {spending}")
    for child in children:  # work handed to other agents, reviews: labelled by their source
        click.echo(f"  {child.source} {child.id}: {child.title or ''}; {Totals.of(child).line()}")
    if compactions:
        click.echo(
            f"  compacted {len(compactions)} time(s); the model sees a summary of the "
            "messages above each mark"
        )
    click.echo("")
    for message in messages:
        for line in _transcript_lines(message):
            click.echo(line)
        compaction = compactions.get(message.seq)
        if compaction is not None:
            click.echo(_compaction_mark(compaction))


def _compaction_mark(compaction: CompactionRecord) -> str:
    from hermes_sdk.text import when

    how = "by the model" if compaction.by_model else "without a model"
    return (
        f"── compacted here, {when(compaction.created_at)} ({compaction.reason}): "
        f"{compaction.messages_replaced} messages up to this point summarized {how}, "
        f"about {compaction.tokens_before:,} -> {compaction.tokens_after:,} tokens ──"
    )


@sessions.command("search")
@click.argument("query")
@click.option("-n", "--limit", default=20, show_default=True)
@click.option("--session", "session_id", metavar="ID", help="Search one session only.")
@click.option(
    "--mode",
    type=click.Choice(["auto", "words", "trigrams"]),
    default="auto",
    show_default=True,
    help="words: ranked; trigrams: substrings, code, CJK.",
)
@click.pass_context
def search(ctx: click.Context, query: str, limit: int, session_id: str | None, mode: str) -> None:
    """Full-text search over every message, with the matches highlighted."""
    from hermes_kernel.store.search import SearchMode
    from hermes_sdk.text import printable, when

    with _store(ctx) as store:
        scope = _find(store, session_id).id if session_id else None
        hits = store.search(query, mode=SearchMode(mode), session_id=scope, limit=limit)
    if not hits:
        click.echo(f"Nothing matches {query!r}.")
        return
    color = sys.stdout.isatty()
    for hit in hits:
        snippet = " ".join(printable(hit.snippet).split())
        if color:  # the store marks matches [like this]
            snippet = snippet.replace("[", "\x1b[1;33m").replace("]", "\x1b[0m")
        click.echo(f"{hit.session_id}  {when(hit.created_at)}  {hit.role:<9} {snippet}")


def _message_json(message: Message) -> dict[str, Any]:
    row: dict[str, Any] = {"seq": message.seq, "role": message.role, "content": message.content}
    optional = {
        "tool_calls": message.tool_calls,
        "tool_call_id": message.tool_call_id,
        "tool_name": message.tool_name,
        "finish_reason": message.finish_reason,
        "reasoning": message.reasoning,
        "disposition": message.disposition,
    }
    row.update({key: value for key, value in optional.items() if value is not None})
    row["created_at"] = message.created_at
    return row


def _write_markdown(out: TextIO, session: Session, messages: list[Message]) -> None:
    from hermes_sdk.text import Totals, when

    out.write(f"# {session.title or 'Session ' + session.id}\n\n")
    out.write(
        f"- id: `{session.id}`\n- started: {when(session.started_at)}\n"
        f"- model: {session.provider} / {session.model}\n"
        f"- usage: {Totals.of(session).line()}\n\n"
    )
    for message in messages:
        if message.role == "tool":
            out.write(f"**tool `{message.tool_name}`** ({message.disposition or 'ok'}):\n\n")
            out.write(f"```\n{message.content or ''}\n```\n\n")
            continue
        out.write(f"## {message.role}\n\n")
        if message.content:
            out.write(f"{message.content}\n\n")
        for call in message.tool_calls or []:
            function = call.get("function", call)
            out.write(f"- calls `{function.get('name')}` with `{function.get('arguments')}`\n")
        if message.tool_calls:
            out.write("\n")


def _write_export(out: TextIO, fmt: str, session: Session, messages: list[Message]) -> None:
    if fmt == "md":
        _write_markdown(out, session, messages)
        return
    for message in messages:
        out.write(json.dumps(_message_json(message), ensure_ascii=False) + "\n")


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
@click.pass_context
def export(ctx: click.Context, session_id: str, fmt: str, output: str | None) -> None:
    """Write a session's transcript as JSONL or Markdown."""
    with _store(ctx) as store:
        session = _find(store, session_id)
        messages = store.messages.of_session(session.id)
    if output:
        try:
            with Path(output).open("w", encoding="utf-8") as handle:
                _write_export(handle, fmt, session, messages)
        except OSError as exc:
            raise click.ClickException(f"cannot write {output}: {exc.strerror}") from None
    else:
        _write_export(sys.stdout, fmt, session, messages)
    if output:
        click.echo(f"wrote {len(messages)} messages to {output}", err=True)


@sessions.command("delete")
@click.argument("session_ids", metavar="ID...", nargs=-1, required=True)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def delete(ctx: click.Context, session_ids: tuple[str, ...], yes: bool) -> None:
    """Delete sessions with their messages; search forgets them too."""
    with _store(ctx) as store:
        found = [_find(store, reference) for reference in session_ids]
        if not yes:
            names = ", ".join(session.id for session in found)
            click.confirm(f"Delete {len(found)} session(s) ({names})?", abort=True)
        from hermes_kernel.store.errors import LeaseHeldError

        for session in found:
            try:
                with store.leases.holding(session.id):
                    store.sessions.delete(session.id)
            except LeaseHeldError as exc:
                raise click.ClickException(f"{exc}: a turn is running on it; try later") from None
            click.echo(f"deleted {session.id}")
