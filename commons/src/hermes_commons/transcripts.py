"""A stored session as a file: JSONL (one message a line, for programs) or Markdown (to
read). ``hermes sessions export`` and the web UI's export write the same thing.

    with open("chat.md", "w") as out:
        write_export(out, "md", summary, await history.messages(summary.session_id))
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TextIO

from hermes_commons.text import Totals, when
from hermes_sdk.runtime import SessionMessage, SessionSummary

__all__ = ["EXPORT_FORMATS", "message_json", "tool_call_function", "write_export"]

EXPORT_FORMATS = ("jsonl", "md")


def tool_call_function(call: Mapping[str, Any]) -> Mapping[str, Any]:
    """A stored tool call: ``{"id", "name", "arguments"}``, or the older
    ``{"function": {...}}`` shape of imported sessions."""
    function = call.get("function", call)
    return function if isinstance(function, Mapping) else call


def message_json(message: SessionMessage) -> dict[str, Any]:
    """One message of a JSONL export; the fields a message lacks are left out."""
    row: dict[str, Any] = {"seq": message.seq, "role": message.role, "content": message.content}
    optional = {
        "tool_calls": [dict(call) for call in message.tool_calls] or None,
        "tool_call_id": message.tool_call_id,
        "tool_name": message.tool_name,
        "finish_reason": message.finish_reason,
        "reasoning": message.reasoning,
        "disposition": message.disposition,
    }
    row.update({key: value for key, value in optional.items() if value is not None})
    row["created_at"] = message.created_at
    return row


def _write_markdown(out: TextIO, session: SessionSummary, messages: list[SessionMessage]) -> None:
    out.write(f"# {session.title or 'Session ' + session.session_id}\n\n")
    out.write(
        f"- id: `{session.session_id}`\n- started: {when(session.started_at)}\n"
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
        for call in message.tool_calls:
            function = tool_call_function(call)
            out.write(f"- calls `{function.get('name')}` with `{function.get('arguments')}`\n")
        if message.tool_calls:
            out.write("\n")


def write_export(
    out: TextIO, fmt: str, session: SessionSummary, messages: list[SessionMessage]
) -> None:
    """``fmt`` ``md``: a readable Markdown transcript; ``jsonl``: one message a line."""
    if fmt == "md":
        _write_markdown(out, session, messages)
        return
    for message in messages:
        out.write(json.dumps(message_json(message), ensure_ascii=False) + "\n")
