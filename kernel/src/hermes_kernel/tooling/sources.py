"""The plugins' tool sources (servers a plugin reaches ...): built and started together, once
per process, before the first model call; their tools join the plugins' own. A source that
fails to build or start is one warning, and the agent carries on without it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from hermes_sdk import Kind, ToolSourceSpec, ToolSpec
from hermes_sdk.tool_sources import ToolSource, ToolSourceContext

if TYPE_CHECKING:
    from hermes_kernel.config.settings import Settings
    from hermes_kernel.plugins.host import PluginHost

__all__ = ["START_DEADLINE_SECONDS", "ToolSources"]

log = logging.getLogger("hermes.tools")

START_DEADLINE_SECONDS = 300.0
"""The most the kernel waits for a source's start (a source keeps tighter deadlines of its
own, per server): past it the source is left out, said in one line."""


class ToolSources:
    def __init__(self, host: PluginHost, settings: Settings, cwd: str) -> None:
        self.host = host
        self.settings = settings
        self.cwd = cwd
        self.sources: list[tuple[str, ToolSource]] = []
        self.warnings: list[str] = []
        self._started: asyncio.Task[None] | None = None

    async def start(self) -> list[str]:
        """Start every source (the first call; later ones wait for it) and return the
        warnings the first start produced."""
        if self._started is None:
            self._started = asyncio.ensure_future(self._start_all())
            await asyncio.shield(self._started)
            return list(self.warnings)
        await asyncio.shield(self._started)
        return []

    @property
    def started(self) -> bool:
        return self._started is not None and self._started.done()

    async def _start_all(self) -> None:
        specs = [p for p in self.host.provided(Kind.TOOL_SOURCE)]
        if not specs:
            return
        settings = self.settings
        context = ToolSourceContext(
            home=str(settings.home),
            cwd=self.cwd,
            config=settings.raw,
            secrets=settings.secrets.merged(),
        )
        built: list[tuple[str, ToolSource]] = []
        for provided in specs:
            spec = provided.spec
            assert isinstance(spec, ToolSourceSpec)
            try:
                source = spec.build(context)
            except Exception as exc:  # noqa: BLE001 - a broken source costs its tools only
                self.warnings.append(f"tool source {spec.name!r} failed to start: {exc}")
                continue
            if not isinstance(source, ToolSource):
                self.warnings.append(f"tool source {spec.name!r} is not a ToolSource; left out")
                continue
            built.append((spec.name, source))
        outcomes = await asyncio.gather(*(self._start_one(name, source) for name, source in built))
        for (name, source), ok in zip(built, outcomes, strict=True):
            if ok:
                self.sources.append((name, source))
                self.warnings += list(source.problems())

    async def _start_one(self, name: str, source: ToolSource) -> bool:
        try:
            async with asyncio.timeout(START_DEADLINE_SECONDS):
                await source.start()
        except Exception as exc:
            self.warnings.append(f"tool source {name!r} failed to start: {exc}")
            log.debug("tool source %s failed", name, exc_info=True)
            with contextlib.suppress(Exception):
                await source.aclose()
            return False
        return True

    def tools(self) -> list[ToolSpec]:
        found: list[ToolSpec] = []
        for name, source in self.sources:
            try:
                found += list(source.tools())
            except Exception as exc:  # noqa: BLE001 - its tools are left out, once
                log.warning("tool source %s could not list its tools: %s", name, exc)
        return found

    async def aclose(self) -> None:
        for name, source in self.sources:
            try:
                await source.aclose()
            except Exception as exc:  # noqa: BLE001 - closing must not fail an exit
                log.warning("tool source %s did not close cleanly: %s", name, exc)
        self.sources = []
