"""Turn leases: at most one process runs a turn on a session at a time.

Each is the lease ``turn:SESSION`` in the store's one leases table
(:mod:`hermes_commons.leases`, which every process that owns something shares): it names
its holder (host, pid, the process's start and a random token) and expires; the holder
renews it while the turn runs. Another process may take a lease that has expired, or one
whose holder is a process on this host that no longer exists (it crashed), without waiting
for expiry.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hermes_commons.leases import acquire_in as acquire_lease_in
from hermes_commons.leases import new_holder, renew_in
from hermes_commons.leases import release_in as release_lease_in
from hermes_kernel.store.backend import StoreBackend
from hermes_kernel.store.errors import LeaseHeldError

__all__ = [
    "DEFAULT_TTL_SECONDS",
    "TurnLeases",
    "acquire_in",
    "new_holder",
    "release_in",
    "session_key",
]

DEFAULT_TTL_SECONDS = 60.0


def lease_name(session_id: str) -> str:
    return f"turn:{session_id}"


def session_key(session_id: str) -> str:
    """The write key of one session's rows (its messages, counts, compactions, its turn
    lease): its lease's name, so a turn's first write and a lease's change wait for each
    other and for nothing of other sessions."""
    return lease_name(session_id)


def acquire_in(cursor: Any, session_id: str, holder: str, ttl: float) -> None:
    """:meth:`TurnLeases.acquire` inside the caller's write transaction."""
    refused = acquire_lease_in(cursor, lease_name(session_id), holder, ttl)
    if refused is not None:
        raise LeaseHeldError(session_id, *refused)


def release_in(cursor: Any, session_id: str, holder: str) -> None:
    """:meth:`TurnLeases.release` inside the caller's write transaction."""
    release_lease_in(cursor, lease_name(session_id), holder)


class TurnLeases:
    def __init__(self, db: StoreBackend) -> None:
        self._db = db

    def acquire(self, session_id: str, holder: str, ttl: float = DEFAULT_TTL_SECONDS) -> None:
        """Take the lease, or raise LeaseHeldError naming the live holder."""
        with self._db.write(key=session_key(session_id)) as cursor:
            acquire_in(cursor, session_id, holder, ttl)

    def renew(self, session_id: str, holder: str, ttl: float = DEFAULT_TTL_SECONDS) -> bool:
        """Extend our lease; False if we no longer hold it (it expired and was taken)."""
        with self._db.write(key=session_key(session_id)) as cursor:
            return renew_in(cursor, lease_name(session_id), holder, ttl)

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
        with self._db.write(key=session_key(session_id)) as cursor:
            release_in(cursor, session_id, holder)

    def holder(self, session_id: str) -> str | None:
        value = self._db.query_value(
            "SELECT holder FROM leases_held WHERE name = ? AND expires_at > ?",
            (lease_name(session_id), time.time()),
        )
        return str(value) if value is not None else None
