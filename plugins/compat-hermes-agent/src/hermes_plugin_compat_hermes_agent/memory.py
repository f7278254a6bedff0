"""A hermes-agent memory provider, driven as a Hermes one (``memory.provider: NAME``).

hermes-agent initializes its provider once per agent, asks ``prefetch`` before each turn (the
text goes with this turn's user message only), calls ``sync_turn`` after each finished turn,
and offers the provider's tool schemas as tools. Hermes's
:class:`~hermes_sdk.memory.MemoryProvider` has the same moments, so this only translates;
the kernel already guards each call (a provider that raises is dropped, built-in memory goes
on) and cuts a slow prefetch.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from hermes_plugin_compat_hermes_agent.hooks import result_text
from hermes_sdk import PromptContext, PromptSection, ToolSpec
from hermes_sdk.memory import MemoryProvider, TurnRecord
from hermes_sdk.tooling import ToolContext

__all__ = ["GuestMemory"]

_EMPTY_OBJECT = {"type": "object", "properties": {}}


SESSIONS_KEPT = 32
"""Providers kept ready for this many sessions at once (a gateway serves many); the one used
longest ago is shut down first."""


class GuestMemory(MemoryProvider):
    """``provider`` (hermes-agent's interface) behind Hermes's: one instance per session, as
    hermes-agent has one per agent, so one user's turns never land in another's memory.
    A provider class that cannot be made again without arguments is shared, and initialized
    again (under a lock) when the session changes."""

    def __init__(self, provider: Any, name: str, home: Path) -> None:
        self._first = provider
        self._name = name
        self._home = home
        self._ready: OrderedDict[str, Any] = OrderedDict()
        self._current: str | None = None  # the shared instance's session
        self._lock = threading.RLock()

    def _fresh(self) -> Any:
        if not self._ready:
            return self._first
        try:
            return type(self._first)()
        except Exception:  # noqa: BLE001 - it needs arguments: share the first, re-initialized
            return None

    @contextlib.contextmanager
    def _using(
        self, session_id: str, platform: str = "cli", user_scope: str | None = None
    ) -> Iterator[Any]:
        """The provider for ``session_id`` while it is used: a shared one stays under the
        lock, so another session cannot initialize it for itself in the middle."""
        with self._lock:
            provider = self._for(session_id, platform, user_scope)
            if provider is self._first:
                yield provider
                return
        yield provider

    def _for(self, session_id: str, platform: str = "cli", user_scope: str | None = None) -> Any:
        """The provider for ``session_id``, initialized with what hermes-agent passes."""
        with self._lock:
            if session_id in self._ready:
                self._ready.move_to_end(session_id)
                provider = self._ready[session_id]
                if provider is not self._first or self._current == session_id:
                    return provider
            provider = self._ready.get(session_id) or self._fresh() or self._first
            user = user_scope.partition(":")[2] if user_scope else ""
            extra = {"user_id": user} if user else {}
            provider.initialize(
                session_id,
                platform=platform,
                hermes_home=str(self._home),
                agent_context="primary",
                agent_identity="default",
                agent_workspace="hermes",
                **extra,
            )
            if provider is self._first:
                self._current = session_id
            self._ready[session_id] = provider
            while len(self._ready) > SESSIONS_KEPT:
                _old, dropped = self._ready.popitem(last=False)
                if dropped is not self._first and dropped not in self._ready.values():
                    _shut(dropped)
            return provider

    def prompt_blocks(self, context: PromptContext) -> Sequence[PromptSection]:
        with self._using(context.session_id, context.source, context.user_scope) as provider:
            block = provider.system_prompt_block()
        if not isinstance(block, str) or not block.strip():
            return ()
        return (PromptSection(title=f"Memory ({self._name})", text=block, tier=10),)

    def prefetch(self, query: str, *, session_id: str, user_scope: str | None) -> str | None:
        with self._using(session_id, user_scope=user_scope) as provider:
            text = provider.prefetch(query, session_id="")  # as hermes-agent calls it
        return text if isinstance(text, str) and text.strip() else None

    def observe_turn(self, turn: TurnRecord) -> None:
        if turn.status != "done":
            return  # hermes-agent syncs completed turns only
        with self._using(turn.session_id, turn.source, turn.user_scope) as provider:
            provider.sync_turn(turn.user_text, turn.reply, session_id=turn.session_id)
            queue = getattr(provider, "queue_prefetch", None)
            if callable(queue):
                queue(turn.user_text, session_id=turn.session_id)

    def tools(self) -> Sequence[ToolSpec]:
        specs = []
        for schema in self._first.get_tool_schemas() or []:
            described = schema.get("function", schema) if isinstance(schema, dict) else {}
            name = described.get("name")
            if not isinstance(name, str):
                continue
            parameters = described.get("parameters") or _EMPTY_OBJECT
            specs.append(
                ToolSpec(
                    name=name,
                    description=str(described.get("description") or name),
                    parameters=parameters,
                    toolset="memory",
                    takes_context=True,
                    handler=self._handler(name),
                )
            )
        return specs

    def _handler(self, name: str) -> Any:
        def handle(context: ToolContext, **arguments: Any) -> str:
            with self._using(context.session_id, context.source, context.user_scope) as provider:
                return result_text(provider.handle_tool_call(name, dict(arguments)))

        return handle

    def close(self) -> None:
        with self._lock:
            providers = {id(p): p for p in [self._first, *self._ready.values()]}
            self._ready.clear()
            self._current = None
        for provider in providers.values():
            _shut(provider)


def _shut(provider: Any) -> None:
    shutdown = getattr(provider, "shutdown", None)
    if callable(shutdown):
        shutdown()
