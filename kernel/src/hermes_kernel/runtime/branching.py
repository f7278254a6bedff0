"""``/branch``: a new session that goes on from another's history up to a point, on the
original's engine (its tools, never more), the copy made under the original's lease so no
turn elsewhere writes meanwhile. A point inside a round of tool calls takes the round's
results too: a branch never holds a call without its result."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Protocol

from hermes_kernel.store.errors import LeaseHeldError
from hermes_kernel.store.state import StateStore
from hermes_sdk.runtime import (
    RuntimeTurn,
    SessionBusy,
    SessionMessage,
    SessionNotFound,
    SessionOptions,
    SessionSummary,
)

__all__ = ["branch"]


class BranchHost(Protocol):
    """What a branch needs of the runtime."""

    def running(self, session_id: str) -> RuntimeTurn | None: ...

    async def find_session(self, reference: str) -> SessionSummary: ...

    async def messages(self, session_id: str) -> list[SessionMessage]: ...

    async def open_like(self, original_id: str, options: SessionOptions) -> SessionSummary: ...

    async def delete_sessions(self, session_ids: Sequence[str]) -> int: ...


async def branch(
    runtime: BranchHost,
    store: StateStore,
    session_id: str,
    through_seq: int | None,
    title: str | None,
) -> SessionSummary:
    original = await runtime.find_session(session_id)
    if runtime.running(original.session_id):
        raise SessionBusy(f"session {session_id} is running a turn; branch when it ends")
    messages = await runtime.messages(original.session_id)
    last = through_seq if through_seq is not None else (messages[-1].seq if messages else 0)
    last = _round_end(messages, last)
    copy_of = await runtime.open_like(
        original.session_id,
        SessionOptions(
            source=original.source,
            user_scope=original.user_scope,
            cwd=original.cwd,
            provider=original.provider,
            model=original.model,
            parent_session_id=original.session_id,
            title=title or f"{original.title or 'branch'} (branch)",
        ),
    )

    def copy() -> None:
        with store.leases.holding(original.session_id):
            store.messages.copy_into(original.session_id, copy_of.session_id, last)

    try:
        await store.db.run(copy)
    except LeaseHeldError as exc:
        with contextlib.suppress(SessionNotFound):
            await runtime.delete_sessions([copy_of.session_id])
        raise SessionBusy(f"{exc}: a turn is running on it elsewhere; branch later") from None
    return await runtime.find_session(copy_of.session_id)


def _round_end(messages: Sequence[SessionMessage], seq: int) -> int:
    """``seq``, or the last result of the tool calls it falls among: a branch never holds a
    call without its result."""
    end = seq
    for message in messages:
        if message.seq <= seq:
            continue
        if message.role != "tool":
            break
        end = message.seq
    return end
