"""Who owns what across processes and hosts, and whether the owner is still alive.

One primitive, used by everything that owns something while several processes (a team's
gateway workers, on several hosts) share one store:

- a **holder** names the process that owns (:func:`new_holder`, :class:`Holder`): its host
  and pid namespace, its pid, the moment the process started (so a pid reused by another
  process does not pass for the dead one) and a random token;
- a **lease** is a named ownership with an expiry, in the one table :data:`LEASES`: taken,
  renewed while held, released, taken over once it expired or at once when its holder was a
  process of this host that is gone; ``previous`` names whom a takeover displaced, so the new
  holder settles what they left (:class:`Leases`, :func:`hold`);
- **members** are processes of one group that each keep a lease of their own while they live
  (:class:`Members`: the gateway's workers); rows a member claimed by naming it (a message
  in the inbox, a scheduled run) go back when it is no longer a member
  (:func:`member_sql`).

Turn leases (``turn:SESSION``), the gateway's platforms and workers, and cron's scheduler
all live in that table::

    leases = Leases(runtime.plugin_store(LEASES))
    await hold(leases, "gateway-platforms", new_holder(), 15.0, on_change)
    # on_change(True): start the connections; on_change(False): stop them

Another process takes a lease once it expired, or at once if its holder was a process on the
same host that no longer runs (a crash); on another host only expiry tells, so a dead host's
lease moves after at most ``ttl`` plus one renewal interval. A holder whose renewals stop
going through steps down before its lease expires; one frozen whole past ``ttl`` (a
suspended VM) learns it has lost the lease only as it wakes, and for that moment both may
act: keep work under a lease safe to repeat.
Fields and functions may be added in minor SDK versions.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hermes_sdk.storage import Store, StoreSchema

__all__ = [
    "LEASES",
    "Beat",
    "Executes",
    "Holder",
    "Leases",
    "Members",
    "acquire_in",
    "hold",
    "holder_is_dead",
    "member_sql",
    "new_holder",
    "release_in",
    "renew_in",
    "this_host",
    "this_process",
]

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
"""The one table of leases. Every store has it: the store engines make it as they open a
store, and ``runtime.plugin_store(LEASES)`` (or ``open_store``) hands it to a plugin."""


# --- holders ---------------------------------------------------------------------------------


def this_host() -> str:
    """Where this process's pid means something: the host name, and the pid namespace when
    the system tells it (``host@4026531836``). Containers that share a host name (host
    networking) have pid namespaces of their own, and one's pids say nothing of another's."""
    return _this_host()


@functools.cache
def _this_host() -> str:
    try:
        namespace = os.readlink("/proc/self/ns/pid").partition("[")[2].rstrip("]")
    except OSError:
        namespace = ""
    host = socket.gethostname().replace(":", "-")
    return f"{host}@{namespace}" if namespace else host


def _started(pid: int) -> str:
    """When process ``pid`` started, in the kernel's clock ticks since boot ('' where the
    system does not tell): with the pid, it names one process, not whoever has the pid now."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
    except OSError:
        return ""
    return fields[19].decode() if len(fields) > 19 else ""  # field 22: starttime


@dataclass(frozen=True)
class Holder:
    """A holder name taken apart: ``HOST:PID:STARTED-TOKEN`` (names of earlier versions,
    ``HOST:PID:TOKEN`` and cron's ``HOST:PID``, are read too: their start is unknown)."""

    host: str
    pid: int | None
    started: str
    token: str

    @classmethod
    def parse(cls, name: str) -> Holder:
        host, _, rest = name.partition(":")
        pid_text, _, tail = rest.partition(":")
        started, dash, token = tail.partition("-")
        if not dash:  # no start recorded: the tail is the token
            started, token = "", tail
        return cls(host, int(pid_text) if pid_text.isdigit() else None, started, token)

    def __str__(self) -> str:
        return f"{self.host}:{self.pid}:{self.started}-{self.token}"

    @property
    def on_this_host(self) -> bool:
        """Whether the process was one of this host (and pid namespace); a holder named
        before names told the pid namespace carries the bare host name."""
        return self.host in {this_host(), socket.gethostname()}

    def is_alive(self) -> bool:
        """Whether this is a process of this host that still runs (the same process: its
        start agrees, where the name records one)."""
        return self.on_this_host and self.pid is not None and not self.is_gone()

    def is_gone(self) -> bool:
        """Whether this was a process of this host that no longer runs (or whose pid another
        process has taken since). False for another host's: from here only expiry tells."""
        if not self.on_this_host or self.pid is None:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass  # alive, run by another user
        return bool(self.started) and _started(self.pid) not in {"", self.started}


