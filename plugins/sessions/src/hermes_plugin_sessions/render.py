"""What ``hermes sessions`` prints: a session's line in the list, its details, its transcript
with the marks where its view was compacted, and its export as JSONL or Markdown.

Everything here reads the SDK's records only. Stored text (a model's reply, a tool's output)
goes through :func:`~hermes_commons.text.printable` before it reaches the terminal: it must not
clear the screen or set the title.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from hermes_commons.text import Totals, describe_cost, one_line, printable, when
from hermes_commons.transcripts import message_json, tool_call_function, write_export
from hermes_sdk.runtime import CompactionMark, SessionMessage, SessionSummary

__all__ = [
    "compaction_mark",
    "details",
    "list_line",
    "list_row",
    "message_json",
    "search_line",
    "session_stats",
    "stats_lines",
    "transcript_lines",
    "write_export",
]


def list_row(session: SessionSummary, opening: str) -> dict[str, Any]:
    """One session for ``list --json``."""
    return {
        "id": session.session_id,
        "title": session.title,
        "opening": opening,
        "source": session.source,
        "parent_session_id": session.parent_session_id,
        "started_at": session.started_at,
        "ended_at": session.ended_at,
        "messages": session.message_count,
        "provider": session.provider,
        "model": session.model,
        "usage": Totals.of(session).as_json(),
    }


def list_line(session: SessionSummary, opening: str) -> str:
    """id, start, messages, cost, model and what it is about (its title, else its opening)."""
    about = session.title or one_line(opening or "(empty)", 50)
    return (
        f"{session.session_id}  {when(session.started_at)}  {session.message_count:>4} msgs  "
        f"{Totals.of(session).cost_text():>8}  {session.model or '-'}  {about}"
    )


def details(
    session: SessionSummary,
    spending: str | None,
    children: Sequence[SessionSummary],
    compactions: int,
) -> Iterator[str]:
    """The lines above a session's transcript in ``show``: each session opened for it (work
    handed to another agent, a review) is labelled by its source, with its usage."""
    yield f"Session {session.session_id}: {session.title or '(untitled)'}"
    yield f"  source: {session.source}; model: {session.provider} / {session.model}"
    ended = f"{when(session.ended_at)} ({session.end_reason})" if session.ended_at else "open"
    yield f"  started: {when(session.started_at)}; ended: {ended}"
    if session.cwd:
        yield f"  directory: {session.cwd}"
    yield f"  {session.message_count} messages, {session.tool_call_count} tool calls"
    yield f"  usage: {Totals.of(session).line()}"
    if spending is not None:
        yield f"  {spending}"
    for child in children:
        usage = Totals.of(child).line()
        yield f"  {child.source} {child.session_id}: {child.title or ''}; {usage}"
    if compactions:
        yield (
            f"  compacted {compactions} time(s); the model sees a summary of the "
            "messages above each mark"
        )


def transcript_lines(message: SessionMessage) -> Iterator[str]:
    """A message of ``show``'s transcript: its text, and each tool call it made."""
    if message.role == "tool":
        status = message.disposition or "ok"
        yield f"[tool {message.tool_name} · {status}] {one_line(message.content or '', 300)}"
        return
    label = message.role
    if message.finish_reason == "interrupted":
        label += " (interrupted)"
    if message.content:
        yield f"{label}: {printable(message.content)}"
    for call in message.tool_calls:
        function = tool_call_function(call)
        yield printable(f"{label} calls {function.get('name')}({function.get('arguments', '')})")


def compaction_mark(mark: CompactionMark) -> str:
    """The line ``show`` prints after the last message a compaction summarized."""
    how = "by the model" if mark.by_model else "without a model"
    return (
        f"── compacted here, {when(mark.created_at)} ({mark.reason}): "
        f"{mark.messages_replaced} messages up to this point summarized {how}, "
        f"about {mark.tokens_before:,} -> {mark.tokens_after:,} tokens ──"
    )


def search_line(session_id: str, created_at: float, role: str, snippet: str, *, color: bool) -> str:
    """A hit of ``search``: the store marks the matches ``[like this]``; in a terminal
    they are shown bold yellow instead."""
    text = " ".join(printable(snippet).split())
    if color:
        text = text.replace("[", "\x1b[1;33m").replace("]", "\x1b[0m")
    return f"{session_id}  {when(created_at)}  {role:<9} {text}"


def _tally(sessions: Sequence[SessionSummary]) -> dict[str, Any]:
    totals = Totals()
    for session in sessions:
        totals = totals + Totals.of(session)
    return {
        "sessions": len(sessions),
        "open": sum(1 for session in sessions if session.ended_at is None),
        "messages": sum(session.message_count for session in sessions),
        "tool_calls": sum(session.tool_call_count for session in sessions),
        "input_tokens": totals.input_tokens,
        "output_tokens": totals.output_tokens,
        "cost_usd": totals.cost_usd,
        "unpriced_calls": totals.unpriced_calls,
    }


def session_stats(sessions: Sequence[SessionSummary]) -> dict[str, Any]:
    """Counts over every stored session, and by source (``cli``, ``telegram`` ...)."""
    by_source: dict[str, list[SessionSummary]] = {}
    for session in sessions:
        by_source.setdefault(session.source, []).append(session)
    starts = [session.started_at for session in sessions]
    return {
        **_tally(sessions),
        "first_started_at": min(starts) if starts else None,
        "last_started_at": max(starts) if starts else None,
        "by_source": {name: _tally(found) for name, found in sorted(by_source.items())},
    }


def stats_lines(report: Mapping[str, Any]) -> Iterator[str]:
    if not report["sessions"]:
        yield "No sessions yet. Start one with: hermes chat"
        return

    def row(label: str, tally: Mapping[str, Any]) -> str:
        cost = describe_cost(tally["cost_usd"], tally["unpriced_calls"])
        return (
            f"{label:<12} {tally['sessions']:>7,} {tally['messages']:>9,} "
            f"{tally['tool_calls']:>10,} {tally['input_tokens']:>12,} "
            f"{tally['output_tokens']:>10,}  {cost}"
        )

    yield (
        f"{report['sessions']:,} sessions ({report['open']:,} open), from "
        f"{when(report['first_started_at'])} to {when(report['last_started_at'])}"
    )
    yield (
        f"{'source':<12} {'sessions':>7} {'messages':>9} {'tool calls':>10} "
        f"{'tokens in':>12} {'out':>10}  cost"
    )
    for name, tally in report["by_source"].items():
        yield row(name, tally)
    if len(report["by_source"]) > 1:
        yield row("all", report)
