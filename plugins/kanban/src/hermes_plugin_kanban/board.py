"""The board's operations: each one short write transaction that changes a task and records
the change as an event, so the run history holds every transition.

Called from a worker thread (or through ``store.run``); every method raises
:class:`KanbanError` (one line, saying what to do) for a request that cannot be done, and
the store's errors for a store that cannot be written.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_commons.leases import acquire_in, holder_is_dead, release_in, renew_in
from hermes_plugin_kanban.schema import STATUSES
from hermes_sdk.storage import Store, StoreCursor

__all__ = [
    "ACTIVE",
    "DEFAULT_BOARD",
    "NOTIFIED",
    "TASK_ID",
    "Board",
    "Event",
    "KanbanError",
    "Run",
    "Task",
    "event_in",
    "lease_name",
    "promote_in",
]

DEFAULT_BOARD = "default"
TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
"""What a task id may be (ours are ``t_`` and 8 hex digits): it names folders and logs."""
ACTIVE = ("triage", "todo", "scheduled", "ready", "running", "blocked", "review")
"""The statuses of a task that is not over."""
NOTIFIED = ("completed", "blocked", "gave_up", "reclaimed", "archived")
"""The events a subscribed chat is told about."""
_TASK_COLUMNS = (
    "id, board, title, body, status, assignee, priority, created_by, created_at, updated_at, "
    "started_at, completed_at, due_at, result, block_reason, current_run, failures, last_profile"
)


class KanbanError(Exception):
    """A request the board cannot do; the message is one line saying what to do."""


def lease_name(task_id: str) -> str:
    """The lease a task's worker holds while it works on it."""
    return f"kanban-task:{task_id}"


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    board: str
    title: str
    body: str | None
    status: str
    assignee: str | None
    priority: int
    created_by: str | None
    created_at: float
    updated_at: float
    started_at: float | None
    completed_at: float | None
    due_at: float | None
    result: str | None
    block_reason: str | None
    current_run: int | None
    failures: int
    last_profile: str | None

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True)
class Run:
    id: int
    task_id: str
    profile: str | None
    status: str
    holder: str | None
    session_id: str | None
    started_at: float
    heartbeat_at: float | None
    ended_at: float | None
    outcome: str | None
    summary: str | None
    error: str | None


@dataclass(frozen=True, slots=True)
class Event:
    id: int
    task_id: str
    run_id: int | None
    kind: str
    payload: dict[str, Any]
    created_at: float


def _task(row: Sequence[Any]) -> Task:
    return Task(*row)


def _event(row: Sequence[Any]) -> Event:
    payload = json.loads(row[4]) if row[4] else {}
    return Event(int(row[0]), str(row[1]), row[2], str(row[3]), payload, float(row[5]))


def event_in(
    cursor: StoreCursor,
    task_id: str,
    kind: str,
    payload: dict[str, Any] | None = None,
    run_id: int | None = None,
) -> None:
    """Record ``kind`` for the task inside the caller's transaction."""
    cursor.execute(
        "INSERT INTO kanban_events (task_id, run_id, kind, payload, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (
            task_id,
            run_id,
            kind,
            json.dumps(payload, ensure_ascii=False) if payload else None,
            time.time(),
        ),
    )