def new_holder() -> str:
    """A holder name for this process, with a fresh token each call (a turn's, say, so two
    turns of one process exclude each other too)."""
    return str(Holder(this_host(), os.getpid(), _started(os.getpid()), secrets.token_hex(4)))


def this_process() -> str:
    """This process's one holder name (the same at every call): the owner of what it starts,
    such as a scheduled run."""
    return _this_process(os.getpid())  # a fork is another process: another name


@functools.cache
def _this_process(pid: int) -> str:
    return new_holder()


def holder_is_dead(holder: str) -> bool:
    """Whether ``holder`` was a process of this host that no longer runs."""
    return Holder.parse(holder).is_gone()


# --- leases ----------------------------------------------------------------------------------


class Executes(Protocol):
    """A write transaction's cursor, as the functions ``*_in`` need it (a plugin's
    :class:`~hermes_sdk.storage.StoreCursor`, or the kernel's)."""

    def execute(self, statements: str, bindings: Sequence[Any] = ..., /) -> Any: ...


def acquire_in(
    cursor: Executes, name: str, holder: str, ttl: float, now: float | None = None
) -> tuple[str, float] | None:
    """Take or renew the lease ``name`` inside the caller's write transaction: None when
    ``holder`` has it now, else the live holder and the seconds its lease has left."""
    now = time.time() if now is None else now
    # One statement when it is free, expired or ours (the usual case); the holder is read
    # only when it is another's, to see whether that holder's process is gone.
    taken = cursor.execute(
        f"{_TAKE} WHERE leases_held.holder = excluded.holder OR leases_held.expires_at <= ? "
        "RETURNING 1",
        (name, holder, now, now + ttl, now),
    ).fetchall()
    if taken:
        return None
    rows = cursor.execute(
        "SELECT holder, expires_at FROM leases_held WHERE name = ?", (name,)
    ).fetchall()
    if rows:
        current, expires_at = str(rows[0][0]), float(rows[0][1])
        if current != holder and expires_at > now and not holder_is_dead(current):
            return current, expires_at - now
    cursor.execute(_TAKE, (name, holder, now, now + ttl))
    return None


_TAKE = (
    "INSERT INTO leases_held (name, holder, acquired_at, expires_at) "
    "VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
    "holder = excluded.holder, expires_at = excluded.expires_at, "
    "acquired_at = CASE WHEN leases_held.holder = excluded.holder "
    "THEN leases_held.acquired_at ELSE excluded.acquired_at END, "
    "previous = CASE WHEN leases_held.holder = excluded.holder "
    "THEN leases_held.previous ELSE leases_held.holder END"
)
"""Take a lease whoever holds it (the one it was taken from is kept as ``previous``)."""


def renew_in(cursor: Executes, name: str, holder: str, ttl: float) -> bool:
    """Extend ``holder``'s lease; False if it no longer holds it (expired and taken, or
    judged gone)."""
    rows = cursor.execute(
        "UPDATE leases_held SET expires_at = ? WHERE name = ? AND holder = ? RETURNING 1",
        (time.time() + ttl, name, holder),
    ).fetchall()
    return bool(rows)


def release_in(cursor: Executes, name: str, holder: str) -> None:
    """Give the lease up (if ``holder`` still has it), so another takes it at once."""
    cursor.execute("DELETE FROM leases_held WHERE name = ? AND holder = ?", (name, holder))


class Leases:
    """Leases in a store that has :data:`LEASES`. Each call is one short write transaction:
    call it from a worker thread, or through ``store.run`` from a loop.

    Each is written under the lease's name as its key (``store.write(key=NAME)``), so it
    waits only for changes of that lease. One lease must always be changed under one key:
    code that changes it inside a write of its own (:func:`acquire_in`) uses the name as
    key too, or a key it alone uses for that lease (the gateway's heartbeat changes its
    members' leases and the ledger's sender lease under its group's key, and nothing else
    changes them), or a write with no key, which waits for every keyed one."""

    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self._now = clock

    def take(self, name: str, holder: str, ttl: float) -> bool:
        """Take or renew the lease ``name`` for ``ttl`` seconds; False if another live
        holder has it. Each call writes under the key ``name``: it waits for other changes
        of that lease only (and for writes with no key)."""
        with self.store.write(key=name) as cursor:
            return acquire_in(cursor, name, holder, ttl, self._now()) is None

    def renew(self, name: str, holder: str, ttl: float) -> bool:
        with self.store.write(key=name) as cursor:
            return renew_in(cursor, name, holder, ttl)

    def release(self, name: str, holder: str) -> None:
        with self.store.write(key=name) as cursor:
            release_in(cursor, name, holder)

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


