"""Hosting the service plugins (``hermes_services``: an HTTP API, a scheduler) in a
long-running process: each enabled one in its own task with that process's runtime,
restarted with backoff when it fails or ends (:mod:`hermes_commons.supervision`). The
gateway hosts them beside its platforms; any front-end that runs for long may."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from hermes_commons.supervision import LOG, Supervised, cancel_all, one_line, supervise
from hermes_sdk import ServiceSpec
from hermes_sdk.runtime import Runtime
from hermes_sdk.service import ServiceContext, ServiceNotConfigured

__all__ = ["Services", "enabled_services"]


def enabled_services(specs: list[ServiceSpec], config: Mapping[str, Any]) -> list[ServiceSpec]:
    """The services config.yaml turns on (``<section>.enabled``), else their default."""
    chosen = []
    for spec in specs:
        section = config.get(spec.section)
        enabled = section.get("enabled") if isinstance(section, Mapping) else None
        if enabled is None:
            enabled = spec.enabled_by_default
        if enabled is True:
            chosen.append(spec)
    return chosen


class Services:
    """The enabled services of one process, each supervised; :meth:`status` for its status
    file (state, last error, restarts of each)."""

    def __init__(
        self,
        specs: list[ServiceSpec],
        context: Callable[[ServiceSpec], ServiceContext],
        runtime: Runtime,
        *,
        backoff: float = 30.0,
        backoff_max: float = 300.0,
        log: logging.Logger = LOG,
    ) -> None:
        self.specs = specs
        self._log = log
        self._context = context
        self._runtime = runtime
        self.backoff = backoff
        self.backoff_max = backoff_max
        self.states = {spec.name: Supervised(spec.name) for spec in specs}
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        for spec in self.specs:
            self._tasks.append(asyncio.ensure_future(self._supervise(spec)))

    async def _supervise(self, spec: ServiceSpec) -> None:
        state = self.states[spec.name]

        async def attempt() -> str:
            try:
                service = await asyncio.to_thread(spec.build, self._context(spec))
            except ServiceNotConfigured:
                raise
            except Exception as exc:  # noqa: BLE001 - a broken plugin is reported, then retried
                return f"could not start: {one_line(exc)}"
            state.state, state.error = "running", ""
            try:
                await service.run(self._runtime)
            except (ServiceNotConfigured, asyncio.CancelledError):
                raise
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - nor may its exit end us
                return one_line(exc)
            return "it stopped (its run() returned)"

        await supervise(
            f"service {spec.name}",
            state,
            attempt,
            backoff=self.backoff,
            backoff_max=self.backoff_max,
            not_configured=(ServiceNotConfigured,),
            log=self._log,
        )

    async def stop(self) -> None:
        await cancel_all(self._tasks)

    def status(self) -> Mapping[str, Any]:
        return {name: state.as_dict() for name, state in self.states.items()}