class Board:
    """The kanban tables of one store; ``board`` names the board new tasks go to."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # --- reading ------------------------------------------------------------------------

    def task(self, task_id: str) -> Task:
        rows = self.store.query(
            f"SELECT {_TASK_COLUMNS} FROM kanban_tasks WHERE id = ?", (task_id,)
        )
        if not rows:
            raise KanbanError(f"no task {task_id!r}: hermes kanban list shows them")
        return _task(rows[0])

    def tasks(
        self,
        board: str | None = DEFAULT_BOARD,
        *,
        status: str | None = None,
        assignee: str | None = None,
        archived: bool = False,
        limit: int = 500,
    ) -> list[Task]:
        """Tasks by priority (highest first), then age; archived ones only when asked."""
        where, values = ["1 = 1"], []
        if board is not None:
            where.append("board = ?")
            values.append(board)
        if status is not None:
            where.append("status = ?")
            values.append(status)
        elif not archived:
            where.append("status <> 'archived'")
        if assignee is not None:
            where.append("assignee = ?")
            values.append(assignee)
        rows = self.store.query(
            f"SELECT {_TASK_COLUMNS} FROM kanban_tasks WHERE {' AND '.join(where)} "
            f"ORDER BY priority DESC, created_at ASC LIMIT {int(limit)}",
            values,
        )
        return [_task(row) for row in rows]

    def parents(self, task_id: str) -> list[str]:
        rows = self.store.query(
            "SELECT parent_id FROM kanban_links WHERE child_id = ? ORDER BY parent_id", (task_id,)
        )
        return [str(row[0]) for row in rows]

    def children(self, task_id: str) -> list[str]:
        rows = self.store.query(
            "SELECT child_id FROM kanban_links WHERE parent_id = ? ORDER BY child_id", (task_id,)
        )
        return [str(row[0]) for row in rows]

    def comments(self, task_id: str) -> list[tuple[str, str, float]]:
        rows = self.store.query(
            "SELECT author, body, created_at FROM kanban_comments WHERE task_id = ? ORDER BY id",
            (task_id,),
        )
        return [(str(a), str(b), float(c)) for a, b, c in rows]

    def attachments(self, task_id: str) -> list[tuple[int, str, str, int]]:
        rows = self.store.query(
            "SELECT id, filename, path, size FROM kanban_attachments WHERE task_id = ? ORDER BY id",
            (task_id,),
        )
        return [(int(i), str(f), str(p), int(s)) for i, f, p, s in rows]

    def runs_of(self, task_ids: Sequence[str]) -> dict[str, list[Run]]:
        """Each task's runs, for many tasks in one query."""
        found: dict[str, list[Run]] = {task_id: [] for task_id in task_ids}
        if not task_ids:
            return found
        marks = ", ".join("?" for _ in task_ids)
        rows = self.store.query(
            "SELECT id, task_id, profile, status, holder, session_id, started_at, heartbeat_at, "
            f"ended_at, outcome, summary, error FROM kanban_runs WHERE task_id IN ({marks}) "
            "ORDER BY id",
            list(task_ids),
        )
        for row in rows:
            found[str(row[1])].append(Run(*row))
        return found

    def comments_of(self, task_ids: Sequence[str]) -> dict[str, list[tuple[str, str, float]]]:
        """Each task's comments, for many tasks in one query."""
        found: dict[str, list[tuple[str, str, float]]] = {task_id: [] for task_id in task_ids}
        if not task_ids:
            return found
        marks = ", ".join("?" for _ in task_ids)
        rows = self.store.query(
            "SELECT task_id, author, body, created_at FROM kanban_comments "
            f"WHERE task_id IN ({marks}) ORDER BY id",
            list(task_ids),
        )
        for task_id, author, body, at in rows:
            found[str(task_id)].append((str(author), str(body), float(at)))
        return found

    def recently_done(self, board: str = DEFAULT_BOARD, limit: int = 20) -> list[Task]:
        """The board's last ``limit`` done tasks, the latest first."""
        rows = self.store.query(
            f"SELECT {_TASK_COLUMNS} FROM kanban_tasks WHERE board = ? AND status = 'done' "
            f"ORDER BY coalesce(completed_at, updated_at) DESC LIMIT {int(limit)}",
            (board,),
        )
        return [_task(row) for row in rows]

    def runs(self, task_id: str) -> list[Run]:
        rows = self.store.query(
            "SELECT id, task_id, profile, status, holder, session_id, started_at, heartbeat_at, "
            "ended_at, outcome, summary, error FROM kanban_runs WHERE task_id = ? ORDER BY id",
            (task_id,),
        )
        return [Run(*row) for row in rows]

    def events(
        self, task_id: str | None = None, *, after: int = 0, limit: int = 200
    ) -> list[Event]:
        if task_id is None:
            rows = self.store.query(
                "SELECT id, task_id, run_id, kind, payload, created_at FROM kanban_events "
                f"WHERE id > ? ORDER BY id LIMIT {int(limit)}",
                (after,),
            )
        else:
            rows = self.store.query(
                "SELECT id, task_id, run_id, kind, payload, created_at FROM kanban_events "
                f"WHERE task_id = ? AND id > ? ORDER BY id LIMIT {int(limit)}",
                (task_id, after),
            )
        return [_event(row) for row in rows]

    def boards(self) -> list[tuple[str, str, int]]:
        """Each board (the default one included) with its count of tasks not archived."""
        rows = self.store.query(
            "SELECT b.slug, b.name, (SELECT count(*) FROM kanban_tasks t WHERE t.board = b.slug "
            "AND t.status <> 'archived') FROM kanban_boards b WHERE b.archived = 0 ORDER BY b.slug"
        )
        found = [(str(s), str(n), int(c)) for s, n, c in rows]
        if not any(slug == DEFAULT_BOARD for slug, _, _ in found):
            count = self.store.query_value(
                "SELECT count(*) FROM kanban_tasks WHERE board = ? AND status <> 'archived'",
                (DEFAULT_BOARD,),
            )
            found.insert(0, (DEFAULT_BOARD, "Default", int(count or 0)))
        return found

    def stats(self, board: str = DEFAULT_BOARD) -> dict[str, Any]:
        by_status = dict(
            self.store.query(
                "SELECT status, count(*) FROM kanban_tasks WHERE board = ? GROUP BY status",
                (board,),
            )
        )
        by_assignee = dict(
            self.store.query(
                "SELECT coalesce(assignee, '(anyone)'), count(*) FROM kanban_tasks WHERE board = ? "
                "AND status NOT IN ('done', 'archived') GROUP BY coalesce(assignee, '(anyone)')",
                (board,),
            )
        )
        oldest = self.store.query_value(
            "SELECT min(updated_at) FROM kanban_tasks WHERE board = ? AND status = 'ready'",
            (board,),
        )
        return {
            "by_status": {status: int(by_status.get(status, 0)) for status in STATUSES},
            "by_assignee": {str(k): int(v) for k, v in by_assignee.items()},
            "oldest_ready_seconds": None if oldest is None else round(time.time() - oldest),
        }

    # --- changing -----------------------------------------------------------------------

    def create_board(self, slug: str, name: str | None, description: str | None = None) -> None:
        if not slug.replace("-", "").replace("_", "").isalnum() or slug != slug.lower():
            raise KanbanError(f"board {slug!r}: use lowercase letters, digits, '-' or '_'")
        with self.store.write() as cursor:
            cursor.execute("SELECT 1 FROM kanban_boards WHERE slug = ?", (slug,))
            if cursor.fetchall():
                raise KanbanError(f"board {slug!r} exists already")
            cursor.execute(
                "INSERT INTO kanban_boards (slug, name, description, created_at) "
                "VALUES (?, ?, ?, ?)",
                (slug, name or slug, description, time.time()),
            )

    def create(
        self,
        title: str,
        *,
        board: str = DEFAULT_BOARD,
        body: str | None = None,
        assignee: str | None = None,
        priority: int = 0,
        parents: Iterable[str] = (),
        created_by: str | None = None,
        due_at: float | None = None,
        triage: bool = False,
        task_id: str | None = None,
    ) -> Task:
        """A new task: ``ready`` at once, or ``todo`` while a parent is not done."""
        title = " ".join(title.split())
        if not title:
            raise KanbanError("a task needs a title")
        wanted = list(dict.fromkeys(parents))
        new_id = task_id or f"t_{secrets.token_hex(4)}"
        now = time.time()
        with self.store.write() as cursor:
            if board != DEFAULT_BOARD:
                cursor.execute(
                    "SELECT 1 FROM kanban_boards WHERE slug = ? AND archived = 0", (board,)
                )
                if not cursor.fetchall():
                    raise KanbanError(f"no board {board!r}: hermes kanban boards create {board}")
            open_parents = 0
            for parent in wanted:
                cursor.execute("SELECT status FROM kanban_tasks WHERE id = ?", (parent,))
                found = cursor.fetchall()
                if not found:
                    raise KanbanError(f"no task {parent!r} to depend on")
                open_parents += found[0][0] not in ("done", "archived")
            status = "triage" if triage else ("todo" if open_parents else "ready")
            cursor.execute(
                f"INSERT INTO kanban_tasks ({_TASK_COLUMNS}) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, NULL, NULL, NULL, 0, NULL)",
                (
                    new_id,
                    board,
                    title,
                    body,
                    status,
                    assignee,
                    priority,
                    created_by,
                    now,
                    now,
                    due_at,
                ),
            )
            for parent in wanted:
                cursor.execute(
                    "INSERT INTO kanban_links (parent_id, child_id) VALUES (?, ?)", (parent, new_id)
                )
            event_in(cursor, new_id, "created", {"status": status, "assignee": assignee})
        return self.task(new_id)

    def _change(
        self,
        task_id: str,
        allowed: Sequence[str],
        doing: str,
        assignments: str,
        values: Sequence[Any],
        kind: str,
        payload: dict[str, Any] | None = None,
    ) -> Task:
        """Set ``assignments`` on a task whose status is one of ``allowed``, with an event."""
        with self.store.write() as cursor:
            cursor.execute("SELECT status, current_run FROM kanban_tasks WHERE id = ?", (task_id,))
            found = cursor.fetchall()
            if not found:
                raise KanbanError(f"no task {task_id!r}: hermes kanban list shows them")
            status, run = found[0]
            if status not in allowed:
                raise KanbanError(f"task {task_id} is {status}: it cannot be {doing}")
            cursor.execute(
                f"UPDATE kanban_tasks SET {assignments}, updated_at = ? WHERE id = ?",
                (*values, time.time(), task_id),
            )
            event_in(cursor, task_id, kind, payload, run)
            if kind in ("completed", "archived"):
                _promote_children_in(cursor, task_id)
        return self.task(task_id)

    def assign(self, task_id: str, profile: str | None) -> Task:
        return self._change(
            task_id,
            ("triage", "todo", "scheduled", "ready", "blocked", "review"),
            "reassigned while it runs (block it first)",
            "assignee = ?, failures = 0",
            (profile,),
            "assigned",
            {"assignee": profile},
        )

    def comment(self, task_id: str, author: str, body: str) -> None:
        body = body.strip()
        if not body:
            raise KanbanError("a comment needs words")
        self.task(task_id)
        with self.store.write(serialized=False) as cursor:
            cursor.execute(
                "INSERT INTO kanban_comments (task_id, author, body, created_at) "
                "VALUES (?, ?, ?, ?)",
                (task_id, author, body, time.time()),
            )
            event_in(cursor, task_id, "commented", {"author": author})

    def attach(self, task_id: str, filename: str, path: str, size: int, added_by: str) -> int:
        self.task(task_id)
        with self.store.write(serialized=False) as cursor:
            rows = cursor.execute(
                "INSERT INTO kanban_attachments (task_id, filename, path, size, added_by, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (task_id, filename, path, size, added_by, time.time()),
            ).fetchall()
            event_in(cursor, task_id, "attached", {"filename": filename, "size": size})
        return int(rows[0][0])

    def link(self, parent_id: str, child_id: str) -> None:
        if parent_id == child_id:
            raise KanbanError("a task cannot depend on itself")
        with self.store.write() as cursor:
            for task_id in (parent_id, child_id):
                cursor.execute("SELECT 1 FROM kanban_tasks WHERE id = ?", (task_id,))
                if not cursor.fetchall():
                    raise KanbanError(f"no task {task_id!r}")
            if _reaches_in(cursor, child_id, parent_id):
                raise KanbanError(f"{child_id} already leads to {parent_id}: that would be a loop")
            cursor.execute(
                "INSERT INTO kanban_links (parent_id, child_id) VALUES (?, ?) "
                "ON CONFLICT (parent_id, child_id) DO NOTHING",
                (parent_id, child_id),
            )
            cursor.execute("SELECT status FROM kanban_tasks WHERE id = ?", (parent_id,))
            if cursor.fetchall()[0][0] not in ("done", "archived"):
                cursor.execute(
                    "UPDATE kanban_tasks SET status = 'todo', updated_at = ? "
                    "WHERE id = ? AND status = 'ready'",
                    (time.time(), child_id),
                )
            event_in(cursor, child_id, "linked", {"parent": parent_id})

    def unlink(self, parent_id: str, child_id: str) -> None:
        with self.store.write() as cursor:
            cursor.execute(
                "DELETE FROM kanban_links WHERE parent_id = ? AND child_id = ?",
                (parent_id, child_id),
            )
            if not cursor.changes():
                raise KanbanError(f"{child_id} does not depend on {parent_id}")
            event_in(cursor, child_id, "unlinked", {"parent": parent_id})
            promote_in(cursor, child_id)

    def block(
        self, task_id: str, reason: str, by: str | None = None, *, run_id: int | None = None
    ) -> Task:
        """Blocked, with why; ``run_id``: only while that run is the task's (a worker taken
        back cannot block the task another now works on). Its worker stops."""
        reason = " ".join(reason.split())
        if not reason:
            raise KanbanError("say why it is blocked (someone reads it to unblock it)")
        with self.store.write() as cursor:
            status, current = _settling_in(cursor, task_id, run_id)
            if status not in ("todo", "ready", "running", "triage", "review", "scheduled"):
                raise KanbanError(f"task {task_id} is {status}: it cannot be blocked")
            cursor.execute(
                "UPDATE kanban_tasks SET status = 'blocked', block_reason = ?, current_run = NULL, "
                "updated_at = ? WHERE id = ?",
                (reason, time.time(), task_id),
            )
            _settle_run_in(cursor, task_id, current, "blocked", "blocked", summary=reason)
            event_in(cursor, task_id, "blocked", {"reason": reason, "by": by}, current)
        return self.task(task_id)

    def unblock(self, task_id: str, by: str | None = None) -> Task:
        with self.store.write() as cursor:
            cursor.execute("SELECT status FROM kanban_tasks WHERE id = ?", (task_id,))
            found = cursor.fetchall()
            if not found:
                raise KanbanError(f"no task {task_id!r}")
            if found[0][0] not in ("blocked", "scheduled", "triage"):
                raise KanbanError(f"task {task_id} is {found[0][0]}, not blocked")
            cursor.execute(
                "UPDATE kanban_tasks SET status = 'todo', block_reason = NULL, failures = 0, "
                "updated_at = ? WHERE id = ?",
                (time.time(), task_id),
            )
            event_in(cursor, task_id, "unblocked", {"by": by})
            promote_in(cursor, task_id)
        return self.task(task_id)

    def complete(
        self, task_id: str, summary: str | None, *, by: str | None = None, run_id: int | None = None
    ) -> Task:
        """Done, with its summary; ``run_id``: only while that run is the task's (a worker
        that was reclaimed cannot complete the task another now works on)."""
        with self.store.write() as cursor:
            status, current = _settling_in(cursor, task_id, run_id)
            if status in ("done", "archived"):
                raise KanbanError(f"task {task_id} is {status} already")
            now = time.time()
            cursor.execute(
                "UPDATE kanban_tasks SET status = 'done', result = ?, completed_at = ?, "
                "updated_at = ?, current_run = NULL, failures = 0, block_reason = NULL "
                "WHERE id = ?",
                (summary, now, now, task_id),
            )
            _settle_run_in(cursor, task_id, current, "done", "completed", summary=summary)
            event_in(cursor, task_id, "completed", {"summary": summary, "by": by}, current)
            _promote_children_in(cursor, task_id)
        return self.task(task_id)

    def archive(self, task_id: str) -> Task:
        return self._change(
            task_id,
            tuple(status for status in (*ACTIVE, "done") if status != "running"),
            "archived while a worker has it (block it first)",
            "status = 'archived'",
            (),
            "archived",
        )

    # --- the dispatcher and its workers ---------------------------------------------------

    def claim(self, task_id: str, profile: str) -> int | None:
        """Give a ready task to ``profile``: running, with a new run; None if another
        dispatcher took it first."""
        now = time.time()
        with self.store.write() as cursor:
            cursor.execute(
                "UPDATE kanban_tasks SET status = 'running', started_at = ?, updated_at = ?, "
                "last_profile = ? WHERE id = ? AND status = 'ready'",
                (now, now, profile, task_id),
            )
            if not cursor.changes():
                return None
            rows = cursor.execute(
                "INSERT INTO kanban_runs (task_id, profile, status, started_at) "
                "VALUES (?, ?, 'starting', ?) RETURNING id",
                (task_id, profile, now),
            ).fetchall()
            run_id = int(rows[0][0])
            cursor.execute(
                "UPDATE kanban_tasks SET current_run = ? WHERE id = ?", (run_id, task_id)
            )
            event_in(cursor, task_id, "claimed", {"profile": profile}, run_id)
        return run_id

    def take(
        self, task_id: str, run_id: int, holder: str, ttl: float, session_id: str | None
    ) -> None:
        """The worker takes its run: the task's lease, held while it works."""
        with self.store.write() as cursor:
            cursor.execute("SELECT current_run, status FROM kanban_tasks WHERE id = ?", (task_id,))
            found = cursor.fetchall()
            if not found or found[0][0] != run_id or found[0][1] != "running":
                raise KanbanError(f"task {task_id} is not waiting for run {run_id}")
            taken = acquire_in(cursor, lease_name(task_id), holder, ttl)
            if taken is not None:
                raise KanbanError(f"task {task_id} is held by {taken[0]}")
            cursor.execute(
                "UPDATE kanban_runs SET status = 'running', holder = ?, session_id = ?, "
                "heartbeat_at = ? WHERE id = ?",
                (holder, session_id, time.time(), run_id),
            )
            event_in(cursor, task_id, "started", {"holder": holder}, run_id)

    def heartbeat(self, task_id: str, run_id: int, holder: str, ttl: float) -> bool:
        """Renew the worker's lease; False once the task is no longer its run's (taken
        back, or settled: blocked or completed by a person or its own tools)."""
        with self.store.write() as cursor:
            cursor.execute("SELECT current_run FROM kanban_tasks WHERE id = ?", (task_id,))
            found = cursor.fetchall()
            if not found or found[0][0] != run_id:
                release_in(cursor, lease_name(task_id), holder)
                return False
            if not renew_in(cursor, lease_name(task_id), holder, ttl):
                return False
            cursor.execute(
                "UPDATE kanban_runs SET heartbeat_at = ? WHERE id = ? AND ended_at IS NULL",
                (time.time(), run_id),
            )
            return True

    def finish(
        self,
        task_id: str,
        run_id: int,
        holder: str,
        *,
        ok: bool,
        summary: str,
        error: str | None,
        failure_limit: int,
    ) -> str:
        """The worker's turn ended: complete the task with its reply when its tools did not
        settle it, or count a failure (ready again, or blocked once it failed
        ``failure_limit`` times in a row). Returns what became of it."""
        now = time.time()
        with self.store.write() as cursor:
            cursor.execute(
                "SELECT status, current_run, failures FROM kanban_tasks WHERE id = ?", (task_id,)
            )
            status, current, failures = cursor.fetchall()[0]
            release_in(cursor, lease_name(task_id), holder)
            if current != run_id or status != "running":  # its tools settled it, or reclaimed
                _end_run_in(cursor, run_id, "ended", status, summary=summary or None)
                return str(status)
            if ok:
                cursor.execute(
                    "UPDATE kanban_tasks SET status = 'done', result = ?, completed_at = ?, "
                    "updated_at = ?, current_run = NULL, failures = 0 WHERE id = ?",
                    (summary, now, now, task_id),
                )
                _end_run_in(cursor, run_id, "done", "completed", summary=summary)
                event_in(cursor, task_id, "completed", {"summary": summary}, run_id)
                _promote_children_in(cursor, task_id)
                return "done"
            return _fail_in(
                cursor, task_id, run_id, int(failures), error or "failed", failure_limit
            )

    def reclaim_dead(self, grace: float, failure_limit: int) -> list[str]:
        """Running tasks whose worker is gone (its lease expired, its process dead on this
        host, or it never took the task within ``grace`` seconds): ready again, their run
        recorded as reclaimed. Returns their ids."""
        if not self.store.query("SELECT 1 FROM kanban_tasks WHERE status = 'running' LIMIT 1"):
            return []  # the usual tick: nothing runs, and no write (no lock) is taken
        now = time.time()
        reclaimed = []
        with self.store.write() as cursor:
            cursor.execute(
                "SELECT t.id, t.current_run, t.failures, r.started_at, l.holder, l.expires_at "
                "FROM kanban_tasks t JOIN kanban_runs r ON r.id = t.current_run "
                "LEFT JOIN leases_held l ON l.name = 'kanban-task:' || t.id "
                "WHERE t.status = 'running'"
            )
            for task_id, run_id, failures, started, holder, expires in cursor.fetchall():
                if holder is None:
                    if now - float(started) < grace:
                        continue  # its worker is starting
                    why = f"the worker never started within {grace:g} s"
                elif float(expires) <= now:
                    why = "the worker's lease expired (no heartbeat)"
                elif holder_is_dead(str(holder)):
                    why = "the worker's process ended"
                else:
                    continue
                if holder is not None:
                    release_in(cursor, lease_name(task_id), str(holder))
                cursor.execute(
                    "UPDATE kanban_tasks SET status = 'ready', current_run = NULL, "
                    "updated_at = ?, failures = failures + 1 WHERE id = ?",
                    (now, task_id),
                )
                _end_run_in(cursor, int(run_id), "reclaimed", "reclaimed", error=why)
                if int(failures) + 1 >= failure_limit:  # told once, as given up
                    _give_up_in(cursor, task_id, int(run_id), int(failures) + 1, why)
                else:
                    event_in(cursor, task_id, "reclaimed", {"reason": why}, int(run_id))
                reclaimed.append(str(task_id))
        return reclaimed

    def reclaim(self, task_id: str, reason: str) -> Task:
        """Take a running task back by hand (its worker is stuck): ready again."""
        with self.store.write() as cursor:
            cursor.execute("SELECT status, current_run FROM kanban_tasks WHERE id = ?", (task_id,))
            found = cursor.fetchall()
            if not found or found[0][0] != "running":
                raise KanbanError(f"task {task_id} is not running")
            run_id = found[0][1]
            cursor.execute("DELETE FROM leases_held WHERE name = ?", (lease_name(task_id),))
            cursor.execute(
                "UPDATE kanban_tasks SET status = 'ready', current_run = NULL, failures = 0, "
                "updated_at = ? WHERE id = ?",
                (time.time(), task_id),
            )
            if run_id is not None:
                _end_run_in(cursor, int(run_id), "reclaimed", "reclaimed", error=reason)
            event_in(cursor, task_id, "reclaimed", {"reason": reason, "by": "hand"}, run_id)
        return self.task(task_id)

    def running_profiles(self) -> dict[str, int]:
        """How many tasks each profile runs now."""
        rows = self.store.query(
            "SELECT r.profile, count(*) FROM kanban_tasks t JOIN kanban_runs r "
            "ON r.id = t.current_run WHERE t.status = 'running' GROUP BY r.profile"
        )
        return {str(profile): int(count) for profile, count in rows}

    def last_failed_profile(self, task_id: str) -> str | None:
        value = self.store.query_value(
            "SELECT profile FROM kanban_runs WHERE task_id = ? AND outcome IN "
            "('reclaimed', 'failed') ORDER BY id DESC LIMIT 1",
            (task_id,),
        )
        return None if value is None else str(value)

    # --- notifications ------------------------------------------------------------------

    def subscribe(self, task_id: str, platform: str, chat_id: str) -> None:
        self.task(task_id)
        with self.store.write(serialized=False) as cursor:
            latest = cursor.execute(
                "SELECT coalesce(max(id), 0) FROM kanban_events WHERE task_id = ?", (task_id,)
            ).fetchall()[0][0]
            cursor.execute(
                "INSERT INTO kanban_subscriptions (task_id, platform, chat_id, cursor, created_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (task_id, platform, chat_id) DO NOTHING",
                (task_id, platform, chat_id, int(latest), time.time()),
            )

    def unsubscribe(self, task_id: str, platform: str, chat_id: str) -> bool:
        with self.store.write(serialized=False) as cursor:
            cursor.execute(
                "DELETE FROM kanban_subscriptions WHERE task_id = ? AND platform = ? "
                "AND chat_id = ?",
                (task_id, platform, chat_id),
            )
            return bool(cursor.changes())

    def subscriptions(self, task_id: str | None = None) -> list[tuple[str, str, str]]:
        rows = self.store.query(
            "SELECT task_id, platform, chat_id FROM kanban_subscriptions "
            + ("WHERE task_id = ? " if task_id else "")
            + "ORDER BY task_id, platform, chat_id",
            (task_id,) if task_id else (),
        )
        return [(str(t), str(p), str(c)) for t, p, c in rows]

    def take_news(self) -> list[tuple[str, str, Event]]:
        """Each subscribed chat's events to tell, claimed: the cursor moves past them in
        the same transaction, so no two dispatchers tell one twice. Subscriptions of tasks
        that are over end after their last news."""
        found: list[tuple[str, str, Event]] = []
        kinds = ", ".join(f"'{kind}'" for kind in NOTIFIED)
        waiting = self.store.query(
            "SELECT 1 FROM kanban_subscriptions s JOIN kanban_events e ON e.task_id = s.task_id "
            f"AND e.id > s.cursor WHERE e.kind IN ({kinds}) LIMIT 1"
        )
        if not waiting:
            return found  # the usual tick: no news, and no write (no lock) is taken
        with self.store.write() as cursor:
            cursor.execute("SELECT task_id, platform, chat_id, cursor FROM kanban_subscriptions")
            for task_id, platform, chat_id, after in cursor.fetchall():
                rows = cursor.execute(
                    "SELECT id, task_id, run_id, kind, payload, created_at FROM kanban_events "
                    f"WHERE task_id = ? AND id > ? AND kind IN ({kinds}) ORDER BY id",
                    (task_id, after),
                ).fetchall()
                if not rows:
                    continue
                events = [_event(row) for row in rows]
                cursor.execute(
                    "UPDATE kanban_subscriptions SET cursor = ? WHERE task_id = ? AND platform = ? "
                    "AND chat_id = ?",
                    (events[-1].id, task_id, platform, chat_id),
                )
                found += [(str(platform), str(chat_id), event) for event in events]
                if events[-1].kind in ("completed", "archived"):
                    cursor.execute(
                        "DELETE FROM kanban_subscriptions WHERE task_id = ? AND platform = ? "
                        "AND chat_id = ?",
                        (task_id, platform, chat_id),
                    )
        return found

    def untell(self, platform: str, chat_id: str, event: Event) -> None:
        """A chat could not be told ``event``: its subscription goes back to before it."""
        with self.store.write(serialized=False) as cursor:
            cursor.execute(
                "INSERT INTO kanban_subscriptions (task_id, platform, chat_id, cursor, created_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (task_id, platform, chat_id) DO UPDATE SET "
                "cursor = excluded.cursor",
                (event.task_id, platform, chat_id, event.id - 1, time.time()),
            )