# --- members, and the rows they claim --------------------------------------------------------


def member_sql(group: str) -> tuple[str, str]:
    """``(sql, binding)``: a subquery of the holders that are members of ``group`` now, for a
    claim's test (``worker NOT IN (sql)``: the row's claimant is gone). ``%`` and ``_`` in
    the group's name are matched as themselves."""
    return f"SELECT holder FROM leases_held WHERE name {_IN_GROUP}", _group_pattern(group)


_IN_GROUP = "LIKE ? ESCAPE '!'"
"""Not a backslash: a PostgreSQL without standard_conforming_strings would read '\\' as an
unterminated string."""


def _group_pattern(group: str) -> str:
    """What LIKE matches the leases of ``group``'s members with (``GROUP/...``)."""
    escaped = group.replace("!", "!!").replace("%", "!%").replace("_", "!_")
    return f"{escaped}/%"


@dataclass(frozen=True)
class Beat:
    """What a member learns when it says it is alive."""

    peers: int
    """Other live members."""
    gone: tuple[str, ...]
    """Members judged gone at this beat (their leases are removed)."""
    was_gone: bool
    """This member had been judged gone by another (it stalled): it starts over."""
    joined: bool
    """This beat made it a member (its first, or the first under a new name)."""


class Members:
    """Processes of ``group`` that say they are alive, each by renewing a lease of its own
    (``GROUP/HOLDER``, ``timeout`` seconds). Call :meth:`beat_in` in a write transaction every
    second or so; a member that has not beaten for ``timeout`` seconds, or whose process on
    this host is gone, is judged gone by the next member to beat."""

    def __init__(
        self,
        group: str,
        holder: str,
        timeout: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.group = group
        self.holder = holder
        self.timeout = timeout
        self._now = clock
        self._joined = False

    def rename(self, holder: str) -> None:
        """Go on as a new member (one judged gone may not come back under its old name)."""
        self.holder = holder
        self._joined = False

    def beat_in(self, cursor: Executes, *, alone: bool = False) -> Beat:
        """Renew this member's lease (joining, the first time); judge the others.

        Times are each host's clock (keep them in sync), read once the write lock is held,
        so waiting for it does not age the stamp. A member that was itself unheard for half
        the timeout (the store stalled for everyone) judges no other this time: they may have
        waited for the same lock. ``alone``: no other process can share this store (a SQLite
        home): every other member is a process of the past."""
        now = self._now()
        name = f"{self.group}/{self.holder}"
        last = cursor.execute(
            "SELECT expires_at FROM leases_held WHERE name = ? AND holder = ?",
            (name, self.holder),
        ).fetchall()
        # Its last beat was at expires_at - timeout: judging if that is under timeout/2 ago.
        judging = not last or float(last[0][0]) > now + self.timeout / 2
        was_gone = self._joined and not last
        joined = not self._joined and not was_gone
        if was_gone:
            judging = False  # it stalled itself: the others may have waited for it
        else:
            acquire_in(cursor, name, self.holder, self.timeout, now)
        self._joined = not was_gone
        others = cursor.execute(
            f"SELECT name, holder, expires_at FROM leases_held WHERE name {_IN_GROUP} "
            "AND name <> ?",
            (_group_pattern(self.group), name),
        ).fetchall()
        gone = [
            (str(lease), str(holder))
            for lease, holder, expires_at in others
            if alone or (judging and float(expires_at) < now) or holder_is_dead(str(holder))
        ]
        for lease, holder in gone:
            cursor.execute("DELETE FROM leases_held WHERE name = ? AND holder = ?", (lease, holder))
        return Beat(
            peers=len(others) - len(gone),
            gone=tuple(holder for _, holder in gone),
            was_gone=was_gone,
            joined=joined,
        )

    def leave_in(self, cursor: Executes) -> None:
        """No longer a member (a clean stop): the others need not wait to judge it gone."""
        release_in(cursor, f"{self.group}/{self.holder}", self.holder)
