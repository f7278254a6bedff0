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
holder whose renewals stop going through steps down before its lease expires; one frozen
whole past ``ttl`` (a suspended VM) learns it has lost the lease only as it wakes, and for
that moment both may act: keep work under a lease safe to repeat.
Fields and functions may be added in minor SDK versions.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable

from hermes_sdk.storage import Store, StoreSchema

__all__ = ["LEASES", "Leases", "hold", "holder_is_dead", "new_holder", "this_host"]

log = logging.getLogger("hermes.leases")

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


def this_host() -> str:
    """Where this process's pid means something: the host name, and the pid namespace when
    the system tells it (``host@4026531836``). Containers that share a host name (host
    networking) have pid namespaces of their own, and one's pids say nothing of another's."""
    try:
        namespace = os.readlink("/proc/self/ns/pid").partition("[")[2].rstrip("]")
    except OSError:
        namespace = ""
    host = socket.gethostname().replace(":", "-")
    return f"{host}@{namespace}" if namespace else host


def new_holder() -> str:
    """A holder name for this process: ``host:pid:token`` (a fresh token each call; host
    as :func:`this_host` gives it)."""
    return f"{this_host()}:{os.getpid()}:{secrets.token_hex(4)}"


def holder_is_dead(holder: str) -> bool:
    """Whether ``holder`` (from :func:`new_holder`) was a process of this host (and pid
    namespace) that no longer runs. False for another's: from here only expiry can tell."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    # The bare host name: a holder named before names told the pid namespace.
    if host not in {this_host(), socket.gethostname()} or not pid_text.isdigit():
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
    is lost (never twice the same in a row). Renews every ``ttl / 4`` seconds. A renewal
    that fails, or has not gone through by three quarters of ``ttl`` after the last one
    began, counts as losing the lease: the holder steps down before the lease can expire
    for the others. An ``on_change(True)`` that raises gives the lease back and is tried
    again at the next renewal. Cancelled, it releases the lease, so another process takes
    it at once."""
    leading: bool | None = None
    renewed = time.monotonic()  # when the last renewal that went through was begun
    try:
        while True:
            begun = time.monotonic()
            # Holding it, this process must know it lost the lease before the lease can
            # expire for the others (a quarter of ``ttl`` before): a renewal that takes
            # longer than that counts as lost, so two holders never act at once.
            budget = renewed + 0.75 * ttl - begun if leading else ttl / 4
            try:
                async with asyncio.timeout(max(0.01, budget)):
                    held = await leases.store.run(leases.take, name, holder, ttl)
            except Exception:  # noqa: BLE001 - a store that stops answering is retried
                held = False
            if held:
                renewed = begun
            if held != leading:
                try:
                    await on_change(held)
                except Exception as exc:  # noqa: BLE001 - tried again at the next renewal
                    log.warning("lease %s: taking it up failed (%s); giving it back", name, exc)
                    with contextlib.suppress(Exception):
                        await leases.store.run(leases.release, name, holder)
                    leading = None
                else:
                    leading = held
            await asyncio.sleep(ttl / 4)
    finally:
        if leading:
            with contextlib.suppress(Exception):  # it expires anyway
                await leases.store.run(leases.release, name, holder)
