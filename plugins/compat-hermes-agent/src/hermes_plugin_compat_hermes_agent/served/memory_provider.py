"""``agent.memory_provider`` for hermes-agent plugins on Hermes: the ``MemoryProvider`` base
class their memory providers subclass, with hermes-agent's defaults.

Hermes drives a provider through :mod:`hermes_plugin_compat_hermes_agent.memory`: it calls
``initialize`` once per process, ``system_prompt_block`` for a new session's prompt,
``prefetch`` before each turn (its text goes with this turn's user message only),
``sync_turn`` after each finished turn, and offers ``get_tool_schemas`` as tools answered by
``handle_tool_call``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["MemoryProvider"]


class MemoryProvider(ABC):
    """An external memory provider (hermes-agent's interface)."""

    @property
    @abstractmethod
    def name(self) -> str:
        """Its short name (never ``builtin``)."""

    @abstractmethod
    def is_available(self) -> bool:
        """Whether its settings and dependencies are there (no network)."""

    @abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Get ready; kwargs carry ``hermes_home``, ``platform``, ``user_id`` ..."""

    @abstractmethod
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """``{"name", "description", "parameters"}`` of each tool it offers."""

    def system_prompt_block(self) -> str:
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        return None

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        return None

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        raise NotImplementedError(f"{self.name} does not handle tool {tool_name!r}")

    def shutdown(self) -> None:
        return None

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        return None

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        return None

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        return None

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        return ""

    def on_delegation(self, task: str, result: str, **kwargs: Any) -> None:
        return None

    def get_config_schema(self) -> list[dict[str, Any]]:
        return []

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        return None

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        return None

    def backup_paths(self) -> list[str]:
        return []
