"""The one external memory provider a user may add besides built-in memory
(``memory.provider``). Every call into it is guarded: a provider that fails to build or
raises is logged, reported once as a warning, and from then on left out; the agent carries
on with its built-in memory."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_sdk import Kind, MemoryProviderSpec, PromptContext, PromptSection, ToolSpec
from hermes_sdk.memory import MemoryContext, MemoryProvider, TurnRecord

if TYPE_CHECKING:
    from hermes_kernel.config.settings import Settings
    from hermes_kernel.plugins.host import PluginHost
    from hermes_kernel.store.sessions import Session

__all__ = ["ExternalMemory"]

log = logging.getLogger("hermes.memory")
T = TypeVar("T")

PREFETCH_SECONDS = 5.0
"""Longer than this and the turn goes on without what the provider would have recalled."""


class ExternalMemory:
    """Inactive (every method a no-op) unless ``memory.provider`` names one that loads."""

    def __init__(self, host: PluginHost, settings: Settings) -> None:
        self.warnings: list[str] = []
        self.name: str | None = (settings.raw.get("memory") or {}).get("provider")
        self.provider: MemoryProvider | None = None
        if self.name:
            self.provider = self._build(host, settings, self.name)

    def _build(self, host: PluginHost, settings: Settings, name: str) -> MemoryProvider | None:
        provided = host.require(Kind.MEMORY, name)
        if provided is None:
            known = ", ".join(sorted(spec.name for spec in host.memory_providers()))
            self._degrade(
                f"memory provider {name!r} is not installed (installed: {known or 'none'}); "
                "set memory.provider to one of them or remove it"
            )
            return None
        spec = provided.spec
        assert isinstance(spec, MemoryProviderSpec)
        section = settings.raw.get(name)
        context = MemoryContext(
            home=str(settings.home), config=section if isinstance(section, Mapping) else {}
        )
        try:
            provider = spec.build(context)
        except Exception as exc:  # noqa: BLE001 - any failure degrades to built-in memory
            self._degrade(f"memory provider {name!r} failed to start: {exc}")
            return None
        if not isinstance(provider, MemoryProvider):
            self._degrade(f"memory provider {name!r} did not return a MemoryProvider")
            return None
        return provider

    def _degrade(self, reason: str) -> None:
        message = f"{reason}; using built-in memory only"
        log.warning("%s", message)
        self.warnings.append(message)
        self.provider = None

    def _guard(self, what: str, call: Callable[[MemoryProvider], T], default: T) -> T:
        provider = self.provider
        if provider is None:
            return default
        try:
            return call(provider)
        except Exception as exc:  # noqa: BLE001 - a failing provider is dropped, not fatal
            self._degrade(f"memory provider {self.name!r} failed in {what}: {exc}")
            return default

    # --- what the engine and the shells call --------------------------------------------

    def prompt_sections(self, context: PromptContext) -> list[PromptSection]:
        none: list[PromptSection] = []
        blocks = self._guard("prompt_blocks", lambda p: list(p.prompt_blocks(context)), none)
        return [block for block in blocks if isinstance(block, PromptSection)]

    def prefetch(self, session: Session, user_text: str) -> str | None:
        """Runs in a worker thread; a provider slower than PREFETCH_SECONDS is not waited for
        (its thread finishes on its own) and the turn goes on without it."""
        if self.provider is None:
            return None
        found: list[Any] = []

        def run() -> None:
            found.append(
                self._guard(
                    "prefetch",
                    lambda p: p.prefetch(
                        user_text, session_id=session.id, user_scope=session.user_scope
                    ),
                    None,
                )
            )

        worker = threading.Thread(target=run, name="memory-prefetch", daemon=True)
        worker.start()
        worker.join(PREFETCH_SECONDS)
        if worker.is_alive() or not found:
            log.warning(
                "memory provider %r took over %.0f s to recall", self.name, PREFETCH_SECONDS
            )
            return None
        text = found[0]
        return str(text) if text else None

    def observe(self, record: TurnRecord) -> None:
        self._guard("observe_turn", lambda p: p.observe_turn(record), None)

    def tools(self) -> list[ToolSpec]:
        none: list[ToolSpec] = []
        specs = self._guard("tools", lambda p: list(p.tools()), none)
        return [spec for spec in specs if isinstance(spec, ToolSpec)]

    def close(self) -> None:
        self._guard("close", lambda p: p.close(), None)
