"""Reading the server's messages in the order Messages stored them: by their row number in
its database (``ROWID``), which only grows; a message that reached the Mac late has a
later row, whatever its date.

The server's query sorts by date and cannot sort by row. So rows are read in windows that
are known complete: a query of the rows after the position that returns fewer than its
limit has them all; one that fills its limit is narrowed (rows after the position up to
the middle row found) until it does not. Each window is then handed over in row order, and
the position moves row by row: it never passes a row not handed over, whenever the reading
stops (a failure, a gateway stopping)."""

from __future__ import annotations

from typing import Any

from hermes_plugin_platform_bluebubbles.server import Server

__all__ = ["WINDOW", "newest_row", "rows_after"]

WINDOW = 500
"""Rows asked for at once (the server takes up to 1,000)."""


async def rows_after(
    server: Server, row: int, limit: int = WINDOW
) -> tuple[list[dict[str, Any]], bool]:
    """The messages after ``row``, in row order, as a window that is complete (no row in
    its range is missing); whether more may follow it."""
    upper: int | None = None
    while True:
        where = [(">", row)] + ([("<=", upper)] if upper is not None else [])
        found, cut = await server.rows(where, limit)
        if not cut:
            return sorted(found, key=_row), upper is not None
        rows = sorted(_row(r) for r in found)
        if len(rows) >= 2:
            upper = rows[len(rows) // 2 - 1]  # the lower half found: fewer rows in range
            continue
        # One message filled the answer (its attachments): the window up to it is whole
        # if nothing lies before it.
        only = rows[0] if rows else (upper or row + 1)
        before, _ = await server.rows([(">", row), ("<", only)], 2)
        if not before:
            return [r for r in found if _row(r) == only], True
        upper = max(_row(r) for r in before)


async def newest_row(server: Server) -> int:
    """The highest row number of the server's messages (0 when it has none): the newest by
    date first, then whatever lies after it (a message stored late)."""
    newest, _ = await server.rows([], 1, sort="DESC")
    highest = _row(newest[0]) if newest else 0
    while True:
        after, _ = await server.rows([(">", highest)], WINDOW)
        if not after:
            return highest
        highest = max(_row(r) for r in after)


def _row(record: dict[str, Any]) -> int:
    return int(record["originalROWID"])
