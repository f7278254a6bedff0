"""Tool calls made from inside a running tool call, each kept as a child of that call.

A row is written before its call runs and completed when the call ends, so the record of
what a script did survives a crash: a row without a disposition is a call that may have run
(its effect is unknown). Rows go with the assistant message that holds their parent call
(``/undo``) and with their session.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hermes_kernel.store.backend import StoreBackend

__all__ = ["NestedCallRecord", "NestedCalls"]


@dataclass(frozen=True)
class NestedCallRecord:
    id: int
    session_id: str
    message_id: int
    """The assistant message that holds the parent call."""
    parent_call_id: str
    position: int
    """1 for the parent's first call, 2 for its second, ..."""
    tool_name: str
    arguments: str
    """As JSON."""
    content: str | None
    disposition: str | None
    """ok, error, skipped or unknown; None while it runs (or if Hermes died meanwhile)."""
    seconds: float | None
    created_at: float

    @property
    def effect(self) -> str:
        """The disposition, or "unknown" for a call that never finished."""
        return self.disposition or "unknown"


_COLUMNS = (
    "id, session_id, message_id, parent_call_id, position, tool_name, arguments, content, "
    "disposition, seconds, created_at"
)


def _record(row: Sequence[Any]) -> NestedCallRecord:
    return NestedCallRecord(
        id=int(row[0]),
        session_id=str(row[1]),
        message_id=int(row[2]),
        parent_call_id=str(row[3]),
        position=int(row[4]),
        tool_name=str(row[5]),
        arguments=str(row[6]),
        content=None if row[7] is None else str(row[7]),
        disposition=None if row[8] is None else str(row[8]),
        seconds=None if row[9] is None else float(row[9]),
        created_at=float(row[10]),
    )


class NestedCalls:
    def __init__(self, db: StoreBackend) -> None:
        self._db = db

    def begin(
        self,
        session_id: str,
        message_id: int,
        parent_call_id: str,
        position: int,
        tool_name: str,
        arguments: str,
        *,
        durable: bool = False,
    ) -> int:
        """Record a call about to run; its row id. ``durable`` syncs the write to disk first
        (for a call that may change the world)."""
        now = time.time()
        with self._db.write(durable, serialized=False) as cursor:  # a row of its own
            inserted = cursor.execute(
                "INSERT INTO nested_calls (session_id, message_id, parent_call_id, position, "
                "tool_name, arguments, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (session_id, message_id, parent_call_id, position, tool_name, arguments, now),
            )
            return int(inserted.fetchall()[0][0])

    def finish(self, row_id: int, content: str, disposition: str, seconds: float) -> None:
        with self._db.write(serialized=False) as cursor:
            cursor.execute(
                "UPDATE nested_calls SET content = ?, disposition = ?, seconds = ? WHERE id = ?",
                (content, disposition, seconds, row_id),
            )

    def of_session(self, session_id: str) -> list[NestedCallRecord]:
        """Every nested call of a session, oldest first."""
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM nested_calls WHERE session_id = ? ORDER BY id", (session_id,)
        )
        return [_record(row) for row in rows]
