"""hermes-agent's state.db, read into :class:`~hermes_sdk.archive.ArchivedSession` records.

The database is never opened where it lies: SQLite would create its ``-shm`` file, take
locks, and may checkpoint its log into it. It is copied (with its write-ahead log) to a
scratch folder first, and the copy is read. Columns are read by name where they exist, so
every schema hermes-agent has shipped reads the same way (0.19 writes version 22; older
ones lack columns such as ``active`` and ``compacted``, newer ones add more).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from hermes_commons.sqlite_copy import UnreadableDatabase
from hermes_sdk.archive import ArchivedMessage, ArchivedSession
from hermes_sdk.models import ToolCallRequest

SOURCES = {"subagent": "delegate"}
"""hermes-agent's names for where a session came from, where ours differ."""
PLATFORMS = frozenset(
    {"telegram", "discord", "slack", "whatsapp", "signal", "matrix", "email", "sms"}
)
"""Sources whose sessions belong to a chat user: kept as ``platform:user_id`` scopes."""
CONTENT_JSON = "\x00json:"
"""hermes-agent's prefix for message content it stored as JSON (multimodal parts)."""
ROLES = frozenset({"system", "user", "assistant", "tool"})


HistoryUnreadable = UnreadableDatabase
"""The state.db cannot be read (damaged, or not a database): one line."""


@dataclass
class HistoryStats:
    """What reading the history left out, and why (for the report)."""

    rewound: int = 0
    """Messages the user had taken back (/rewind, /undo): hermes-agent hid them too."""
    odd_roles: dict[str, int] = field(default_factory=dict)
    images: int = 0
    """Image parts of messages: the text is kept, the picture is not."""
    orphan_parents: int = 0
    schema_version: int | None = None


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in connection.execute(f"PRAGMA table_info({table})")}


def _select(connection: sqlite3.Connection, table: str, wanted: tuple[str, ...]) -> str:
    """A SELECT of ``wanted`` columns, NULL for the ones this schema version lacks."""
    have = _columns(connection, table)
    if not have:
        raise HistoryUnreadable(f"state.db has no {table} table: it is not hermes-agent's")
    return ", ".join(name if name in have else f"NULL AS {name}" for name in wanted)


_SESSION_COLUMNS = (
    "id", "source", "user_id", "model", "billing_provider", "parent_session_id", "title",
    "started_at", "ended_at", "end_reason", "cwd", "input_tokens", "output_tokens",
    "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "estimated_cost_usd",
    "actual_cost_usd", "cost_status",
)  # fmt: skip
_MESSAGE_COLUMNS = (
    "id", "session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name",
    "timestamp", "finish_reason", "reasoning", "reasoning_content", "active", "compacted",
)  # fmt: skip


def history_batches(
    connection: sqlite3.Connection, stats: HistoryStats, size: int = 200
) -> Iterator[list[ArchivedSession]]:
    """The sessions, oldest first, ``size`` at a time with their messages: a long history
    is never all in memory at once. ``stats`` counts what was left out as it goes."""
    with contextlib.suppress(sqlite3.DatabaseError):
        row = connection.execute("SELECT version FROM schema_version LIMIT 1").fetchone()
        stats.schema_version = int(row[0]) if row else None
    try:
        rows = connection.execute(
            f"SELECT {_select(connection, 'sessions', _SESSION_COLUMNS)} FROM sessions "
            "ORDER BY started_at, id"
        ).fetchall()
        message_columns = _select(connection, "messages", _MESSAGE_COLUMNS)
        ids = {str(row["id"]) for row in rows}
        for start in range(0, len(rows), size):
            chunk = rows[start : start + size]
            marks = ", ".join("?" * len(chunk))
            by_session: dict[str, list[sqlite3.Row]] = {}
            for message in connection.execute(
                f"SELECT {message_columns} FROM messages WHERE session_id IN ({marks}) "
                "ORDER BY session_id, id",
                [str(row["id"]) for row in chunk],
            ):
                by_session.setdefault(str(message["session_id"]), []).append(message)
            batch = [_session(row, by_session.get(str(row["id"]), []), ids, stats) for row in chunk]
            yield batch
    except sqlite3.DatabaseError as exc:
        raise HistoryUnreadable(f"state.db: cannot read its sessions: {exc}") from None


