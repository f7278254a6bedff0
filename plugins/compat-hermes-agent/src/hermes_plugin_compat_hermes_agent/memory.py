"""A hermes-agent memory provider, driven as a Hermes one (``memory.provider: NAME``).

hermes-agent initializes its provider once per agent, asks ``prefetch`` before each turn (the
text goes with this turn's user message only), calls ``sync_turn`` after each finished turn,
and offers the provider's tool schemas as tools. Hermes's
:class:`~hermes_sdk.memory.MemoryProvider` has the same moments, so this only translates;
the kernel already guards each call (a provider that raises is dropped, built-in memory goes
on) and cuts a slow prefetch.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_plugin_compat_hermes_agent.hooks import result_text
from hermes_sdk import PromptContext, PromptSection, ToolSpec
from hermes_sdk.memory import MemoryProvider, TurnRecord
from hermes_sdk.tooling import ToolContext

__all__ = ["GuestMemory"]

_EMPTY_OBJECT = {"type": "object", "properties": {}}


class GuestMemory(MemoryProvider):
    """``provider`` (hermes-agent's interface) behind Hermes's."""

    def __init__(self, provider: Any, name: str, home: Path) -> None:
        self._provider = provider
        self._name = name
        self._home = home
        self._ready = False
        self._lock = threading.Lock()

    def _start(self, session_id: str, platform: str = "cli", user_scope: str | None = None) -> None:
        """``initialize`` once per process, with what hermes-agent passes."""
        with self._lock:
            if self._ready:
                return
            user = user_scope.partition(":")[2] if user_scope else ""
            extra = {"user_id": user} if user else {}
            self._provider.initialize(
                session_id,
                platform=platform,
                hermes_home=str(self._home),
                agent_context="primary",
                agent_identity="default",
                agent_workspace="hermes",
                **extra,
            )
            self._ready = True

    def prompt_blocks(self, context: PromptContext) -> Sequence[PromptSection]:
        self._start(context.session_id, context.source, context.user_scope)
        block = self._provider.system_prompt_block()
        if not isinstance(block, str) or not block.strip():
            return ()
        return (PromptSection(title=f"Memory ({self._name})", text=block, tier=10),)

    def prefetch(self, query: str, *, session_id: str, user_scope: str | None) -> str | None:
        self._start(session_id, user_scope=user_scope)
        text = self._provider.prefetch(query, session_id="")  # as hermes-agent calls it
        return text if isinstance(text, str) and text.strip() else None

    def observe_turn(self, turn: TurnRecord) -> None:
        if turn.status != "done":
            return  # hermes-agent syncs completed turns only
        self._start(turn.session_id, turn.source, turn.user_scope)
        self._provider.sync_turn(turn.user_text, turn.reply, session_id=turn.session_id)
        queue = getattr(self._provider, "queue_prefetch", None)
        if callable(queue):
            queue(turn.user_text, session_id=turn.session_id)

    def tools(self) -> Sequence[ToolSpec]:
        specs = []
        for schema in self._provider.get_tool_schemas() or []:
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
            self._start(context.session_id, context.source, context.user_scope)
            return result_text(self._provider.handle_tool_call(name, dict(arguments)))

        return handle

    def close(self) -> None:
        shutdown = getattr(self._provider, "shutdown", None)
        if callable(shutdown):
            shutdown()
