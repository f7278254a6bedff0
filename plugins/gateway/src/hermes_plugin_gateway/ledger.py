"""The gateway's durable state in its tables of the state store: routes (chat -> session),
the inbox (messages and the progress of their turns) and the outbox (the delivery ledger).

Every state change is one transaction. The order that makes a crash harmless:
a message is stored (queued) before the platform is told it arrived; it is marked running
before its turn starts (so a crash from then on resumes the turn, once, with a note); the
reply is recorded (pending) in the same transaction that marks the message done; a send is
marked attempting before it starts and delivered after it ends.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_sdk.media import Attachment
from hermes_sdk.platform import ChatRef, Inbound
from hermes_sdk.storage import Store, StoreCursor

__all__ = [
    "INBOX_COLUMNS",
    "OPEN_STATES",
    "ClaimLost",
    "InboxItem",
    "Ledger",
    "OutboxItem",
    "changed_rows",
    "inbox_item",
]


class ClaimLost(Exception):
    """A worker wrote for a message it no longer holds: it was taken for dead, and the
    message went to another worker (or /stop dropped it). Nothing was written."""


@dataclass(frozen=True)
class InboxItem:
    id: int
    route_key: str
    chat: ChatRef
    user_id: str
    user_name: str
    message_id: str
    text: str
    state: str
    session_id: str | None
    received_at: float
    attachments: tuple[Attachment, ...] = ()
    worker: str | None = None
    """The worker that took it to run, as it was named then (its writes for the message
    only count while that name still holds it)."""


@dataclass(frozen=True)
class OutboxItem:
    id: int
    chat: ChatRef
    reply_to: str | None
    preview_id: str | None
    text: str
    state: str
    attempts: int
    maybe_sent: bool
    created_at: float
    updated_at: float
    attachment: Attachment | None = None
    """A file to send instead of text (one per entry, so each is sent once)."""


OPEN_STATES = "('queued', 'running', 'resuming')"
"""A message whose turn has not finished (SQL list)."""
INBOX_COLUMNS = (
    "id, route_key, chat, user_id, user_name, message_id, text, state, session_id, received_at, "
    "attachments"
)
_OUTBOX_COLUMNS = (
    "id, chat, reply_to, preview_id, text, state, attempts, maybe_sent, created_at, updated_at, "
    "attachment"
)


def inbox_item(row: tuple[Any, ...]) -> InboxItem:
    return InboxItem(
        id=int(row[0]),
        route_key=str(row[1]),
        chat=ChatRef.from_dict(json.loads(row[2])),
        user_id=str(row[3]),
        user_name=str(row[4] or ""),
        message_id=str(row[5]),
        text=str(row[6]),
        state=str(row[7]),
        session_id=row[8],
        received_at=float(row[9]),
        attachments=tuple(Attachment.from_dict(item) for item in json.loads(row[10] or "[]")),
    )


def _outbox(row: tuple[Any, ...]) -> OutboxItem:
    return OutboxItem(
        id=int(row[0]),
        chat=ChatRef.from_dict(json.loads(row[1])),
        reply_to=row[2],
        preview_id=row[3],
        text=str(row[4]),
        state=str(row[5]),
        attempts=int(row[6]),
        maybe_sent=bool(row[7]),
        created_at=float(row[8]),
        updated_at=float(row[9]),
        attachment=Attachment.from_dict(json.loads(row[10])) if row[10] else None,
    )


class Ledger:
    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self._now = clock

    # --- routes -----------------------------------------------------------------------------

    def route(self, key: str) -> str | None:
        value = self.store.query_value(
            "SELECT session_id FROM gateway_routes WHERE key = ?", (key,)
        )
        return None if value is None else str(value)

    def set_route(self, key: str, session_id: str) -> None:
        with self.store.write() as cursor:
            cursor.execute(
                "INSERT INTO gateway_routes (key, session_id, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET session_id = excluded.session_id, "
                "updated_at = excluded.updated_at",
                (key, session_id, self._now()),
            )

    def drop_route(self, key: str) -> str | None:
        """Forget the route (``/new``); returns the session it pointed at."""
        with self.store.write() as cursor:
            rows = cursor.execute(
                "DELETE FROM gateway_routes WHERE key = ? RETURNING session_id", (key,)
            ).fetchall()
        return str(rows[0][0]) if rows else None

    # --- inbox ------------------------------------------------------------------------------

    def accept(self, message: Inbound, route_key: str) -> InboxItem | None:
        """Store a message (queued); None if this message was stored before (a platform
        delivering an update again after a restart)."""
        return self.accept_many([(message, route_key)])[0]

    def accept_many(
        self, messages: Sequence[tuple[Inbound, str]], worker: str | None = None
    ) -> list[InboxItem | None]:
        """Store messages (with their route keys) in one transaction, in order; None for a
        message stored before. Not synced: the caller syncs before the platform is told.
        ``worker``: who took them in (a message's files are on that worker's disk)."""
        now = self._now()
        stored: list[InboxItem | None] = []
        with self.store.write() as cursor:
            for message, route_key in messages:
                chat = message.chat
                rows = cursor.execute(
                    "INSERT INTO gateway_inbox (route_key, platform, chat_id, chat, user_id, "
                    "user_name, message_id, text, state, received_at, updated_at, attachments, "
                    "taken_in_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?) "
                    "ON CONFLICT (platform, chat_id, message_id) DO NOTHING RETURNING id",
                    (
                        route_key,
                        chat.platform,
                        chat.chat_id,
                        json.dumps(chat.as_dict()),
                        message.user_id,
                        message.user_name,
                        message.message_id,
                        message.text,
                        now,
                        now,
                        json.dumps([item.as_dict() for item in message.attachments])
                        if message.attachments
                        else None,
                        worker,
                    ),
                ).fetchall()
                stored.append(
                    InboxItem(
                        id=int(str(rows[0][0])),
                        route_key=route_key,
                        chat=chat,
                        user_id=message.user_id,
                        user_name=message.user_name or "",
                        message_id=message.message_id,
                        text=message.text,
                        state="queued",
                        session_id=None,
                        received_at=now,
                        attachments=message.attachments,
                    )
                    if rows
                    else None
                )
        return stored

    def open_inbox(self) -> list[InboxItem]:
        """Messages whose turn has not finished, oldest first."""
        rows = self.store.query(
            f"SELECT {INBOX_COLUMNS} FROM gateway_inbox "
            "WHERE state IN ('queued', 'running', 'resuming') ORDER BY id"
        )
        return [inbox_item(row) for row in rows]

    def mark(
        self, item_id: int, state: str, session_id: str | None = None, worker: str | None = None
    ) -> bool:
        """Move an open message to ``state``; False if it is no longer open, or (with
        ``worker``) no longer that worker's to move."""
        # Not synced on its own: the write-ahead log is replayed in order, so the next
        # synced commit (the engine's, of an assistant message before any tool runs) makes
        # this durable too; lost without it, the turn had not acted yet and runs again.
        with self.store.write() as cursor:
            return bool(
                cursor.execute(
                    "UPDATE gateway_inbox SET state = ?, session_id = coalesce(?, session_id), "
                    f"updated_at = ? WHERE id = ? AND state IN {OPEN_STATES} {_HELD_BY}",
                    (state, session_id, self._now(), item_id, worker, worker),
                ).fetchall()
            )

    def reply_ready(
        self,
        item_id: int | None,
        chat: ChatRef,
        text: str,
        *,
        reply_to: str | None = None,
        preview_id: str | None = None,
        attempting: bool = False,
        attachment: Attachment | None = None,
        worker: str | None = None,
    ) -> int:
        """Record the reply as an obligation and close its message, in one transaction;
        with ``worker``, only while that worker holds the message (else :class:`ClaimLost`,
        and nothing is written);
        ``attempting`` records it as being sent already (its first attempt starts now), which
        saves the send a write of its own. Synced with the ``attempting`` mark, which
        precedes every send (the WAL is ordered)."""
        now = self._now()
        with self.store.write() as cursor:
            if item_id is not None:
                closed = cursor.execute(
                    "UPDATE gateway_inbox SET state = 'done', updated_at = ? "
                    f"WHERE id = ? AND state <> 'dropped' {_HELD_BY}",
                    (now, item_id, worker, worker),
                ).fetchall()
                if not closed:
                    raise ClaimLost(f"message {item_id} is no longer this worker's to answer")
            rows = cursor.execute(
                "INSERT INTO gateway_outbox (inbox_id, platform, chat, reply_to, preview_id, "
                "text, state, attempts, created_at, updated_at, attachment) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    item_id,
                    chat.platform,
                    json.dumps(chat.as_dict()),
                    reply_to,
                    preview_id,
                    text,
                    "attempting" if attempting else "pending",
                    int(attempting),
                    now,
                    now,
                    json.dumps(attachment.as_dict()) if attachment is not None else None,
                ),
            ).fetchall()
        return int(rows[0][0])

    # --- outbox -----------------------------------------------------------------------------

    def outbox_item(self, item_id: int) -> OutboxItem | None:
        rows = self.store.query(
            f"SELECT {_OUTBOX_COLUMNS} FROM gateway_outbox WHERE id = ?", (item_id,)
        )
        return _outbox(rows[0]) if rows else None

    def open_outbox(self, platform: str | None = None) -> list[OutboxItem]:
        rows = self.store.query(
            f"SELECT {_OUTBOX_COLUMNS} FROM gateway_outbox "
            "WHERE state IN ('pending', 'attempting') "
            "AND (CAST(? AS TEXT) IS NULL OR platform = ?) ORDER BY id",
            (platform, platform),
        )
        return [_outbox(row) for row in rows]

    def after_crash(self) -> int:
        """At start: sends that were in flight may have gone out; mark them so their next
        attempt says it may be a duplicate."""
        with self.store.write() as cursor:
            return changed_rows(
                cursor,
                "UPDATE gateway_outbox SET state = 'pending', maybe_sent = 1, preview_id = NULL, "
                "updated_at = 0 WHERE state = 'attempting' RETURNING 1",
            )

    def attempting(self, *item_ids: int) -> None:
        """Mark replies as being sent (not synced: the caller syncs while it sends)."""
        now = self._now()
        with self.store.write() as cursor:
            cursor.executemany(
                "UPDATE gateway_outbox SET state = 'attempting', attempts = attempts + 1, "
                "updated_at = ? WHERE id = ?",
                [(now, item_id) for item_id in item_ids],
            )

    def delivered(self, *item_ids: int) -> None:
        # Not behind the write lock: a reply sent but not yet marked goes again (marked as a
        # possible duplicate) if this worker dies meanwhile, so this mark must not queue.
        now = self._now()
        with self.store.write(serialized=False) as cursor:
            cursor.executemany(
                "UPDATE gateway_outbox SET state = 'delivered', last_error = NULL, "
                "updated_at = ? WHERE id = ?",
                [(now, item_id) for item_id in item_ids],
            )

    def failed(self, item_id: int, error: str, *, abandon: bool, maybe_sent: bool = False) -> None:
        """A send failed: try again later, or give up. ``maybe_sent``: the failure leaves it
        open whether the reply went out (a timeout), so its next attempt carries the note."""
        with self.store.write() as cursor:
            cursor.execute(
                "UPDATE gateway_outbox SET state = ?, last_error = ?, updated_at = ?, "
                "maybe_sent = CASE WHEN ? = 1 THEN 1 ELSE maybe_sent END WHERE id = ?",
                (
                    "abandoned" if abandon else "pending",
                    error[:500],
                    self._now(),
                    int(maybe_sent),
                    item_id,
                ),
            )

    # --- upkeep -----------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        rows = self.store.query(
            "SELECT 'inbox_' || state, count(*) FROM gateway_inbox "
            "WHERE state IN ('queued', 'running', 'resuming') GROUP BY state "
            "UNION ALL SELECT 'outbox_' || state, count(*) FROM gateway_outbox "
            "WHERE state IN ('pending', 'attempting', 'abandoned') GROUP BY state"
        )
        return {str(name): int(count) for name, count in rows}

    def prune(self, older_than_seconds: float = 7 * 86_400) -> None:
        """Forget finished messages and replies after a week (kept that long so a platform
        re-sending an old update is still recognised)."""
        cutoff = self._now() - older_than_seconds
        with self.store.write() as cursor:
            cursor.execute(
                "DELETE FROM gateway_outbox WHERE state IN ('delivered', 'abandoned') "
                "AND updated_at < ?",
                (cutoff,),
            )
            cursor.execute(
                "DELETE FROM gateway_inbox WHERE state IN ('done', 'dropped', 'failed') "
                "AND updated_at < ? AND id NOT IN (SELECT inbox_id FROM gateway_outbox "
                "WHERE inbox_id IS NOT NULL)",
                (cutoff,),
            )


_HELD_BY = "AND (CAST(? AS TEXT) IS NULL OR worker = ?) RETURNING 1"
"""The end of an UPDATE that only counts for the worker that holds the message (bound
twice: the worker, or None for any)."""


def changed_rows(cursor: StoreCursor, sql: str, bindings: Sequence[Any] = ()) -> int:
    """How many rows an UPDATE ... RETURNING 1 changed."""
    return len(cursor.execute(sql, bindings).fetchall())
