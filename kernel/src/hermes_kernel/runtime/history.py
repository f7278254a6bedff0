"""The kernel's :class:`~hermes_sdk.runtime.SessionHistory`: a home's stored sessions, read
and tidied through the state store alone.

``hermes sessions`` opens it with :func:`open_history`, which builds no agent: listing and
reading history must work before any model is set up, and start as fast as opening
the store. :class:`~hermes_kernel.runtime.kernel_runtime.KernelRuntime` is one too, whose
sessions' budgets may be their own (:meth:`StoreHistory.budget`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from hermes_commons.text import Totals
from hermes_kernel.plugins.store_engines import open_state_store
from hermes_kernel.store.compactions import CompactionRecord
from hermes_kernel.store.errors import LeaseHeldError
from hermes_kernel.store.messages import Message
from hermes_kernel.store.sessions import Session
from hermes_kernel.store.state import StateStore
from hermes_kernel.tooling.history import history_searcher
from hermes_sdk.budget import Budget
from hermes_sdk.media import Attachment
from hermes_sdk.runtime import (
    CompactionMark,
    SessionBusy,
    SessionHistory,
    SessionMessage,
    SessionNotFound,
    SessionSummary,
    ToolUsage,
    UsageByDay,
)
from hermes_sdk.tooling import HistoryHit, HistoryQuery

if TYPE_CHECKING:
    from hermes_kernel.plugins.host import PluginHost

__all__ = ["StoreHistory", "open_history", "session_message", "summary"]

_Disposition = Literal["ok", "error", "skipped", "unknown"]


def summary(session: Session) -> SessionSummary:
    return SessionSummary(
        session_id=session.id,
        source=session.source,
        title=session.title,
        model=session.model,
        provider=session.provider,
        cwd=session.cwd,
        user_scope=session.user_scope,
        parent_session_id=session.parent_session_id,
        started_at=session.started_at,
        ended_at=session.ended_at,
        message_count=session.message_count,
        input_tokens=session.input_tokens,
        output_tokens=session.output_tokens,
        estimated_cost_usd=session.estimated_cost_usd,
        cache_read_tokens=session.cache_read_tokens,
        cache_write_tokens=session.cache_write_tokens,
        reasoning_tokens=session.reasoning_tokens,
        unpriced_calls=session.unpriced_calls,
        tool_call_count=session.tool_call_count,
        end_reason=session.end_reason,
    )


def session_message(message: Message) -> SessionMessage:
    return SessionMessage(
        seq=message.seq,
        role=message.role,
        content=message.content,
        created_at=message.created_at,
        tool_calls=tuple(message.tool_calls or ()),
        tool_call_id=message.tool_call_id,
        tool_name=message.tool_name,
        finish_reason=message.finish_reason,
        reasoning=message.reasoning,
        # The store writes only the values of its Disposition enum, which are these.
        disposition=cast(_Disposition | None, message.disposition),
        attachments=tuple(Attachment.from_dict(item) for item in message.attachments or ()),
    )


def _mark(record: CompactionRecord) -> CompactionMark:
    return CompactionMark(
        boundary_seq=record.boundary_seq,
        created_at=record.created_at,
        reason=record.reason,
        engine=record.engine,
        by_model=record.by_model,
        messages_replaced=record.messages_replaced,
        tokens_before=record.tokens_before,
        tokens_after=record.tokens_after,
    )


class StoreHistory(SessionHistory):
    """The sessions in ``store``, the state store of the home at ``home``."""

    def __init__(self, store: StateStore, home: str, config: Mapping[str, Any]) -> None:
        self.store = store
        self.home = home
        self.config = config

    def budget(self, session_id: str) -> Budget:
        """The limits that hold for the session: config.yaml's ``budget:``. (A runtime knows
        the ones a session was opened with.)"""
        # The budget module reads the model usage types: imported when a budget is asked
        # for, so that listing sessions does not pay for them.
        from hermes_kernel.engine.budget import budget_from_config

        return budget_from_config(self.config.get("budget"))

    def _session(self, session_id: str) -> Session:
        """For a worker of :meth:`Database.run`: the stored session, or SessionNotFound."""
        session = self.store.sessions.get(session_id)
        if session is None:
            raise SessionNotFound(f"no session {session_id!r}")
        return session

    async def sessions(
        self,
        *,
        source: str | None = None,
        user_scope: str | None = None,
        limit: int = 50,
        background: bool = False,
    ) -> list[SessionSummary]:
        found = await self.store.db.run(
            self.store.sessions.recent,
            limit,
            source,
            user_scope=user_scope,
            reviews=background,
        )
        return [summary(session) for session in found]

    async def find_session(self, reference: str) -> SessionSummary:
        found = await self.store.db.run(self.store.sessions.find, reference)
        if found is None:
            raise SessionNotFound(f"no session {reference!r}; list them with: hermes sessions list")
        return summary(found)

    async def latest_session(self, source: str | None = None) -> SessionSummary | None:
        found = await self.store.db.run(self.store.sessions.latest, source)
        return summary(found) if found is not None else None

    async def messages(self, session_id: str) -> list[SessionMessage]:
        def read() -> list[Message]:
            self._session(session_id)
            return self.store.messages.of_session(session_id)

        return [session_message(message) for message in await self.store.db.run(read)]

    async def openings(self, session_ids: Sequence[str]) -> dict[str, str]:
        return await self.store.db.run(self.store.sessions.openings, list(session_ids))

    async def children(self, session_id: str) -> list[SessionSummary]:
        def read() -> list[Session]:
            self._session(session_id)
            return self.store.sessions.children(session_id)

        return [summary(child) for child in await self.store.db.run(read)]

    async def compactions(self, session_id: str) -> list[CompactionMark]:
        def read() -> list[CompactionRecord]:
            self._session(session_id)
            return self.store.compactions.of_session(session_id)

        return [_mark(record) for record in await self.store.db.run(read)]

    async def search(
        self, query: HistoryQuery, *, user_scope: str | None = None, background: bool = False
    ) -> list[HistoryHit]:
        search = history_searcher(self.store, user_scope, background=background, most=None)
        return await self.store.db.run(search, query)

    async def set_title(self, session_id: str, title: str) -> SessionSummary:
        def write() -> Session:
            self._session(session_id)
            self.store.sessions.set_title(session_id, title.strip() or None)
            return self._session(session_id)

        return summary(await self.store.db.run(write))

    async def usage(self, since: float | None = None) -> list[UsageByDay]:
        from hermes_kernel.store.usage import usage_by_day

        rows = await self.store.db.run(usage_by_day, self.store.db, since or 0.0)
        return [UsageByDay(**row) for row in rows]

    async def tool_usage(self, since: float | None = None) -> list[ToolUsage]:
        from hermes_kernel.store.usage import tool_usage_by_day

        rows = await self.store.db.run(tool_usage_by_day, self.store.db, since or 0.0)
        return [ToolUsage(**row) for row in rows]

    async def usage_report(self, session_id: str) -> list[str]:
        from hermes_kernel.engine.budget import spending_line

        store, budget = self.store, self.budget(session_id)

        def report() -> list[str]:
            session = self._session(session_id)
            lines = [
                f"session {session.id}: {session.message_count} messages, "
                f"{session.tool_call_count} tool calls",
                Totals.of(session).line(),
            ]
            spending = spending_line(budget, session)
            if spending is not None:
                lines.append(spending)
            children = store.sessions.children(session.id, reviews=False)
            if children:
                total = sum((Totals.of(child) for child in children), Totals())
                lines.append(f"and {len(children)} tasks it started: {total.line()}")
            rows = store.sessions.usage_by_model(session.id)
            if len(rows) > 1 or (rows and rows[0][1] != session.model):
                for provider, model, calls, tokens_in, tokens_out, cost, unpriced in rows:
                    totals = Totals(tokens_in, tokens_out, cost_usd=cost, unpriced_calls=unpriced)
                    lines.append(f"  {provider} / {model}: {calls} calls, {totals.line()}")
            return lines

        return await store.db.run(report)

    async def spending(self, session_id: str) -> str | None:
        from hermes_kernel.engine.budget import spending_line

        session = await self.store.db.run(self._session, session_id)
        return spending_line(self.budget(session_id), session)

    async def delete_sessions(self, session_ids: Sequence[str]) -> int:
        try:
            return await self.store.db.run(self.store.sessions.delete, list(session_ids))
        except LeaseHeldError as exc:
            raise SessionBusy(str(exc)) from None


@contextlib.asynccontextmanager
async def open_history(
    host: PluginHost, home: Path, config: Mapping[str, Any]
) -> AsyncIterator[StoreHistory]:
    """The history of the home at ``home`` (``CommandContext.open_history``), its store
    closed on exit. Raises StoreError if the store cannot be used (a foreign or damaged
    one, no engine for it)."""
    store = open_state_store(host, home, config)
    try:
        yield StoreHistory(store, str(home), config)
    finally:
        store.close()
