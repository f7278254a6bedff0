"""Which gateway worker answers which message, when several serve one store.

Every gateway process is a worker, named like a lease holder (``host:pid:token``). A message
in the inbox is taken (``worker`` set) by one worker in one write transaction, and only if
it is the oldest open message of its route: a route's next message waits until its current
one is done, so each chat is answered in order, one turn per session at a time, whichever
worker runs it. A claim is one conditional ``UPDATE`` (``worker IS NULL``), so two workers
never take the same message, and it waits for no other write: on PostgreSQL the row locks
decide, and ``SKIP LOCKED`` passes over the rows another worker is claiming that moment.
That a route's oldest open message is its current one holds because messages are stored
under one key (:data:`~hermes_plugin_gateway.ledger.INTAKE_KEY`): their ids grow in the
order their batches commit, so no older one can appear after a newer one was taken.

Workers are the members of ``gateway-worker`` (:class:`hermes_commons.leases.Members`): each
renews a lease of its own once a second. One that has not for ``timeout`` seconds, or whose
process on this host is gone, is dead: what it took goes back to the inbox, and a turn it
had started is resumed by another worker, once, as after a crash. A worker's writes for a
message it took (the turn starting, the reply) only count while it still holds the message,
so a worker taken for dead that wakes up cannot answer twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from hermes_commons.leases import Members, acquire_in, member_sql, release_in
from hermes_commons.outbox import SENDER
from hermes_plugin_gateway.ledger import (
    INBOX_COLUMNS,
    OPEN_STATES,
    InboxItem,
    changed_rows,
    inbox_item,
)
from hermes_sdk.storage import Store

__all__ = ["Claims", "Pulse"]


@dataclass(frozen=True)
class Pulse:
    """What a worker learns when it says it is alive."""

    peers: int
    """Other live workers."""
    freed: int
    """Messages taken back from dead workers."""
    to_stop: tuple[int, ...]
    """This worker's running messages whose chat asked to /stop."""
    was_dead: bool
    """This worker had been taken for dead (it stalled): what it held went to others."""


WORKERS = "gateway-worker"
"""The members' group: each worker's lease is ``gateway-worker/HOLDER``."""
_MEMBERS, _GROUP = member_sql(WORKERS)


