"""What the store's modules need of a database, whichever engine holds it: the SDK's
:class:`~hermes_sdk.store_engine.Database`, opened by a store engine plugin (see
:mod:`hermes_kernel.config.store_location`). The kernel holds no engine: its SQL is written
once, with ``?`` placeholders, in the subset every engine runs alike, and what differs
(full-text search, day arithmetic, the catalog of tables) it asks the database for."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_sdk.store_engine import Cursor, Database, Rows

__all__ = ["Cursor", "Rows", "StoreBackend", "scalar"]

StoreBackend = Database


def scalar(cursor: Cursor, sql: str, bindings: Sequence[Any] = ()) -> Any:
    """The first column of the first row (None if no row), inside a transaction."""
    rows = cursor.execute(sql, bindings).fetchall()
    return rows[0][0] if rows else None