def _end_run_in(
    cursor: StoreCursor,
    run_id: int,
    status: str,
    outcome: str,
    *,
    summary: str | None = None,
    error: str | None = None,
) -> None:
    cursor.execute(
        "UPDATE kanban_runs SET status = ?, outcome = ?, ended_at = ?, "
        "summary = coalesce(?, summary), error = coalesce(?, error) "
        "WHERE id = ? AND ended_at IS NULL",
        (status, outcome, time.time(), summary, error, run_id),
    )


def _settling_in(cursor: StoreCursor, task_id: str, run_id: int | None) -> tuple[str, int | None]:
    """The task's status and run, for a change that settles it; ``run_id``: refused unless
    that run is still the task's (a worker taken back settles nothing)."""
    cursor.execute("SELECT status, current_run FROM kanban_tasks WHERE id = ?", (task_id,))
    found = cursor.fetchall()
    if not found:
        raise KanbanError(f"no task {task_id!r}: hermes kanban list shows them")
    status, current = found[0]
    if run_id is not None and current != run_id:
        raise KanbanError(f"task {task_id} is no longer this worker's (it is {status} now)")
    return str(status), current


def _settle_run_in(
    cursor: StoreCursor,
    task_id: str,
    run_id: int | None,
    status: str,
    outcome: str,
    *,
    summary: str | None = None,
) -> None:
    """End the task's run, if it had one, and free its lease: its worker stops at its next
    heartbeat, and a new worker may take the task at once."""
    if run_id is None:
        return
    _end_run_in(cursor, int(run_id), status, outcome, summary=summary)
    cursor.execute("DELETE FROM leases_held WHERE name = ?", (lease_name(task_id),))


