"""The delivery ledger: messages to chats, recorded before they are sent and sent once.

Every message to a chat (a reply, a scheduled job's result, ``hermes send``) is an
obligation recorded here first (``pending``); the process that runs the chat platforms (the
gateway) marks it ``attempting`` before each send and ``delivered`` after, retries it with
backoff, and gives up (``abandoned``) after too many attempts or too long. A send that was in
flight when that process died goes again, marked as a possible duplicate. Any process may
record; while one sends, it holds the lease :data:`SENDER`, so a recorder can tell whether
its message will go out::

    outbox = Outbox(runtime.plugin_store(OUTBOX))
    if outbox.sender() is None: ...  # nothing sends from this ledger now
    entry_id = outbox.record(ChatRef("telegram", "42", "private"), "the job is done")

A front-end that answers a message it keeps in a table of its own records the reply in the
same transaction that closes the message (:meth:`Outbox.record_in`), so a crash between the
two cannot lose the reply or send it twice.
Fields and functions may be added in minor SDK versions.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hermes_commons.leases import Executes, Holder
from hermes_sdk.media import Attachment
from hermes_sdk.platform import ChatRef
from hermes_sdk.storage import Store, StoreSchema
from hermes_sdk.tables import Column, ColumnType, Index, Table

__all__ = ["OUTBOX", "SENDER", "Outbox", "OutboxItem"]

OUTBOX = StoreSchema(
    name="outbox",
    declared=(
        (
            Table(
                "outbox_entries",
                (
                    Column("id", ColumnType.ID),
                    Column("platform", ColumnType.TEXT, required=True),
                    Column("chat", ColumnType.TEXT, required=True),
                    Column("answers", ColumnType.TEXT),
                    Column("reply_to", ColumnType.TEXT),
                    Column("preview_id", ColumnType.TEXT),
                    Column("text", ColumnType.TEXT, required=True),
                    Column(
                        "state",
                        ColumnType.TEXT,
                        required=True,
                        check="state IN ('pending', 'attempting', 'delivered', 'abandoned')",
                    ),
                    Column("attempts", ColumnType.INTEGER, required=True, default=0),
                    Column("maybe_sent", ColumnType.INTEGER, required=True, default=0),
                    Column("last_error", ColumnType.TEXT),
                    Column("attachment", ColumnType.TEXT),
                    Column("created_at", ColumnType.REAL, required=True),
                    Column("updated_at", ColumnType.REAL, required=True),
                ),
            ),
            Index(
                "outbox_entries_open",
                "outbox_entries",
                ("platform", "id"),
                where="state IN ('pending', 'attempting')",
            ),
            Index(
                "outbox_entries_answering",
                "outbox_entries",
                ("answers",),
                where="answers IS NOT NULL",
                unique=True,
            ),
        ),
    ),
)
"""The ledger's table (``chat``: :class:`~hermes_sdk.platform.ChatRef` as JSON; ``answers``:
what the entry answers, such as ``gateway-inbox:12``, one entry at most for each;
``attachment``: one file to send instead of text, :class:`~hermes_sdk.media.Attachment`
as JSON)."""

SENDER = "outbox-sender"
"""The lease the process that sends from the ledger holds while it does (held, renewed
and released by the gateway's heartbeat alone, under its workers' key: others only read
it)."""

_COLUMNS = (
    "id, chat, reply_to, preview_id, text, state, attempts, maybe_sent, created_at, updated_at, "
    "attachment, last_error"
)


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
    last_error: str | None = None
    """Why the last attempt failed, when one did."""


def _item(row: tuple[Any, ...]) -> OutboxItem:
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
        last_error=str(row[11]) if row[11] else None,
    )


class Outbox:
    """The ledger in a store that has :data:`OUTBOX`. Each call is one short transaction:
    call it from a worker thread, or through ``store.run`` from a loop."""

    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self._now = clock

    # --- recording ----------------------------------------------------------------------------

    def record(self, chat: ChatRef, text: str, *, attachment: Attachment | None = None) -> int:
        """Record a message to ``chat`` (pending); its id."""
        with self.store.write() as cursor:
            return self.record_in(cursor, chat, text, attachment=attachment)

    def record_in(
        self,
        cursor: Executes,
        chat: ChatRef,
        text: str,
        *,
        answers: str | None = None,
        reply_to: str | None = None,
        preview_id: str | None = None,
        attempting: bool = False,
        attachment: Attachment | None = None,
    ) -> int:
        """:meth:`record` inside the caller's write transaction. ``answers``: what this
        entry answers (``gateway-inbox:12``): a second entry for it is refused by the store
        (the transaction fails), so a message is never answered twice; ``preview_id``: a
        message shown while the reply was written, which the reply replaces;
        ``attempting``: its first attempt starts now (saves the send a write of its own)."""
        now = self._now()
        rows = cursor.execute(
            "INSERT INTO outbox_entries (platform, chat, answers, reply_to, preview_id, text, "
            "state, attempts, created_at, updated_at, attachment) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                chat.platform,
                json.dumps(chat.as_dict()),
                answers,
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

    def sender(self) -> str | None:
        """Who sends from this ledger now (None: nobody; what is recorded waits). A sender
        of this host whose lease lapsed while its process still runs (its renewals queued
        behind a burst of writes) still counts: it sends as soon as it catches up."""
        rows = self.store.query(
            "SELECT holder, expires_at FROM leases_held WHERE name = ?", (SENDER,)
        )
        if not rows:
            return None
        holder, expires_at = str(rows[0][0]), float(rows[0][1])
        if expires_at > self._now():
            return holder
        running = Holder.parse(holder)
        return holder if running.is_alive() else None

    # --- sending ------------------------------------------------------------------------------

    def item(self, item_id: int) -> OutboxItem | None:
        rows = self.store.query(f"SELECT {_COLUMNS} FROM outbox_entries WHERE id = ?", (item_id,))
        return _item(rows[0]) if rows else None

    def recent(self, limit: int = 50) -> list[OutboxItem]:
        """The newest entries in any state, newest first (what a dashboard lists)."""
        rows = self.store.query(
            f"SELECT {_COLUMNS} FROM outbox_entries ORDER BY id DESC LIMIT ?", (limit,)
        )
        return [_item(row) for row in rows]

    def open(self, platform: str | None = None) -> list[OutboxItem]:
        """What is still to be sent (``platform``'s alone, or every one's), oldest first."""
        rows = self.store.query(
            f"SELECT {_COLUMNS} FROM outbox_entries WHERE state IN ('pending', 'attempting') "
            "AND (CAST(? AS TEXT) IS NULL OR platform = ?) ORDER BY id",
            (platform, platform),
        )
        return [_item(row) for row in rows]

    def after_crash(self) -> int:
        """As a sender starts: sends that were in flight may have gone out; mark them so
        their next attempt says it may be a duplicate. How many."""
        with self.store.write() as cursor:
            rows = cursor.execute(
                "UPDATE outbox_entries SET state = 'pending', maybe_sent = 1, preview_id = NULL, "
                "updated_at = 0 WHERE state = 'attempting' RETURNING 1"
            ).fetchall()
        return len(rows)

    def attempting(self, *item_ids: int) -> None:
        """Mark entries as being sent (not synced: the caller syncs while it sends)."""
        now = self._now()
        with self.store.write(serialized=False) as cursor:  # rows by id, no reads
            cursor.executemany(
                "UPDATE outbox_entries SET state = 'attempting', attempts = attempts + 1, "
                "updated_at = ? WHERE id = ?",
                [(now, item_id) for item_id in item_ids],
            )

    def delivered(self, *item_ids: int) -> None:
        # Not behind the write lock: an entry sent but not yet marked goes again (marked as
        # a possible duplicate) if the sender dies meanwhile, so this mark must not queue.
        now = self._now()
        with self.store.write(serialized=False) as cursor:
            cursor.executemany(
                "UPDATE outbox_entries SET state = 'delivered', last_error = NULL, "
                "updated_at = ? WHERE id = ?",
                [(now, item_id) for item_id in item_ids],
            )

    def failed(self, item_id: int, error: str, *, abandon: bool, maybe_sent: bool = False) -> None:
        """A send failed: try again later, or give up. ``maybe_sent``: the failure leaves it
        open whether the message went out (a timeout), so its next attempt carries the note."""
        with self.store.write() as cursor:
            cursor.execute(
                "UPDATE outbox_entries SET state = ?, last_error = ?, updated_at = ?, "
                "maybe_sent = CASE WHEN ? = 1 THEN 1 ELSE maybe_sent END WHERE id = ?",
                (
                    "abandoned" if abandon else "pending",
                    error[:500],
                    self._now(),
                    int(maybe_sent),
                    item_id,
                ),
            )

    # --- upkeep -------------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Entries not delivered, by state (``outbox_pending`` ...)."""
        rows = self.store.query(
            "SELECT 'outbox_' || state, count(*) FROM outbox_entries "
            "WHERE state IN ('pending', 'attempting', 'abandoned') GROUP BY state"
        )
        return {str(name): int(count) for name, count in rows}

    def prune(self, older_than_seconds: float = 7 * 86_400) -> None:
        """Forget delivered and abandoned entries after a week."""
        with self.store.write() as cursor:
            cursor.execute(
                "DELETE FROM outbox_entries WHERE state IN ('delivered', 'abandoned') "
                "AND updated_at < ?",
                (self._now() - older_than_seconds,),
            )
