"""Jobs made at chosen times, and the scheduler on a home's real runtime with a clock the
test moves."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from hermes_plugin_cron.jobs import Job, JobStore, make_job
from hermes_plugin_cron.runs import Run
from hermes_plugin_cron.scheduler import Scheduler
from hermes_plugin_cron.settings import CronConfig

from hermes_sdk.runtime import open_runtime

T = TypeVar("T")
T0 = datetime(2026, 6, 1, 8, 0).astimezone().timestamp()
"""A fixed start for the clock: jobs are created then, and the test moves time on."""
HOUR = 3600.0


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def add_job(home: Path, schedule: str = "every 1h", prompt: str = "report", **options: Any) -> Job:
    created = options.pop("created", T0)
    job = make_job(schedule, prompt, **options)
    job["created_at"] = datetime.fromtimestamp(created).astimezone().isoformat()
    return JobStore(home).add(job)


def with_scheduler(
    home: Path,
    clock: Clock,
    work: Callable[[Scheduler], Awaitable[T]],
    settings: CronConfig | None = None,
) -> T:
    async def main() -> T:
        async with open_runtime(home) as runtime:
            scheduler = Scheduler(str(home), settings or CronConfig(), runtime, clock=clock)
            try:
                return await work(scheduler)
            finally:
                await scheduler.aclose()

    return asyncio.run(main())


def records(scheduler: Scheduler, job: Job) -> list[Run]:
    return sorted(scheduler.runs.of_job(job["id"], 1000), key=lambda run: (run.due_at, run.id))
