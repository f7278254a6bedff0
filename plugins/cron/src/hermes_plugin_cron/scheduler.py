"""The scheduler: which instants are due, their records, and the runs.

Each tick reads jobs.json and, per job, every instant from its cursor up to now. Instants
seen within ``grace_seconds`` are on time; older ones were missed while no scheduler ran, and
the catch-up policy decides (``latest``: run the newest once, ``all``, ``none``). A paused
job's instants are recorded skipped, and so are those due while the job's last run is still
going. All of a job's records and its new cursor are written in one transaction before any
agent starts, so an instant is never run twice and never vanishes. Due runs go to at most
``max_parallel`` slots at once; one job's runs go one after another, in order.

The clock is a parameter: tests move it by hours without sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime

from hermes_commons.locks import FileLock, LockTimeout
from hermes_plugin_cron.execute import deliver, run_job, save_output
from hermes_plugin_cron.jobs import Job, JobStore, cron_dir
from hermes_plugin_cron.runs import Batch, Claim, Run, RunLog
from hermes_plugin_cron.schedule import MAX_INSTANTS, jitter_of, next_after, parse_schedule, zone
from hermes_plugin_cron.settings import CronConfig
from hermes_sdk.runtime import Runtime

__all__ = ["Scheduler", "SchedulerBusy", "scheduler_lock"]

log = logging.getLogger("hermes.cron")


class SchedulerBusy(RuntimeError):
    """Another process runs the scheduler for this home (a gateway)."""


def scheduler_lock(home: str) -> FileLock:
    """The home's scheduler lock, held until it is released (or this process ends); raises
    SchedulerBusy (naming the holder) when another process holds it."""
    try:
        return FileLock(cron_dir(home) / "scheduler.lock", timeout=0).acquire()
    except LockTimeout as exc:
        holder = f"pid {exc.holder}" if exc.holder else "another process"
        raise SchedulerBusy(f"the scheduler of this home runs in {holder}") from None


def _epoch(text: object, default: float) -> float:
    try:
        return datetime.fromisoformat(str(text)).timestamp()
    except (TypeError, ValueError):
        return default


def _anchor(job: Job, now: float) -> float:
    """Where a job's counting starts: when its schedule was last set, else its creation."""
    return _epoch(job.get("anchor_at") or job.get("created_at"), now)


def _schedule_of(job: Job, now: float) -> dict[str, object] | None:
    """The job's schedule as stored; an older file's plain string is parsed."""
    schedule = job.get("schedule")
    if isinstance(schedule, dict):
        return schedule
    if isinstance(schedule, str):
        tz = zone(job.get("timezone"))
        return parse_schedule(schedule, datetime.fromtimestamp(_anchor(job, now), tz))
    return None


def _iso(moment: float | None) -> str | None:
    return None if moment is None else datetime.fromtimestamp(moment).astimezone().isoformat()


