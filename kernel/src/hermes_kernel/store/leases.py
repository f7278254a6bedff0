"""Turn leases: at most one process runs a turn on a session at a time.

A lease names its holder (host, pid and a random token) and expires; the holder renews it
while the turn runs. Another process may take a lease that has expired, or one whose holder
is a process on this host that no longer exists (it crashed), without waiting for expiry.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hermes_commons.leases import holder_is_dead, new_holder
from hermes_kernel.store.backend import StoreBackend
from hermes_kernel.store.errors import LeaseHeldError

__all__ = ["DEFAULT_TTL_SECONDS", "TurnLeases", "acquire_in", "new_holder", "release_in"]

DEFAULT_TTL_SECONDS = 60.0


def acquire_in(cursor: Any, session_id: str, holder: str, ttl: float) -> None:
    """:meth:`TurnLeases.acquire` inside the caller's write transaction."""
    now = time.time()
    rows = cursor.execute(
        "SELECT holder, expires_at FROM turn_leases WHERE session_id = ?", (session_id,)
    ).fetchall()
    if rows:
        current, expires_at = str(rows[0][0]), float(rows[0][1] or 0)
        if current != holder and expires_at > now and not holder_is_dead(current):
            raise LeaseHeldError(session_id, current, expires_at - now)
    cursor.execute(
        "INSERT INTO turn_leases (session_id, holder, acquired_at, expires_at) "
        "VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
        "holder = excluded.holder, acquired_at = excluded.acquired_at, "
        "expires_at = excluded.expires_at",
        (session_id, holder, now, now + ttl),
    )


def release_in(cursor: Any, session_id: str, holder: str) -> None:
    """:meth:`TurnLeases.release` inside the caller's write transaction."""
    cursor.execute(
        "DELETE FROM turn_leases WHERE session_id = ? AND holder = ?", (session_id, holder)
    )


class TurnLeases:
    def __init__(self, db: StoreBackend) -> None:
        self._db = db

    def acquire(self, session_id: str, holder: str, ttl: float = DEFAULT_TTL_SECONDS) -> None:
        """Take the lease, or raise LeaseHeldError naming the live holder."""
        with self._db.write() as cursor:
            acquire_in(cursor, session_id, holder, ttl)

    def renew(self, session_id: str, holder: str, ttl: float = DEFAULT_TTL_SECONDS) -> bool:
        """Extend our lease; False if we no longer hold it (it expired and was taken)."""
        with self._db.write() as cursor:
            cursor.execute(
                "UPDATE turn_leases SET expires_at = ? WHERE session_id = ? AND holder = ?",
                (time.time() + ttl, session_id, holder),
            )
            return bool(cursor.changes())

    @contextmanager
    def holding(self, session_id: str, ttl: float = 30.0) -> Iterator[None]:
        """Hold the lease for a change made outside a turn (``/undo``, a delete); raises
        LeaseHeldError if a turn runs on the session, here or in another process."""
        holder = new_holder()
        self.acquire(session_id, holder, ttl)
        try:
            yield
        finally:
            self.release(session_id, holder)

    def release(self, session_id: str, holder: str) -> None:
        with self._db.write() as cursor:
            release_in(cursor, session_id, holder)

    def holder(self, session_id: str) -> str | None:
        value = self._db.query_value(
            "SELECT holder FROM turn_leases WHERE session_id = ? AND expires_at > ?",
            (session_id, time.time()),
        )
        return str(value) if value is not None else None
