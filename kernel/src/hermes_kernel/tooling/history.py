"""Search over past sessions, for tools (a history search) and front-ends: what a person
may see of the store."""

from __future__ import annotations

from collections.abc import Callable

from hermes_kernel.store.sessions import REVIEW_SOURCE
from hermes_kernel.store.state import StateStore
from hermes_sdk.tooling import HistoryHit, HistoryQuery

__all__ = ["history_searcher"]

TOOL_MOST_HITS = 50
"""A tool's search returns at most this many hits, whatever limit the model asks for."""


def history_searcher(
    store: StateStore,
    user_scope: str | None,
    *,
    background: bool = False,
    most: int | None = TOOL_MOST_HITS,
) -> Callable[[HistoryQuery], list[HistoryHit]]:
    """ToolContext.search for a session of ``user_scope`` (``most`` hits at most), or a
    front-end's search (``most`` None: its own limit holds)."""

    def search(query: HistoryQuery) -> list[HistoryHit]:
        from hermes_kernel.store.search import SearchFilters, SearchMode  # on first search

        # The owner (no scope) searches everything; a chat user only their own sessions.
        # Reviews repeat the turns they review, so they are left out unless asked for.
        filters = SearchFilters(
            session_id=query.session_id,
            role=query.role,
            since=query.since,
            until=query.until,
            user_scope=user_scope,
            exclude_sources=() if background else (REVIEW_SOURCE,),
        )
        limit = max(1, query.limit if most is None else min(query.limit, most))
        hits = store.search(query.text, mode=SearchMode(query.mode), limit=limit, filters=filters)
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
