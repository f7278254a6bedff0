"""The store side of an import: sessions another tool recorded, written with their own ids
(see :mod:`hermes_sdk.archive`). Each batch is one transaction; a session already stored is
skipped, so an import run twice adds only what is new."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from hermes_kernel.store.backend import StoreBackend
from hermes_kernel.store.sessions import Usage, add_usage_in
from hermes_sdk.archive import ArchivedSession, PairedUser, SessionArchive

ROLES = frozenset({"system", "user", "assistant", "tool"})
IMPORT_ENGINE = "import"
"""The engine named on the compaction that stands for what the other tool had compacted."""


Admit = Callable[[Sequence[PairedUser]], "int | None"]
"""Paired users -> how many were let in anew; None if no plugin keeps chat access."""


class StoreArchive(SessionArchive):
    def __init__(self, db: StoreBackend, admit: Admit) -> None:
        self._db = db
        self._admit = admit

    def stored(self, session_ids: Iterable[str]) -> set[str]:
        return _stored_in(self._db.query, set(session_ids))

    def add(self, sessions: Sequence[ArchivedSession]) -> int:
        for session in sessions:
            _check(session)
        added = 0
        wanted = {s.id for s in sessions} | {s.parent_session_id or "" for s in sessions}
        with self._db.write() as cursor:
            known = _stored_in(lambda sql, ids: cursor.execute(sql, ids).fetchall(), wanted)
            for session in _parents_first(sessions):
                if session.id in known:
                    continue
                parent = session.parent_session_id
                _insert_session(cursor, session, parent if parent in known else None)
                known.add(session.id)
                added += 1
        if added:
            self._db.index_pending()  # searchable at once, not at the first search
        return added

    def add_paired(self, users: Sequence[PairedUser]) -> int:
        if not users:
            return 0
        added = self._admit(users)
        if added is None:
            raise OSError(
                "no installed plugin keeps who may write from chat platforms, so approved "
                "users cannot be let in; install one (hermes plugins list), then import again"
            )
        return added


def _stored_in(
    query: Callable[[str, list[str]], Sequence[Sequence[Any]]], session_ids: set[str]
) -> set[str]:
    """Those of ``session_ids`` that are stored (``query`` runs a SELECT: in the caller's
    transaction, or on its own)."""
    wanted = sorted(session_ids)
    found: set[str] = set()
    for start in range(0, len(wanted), 500):  # SQLite's limit on bound parameters
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        found.update(
            str(row[0]) for row in query(f"SELECT id FROM sessions WHERE id IN ({marks})", chunk)
        )
    return found


def _check(session: ArchivedSession) -> None:
    if not session.id.strip():
        raise ValueError("an imported session has an empty id")
    for position, message in enumerate(session.messages):
        if message.role not in ROLES:
            raise ValueError(
                f"session {session.id}: message {position + 1} has role {message.role!r}; "
                f"expected one of {', '.join(sorted(ROLES))}"
            )
    if not 0 <= session.view_starts_at <= len(session.messages):
        raise ValueError(f"session {session.id}: view_starts_at is outside its messages")


def _parents_first(sessions: Sequence[ArchivedSession]) -> list[ArchivedSession]:
    """Each session after its parent (when both are in the batch), so the link holds."""
    by_id = {session.id: session for session in sessions}
    ordered: list[ArchivedSession] = []
    placed: set[str] = set()

    def place(session: ArchivedSession, trail: set[str]) -> None:
        if session.id in placed:
            return
        parent = by_id.get(session.parent_session_id or "")
        if parent is not None and parent.id not in trail:  # a cycle is cut, not followed
            place(parent, trail | {session.id})
        placed.add(session.id)
        ordered.append(session)

    for session in sessions:
        place(session, set())
    return ordered


def _insert_session(cursor: Any, session: ArchivedSession, parent: str | None) -> None:
    calls = sum(len(message.tool_calls) for message in session.messages)
    cursor.execute(
        "INSERT INTO sessions (id, source, model, provider, system_prompt, parent_session_id, "
        "title, started_at, ended_at, end_reason, message_count, tool_call_count, cwd, "
        "user_scope) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session.id,
            session.source,
            session.model,
            session.provider,
            session.system_prompt,
            parent,
            session.title,
            session.started_at,
            session.ended_at,
            session.end_reason,
            len(session.messages),
            calls,
            session.cwd,
            session.user_scope,
        ),
    )
    rows = [
        (
            session.id,
            seq,
            message.role,
            message.content,
            json.dumps(
                [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls]
            )
            if message.tool_calls
            else None,
            message.tool_call_id,
            message.tool_name,
            message.finish_reason,
            message.reasoning,
            message.created_at,
        )
        for seq, message in enumerate(session.messages, start=1)
    ]
    cursor.executemany(
        "INSERT INTO messages (session_id, seq, role, content, tool_calls, tool_call_id, "
        "tool_name, finish_reason, reasoning, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    if session.view_starts_at:
        _mark_compacted(cursor, session)
    tokens = (
        session.input_tokens,
        session.output_tokens,
        session.cache_read_tokens,
        session.cache_write_tokens,
        session.reasoning_tokens,
    )
    if any(tokens) or session.cost_usd:
        add_usage_in(
            cursor,
            session.id,
            Usage(*tokens, estimated_cost_usd=session.cost_usd, model=session.model,
                  provider=session.provider),
            at=session.started_at,  # when it was used, not when it came over
        )  # fmt: skip


def _mark_compacted(cursor: Any, session: ArchivedSession) -> None:
    """The other tool had compacted the messages before ``view_starts_at``: a compaction
    record makes the view start there, as it did, while search still finds them."""
    boundary = session.view_starts_at
    cursor.execute(
        "INSERT INTO compactions (session_id, boundary_seq, summary, reason, engine, by_model, "
        "messages_replaced, tokens_before, tokens_after, created_at) "
        "VALUES (?, ?, ?, ?, ?, 0, ?, 0, 0, ?)",
        (
            session.id,
            boundary,
            "(Earlier messages were compacted before this session was imported; the summary "
            "made then is among the messages that follow.)",
            "imported",
            IMPORT_ENGINE,
            boundary,
            time.time(),
        ),
    )
