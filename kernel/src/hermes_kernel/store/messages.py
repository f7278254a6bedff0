"""Messages of a session, in order. Tool calls are stored as JSON on the assistant message;
each tool result is its own message carrying the call id and an effect disposition."""

from __future__ import annotations

import enum
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, TypedDict, Unpack

from hermes_kernel.store.backend import StoreBackend
from hermes_kernel.store.leases import session_key
from hermes_kernel.store.sessions import USAGE_ASSIGNMENTS, Usage, add_usage_in, usage_values
from hermes_sdk.runtime import STEER_PREFIX, SessionNotFound


class Disposition(enum.StrEnum):
    """What is known about a tool call's effect, recorded with its result."""

    OK = "ok"  # ran and returned
    ERROR = "error"  # ran (or was refused) and returned an error the model sees
    SKIPPED = "skipped"  # never started (interrupted before it ran)
    UNKNOWN = "unknown"  # may have run before a crash: never re-run, reported as unknown


@dataclass(frozen=True)
class Message:
    id: int
    session_id: str
    seq: int
    role: str
    content: str | None
    tool_calls: list[dict[str, Any]] | None
    tool_call_id: str | None
    tool_name: str | None
    finish_reason: str | None
    reasoning: str | None
    disposition: str | None
    created_at: float
    updated_at: float | None
    reasoning_details: list[dict[str, Any]] | None = None
    attachments: list[dict[str, Any]] | None = None
    """Files sent with it, as :meth:`hermes_sdk.media.Attachment.as_dict` stores them."""


_COLUMNS = ", ".join(f.name for f in fields(Message))


def _message(row: Sequence[Any]) -> Message:
    values = list(row)
    values[5] = json.loads(values[5]) if values[5] else None
    values[-2] = json.loads(values[-2]) if values[-2] else None
    values[-1] = json.loads(values[-1]) if values[-1] else None
    return Message(*values)


_OF_SESSION = f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq"


def of_session_in(cursor: Any, session_id: str, after_seq: int = 0) -> list[Message]:
    """The session's messages (those after ``after_seq``), in order, inside the caller's
    transaction."""
    rows = cursor.execute(_OF_SESSION, (session_id, after_seq)).fetchall()
    return [_message(row) for row in rows]


class MessageFields(TypedDict, total=False):
    """What a message may carry besides its role and content."""

    tool_calls: list[dict[str, Any]] | None
    tool_call_id: str | None
    tool_name: str | None
    finish_reason: str | None
    reasoning: str | None
    reasoning_details: list[dict[str, Any]] | None
    disposition: str | None
    attachments: list[dict[str, Any]] | None
    """Files sent with the message (``Attachment.as_dict``)."""
    usage: Usage | None
    """Token usage of the model call that produced it, added to the session's totals."""
    calls: list[Usage] | None
    """The model calls a virtual provider made for it, each with its own model's usage."""


def append_in(
    cursor: Any, session_id: str, role: str, content: str | None, **fields: Unpack[MessageFields]
) -> Message:
    """:meth:`Messages.append` inside the caller's write transaction (a turn's first write
    takes its lease and saves the user's message together)."""
    tool_calls = fields.get("tool_calls")
    tool_call_id = fields.get("tool_call_id")
    tool_name = fields.get("tool_name")
    finish_reason = fields.get("finish_reason")
    reasoning = fields.get("reasoning")
    reasoning_details = fields.get("reasoning_details")
    disposition = fields.get("disposition")
    usage = fields.get("usage")
    attachments = fields.get("attachments")
    now = time.time()
    # The session's row first: it is there (else nothing is written), and it stays locked
    # until the commit, so two appends to one session never take the same seq on any engine.
    # The reply's usage goes to the totals in the same statement.
    totals, added = (f", {USAGE_ASSIGNMENTS}", usage_values(usage)) if usage else ("", ())
    counted = cursor.execute(
        "UPDATE sessions SET message_count = message_count + 1, "
        f"tool_call_count = tool_call_count + ?{totals} WHERE id = ? RETURNING 1",
        (len(tool_calls or ()), *added, session_id),
    ).fetchall()
    if not counted:
        raise SessionNotFound(f"no session {session_id!r}")
    # Read apart, not as a subquery of the INSERT: SQLite appends a third slower that way.
    seq = int(
        cursor.execute(
            "SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session_id = ?", (session_id,)
        ).fetchall()[0][0]
    )
    inserted = cursor.execute(
        "INSERT INTO messages (session_id, seq, role, content, tool_calls, tool_call_id, "
        "tool_name, finish_reason, reasoning, disposition, created_at, "
        "reasoning_details, attachments) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "RETURNING id",
        (
            session_id,
            seq,
            role,
            content,
            json.dumps(tool_calls) if tool_calls else None,
            tool_call_id,
            tool_name,
            finish_reason,
            reasoning,
            disposition,
            now,
            json.dumps(reasoning_details) if reasoning_details else None,
            json.dumps(attachments) if attachments else None,
        ),
    )
    message_id = int(inserted.fetchall()[0][0])
    if usage is not None:
        add_usage_in(cursor, session_id, usage, message_id, totals=False)
    for call in fields.get("calls") or ():
        add_usage_in(cursor, session_id, call, message_id)
    return Message(
        message_id,
        session_id,
        seq,
        role,
        content,
        tool_calls,
        tool_call_id,
        tool_name,
        finish_reason,
        reasoning,
        disposition,
        now,
        None,
        reasoning_details,
        attachments,
    )


