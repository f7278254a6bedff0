"""Running the platform plugins: each in its own task, restarted with backoff when it fails,
so one broken platform never stops the others (or the gateway)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hermes_commons.supervision import Supervised, cancel_all, one_line, supervise
from hermes_sdk import PlatformSpec
from hermes_sdk.platform import (
    PlatformAdapter,
    PlatformContext,
    PlatformHost,
    PlatformNotConfigured,
)

__all__ = ["PlatformState", "Platforms"]

log = logging.getLogger("hermes.gateway")


@dataclass
class PlatformState(Supervised):
    adapter: PlatformAdapter | None = None


class Platforms:
    def __init__(
        self,
        specs: list[PlatformSpec],
        context: Callable[[str], PlatformContext],
        host: Callable[[str], PlatformHost],
        *,
        backoff: float = 30.0,
        backoff_max: float = 300.0,
        on_running: Callable[[str], None] | None = None,
        on_stopped: Callable[[str], None] | None = None,
    ) -> None:
        self.specs = specs
        self._context = context
        self._host = host
        self.backoff = backoff
        self.backoff_max = backoff_max
        self.on_running = on_running
        self.on_stopped = on_stopped
        self.states: dict[str, PlatformState] = {
            spec.name: PlatformState(spec.name) for spec in specs
        }
        self._tasks: list[asyncio.Task[None]] = []

    def adapter(self, name: str) -> PlatformAdapter | None:
        state = self.states.get(name)
        return state.adapter if state is not None and state.state == "running" else None

    def start(self) -> None:
        if not self.specs:
            log.info("gateway: no platform is enabled; running anyway (for scheduled jobs)")
        for spec in self.specs:
            self._tasks.append(asyncio.ensure_future(self._supervise(spec)))

    async def _supervise(self, spec: PlatformSpec) -> None:
        state = self.states[spec.name]

        async def attempt() -> str:
            try:
                adapter = await asyncio.to_thread(spec.build, self._context(spec.name))
            except PlatformNotConfigured:
                raise
            except Exception as exc:  # noqa: BLE001 - a broken plugin is reported, then retried
                return f"could not start: {one_line(exc)}"
            return await self._run(spec.name, state, adapter)

        await supervise(
            f"platform {spec.name}",
            state,
            attempt,
            backoff=self.backoff,
            backoff_max=self.backoff_max,
            not_configured=(PlatformNotConfigured,),
            log=log,
        )

    async def _run(self, name: str, state: PlatformState, adapter: PlatformAdapter) -> str:
        state.adapter, state.state, state.error = adapter, "running", ""
        log.info("platform %s: connected", name)
        if self.on_running is not None:
            self.on_running(name)
        try:
            await adapter.run(self._host(name))
            return "its connection ended"
        except (asyncio.CancelledError, PlatformNotConfigured):
            raise  # a refusal only the user's config can end (a revoked token): not retried
        except Exception as exc:  # noqa: BLE001 - reported, then restarted with backoff
            return one_line(exc)
        finally:
            state.adapter = None
            if self.on_stopped is not None:
                self.on_stopped(name)
            with contextlib.suppress(Exception):  # closing must not hide the failure
                await adapter.aclose()

    async def stop(self) -> None:
        """Disconnect every platform; :meth:`start` connects them again (another worker
        may hold them meanwhile: ``standby``)."""
        await cancel_all(self._tasks)
        for state in self.states.values():
            if state.state != "not configured":
                state.state, state.error, state.adapter, state.retry_at = "standby", "", None, None

    def status(self) -> Mapping[str, Any]:
        return {name: state.as_dict() for name, state in self.states.items()}