class Claims:
    def __init__(
        self,
        store: Store,
        worker: str,
        timeout: float = 15.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.members = Members(WORKERS, worker, timeout, clock)
        self._now = clock

    @property
    def worker(self) -> str:
        return self.members.holder

    def claim(self, platforms: Sequence[str] | None, limit: int) -> list[InboxItem]:
        """Take up to ``limit`` messages that may run now, oldest first: each the oldest
        open one of its route, with none of the route's taken. ``platforms``: only these
        platforms' (None: any). A message that came with files is taken only by the worker
        that stored it (they are on its disk), or by any once that worker is gone. Reads
        first, so an idle poll takes no write lock."""
        if limit <= 0 or platforms == []:
            return []
        worker = self.worker  # once: a rename (another thread) must not split a claim
        sql, bindings = _claimable(platforms, limit, worker)
        if not self.store.query(sql, bindings):
            return []
        skip = " FOR UPDATE OF i SKIP LOCKED" if self.store.dialect == "postgresql" else ""
        # The candidates are chosen once (MATERIALIZED): a subquery run again for each row
        # would see the rows this UPDATE took as taken and choose past the limit.
        with self.store.write(serialized=False) as cursor:
            rows = cursor.execute(
                f"WITH c AS MATERIALIZED ({sql}{skip}) UPDATE gateway_inbox SET worker = ? "
                f"WHERE worker IS NULL AND state IN {OPEN_STATES} AND id IN (SELECT id FROM c) "
                f"RETURNING {INBOX_COLUMNS}",
                (*bindings, worker),
            ).fetchall()
        items = [replace(inbox_item(row), worker=worker) for row in rows]
        return sorted(items, key=lambda item: item.id)

    def rename(self, worker: str) -> None:
        """Go on under a new name (a worker taken for dead): what it holds under the old
        one is no longer its to write, so a turn still running there cannot answer."""
        self.members.rename(worker)

    def pulse(self, alone: bool = False, *, sending: bool = False) -> Pulse:
        """Say this worker is alive (:meth:`Members.beat_in`); free what dead workers took;
        and read which of this worker's turns a /stop from another worker's chat asked to
        stop. ``alone``: no other worker can share this store (a SQLite home). ``sending``:
        it sends from the delivery ledger (it holds the platforms), so it holds the
        ledger's sender lease too, for as long as it is heard. Written under the group's
        key: the members' leases and the sender's change only here and in :meth:`leave`,
        and the messages it frees are single-row changes a claim's row lock orders, so a
        pulse waits for no turn, nor a turn for it."""
        with self.store.write(key=WORKERS) as cursor:
            beat = self.members.beat_in(cursor, alone=alone)
            if sending:
                acquire_in(cursor, SENDER, self.worker, self.members.timeout)
            else:
                release_in(cursor, SENDER, self.worker)
            freed = 0
            if beat.gone or beat.joined or beat.was_gone:
                freed = changed_rows(
                    cursor,
                    f"UPDATE gateway_inbox SET worker = NULL WHERE state IN {OPEN_STATES} "
                    f"AND worker IS NOT NULL AND worker NOT IN ({_MEMBERS}) RETURNING 1",
                    (_GROUP,),
                )
            to_stop = cursor.execute(
                "SELECT id FROM gateway_inbox WHERE worker = ? AND stop_requested = 1 "
                "AND state IN ('running', 'resuming')",
                (self.worker,),
            ).fetchall()
        return Pulse(
            peers=beat.peers,
            freed=freed,
            to_stop=tuple(int(row[0]) for row in to_stop),
            was_dead=beat.was_gone,
        )

    def request_stop(self, route_key: str) -> tuple[int, bool]:
        """``/stop`` in a chat: drop its waiting messages and an interrupted turn waiting to
        be resumed, and ask whichever worker runs its turn to stop it. How many waiting
        messages were dropped, and whether a turn was running (or about to resume)."""
        now = self._now()
        with self.store.write() as cursor:
            dropped = changed_rows(
                cursor,
                "UPDATE gateway_inbox SET state = 'dropped', updated_at = ? "
                "WHERE route_key = ? AND state = 'queued' RETURNING 1",
                (now, route_key),
            )
            interrupted = changed_rows(
                cursor,
                "UPDATE gateway_inbox SET state = 'dropped', updated_at = ? WHERE route_key = ? "
                "AND state IN ('running', 'resuming') AND worker IS NULL RETURNING 1",
                (now, route_key),
            )
            running = changed_rows(
                cursor,
                "UPDATE gateway_inbox SET stop_requested = 1, updated_at = ? "
                "WHERE route_key = ? AND state IN ('running', 'resuming') RETURNING 1",
                (now, route_key),
            )
        return dropped, running + interrupted > 0

    def leave(self) -> int:
        """A worker that stops: what it took and did not finish goes back to the inbox (a
        turn its stop interrupted resumes elsewhere, or at the next start), and it is no
        longer counted as alive. How many messages it gave back."""
        with self.store.write(key=WORKERS) as cursor:
            given = changed_rows(
                cursor,
                "UPDATE gateway_inbox SET worker = NULL "
                f"WHERE worker = ? AND state IN {OPEN_STATES} RETURNING 1",
                (self.worker,),
            )
            self.members.leave_in(cursor)
            release_in(cursor, SENDER, self.worker)
        return given


def _claimable(
    platforms: Sequence[str] | None, limit: int, worker: str
) -> tuple[str, tuple[object, ...]]:
    only = (
        "AND (i.attachments IS NULL OR i.taken_in_by IS NULL OR i.taken_in_by = ? "
        f"OR i.taken_in_by NOT IN ({_MEMBERS})) "
    )
    if platforms is not None:
        only += f"AND i.platform IN ({', '.join('?' for _ in platforms)}) "
    sql = (
        f"SELECT {', '.join('i.' + c for c in INBOX_COLUMNS.split(', '))} FROM gateway_inbox i "
        f"WHERE i.state IN {OPEN_STATES} AND i.worker IS NULL {only}"
        "AND NOT EXISTS (SELECT 1 FROM gateway_inbox o WHERE o.route_key = i.route_key "
        f"AND o.state IN {OPEN_STATES} AND o.id < i.id) ORDER BY i.id LIMIT ?"
    )
    return sql, (worker, _GROUP, *(platforms or ()), limit)
