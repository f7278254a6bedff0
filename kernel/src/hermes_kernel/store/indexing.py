"""Bring the full-text indexes up to date with the messages table, in one batch."""

from __future__ import annotations

from hermes_kernel.store.backend import Dialect, StoreBackend, scalar


def index_pending(db: StoreBackend) -> int:
    """Index every message not indexed yet; return how many. Cheap when there are none.
    PostgreSQL indexes each row as it is written: nothing is ever pending there."""
    if db.dialect is not Dialect.SQLITE:
        return 0
    with db.write() as cursor:
        upto = int(scalar(cursor, "SELECT indexed_upto FROM fts_progress WHERE id = 1") or 0)
        newest = int(scalar(cursor, "SELECT coalesce(max(id), 0) FROM messages") or 0)
        if newest <= upto:
            return 0
        added = 0
        for table in ("messages_words", "messages_trigrams"):
            cursor.execute(
                f"INSERT INTO {table}(rowid, content) SELECT id, coalesce(content, '') "
                "FROM messages WHERE id > ? AND id <= ? ORDER BY id",
                (upto, newest),
            )
            added = int(cursor.changes())
        cursor.execute("UPDATE fts_progress SET indexed_upto = ? WHERE id = 1", (newest,))
        return added