def _fail_in(
    cursor: StoreCursor, task_id: str, run_id: int, failures: int, error: str, limit: int
) -> str:
    now = time.time()
    cursor.execute(
        "UPDATE kanban_tasks SET status = 'ready', current_run = NULL, updated_at = ?, "
        "failures = ? WHERE id = ?",
        (now, failures + 1, task_id),
    )
    _end_run_in(cursor, run_id, "failed", "failed", error=error)
    event_in(cursor, task_id, "failed", {"error": error}, run_id)
    if failures + 1 >= limit:
        _give_up_in(cursor, task_id, run_id, failures + 1, error)
        return "blocked"
    return "ready"


def _give_up_in(cursor: StoreCursor, task_id: str, run_id: int, failures: int, error: str) -> None:
    reason = f"gave up after {failures} failed attempts: {error}"
    cursor.execute(
        "UPDATE kanban_tasks SET status = 'blocked', block_reason = ?, updated_at = ? WHERE id = ?",
        (reason, time.time(), task_id),
    )
    event_in(cursor, task_id, "gave_up", {"failures": failures, "error": error}, run_id)


def promote_in(cursor: StoreCursor, task_id: str) -> None:
    """``todo`` -> ``ready`` when every task it depends on is done (or archived)."""
    waiting = cursor.execute(
        "SELECT count(*) FROM kanban_links l JOIN kanban_tasks p ON p.id = l.parent_id "
        "WHERE l.child_id = ? AND p.status NOT IN ('done', 'archived')",
        (task_id,),
    ).fetchall()[0][0]
    if waiting:
        return
    cursor.execute(
        "UPDATE kanban_tasks SET status = 'ready', updated_at = ? WHERE id = ? AND status = 'todo'",
        (time.time(), task_id),
    )
    if cursor.changes():
        event_in(cursor, task_id, "promoted")


def _promote_children_in(cursor: StoreCursor, task_id: str) -> None:
    children = cursor.execute(
        "SELECT child_id FROM kanban_links WHERE parent_id = ?", (task_id,)
    ).fetchall()
    for (child,) in children:
        promote_in(cursor, str(child))


def _reaches_in(cursor: StoreCursor, start: str, target: str) -> bool:
    """Whether ``target`` depends, through links, on ``start`` (linking would loop)."""
    seen, frontier = {start}, [start]
    while frontier:
        node = frontier.pop()
        rows = cursor.execute(
            "SELECT child_id FROM kanban_links WHERE parent_id = ?", (node,)
        ).fetchall()
        for (child,) in rows:
            if child == target:
                return True
            if child not in seen:
                seen.add(child)
                frontier.append(child)
    return start == target