class Scheduler:
    def __init__(
        self,
        home: str,
        settings: CronConfig,
        runtime: Runtime,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.home = home
        self.settings = settings
        self.runtime = runtime
        self.clock = clock
        self.jobs = JobStore(home)
        self.runs = RunLog.open(home)
        self._slots: asyncio.Semaphore | None = None
        self._job_locks: dict[str, asyncio.Lock] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.started_after_due: deque[float] = deque(maxlen=1000)
        """Seconds from each recent run's due instant to its agent starting (the bench)."""

    # --- planning ---------------------------------------------------------------------------

    def plan(
        self, job: Job, cursor: float | None, now: float, *, busy: bool = False
    ) -> tuple[list[Claim], float | None]:
        """The records for ``job``'s instants due by ``now`` and its next cursor; ``busy``:
        a run of it is queued or running."""
        tz = zone(job.get("timezone") or self.settings.timezone)
        schedule = job["schedule"]
        anchor = _anchor(job, now)
        jitter = float(job.get("jitter_seconds") or 0)
        instants: list[float] = []
        moment = cursor
        while moment is not None and moment + jitter_of(job["id"], moment, jitter) <= now:
            instants.append(moment)
            if len(instants) > MAX_INSTANTS:
                del instants[0]
            moment = next_after(schedule, moment, anchor, tz)
        if not instants:
            return [], cursor
        if job.get("paused") or not job.get("enabled", True):
            reason = "paused" if job.get("paused") else "disabled"
            return [Claim(i, "skipped", reason) for i in instants], moment
        policy = job.get("catch_up") or self.settings.catch_up
        grace = self.settings.grace_seconds
        on_time = [i for i in instants if now - i - jitter_of(job["id"], i, jitter) <= grace]
        late = [i for i in instants if i not in set(on_time)]
        missed_reason = f"Hermes was not running its scheduler then (catch_up: {policy})"
        to_run = list(on_time)
        missed: list[float] = []
        if late:
            if policy == "all":
                to_run = late + on_time
            elif policy == "latest" and not on_time:
                to_run, missed = [late[-1]], late[:-1]
            else:
                missed = late
        if len(to_run) > 1 and policy != "all":
            missed += to_run[:-1]
            to_run = to_run[-1:]
        claims = [Claim(i, "missed", missed_reason) for i in missed]
        if busy:
            going = "another run of this job was still going"
            claims += [Claim(i, "skipped", going) for i in to_run]
        else:
            claims += [
                Claim(i, "queued", trigger="schedule" if i in on_time else "catch_up")
                for i in to_run
            ]
        return sorted(claims, key=lambda claim: claim.due_at), moment

    def _first_cursor(self, job: Job, now: float) -> float | None:
        """A job seen for the first time starts counting at its creation (instants since
        then, while no scheduler ran, are accounted for like any other)."""
        tz = zone(job.get("timezone") or self.settings.timezone)
        created = _anchor(job, now)
        return next_after(job["schedule"], created, created, tz)

    # --- a tick -----------------------------------------------------------------------------

    async def tick(self, now: float | None = None) -> list[int]:
        """Claim what is due and start it; the ids of the runs started."""
        now = self.clock() if now is None else now
        jobs, claimed, moved = await asyncio.to_thread(self._claim_due, now)
        started: list[int] = []
        for job, run_ids in claimed:
            for run_id in run_ids:
                self._start(job, run_id)
                started.append(run_id)
        started += await self._serve_requests(jobs)
        if moved:
            await asyncio.to_thread(self._show_next, moved)
        return started

    def _claim_due(
        self, now: float
    ) -> tuple[list[Job], list[tuple[Job, list[int]]], dict[str, float | None]]:
        """Plan every job and write all the claims in one transaction (a worker thread)."""
        jobs = self.jobs.load()
        cursors = self.runs.cursors()
        active = self.runs.active_jobs()
        batch: list[Batch] = []
        by_id: dict[str, Job] = {}
        for stored in jobs:
            try:
                schedule = _schedule_of(stored, now)
            except ValueError as exc:
                name = stored.get("name")
                log.warning("cron: job %s has a schedule that cannot be used: %s", name, exc)
                continue
            if schedule is None:
                continue
            job = {**stored, "schedule": schedule}
            known = job["id"] in cursors
            cursor = cursors[job["id"]] if known else self._first_cursor(job, now)
            try:
                claims, next_due = self.plan(job, cursor, now, busy=job["id"] in active)
            except Exception as exc:  # noqa: BLE001 - one bad job never stops the others
                log.warning("cron: job %s cannot be planned: %s", job.get("name"), exc)
                continue
            if claims or not known:
                by_id[job["id"]] = job
                expected = cursors.get(job["id"]) if known else None
                name = str(job.get("name") or job["id"])
                batch.append(Batch(job["id"], name, claims, next_due, expected))
        queued = self.runs.claim_all(batch, now) if batch else {}
        claimed = [(by_id[job_id], ids) for job_id, ids in queued.items() if ids]
        moved = {entry.job_id: entry.next_due for entry in batch if entry.job_id in queued}
        return jobs, claimed, moved

    def _show_next(self, moved: dict[str, float | None]) -> None:
        """jobs.json's ``next_run_at``, for people and hermes-agent's readers."""

        def edit(jobs: list[Job]) -> None:
            for job in jobs:
                if job["id"] in moved:
                    job["next_run_at"] = _iso(moved[job["id"]])

        self.jobs.change(edit)

    async def _serve_requests(self, jobs: list[Job]) -> list[int]:
        started = []
        by_id = {job["id"]: job for job in jobs}
        for request_id, job_id in await asyncio.to_thread(self.runs.open_requests):
            job = by_id.get(job_id)
            if job is None:
                continue
            run_id = await self.run_now(job, wait=False)
            await asyncio.to_thread(self.runs.answer_request, request_id, run_id)
            started.append(run_id)
        return started

    async def serve_requests(self) -> list[int]:
        """Start the runs other processes asked for (``hermes cron run``) while this one
        holds the lock without ticking (a run started from the dashboard)."""
        jobs = await asyncio.to_thread(self.jobs.load)
        return await self._serve_requests(jobs)

    async def run_now(self, job: Job, *, wait: bool = True) -> int:
        """A manual run of ``job`` now (``hermes cron run``): its own record, whatever the
        schedule; with ``wait``, returns once it ended."""
        now = self.clock()
        run_id = await asyncio.to_thread(
            self.runs.claim_manual, job["id"], str(job.get("name") or job["id"]), now
        )
        task = self._start(job, run_id)
        if wait:
            await task
        return run_id

    # --- running ----------------------------------------------------------------------------

    def _start(self, job: Job, run_id: int) -> asyncio.Task[None]:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.settings.max_parallel)
        task = asyncio.ensure_future(self._run(job, run_id))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _run(self, job: Job, run_id: int) -> None:
        lock = self._job_locks.setdefault(job["id"], asyncio.Lock())
        assert self._slots is not None
        async with lock, self._slots:
            run = await asyncio.to_thread(self.runs.get, run_id)
            if run is None or run.status != "queued":
                return
            await asyncio.to_thread(self.runs.start, run_id)
            self.started_after_due.append(self.clock() - run.due_at)
            try:
                await self._execute(job, run)
            except asyncio.CancelledError:
                with contextlib.suppress(Exception):
                    self.runs.abandon(run_id, "the scheduler stopped while it ran: effect unknown")
                raise
            except Exception as exc:
                log.exception("cron: run %d of %s failed", run_id, job.get("name"))
                await asyncio.to_thread(self.runs.finish, run_id, "failed", f"{exc}")

    async def _execute(self, job: Job, run: Run) -> None:
        def noted(session_id: str) -> None:
            self.runs.note_session(run.id, session_id)

        outcome = await run_job(job, self.runtime, self.home, on_session=noted)
        output = await asyncio.to_thread(save_output, job, self.home, run.due_at, outcome)
        # The outcome is recorded before delivery: a crash while sending leaves a finished
        # run whose message the gateway's ledger still holds, never one to run again.
        await asyncio.to_thread(
            self.runs.finish,
            run.id,
            outcome.status,
            outcome.reason,
            session_id=outcome.session_id,
            output_path=str(output),
        )
        counted = run.trigger != "manual"  # a run by hand does not use up a repeat
        await asyncio.to_thread(self._note_result, job, outcome.status, outcome.reason, counted)
        delivery = await deliver(job, self.settings, self.runtime, outcome)
        if delivery:
            await asyncio.to_thread(self.runs.note_delivery, run.id, delivery)

    def _note_result(self, job: Job, status: str, reason: str | None, counted: bool) -> None:
        """jobs.json's ``last_*`` and ``repeat``, as hermes-agent keeps them."""

        def edit(jobs: list[Job]) -> None:
            for found in jobs:
                if found["id"] != job["id"]:
                    continue
                found["last_run_at"] = _iso(self.clock())
                found["last_status"] = "ok" if status == "completed" else "error"
                found["last_error"] = None if status == "completed" else reason
                repeat = found.get("repeat")
                if counted and isinstance(repeat, dict):
                    repeat["completed"] = int(repeat.get("completed") or 0) + 1
                    times = repeat.get("times")
                    if isinstance(times, int) and repeat["completed"] >= times:
                        found["enabled"] = False

        self.jobs.change(edit)

    async def idle(self) -> None:
        """Wait for every started run to end."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)

    async def aclose(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*list(self.tasks), return_exceptions=True)
        self.runs.close()
