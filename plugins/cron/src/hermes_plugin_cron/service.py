"""The scheduler as a gateway service: it ticks every ``cron.tick_seconds`` while the
gateway runs. It holds the home's scheduler lock, so ``hermes cron tick`` refuses meanwhile
and ``hermes cron run`` hands its run to this process."""

from __future__ import annotations

import asyncio
import logging

from hermes_plugin_cron.jobs import JobsFileError
from hermes_plugin_cron.scheduler import Scheduler, scheduler_lock
from hermes_plugin_cron.settings import CronConfig
from hermes_sdk.runtime import Runtime

__all__ = ["CronService"]

log = logging.getLogger("hermes.cron")


class CronService:
    def __init__(self, home: str, settings: CronConfig) -> None:
        self.home = home
        self.settings = settings
        self.scheduler: Scheduler | None = None

    async def run(self, runtime: Runtime) -> None:
        lock = await asyncio.to_thread(scheduler_lock, self.home)
        scheduler = self.scheduler = Scheduler(self.home, self.settings, runtime)
        try:
            orphans = await asyncio.to_thread(scheduler.runs.orphans)
            if orphans:
                log.warning(
                    "cron: %d runs were cut short when Hermes last stopped; recorded as "
                    "unknown or missed (see hermes cron runs)",
                    orphans,
                )
            complained: str | None = None
            while True:
                try:
                    await scheduler.tick()
                    complained = None
                except JobsFileError as exc:
                    if str(exc) != complained:  # once per problem, not every tick
                        log.warning("cron: %s", exc)
                        complained = str(exc)
                await asyncio.sleep(self.settings.tick_seconds)
        finally:
            await scheduler.aclose()
            lock.release()
