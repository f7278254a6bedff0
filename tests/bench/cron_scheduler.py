"""What the scheduler costs with 1,000 jobs: CPU per tick, and due instant to agent start.

    uv run python tests/bench/cron_scheduler.py [--jobs 1000] [--due 50]

A home with ``--jobs`` jobs (cron expressions and intervals, in jobs.json) on a real runtime
whose model is the scripted server, in this process.

1. CPU per tick when nothing is due (every tick reads jobs.json and plans each job), median
   of 30 ticks, against a floor measured in the same run: reading and parsing jobs.json
   alone. Target: a tick costs well under its interval (5 s), a few ms.
2. ``--due`` jobs due at the same instant: from that instant to each run's agent starting
   (its run record marked running, the session about to open), with the tick called at the
   instant itself and room for all of them (``max_parallel`` = ``--due``). With the
   scheduler ticking every ``tick_seconds`` (5), add up to that much for the wait for the
   next tick.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from hermes_plugin_cron.jobs import JobStore, make_job
from hermes_plugin_cron.scheduler import Scheduler
from hermes_plugin_cron.settings import CronConfig

from hermes_sdk.runtime import open_runtime
from hermes_testkit import Reply, ScriptedOpenAIServer

SCHEDULES = ("*/5 * * * *", "every 1h", "0 9 * * 1-5", "every 30m", "15 */2 * * *")


def write_jobs(home: Path, count: int, created: float) -> None:
    store = JobStore(home)
    jobs = []
    for number in range(count):
        job = make_job(SCHEDULES[number % len(SCHEDULES)], f"job {number}", name=f"job-{number}")
        job["created_at"] = datetime.fromtimestamp(created).astimezone().isoformat()
        jobs.append(job)
    store.change(lambda existing: existing.extend(jobs))


def floor_ms(home: Path, repeat: int = 30) -> float:
    path = home / "cron" / "jobs.json"
    times = []
    for _ in range(repeat):
        started = time.process_time()
        json.loads(path.read_text(encoding="utf-8"))
        times.append((time.process_time() - started) * 1000)
    return statistics.median(times)


async def tick_cpu(home: Path, created: float) -> list[float]:
    clock = [created + 30]  # nothing due: the first instants are minutes away
    async with open_runtime(home) as runtime:
        scheduler = Scheduler(str(home), CronConfig(), runtime, clock=lambda: clock[0])
        try:
            await scheduler.tick()  # the first tick writes every job's cursor
            times = []
            for _ in range(30):
                clock[0] += 1
                started = time.process_time()
                queued = await scheduler.tick()
                times.append((time.process_time() - started) * 1000)
                assert not queued
        finally:
            await scheduler.aclose()
    return times


async def due_to_start(home: Path, count: int) -> list[float]:
    due_at = time.time() + 2.0
    created = due_at - 3600  # every 1h, counted from here: due at due_at
    store = JobStore(home)
    jobs = []
    for number in range(count):
        job = make_job("every 1h", f"due job {number}", name=f"due-{number}")
        job["created_at"] = datetime.fromtimestamp(created).astimezone().isoformat()
        jobs.append(job)
    store.change(lambda existing: existing.extend(jobs))
    settings = CronConfig(max_parallel=count)
    async with open_runtime(home) as runtime:
        scheduler = Scheduler(str(home), settings, runtime)
        try:
            await scheduler.tick()  # cursors: nothing due yet
            await asyncio.sleep(max(0.0, due_at - time.time()))
            await scheduler.tick()
            await scheduler.idle()
        finally:
            await scheduler.aclose()
    return [seconds * 1000 for seconds in scheduler.started_after_due]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--due", type=int, default=50)
    args = parser.parse_args()
    with ScriptedOpenAIServer() as server, tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        (home / "config.yaml").write_text(
            f"model:\n  base_url: {server.base_url}\n  default: test-model\n"
            "learning:\n  review: false\n"
        )
        import os

        os.environ["HERMES_HOME"] = str(home)
        created = time.time() - 10
        write_jobs(home, args.jobs, created)
        floor = floor_ms(home)
        ticks = asyncio.run(tick_cpu(home, created))
        tick = statistics.median(ticks)
        print(f"{args.jobs} jobs in jobs.json, nothing due, median of 30 ticks:")
        print(f"    CPU per tick          {tick:8.2f} ms")
        print(f"    floor (parse jobs.json) {floor:6.2f} ms   ratio {tick / floor:5.1f}x")
        print(f"    share of a 5 s tick interval: {tick / 5000 * 100:.3f}% of one core")
        server.queue(*(Reply.say(f"done {n}") for n in range(args.due)))
        started = sorted(asyncio.run(due_to_start(home, args.due)))
        print(f"{args.due} of {args.jobs + args.due} jobs due at one instant, tick at the instant:")
        print(
            f"    due -> agent starting: first {started[0]:.1f} ms, p50 "
            f"{statistics.median(started):.1f} ms, p99 {started[int(len(started) * 0.99) - 1]:.1f} "
            f"ms, last {started[-1]:.1f} ms"
        )
        print("    (plus up to cron.tick_seconds, 5 s by default, waiting for the next tick)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
