"""Sessions: one conversation each, with its frozen system prompt and running totals."""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from hermes_kernel.store.backend import StoreBackend
from hermes_kernel.store.leases import acquire_in, new_holder, release_in, session_key
from hermes_sdk.runtime import SessionNotFound


@dataclass(frozen=True)
class Session:
    id: str
    source: str
    model: str | None
    provider: str | None
    system_prompt: str | None
    parent_session_id: str | None
    title: str | None
    started_at: float
    ended_at: float | None
    end_reason: str | None
    message_count: int
    tool_call_count: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    estimated_cost_usd: float
    cwd: str | None
    git_root: str | None
    unpriced_calls: int = 0
    """Model calls whose price is unknown: the estimated cost leaves them out."""
    user_scope: str | None = None
    """Whose session it is for what is kept per person ("PLATFORM:42"); None for the owner
    at the terminal."""


REVIEW_SOURCE = "review"
"""Sessions in which a finished turn is reviewed in the background (children of it)."""

_COLUMNS = ", ".join(f.name for f in fields(Session))
_USAGE_COLUMNS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "estimated_cost_usd",
    "unpriced_calls",
)


@dataclass(frozen=True)
class Usage:
    """Token usage and cost of one model call, added to a session's totals."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    estimated_cost_usd: float | None = 0.0
    """None: no price is known for this model (shown as unknown, not as free)."""
    provider: str | None = None
    model: str | None = None


class SessionIdTaken(Exception):
    """Another session has this id already (made in the same second with the same random
    part, by another process on the store): make a new id and try again."""


def new_session_id(now: float | None = None) -> str:
    """Sortable and readable: ``20261130_071300_3f9a1c``."""
    stamp = time.strftime("%Y%m%d_%H%M%S", time.gmtime(now if now is not None else time.time()))
    return f"{stamp}_{secrets.token_hex(3)}"


USAGE_ASSIGNMENTS = ", ".join(f"{column} = {column} + ?" for column in _USAGE_COLUMNS)
"""The session's usage totals, each increased by a bound value (:func:`usage_values`)."""
USAGE_SQL = f"UPDATE sessions SET {USAGE_ASSIGNMENTS} WHERE id = ?"


def usage_values(usage: Usage) -> tuple[float, ...]:
    """What :data:`USAGE_ASSIGNMENTS` adds for one model call."""
    cost = usage.estimated_cost_usd
    return (
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.reasoning_tokens,
        cost or 0.0,
        0 if cost is not None else 1,
    )


def add_usage_in(
    cursor: Any,
    session_id: str,
    usage: Usage,
    message_id: int | None = None,
    at: float | None = None,
    *,
    totals: bool = True,
) -> None:
    """Record one model call's ``usage`` and add it to its session's totals, inside the
    caller's write transaction. ``at``: when it was used (default now; an imported session's
    totals were used when it started, and usage by day counts them on that day).
    ``totals=False``: the caller added it to the totals already (in its own UPDATE)."""
    cost = usage.estimated_cost_usd
    values = usage_values(usage)
    if totals:
        cursor.execute(USAGE_SQL, (*values, session_id))
        if int(cursor.changes()) == 0:
            raise SessionNotFound(f"no session {session_id!r}")
    cursor.execute(
        "INSERT INTO model_calls (session_id, message_id, provider, model, input_tokens, "
        "output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session_id,
            message_id,
            usage.provider,
            usage.model,
            *values[:5],
            cost,
            time.time() if at is None else at,
        ),
    )


_GET = f"SELECT {_COLUMNS} FROM sessions WHERE id = ?"


def session_in(cursor: Any, session_id: str) -> Session | None:
    """:meth:`Sessions.get` inside the caller's transaction."""
    rows = cursor.execute(_GET, (session_id,)).fetchall()
    return Session(*rows[0]) if rows else None


@dataclass(frozen=True)
class Spend:
    tokens: int
    """Input + output tokens."""
    cost_usd: float
    unpriced_calls: int


_FAMILY_SQL = """
WITH RECURSIVE
    up(id, parent, depth) AS (
        SELECT id, parent_session_id, 0 FROM sessions WHERE id = ?
        UNION ALL
        SELECT s.id, s.parent_session_id, up.depth + 1
        FROM sessions s JOIN up ON s.id = up.parent WHERE up.depth < 32
    ),
    root(id) AS (SELECT id FROM up ORDER BY depth DESC LIMIT 1),
    family(id, depth) AS (
        SELECT id, 0 FROM root
        UNION ALL
        SELECT s.id, family.depth + 1
        FROM sessions s JOIN family ON s.parent_session_id = family.id WHERE family.depth < 32
    )
SELECT SUM(input_tokens + output_tokens), SUM(estimated_cost_usd), SUM(unpriced_calls)
FROM sessions WHERE id IN (SELECT id FROM family)
"""


