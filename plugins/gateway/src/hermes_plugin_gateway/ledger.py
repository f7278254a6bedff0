"""The gateway's durable state in its tables of the state store: routes (chat -> session)
and the inbox (messages and the progress of their turns); replies go to the delivery ledger
every front-end shares (:mod:`hermes_commons.outbox`).

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

from hermes_commons.outbox import Outbox
from hermes_sdk.media import Attachment
from hermes_sdk.platform import ChatRef, Inbound
from hermes_sdk.storage import Store, StoreCursor

__all__ = [
    "INBOX_COLUMNS",
    "INTAKE_KEY",
    "OPEN_STATES",
    "ClaimLost",
    "InboxItem",
    "Ledger",
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


ANSWERS = "gateway-inbox:"
"""A reply's ``answers`` in the delivery ledger: this, then the message's id."""
INTAKE_KEY = "gateway-inbox"
"""The write key messages are stored under: batches of every worker commit one at a time,
so ids grow in commit order (a claim relies on it), while turns write beside them."""
OPEN_STATES = "('queued', 'running', 'resuming')"
"""A message whose turn has not finished (SQL list)."""
INBOX_COLUMNS = (
    "id, route_key, chat, user_id, user_name, message_id, text, state, session_id, received_at, "
    "attachments"
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


class Ledger:
    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self._now = clock
        self.outbox = Outbox(store, clock)
        """The delivery ledger the replies go to (on the same store: one transaction)."""

    # --- routes -----------------------------------------------------------------------------

    def route(self, key: str) -> str | None:
        value = self.store.query_value(
            "SELECT session_id FROM gateway_routes WHERE key = ?", (key,)
        )
        return None if value is None else str(value)

    def set_route(self, key: str, session_id: str) -> None:
        with self.store.write(serialized=False) as cursor:  # one upsert
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
        with self.store.write(key=INTAKE_KEY) as cursor:
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
        # One conditional UPDATE: its row's lock orders it, not the store's.
        with self.store.write(serialized=False) as cursor:
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
        precedes every send (the WAL is ordered). It reads nothing it does not change in
        the same statement (the message's row, locked; the ledger's unique ``answers``), so
        it takes no store-wide lock."""
        now = self._now()
        with self.store.write(serialized=False) as cursor:
            if item_id is not None:
                closed = cursor.execute(
                    "UPDATE gateway_inbox SET state = 'done', updated_at = ? "
                    f"WHERE id = ? AND state <> 'dropped' {_HELD_BY}",
                    (now, item_id, worker, worker),
                ).fetchall()
                if not closed:
                    raise ClaimLost(f"message {item_id} is no longer this worker's to answer")
            return self.outbox.record_in(
                cursor,
                chat,
                text,
                answers=None if item_id is None else f"{ANSWERS}{item_id}",
                reply_to=reply_to,
                preview_id=preview_id,
                attempting=attempting,
                attachment=attachment,
            )

    # --- upkeep -----------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        rows = self.store.query(
            "SELECT 'inbox_' || state, count(*) FROM gateway_inbox "
            "WHERE state IN ('queued', 'running', 'resuming') GROUP BY state"
        )
        return {str(name): int(count) for name, count in rows} | self.outbox.counts()

    def prune(self, older_than_seconds: float = 7 * 86_400) -> None:
        """Forget finished messages and replies after a week (kept that long so a platform
        re-sending an old update is still recognised)."""
        self.outbox.prune(older_than_seconds)
        cutoff = self._now() - older_than_seconds
        with self.store.write() as cursor:
            # Not while the ledger holds its reply: SQLite may give a deleted id to the next
            # message, whose reply the ledger would then take for answered already.
            cursor.execute(
                "DELETE FROM gateway_inbox WHERE state IN ('done', 'dropped', 'failed') "
                "AND updated_at < ? AND NOT EXISTS (SELECT 1 FROM outbox_entries "
                f"WHERE answers = '{ANSWERS}' || gateway_inbox.id)",
                (cutoff,),
            )
            cursor.execute(
                "DELETE FROM gateway_questions WHERE state IN ('answered', 'closed') "
                "AND created_at < ?",
                (cutoff,),
            )


_HELD_BY = "AND (CAST(? AS TEXT) IS NULL OR worker = ?) RETURNING 1"
"""The end of an UPDATE that only counts for the worker that holds the message (bound
twice: the worker, or None for any)."""


def changed_rows(cursor: StoreCursor, sql: str, bindings: Sequence[Any] = ()) -> int:
    """How many rows an UPDATE ... RETURNING 1 changed."""
    return len(cursor.execute(sql, bindings).fetchall())
