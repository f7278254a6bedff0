"""Sessions: one conversation each, with its frozen system prompt and running totals."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, fields
from typing import Any

from hermes_kernel.store.db import Database


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


def new_session_id(now: float | None = None) -> str:
    """Sortable and readable: ``20261130_071300_3f9a1c``."""
    stamp = time.strftime("%Y%m%d_%H%M%S", time.gmtime(now if now is not None else time.time()))
    return f"{stamp}_{secrets.token_hex(3)}"


USAGE_SQL = "UPDATE sessions SET {} WHERE id = ?".format(
    ", ".join(f"{column} = {column} + ?" for column in _USAGE_COLUMNS)
)


def add_usage_in(cursor: Any, session_id: str, usage: Usage, message_id: int | None = None) -> None:
    """Record one model call's ``usage`` and add it to its session's totals, inside the
    caller's write transaction."""
    cost = usage.estimated_cost_usd
    values = (
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.reasoning_tokens,
        cost or 0.0,
        0 if cost is not None else 1,
    )
    cursor.execute(USAGE_SQL, (*values, session_id))
    if int(cursor.connection.changes()) == 0:
        raise KeyError(f"no session {session_id!r}")
    cursor.execute(
        "INSERT INTO model_calls (session_id, message_id, provider, model, input_tokens, "
        "output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (session_id, message_id, usage.provider, usage.model, *values[:5], cost, time.time()),
    )


class Sessions:
    def __init__(self, db: Database) -> None:
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
    ) -> Session:
        now = time.time()
        session_id = session_id or new_session_id(now)
        with self._db.write() as cursor:
            cursor.execute(
                "INSERT INTO sessions (id, source, model, provider, system_prompt, "
                "parent_session_id, started_at, cwd, git_root) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                ),
            )
        session = self.get(session_id)
        assert session is not None
        return session

    def get(self, session_id: str) -> Session | None:
        rows = self._db.query(f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,))
        return Session(*rows[0]) if rows else None

    def recent(self, limit: int = 20, source: str | None = None) -> list[Session]:
        where, bindings = ("WHERE source = ?", (source, limit)) if source else ("", (limit,))
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM sessions {where} ORDER BY started_at DESC LIMIT ?", bindings
        )
        return [Session(*row) for row in rows]

    def end(self, session_id: str, reason: str) -> None:
        self._update(session_id, "ended_at = ?, end_reason = ?", (time.time(), reason))

    def add_usage(self, session_id: str, usage: Usage) -> None:
        with self._db.write() as cursor:
            add_usage_in(cursor, session_id, usage)

    def _update(self, session_id: str, assignments: str, values: tuple[Any, ...]) -> None:
        with self._db.write() as cursor:
            cursor.execute(f"UPDATE sessions SET {assignments} WHERE id = ?", (*values, session_id))
            if self._db_changes(cursor) == 0:
                raise KeyError(f"no session {session_id!r}")

    @staticmethod
    def _db_changes(cursor: Any) -> int:
        return int(cursor.connection.changes())