class Sessions:
    def __init__(self, db: StoreBackend) -> None:
        self._db = db

    def create(
        self,
        source: str,
        *,
        model: str | None = None,
        provider: str | None = None,
        system_prompt: str | None = None,
        parent_session_id: str | None = None,
        cwd: str | None = None,
        git_root: str | None = None,
        session_id: str | None = None,
        user_scope: str | None = None,
    ) -> Session:
        now = time.time()
        session_id = session_id or new_session_id(now)
        with self._db.write(serialized=False) as cursor:  # a new row: nothing read first
            # Ids carry 24 random bits per second: busy front-ends with several workers on
            # one store make the same one now and then, which must not fail a conversation.
            created = cursor.execute(
                "INSERT INTO sessions (id, source, model, provider, system_prompt, "
                "parent_session_id, started_at, cwd, git_root, user_scope) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING "
                f"RETURNING {_COLUMNS}",
                (
                    session_id,
                    source,
                    model,
                    provider,
                    system_prompt,
                    parent_session_id,
                    now,
                    cwd,
                    git_root,
                    user_scope,
                ),
            ).fetchall()
        if not created:
            raise SessionIdTaken(session_id)
        return Session(*created[0])

    def get(self, session_id: str) -> Session | None:
        rows = self._db.query(_GET, (session_id,))
        return Session(*rows[0]) if rows else None

    def count(self) -> int:
        return int(self._db.query_value("SELECT COUNT(*) FROM sessions", ()) or 0)

    def recent(
        self,
        limit: int = 20,
        source: str | None = None,
        *,
        user_scope: str | None = None,
        reviews: bool = True,
    ) -> list[Session]:
        """The newest sessions, of ``source`` and ``user_scope`` when given; ``reviews``
        False leaves out the sessions that review finished turns."""
        clauses: list[str] = []
        bindings: list[object] = []
        for clause, value in (("source = ?", source), ("user_scope = ?", user_scope)):
            if value is not None:
                clauses.append(clause)
                bindings.append(value)
        if not reviews:
            clauses.append("source != ?")
            bindings.append(REVIEW_SOURCE)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM sessions {where} ORDER BY started_at DESC LIMIT ?",
            (*bindings, limit),
        )
        return [Session(*row) for row in rows]

    def children(
        self, session_id: str, source: str | None = None, *, reviews: bool = True
    ) -> list[Session]:
        """Sessions opened for ``session_id``, oldest first: by a plugin's tools (work handed
        to other agents, whatever their source) and, unless ``reviews`` is False, the
        kernel's background reviews of it."""
        where = "WHERE parent_session_id = ?" + (" AND source = ?" if source else "")
        bindings: tuple[str, ...] = (session_id, source) if source else (session_id,)
        if not reviews:
            where += " AND source != ?"
            bindings += (REVIEW_SOURCE,)
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM sessions {where} ORDER BY started_at", bindings
        )
        return [Session(*row) for row in rows]

    def family_spend(self, session_id: str) -> Spend:
        """What the session's family spent: its first ancestor (the session a person opened)
        and every session opened for it, at any depth (other agents' work, reviews). Budgets
        count this, so work handed elsewhere is no way around them."""
        rows = self._db.query(_FAMILY_SQL, (session_id,))
        tokens, cost, unpriced = rows[0] if rows else (0, 0.0, 0)
        return Spend(int(tokens or 0), float(cost or 0.0), int(unpriced or 0))

    def latest(self, source: str | None = None) -> Session | None:
        """The session written to last (the last chat, not the last one started)."""
        where, bindings = ("WHERE s.source = ?", (source,)) if source else ("", ())
        # Newest messages first: the scan stops at the first one of a matching session.
        session_id = self._db.query_value(
            f"SELECT m.session_id FROM messages m JOIN sessions s ON s.id = m.session_id "
            f"{where} ORDER BY m.id DESC LIMIT 1",
            bindings,
        )
        if session_id is not None:
            return self.get(str(session_id))
        found = self.recent(1, source)
        return found[0] if found else None

    def last_call_tokens(self, session_id: str) -> int | None:
        """What the session's last model call of a turn read and wrote: its context then
        (a summary's or a side call's usage has no message, and says nothing of it)."""
        rows = self._db.query(
            "SELECT input_tokens + cache_read_tokens + cache_write_tokens + output_tokens "
            "FROM model_calls WHERE session_id = ? AND message_id IS NOT NULL "
            "ORDER BY id DESC LIMIT 1",
            (session_id,),
        )
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    def find(self, prefix: str) -> Session | None:
        """The session whose id is ``prefix`` or starts with it, else whose title is
        ``prefix`` (any case; the latest of that title) or starts with it; SessionNotFound
        when several do."""
        exact = self.get(prefix)
        if exact is not None or not prefix:
            return exact
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2",
            (escaped + "%",),
        )
        if len(rows) > 1:
            raise SessionNotFound(f"{prefix!r} matches more than one session; give more of the id")
        if rows:
            return Session(*rows[0])
        return self._titled(prefix, escaped)

    def _titled(self, title: str, escaped: str) -> Session | None:
        """By title: the latest of exactly that title, else the one whose title starts so."""
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM sessions WHERE lower(title) = lower(?) "
            "ORDER BY started_at DESC LIMIT 1",
            (title,),
        )
        if rows:
            return Session(*rows[0])
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM sessions WHERE lower(title) LIKE lower(?) ESCAPE '\\' "
            "ORDER BY started_at DESC LIMIT 2",
            (escaped + "%",),
        )
        if len(rows) > 1:
            raise SessionNotFound(
                f"{title!r} starts the titles of more than one session; give more of the title"
            )
        return Session(*rows[0]) if rows else None

    def openings(self, session_ids: list[str], width: int = 80) -> dict[str, str]:
        """The start of each session's first user message: what an untitled session is about."""
        if not session_ids:
            return {}
        marks = ", ".join("?" for _ in session_ids)
        rows = self._db.query(
            f"SELECT m.session_id, substr(m.content, 1, ?) FROM messages m "
            f"WHERE m.role = 'user' AND m.session_id IN ({marks}) AND m.seq = ("
            "SELECT min(f.seq) FROM messages f WHERE f.session_id = m.session_id "
            "AND f.role = 'user')",
            (width, *session_ids),
        )
        return {row[0]: str(row[1] or "") for row in rows}

    def labels(self, session_ids: list[str]) -> dict[str, str]:
        """A session's title, or the start of its first message when it has none."""
        unique = sorted(set(session_ids))
        if not unique:
            return {}
        marks = ", ".join("?" for _ in unique)
        titled = dict(
            self._db.query(
                f"SELECT id, title FROM sessions WHERE id IN ({marks}) AND title IS NOT NULL",
                unique,
            )
        )
        openings = self.openings([i for i in unique if i not in titled])
        return {i: str(titled.get(i) or openings.get(i, "")) for i in unique}

    def usage_by_model(self, session_id: str) -> list[tuple[str, str, int, int, int, float, int]]:
        """Per (provider, model): calls, input and output tokens, cost, unpriced calls."""
        rows = self._db.query(
            "SELECT coalesce(provider, '?'), coalesce(model, '?'), count(*), sum(input_tokens), "
            "sum(output_tokens), coalesce(sum(cost_usd), 0), "
            "sum(CASE WHEN cost_usd IS NULL THEN 1 ELSE 0 END) "
            "FROM model_calls WHERE session_id = ? GROUP BY 1, 2 ORDER BY 1, 2",
            (session_id,),
        )
        return [
            (str(r[0]), str(r[1]), int(r[2]), int(r[3]), int(r[4]), float(r[5]), int(r[6]))
            for r in rows
        ]

    def set_title(self, session_id: str, title: str | None) -> None:
        self._update(session_id, "title = ?", (title,))

    def set_system_prompt(self, session_id: str, prompt: str) -> None:
        self._update(session_id, "system_prompt = ?", (prompt,))

    def delete(self, session_ids: Sequence[str]) -> int:
        """Delete sessions with their messages and usage records (search forgets them too)
        in one transaction, so all or none: a turn running on one, in this process or
        another, raises LeaseHeldError, and an id not stored SessionNotFound."""
        holder = new_holder()
        unique = list(dict.fromkeys(session_ids))
        with self._db.write() as cursor:
            for session_id in unique:
                if session_in(cursor, session_id) is None:
                    raise SessionNotFound(f"no session {session_id!r}")
                acquire_in(cursor, session_id, holder, ttl=30.0)  # refused while a turn runs
                cursor.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
                release_in(cursor, session_id, holder)
        return len(unique)

    def end(self, session_id: str, reason: str) -> None:
        self._update(session_id, "ended_at = ?, end_reason = ?", (time.time(), reason))

    def add_usage(self, session_id: str, usage: Usage) -> None:
        with self._db.write(key=session_key(session_id)) as cursor:
            add_usage_in(cursor, session_id, usage)

    def _update(self, session_id: str, assignments: str, values: tuple[Any, ...]) -> None:
        with self._db.write(key=session_key(session_id)) as cursor:
            cursor.execute(f"UPDATE sessions SET {assignments} WHERE id = ?", (*values, session_id))
            if self._db_changes(cursor) == 0:
                raise SessionNotFound(f"no session {session_id!r}")

    @staticmethod
    def _db_changes(cursor: Any) -> int:
        return int(cursor.changes())
