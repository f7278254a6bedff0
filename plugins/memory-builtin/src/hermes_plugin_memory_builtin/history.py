"""The session_search tool: ranked snippets from past sessions, optionally summarized by the
auxiliary model so that only what matters enters the context."""

from __future__ import annotations

import time
from datetime import datetime

from hermes_plugin_memory_builtin import ROLES
from hermes_sdk.tooling import HistoryHit, HistoryQuery, ToolContext, Unsupported

__all__ = ["session_search"]

SUMMARY_INSTRUCTIONS = (
    "You condense search hits from a user's past conversations with their AI agent. Say, in "
    "at most 150 words, what the hits tell about the query: facts, decisions, commands, "
    "outcomes. Cite the session id in brackets after each point. Leave out hits that do not "
    "bear on the query. If none does, say so in one sentence."
)


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


def _render(hits: list[HistoryHit]) -> str:
    lines = []
    for hit in hits:
        title = f" · {hit.session_title[:50]}" if hit.session_title else ""
        snippet = " ".join(hit.snippet.split())
        lines.append(f"[{hit.session_id}{title} · {_when(hit.created_at)} · {hit.role}] {snippet}")
    return "\n".join(lines)


def session_search(
    query: str,
    context: ToolContext,
    session_id: str | None = None,
    role: str | None = None,
    days: float | None = None,
    limit: int = 8,
    summarize: bool = False,
) -> str:
    if not query.strip():
        raise ValueError("query is empty: give words or a phrase to look for")
    if role is not None and role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    since = time.time() - float(days) * 86400 if days else None
    try:
        hits = context.search_history(
            HistoryQuery(
                text=query,
                session_id=session_id,
                role=role,
                since=since,
                limit=max(1, min(int(limit), 50)),
            )
        )
    except Unsupported as exc:
        return f"session search is not available: {exc}"
    if not hits:
        return f"no past messages match {query!r}"
    listing = _render(hits)
    if not summarize:
        return f"{len(hits)} matches, best first:\n{listing}"
    try:
        summary = context.ask_model(SUMMARY_INSTRUCTIONS, f"Query: {query}\n\nHits:\n{listing}")
    except (Unsupported, RuntimeError) as exc:
        return f"(no summary: {exc})\n{len(hits)} matches, best first:\n{listing}"
    sessions = ", ".join(dict.fromkeys(hit.session_id for hit in hits))
    return f"{summary.strip()}\n(from {len(hits)} matches in sessions {sessions})"
