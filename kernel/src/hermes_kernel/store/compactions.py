"""Compactions of a session's view: each summary, the messages it stands for, and what it
saved. The newest one is where a turn's view begins; the messages are never deleted."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from hermes_kernel.store.backend import StoreBackend
from hermes_kernel.store.leases import session_key
from hermes_kernel.store.sessions import Usage, add_usage_in


@dataclass(frozen=True)
class Action:
    """A side-effecting tool call a summary stands for: what it did and what it said."""

    tool: str
    arguments: str
    output: str

    def as_json(self) -> dict[str, str]:
        return {"tool": self.tool, "arguments": self.arguments, "output": self.output}


@dataclass(frozen=True)
class CompactionRecord:
    session_id: str
    boundary_seq: int
    """Messages with a seq up to this one are replaced by ``summary`` in the view."""
    summary: str
    reason: str
    engine: str
    by_model: bool
    messages_replaced: int
    tokens_before: int
    tokens_after: int
    actions: tuple[Action, ...] = ()
    actions_left_out: int = 0
    """Older side-effecting calls the list no longer has room for (the summary covers them)."""
    created_at: float = field(default_factory=time.time)


_COLUMNS = (
    "session_id, boundary_seq, summary, reason, engine, by_model, messages_replaced, "
    "tokens_before, tokens_after, actions, created_at, actions_left_out"
)


def _record(row: Any) -> CompactionRecord:
    actions = tuple(Action(**item) for item in json.loads(str(row[9]) or "[]"))
    return CompactionRecord(
        session_id=str(row[0]),
        boundary_seq=int(row[1]),
        summary=str(row[2]),
        reason=str(row[3]),
        engine=str(row[4]),
        by_model=bool(row[5]),
        messages_replaced=int(row[6]),
        tokens_before=int(row[7]),
        tokens_after=int(row[8]),
        actions=actions,
        created_at=float(row[10]),
        actions_left_out=int(row[11]),
    )


def latest_in(cursor: Any, session_id: str) -> CompactionRecord | None:
    rows = cursor.execute(
        f"SELECT {_COLUMNS} FROM compactions WHERE session_id = ? ORDER BY id DESC LIMIT 1",
        (session_id,),
    ).fetchall()
    return _record(rows[0]) if rows else None


class Compactions:
    def __init__(self, db: StoreBackend) -> None:
        self._db = db

    def latest(self, session_id: str) -> CompactionRecord | None:
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM compactions WHERE session_id = ? ORDER BY id DESC LIMIT 1",
            (session_id,),
        )
        return _record(rows[0]) if rows else None

    def of_session(self, session_id: str) -> list[CompactionRecord]:
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM compactions WHERE session_id = ? ORDER BY id", (session_id,)
        )
        return [_record(row) for row in rows]

    def commit(
        self,
        record: CompactionRecord,
        system_prompt: str,
        usages: list[Usage],
    ) -> None:
        """Save a compaction with the session's rebuilt system prompt and the summary calls'
        usage (in ``model_calls`` and the session's totals), in one transaction."""
        with self._db.write(key=session_key(record.session_id)) as cursor:
            cursor.execute(
                f"INSERT INTO compactions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.session_id,
                    record.boundary_seq,
                    record.summary,
                    record.reason,
                    record.engine,
                    int(record.by_model),
                    record.messages_replaced,
                    record.tokens_before,
                    record.tokens_after,
                    json.dumps([action.as_json() for action in record.actions]),
                    record.created_at,
                    record.actions_left_out,
                ),
            )
            cursor.execute(
                "UPDATE sessions SET system_prompt = ? WHERE id = ?",
                (system_prompt, record.session_id),
            )
            for usage in usages:
                add_usage_in(cursor, record.session_id, usage)

    def add_usage(self, session_id: str, usages: list[Usage]) -> None:
        """The usage of summary calls whose compaction was not committed: still paid for."""
        if not usages:
            return
        with self._db.write(key=session_key(session_id)) as cursor:
            for usage in usages:
                add_usage_in(cursor, session_id, usage)
