"""Search over past sessions for tools (a history search): what a person may see of the store."""

from __future__ import annotations

from collections.abc import Callable

from hermes_kernel.store.search import SearchFilters
from hermes_kernel.store.sessions import REVIEW_SOURCE
from hermes_kernel.store.state import StateStore
from hermes_sdk.tooling import HistoryHit, HistoryQuery

__all__ = ["history_searcher"]


def history_searcher(
    store: StateStore, user_scope: str | None
) -> Callable[[HistoryQuery], list[HistoryHit]]:
    """ToolContext.search for a session of ``user_scope``."""

    def search(query: HistoryQuery) -> list[HistoryHit]:
        # The owner (no scope) searches everything; a chat user only their own sessions.
        # Reviews repeat the turns they review, so they are left out.
        filters = SearchFilters(
            session_id=query.session_id,
            role=query.role,
            since=query.since,
            until=query.until,
            user_scope=user_scope,
            exclude_sources=(REVIEW_SOURCE,),
        )
        hits = store.search(query.text, limit=max(1, min(query.limit, 50)), filters=filters)
        titles = store.sessions.labels([hit.session_id for hit in hits])
        return [
            HistoryHit(
                session_id=hit.session_id,
                message_id=hit.message_id,
                role=hit.role,
                created_at=hit.created_at,
                snippet=hit.snippet,
                session_title=titles.get(hit.session_id) or None,
            )
            for hit in hits
        ]

    return search