class Messages:
    def __init__(self, db: StoreBackend) -> None:
        self._db = db

    def append(
        self,
        session_id: str,
        role: str,
        content: str | None,
        *,
        durable: bool = False,
        wait: bool = True,
        **fields: Unpack[MessageFields],
    ) -> Message:
        """Append one message and update the session's counts (and token ``usage``, for the
        model reply that produced it), in one transaction; ``durable`` syncs it to disk, and
        ``wait=False`` raises WouldBlock rather than wait for a lock."""
        with self._db.write(durable, wait, key=session_key(session_id)) as cursor:
            return append_in(cursor, session_id, role, content, **fields)

    def of_session(self, session_id: str, after_seq: int = 0) -> list[Message]:
        rows = self._db.query(_OF_SESSION, (session_id, after_seq))
        return [_message(row) for row in rows]

    def copy_into(self, source_id: str, target_id: str, through_seq: int) -> int:
        """Append the source session's messages up to ``through_seq`` to the target (a
        branch), in one transaction; the usage they cost stays the source's. Returns how
        many were copied."""
        copied = [m for m in self.of_session(source_id) if m.seq <= through_seq]
        with self._db.write(key=session_key(target_id)) as cursor:
            for message in copied:
                append_in(
                    cursor,
                    target_id,
                    message.role,
                    message.content,
                    tool_calls=message.tool_calls,
                    tool_call_id=message.tool_call_id,
                    tool_name=message.tool_name,
                    finish_reason=message.finish_reason,
                    reasoning=message.reasoning,
                    reasoning_details=message.reasoning_details,
                    disposition=message.disposition,
                    attachments=message.attachments,
                )
        return len(copied)

    def last_user_seq(self, session_id: str) -> int | None:
        """The last message the user sent as such (a ``/steer`` note said mid-turn is part
        of that turn, not a message of its own)."""
        value = self._db.query_value(
            "SELECT max(seq) FROM messages WHERE session_id = ? AND role = 'user' "
            "AND (content IS NULL OR substr(content, 1, ?) <> ?)",
            (session_id, len(STEER_PREFIX), STEER_PREFIX),
        )
        return int(value) if value is not None else None

    def delete_from(self, session_id: str, seq: int) -> int:
        """Delete the session's messages from ``seq`` on (``/undo``), keeping its counts
        right; return how many went. Usage already paid for stays in the totals."""
        with self._db.write(key=session_key(session_id)) as cursor:
            rows = cursor.execute(
                "SELECT tool_calls FROM messages WHERE session_id = ? AND seq >= ?",
                (session_id, seq),
            ).fetchall()
            calls = sum(len(json.loads(str(row[0]))) for row in rows if row[0])
            cursor.execute(
                "DELETE FROM messages WHERE session_id = ? AND seq >= ?", (session_id, seq)
            )
            # A summary that stood for a message now gone goes too: the view falls back to
            # the compaction before it (or to the messages themselves).
            cursor.execute(
                "DELETE FROM compactions WHERE session_id = ? AND boundary_seq >= ?",
                (session_id, seq),
            )
            cursor.execute(
                "UPDATE sessions SET "
                "message_count = CASE WHEN message_count > ? THEN message_count - ? ELSE 0 END, "
                "tool_call_count = CASE WHEN tool_call_count > ? THEN tool_call_count - ? "
                "ELSE 0 END WHERE id = ?",
                (len(rows), len(rows), calls, calls, session_id),
            )
        return len(rows)

    def set_disposition(self, message_id: int, disposition: Disposition) -> None:
        with self._db.write(serialized=False) as cursor:  # one row's mark
            cursor.execute(
                "UPDATE messages SET disposition = ?, updated_at = ? WHERE id = ?",
                (disposition.value, time.time(), message_id),
            )
