"""Bringing history in from elsewhere: sessions, messages and approved chat users written
into a home's store by an importer (``hermes import ...``), with their original ids.

An importer plugin reads the other tool's files itself and hands the kernel plain records;
the kernel owns the store, so what it writes is searchable (``hermes sessions search``) and
resumable (``--resume``) like any session of its own. A command gets a
:class:`SessionArchive` from ``CommandContext.open_archive(home)``.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hermes_sdk.models import ToolCallRequest

__all__ = ["ArchivedMessage", "ArchivedSession", "PairedUser", "SessionArchive"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchivedMessage:
    """One message of an imported session, in the order it was said."""

    role: str
    """``user``, ``assistant``, ``tool`` or ``system``."""
    content: str | None
    created_at: float
    tool_calls: tuple[ToolCallRequest, ...] = ()
    """An assistant message's calls; each needs a ``tool`` message with its id after it."""
    tool_call_id: str | None = None
    tool_name: str | None = None
    finish_reason: str | None = None
    reasoning: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchivedSession:
    """A session as another tool stored it; ``id`` is kept as it was, so parent links and
    anything the user noted down still point at it."""

    id: str
    source: str
    """Where it came from: ``cli``, ``telegram``, ``cron``, ``delegate`` ..."""
    started_at: float
    messages: tuple[ArchivedMessage, ...] = ()
    view_starts_at: int = 0
    """Messages before this index are history only (the other tool had compacted them
    into a summary, among the messages after it): searchable, but not sent to the model
    when the session is resumed."""
    title: str | None = None
    model: str | None = None
    provider: str | None = None
    system_prompt: str | None = None
    parent_session_id: str | None = None
    """Kept only if that session is in the store (imported before, or in the same batch)."""
    ended_at: float | None = None
    end_reason: str | None = None
    cwd: str | None = None
    user_scope: str | None = None
    """Whose session it is (``telegram:42``); None for the owner at the terminal."""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None
    """None when the other tool did not know the price: shown as unknown, never as free."""


@dataclass(frozen=True, slots=True)
class PairedUser:
    """A chat-platform user the owner let in (DM pairing)."""

    platform: str
    user_id: str
    user_name: str
    approved_at: float


class SessionArchive(abc.ABC):
    """Write access to one home's store for an importer. Adding is idempotent: a session
    whose id is already stored is left as it is, so running an import again adds only
    what is new."""

    @abc.abstractmethod
    def stored(self, session_ids: Iterable[str]) -> set[str]:
        """Those of ``session_ids`` the store already holds."""

    @abc.abstractmethod
    def add(self, sessions: Sequence[ArchivedSession]) -> int:
        """Store these sessions and their messages in one transaction (all or none); returns
        how many were new. Raises ValueError (one line naming the session) for a record the
        store cannot hold, such as a message with an unknown role."""

    @abc.abstractmethod
    def add_paired(self, users: Sequence[PairedUser]) -> int:
        """Let these users in, as ``hermes pairing approve`` does; returns how many were new."""