def _session(
    row: sqlite3.Row, rows: list[sqlite3.Row], ids: set[str], stats: HistoryStats
) -> ArchivedSession:
    # Compacted rows (summarised away, still searchable) come first; the live rows after
    # them begin with hermes-agent's summary. Rewound rows were taken back by the user.
    compacted = [m for m in rows if _flag(m["active"], 1) == 0 and _flag(m["compacted"], 0)]
    live = [m for m in rows if _flag(m["active"], 1) != 0]
    stats.rewound += len(rows) - len(compacted) - len(live)
    messages = []
    view_starts_at = 0
    for part, chosen in ((0, compacted), (1, live)):
        for message in chosen:
            converted = _message(message, stats)
            if converted is not None:
                messages.append(converted)
        if part == 0:
            view_starts_at = len(messages)
    source = str(row["source"] or "cli")
    parent = row["parent_session_id"]
    if parent is not None and str(parent) not in ids:
        stats.orphan_parents += 1
        parent = None
    user_id = row["user_id"]
    cost = row["actual_cost_usd"] or row["estimated_cost_usd"]
    known_cost = row["cost_status"] not in ("unknown", None) or bool(cost)
    return ArchivedSession(
        id=str(row["id"]),
        source=SOURCES.get(source, source),
        started_at=float(row["started_at"] or 0.0),
        messages=tuple(messages),
        view_starts_at=view_starts_at,
        title=row["title"],
        model=row["model"],
        provider=row["billing_provider"],
        parent_session_id=str(parent) if parent is not None else None,
        ended_at=row["ended_at"],
        end_reason=row["end_reason"],
        cwd=row["cwd"],
        user_scope=f"{source}:{user_id}" if source in PLATFORMS and user_id else None,
        input_tokens=int(row["input_tokens"] or 0),
        output_tokens=int(row["output_tokens"] or 0),
        cache_read_tokens=int(row["cache_read_tokens"] or 0),
        cache_write_tokens=int(row["cache_write_tokens"] or 0),
        reasoning_tokens=int(row["reasoning_tokens"] or 0),
        cost_usd=float(cost or 0.0) if known_cost else None,
    )


def _flag(value: Any, default: int) -> int:
    return default if value is None else int(value)


def _message(row: sqlite3.Row, stats: HistoryStats) -> ArchivedMessage | None:
    role = str(row["role"])
    if role not in ROLES:
        stats.odd_roles[role] = stats.odd_roles.get(role, 0) + 1
        return None
    return ArchivedMessage(
        role=role,
        content=_text(row["content"], stats),
        created_at=float(row["timestamp"] or 0.0),
        tool_calls=calls_of(row["tool_calls"]) if role == "assistant" else (),
        tool_call_id=row["tool_call_id"],
        tool_name=row["tool_name"],
        finish_reason=row["finish_reason"],
        reasoning=row["reasoning"] or row["reasoning_content"],
    )


def _text(content: Any, stats: HistoryStats) -> str | None:
    """Plain text of a message; multimodal parts become their text, images a marker."""
    if not isinstance(content, str) or not content.startswith(CONTENT_JSON):
        return None if content is None else str(content)
    try:
        parts = json.loads(content[len(CONTENT_JSON) :])
    except json.JSONDecodeError:
        return content[len(CONTENT_JSON) :]
    if isinstance(parts, dict):
        parts = [parts]
    texts = []
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, dict) and part.get("type") == "text":
            texts.append(str(part.get("text", "")))
        elif isinstance(part, dict) and "image" in str(part.get("type", "")):
            stats.images += 1
            texts.append("[an image was attached here]")
        elif isinstance(part, str):
            texts.append(part)
    return "\n".join(texts)


def calls_of(raw: Any) -> tuple[ToolCallRequest, ...]:
    """OpenAI-style calls (``function.name``/``arguments``) or flat ones (``name``)."""
    if not raw:
        return ()
    try:
        calls = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return ()
    found = []
    for position, call in enumerate(calls if isinstance(calls, list) else []):
        if not isinstance(call, dict):
            continue
        nested = call.get("function")
        function = nested if isinstance(nested, dict) else call
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        call_id = call.get("id") or call.get("call_id") or f"imported_{position}"
        found.append(ToolCallRequest(str(call_id), str(function.get("name", "")), arguments))
    return tuple(found)
