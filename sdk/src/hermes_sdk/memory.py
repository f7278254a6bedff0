"""The interface of an external memory provider.

Hermes always keeps its built-in memory (MEMORY.md and USER.md, from the memory-builtin
plugin). Besides it, at most one external provider is active: the one named by
``memory.provider`` in config.yaml. ``MemoryProviderSpec.factory(context)`` gets a
:class:`MemoryContext` and returns a :class:`MemoryProvider`.

Every method is called in a worker thread and may block briefly. A method that raises (or a
factory that fails) is logged, and the session carries on with built-in memory only: an
external provider can add to what the agent remembers, never take the agent down.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_sdk.events import PromptContext, PromptSection
from hermes_sdk.specs import ToolSpec

__all__ = ["MemoryContext", "MemoryProvider", "TurnRecord"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryContext:
    """What a memory provider's factory gets."""

    home: str
    config: Mapping[str, Any] = field(default_factory=dict)
    """The provider's own config.yaml section (named after the provider), as written."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnRecord:
    """One finished turn, for :meth:`MemoryProvider.observe_turn`."""

    session_id: str
    source: str
    user_scope: str | None
    user_text: str
    reply: str
    status: str  # done | interrupted | stopped | error | budget | loop
    tool_calls: int = 0


class MemoryProvider:
    """Override what you provide; the defaults add nothing."""

    def prompt_blocks(self, context: PromptContext) -> Sequence[PromptSection]:
        """Blocks for the system prompt of a new session (frozen with it)."""
        return ()

    def prefetch(self, query: str, *, session_id: str, user_scope: str | None) -> str | None:
        """Context relevant to the user's new message, shown to the model with that message
        for this turn only (it is not stored in the transcript). Keep it short."""
        return None

    def observe_turn(self, turn: TurnRecord) -> None:
        """Called after a turn's reply was delivered, to learn from it."""

    def tools(self) -> Sequence[ToolSpec]:
        """Tools the model may call (their names must not clash with other tools)."""
        return ()

    def close(self) -> None:
        """Release connections when Hermes exits."""
