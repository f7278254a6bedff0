"""Named leases in the state store: "only one of these runs", across processes and hosts.

Some work must be done by one process at a time even when several serve one home: the chat
platforms' connections of a team's gateway workers (Telegram lets one poller in), say. The
process that holds the lease named for it does that work; it renews the lease while it
runs, and when it dies another process takes the lease over::

    leases = Leases(runtime.plugin_store(LEASES))
    await hold(leases, "gateway-platforms", new_holder(), 15.0, on_change)
    # on_change(True): start the connections; on_change(False): stop them

A lease names its holder (``host:pid:token``, :func:`new_holder`) and expires ``ttl`` seconds
after its last renewal. Another process takes it once it expired, or at once if its holder
was a process on the same host that no longer runs (a crash); on another host only expiry
tells, so a dead host's lease moves after at most ``ttl`` plus one renewal interval. A
holder that stalls past ``ttl`` (a frozen VM) loses the lease to another and learns it at
its next renewal: for that moment both may act, so keep work under a lease safe to repeat.
Fields and functions may be added in minor SDK versions.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable

from hermes_sdk.storage import Store, StoreSchema

__all__ = ["LEASES", "Leases", "hold", "holder_is_dead", "new_holder"]

LEASES = StoreSchema(
    name="leases",
    migrations=(
        """
        CREATE TABLE IF NOT EXISTS leases_held (
            name TEXT PRIMARY KEY,
            holder TEXT NOT NULL,
            acquired_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            previous TEXT
        );
        """,
    ),
    postgresql=(
        """
        CREATE TABLE leases_held (
            name TEXT PRIMARY KEY,
            holder TEXT NOT NULL,
            acquired_at DOUBLE PRECISION NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            previous TEXT
        );
        """,
    ),
)
"""The table leases live in: open it with ``runtime.plugin_store(LEASES)`` (or
``open_store``); every plugin that uses leases shares it."""


def new_holder() -> str:
    """A holder name for this process: ``host:pid:token`` (a fresh token each call)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def holder_is_dead(holder: str) -> bool:
    """Whether ``holder`` (from :func:`new_holder`) was a process of this host that no
    longer runs. False for another host's: from here only expiry can tell."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, run by another user
    return False


class Leases:
    """Leases in a store opened with :data:`LEASES`. Each call is one short write
    transaction: call it from a worker thread, or through ``store.run`` from a loop."""

    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self._now = clock

    def take(self, name: str, holder: str, ttl: float) -> bool:
        """Take or renew the lease ``name`` for ``ttl`` seconds; False if another live
        holder has it."""
        now = self._now()
        with self.store.write() as cursor:
            rows = cursor.execute(
                "SELECT holder, expires_at FROM leases_held WHERE name = ?", (name,)
            ).fetchall()
            if rows:
                current, expires_at = str(rows[0][0]), float(rows[0][1])
                if current != holder and expires_at > now and not holder_is_dead(current):
                    return False
            cursor.execute(
                "INSERT INTO leases_held (name, holder, acquired_at, expires_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
                "holder = excluded.holder, expires_at = excluded.expires_at, "
                "acquired_at = CASE WHEN leases_held.holder = excluded.holder "
                "THEN leases_held.acquired_at ELSE excluded.acquired_at END, "
                "previous = CASE WHEN leases_held.holder = excluded.holder "
                "THEN leases_held.previous ELSE leases_held.holder END",
                (name, holder, now, now + ttl),
            )
        return True

    def release(self, name: str, holder: str) -> None:
        """Give the lease up (if ``holder`` still has it), so another takes it at once."""
        with self.store.write() as cursor:
            cursor.execute("DELETE FROM leases_held WHERE name = ? AND holder = ?", (name, holder))

    def previous(self, name: str) -> str | None:
        """Who held ``name`` before its holder took it over from them (None: nobody, or
        they released it): the one whose unfinished work the new holder settles."""
        value = self.store.query_value("SELECT previous FROM leases_held WHERE name = ?", (name,))
        return None if value is None else str(value)

    def holder(self, name: str) -> str | None:
        """Who holds ``name`` now (None: nobody, or its lease expired)."""
        value = self.store.query_value(
            "SELECT holder FROM leases_held WHERE name = ? AND expires_at > ?",
            (name, self._now()),
        )
        return None if value is None else str(value)


async def hold(
    leases: Leases,
    name: str,
    holder: str,
    ttl: float,
    on_change: Callable[[bool], Awaitable[None]],
) -> None:
    """Try to hold ``name`` until cancelled: ``on_change`` first with whether the first try
    won the lease, then ``on_change(True)`` when it is won and ``on_change(False)`` when it
    is lost (never twice the same in a row). Renews every
    ``ttl / 3`` seconds. A store that fails to answer counts as losing the lease once 90%
    of ``ttl`` passed since the last renewal: another may hold it by then. Cancelled, it
    releases the lease, so another process takes it at once."""
    leading: bool | None = None
    renewed = time.monotonic()
    try:
        while True:
            try:
                held = await leases.store.run(leases.take, name, holder, ttl)
            except Exception:  # noqa: BLE001 - a store that stops answering is retried
                held = bool(leading) and time.monotonic() - renewed < ttl * 0.9
            if held:
                renewed = time.monotonic()
            if held != leading:
                leading = held
                await on_change(held)
            await asyncio.sleep(ttl / 3)
    finally:
        if leading:
            with contextlib.suppress(Exception):  # it expires anyway
                await leases.store.run(leases.release, name, holder)
