"""The state store as the rest of the kernel sees it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_commons.leases import LEASES
from hermes_kernel.store.backend import StoreBackend
from hermes_kernel.store.compactions import Compactions
from hermes_kernel.store.leases import TurnLeases
from hermes_kernel.store.messages import Messages
from hermes_kernel.store.nested import NestedCalls
from hermes_kernel.store.plugin_store import migrate_schema
from hermes_kernel.store.sessions import Sessions

if TYPE_CHECKING:  # search is imported on the first search: most processes never make one
    from hermes_kernel.store.search import SearchFilters, SearchHit, SearchMode


class StateStore:
    """Sessions, messages, nested calls, compactions, search and turn leases in the database
    ``db`` (a store engine's)."""

    def __init__(self, db: StoreBackend) -> None:
        self.db: StoreBackend = db
        migrate_schema(db, LEASES)  # turn leases live there (made as the store opens, too)
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
