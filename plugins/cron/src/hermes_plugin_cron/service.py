"""The scheduler as a gateway service: it ticks every ``cron.tick_seconds`` while the
gateway runs. It holds the home's scheduler lock, so ``hermes cron tick`` refuses meanwhile
and ``hermes cron run`` hands its run to this process. Among gateway workers sharing a store
in PostgreSQL, the one holding the scheduler's lease ticks; another takes over when it dies."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from hermes_commons.leases import LEASES, Leases, hold, this_process
from hermes_plugin_cron.jobs import JobsFileError
from hermes_plugin_cron.scheduler import Scheduler, scheduler_lock
from hermes_plugin_cron.settings import CronConfig
from hermes_sdk.runtime import Runtime

__all__ = ["CronService"]

SCHEDULER_LEASE = "cron-scheduler"
LEASE_SECONDS = 15.0

log = logging.getLogger("hermes.cron")


class CronService:
    def __init__(self, home: str, settings: CronConfig) -> None:
        self.home = home
        self.settings = settings
        self.scheduler: Scheduler | None = None

    async def run(self, runtime: Runtime) -> None:
        lock = await asyncio.to_thread(scheduler_lock, self.home)
        scheduler = self.scheduler = Scheduler(self.home, self.settings, runtime)
        leases = Leases(runtime.plugin_store(LEASES))
        leading = asyncio.Event()

        async def lead(won: bool) -> None:
            if not won:
                leading.clear()
                return
            # What the last scheduler left running: this host's that are gone, and those of
            # the worker this one takes over from (on another host, only the lease tells).
            before = await leases.store.run(leases.previous, SCHEDULER_LEASE)
            orphans = await asyncio.to_thread(scheduler.runs.orphans, before)
            if orphans:
                log.warning(
                    "cron: %d runs were cut short when Hermes last stopped; recorded as "
                    "unknown or missed (see hermes cron runs)",
                    orphans,
                )
            leading.set()

        # Gateway workers on several hosts share a store in PostgreSQL: one of them
        # schedules. Each due instant is claimed once in the store all the same; the lease
        # keeps one scheduler in charge of its runs, so a dead host's are settled by the one
        # that follows it. A home on SQLite has one scheduler (the file lock): no lease.
        if leases.store.shared:
            holding = asyncio.ensure_future(
                hold(leases, SCHEDULER_LEASE, this_process(), LEASE_SECONDS, lead)
            )
        else:
            holding = asyncio.ensure_future(lead(True))
        try:
            complained: str | None = None
            while True:
                await leading.wait()
                try:
                    await scheduler.tick()
                    complained = None
                except JobsFileError as exc:
                    if str(exc) != complained:  # once per problem, not every tick
                        log.warning("cron: %s", exc)
                        complained = str(exc)
                await asyncio.sleep(self.settings.tick_seconds)
        finally:
            holding.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await holding
            await scheduler.aclose()
            lock.release()
