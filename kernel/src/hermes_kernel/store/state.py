"""The state store as the rest of the kernel sees it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hermes_kernel.store.backend import StoreBackend
from hermes_kernel.store.compactions import Compactions
from hermes_kernel.store.db import BUSY_TIMEOUT_MS, WRITE_ATTEMPTS, Database
from hermes_kernel.store.leases import TurnLeases
from hermes_kernel.store.messages import Messages
from hermes_kernel.store.nested import NestedCalls
from hermes_kernel.store.sessions import Sessions

if TYPE_CHECKING:  # search is imported on the first search: most processes never make one
    from hermes_kernel.store.search import SearchFilters, SearchHit, SearchMode


def state_db_path(home: Path) -> Path:
    return home / "state.db"


class StateStore:
    """Sessions, messages, nested calls, compactions, search and turn leases in
    ``HERMES_HOME/state.db`` at ``path``, or in the database ``db``."""

    def __init__(
        self,
        path: Path | None = None,
        *,
        db: StoreBackend | None = None,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        write_attempts: int = WRITE_ATTEMPTS,
    ) -> None:
        if db is None:
            if path is None:
                raise TypeError("StateStore needs a path or a database")
            db = Database(path, busy_timeout_ms=busy_timeout_ms, write_attempts=write_attempts)
        self.db: StoreBackend = db
        self.sessions = Sessions(self.db)
        self.messages = Messages(self.db)
        self.leases = TurnLeases(self.db)
        self.compactions = Compactions(self.db)
        self.nested = NestedCalls(self.db)

    def search(
        self,
        query: str,
        *,
        mode: SearchMode | None = None,
        session_id: str | None = None,
        limit: int = 20,
        filters: SearchFilters | None = None,
    ) -> list[SearchHit]:
        """Hits for ``query``; ``mode`` None is ``SearchMode.AUTO``."""
        from hermes_kernel.store.search import SearchMode, search

        return search(
            self.db,
            query,
            mode=mode or SearchMode.AUTO,
            session_id=session_id,
            limit=limit,
            filters=filters,
        )

    def close(self) -> None:
        self.db.close()
