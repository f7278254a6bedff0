"""The Scheduled jobs page of the dashboard: the jobs with their next and last runs; a new
or changed schedule explained in words with its next five instants before it is saved;
pause, resume, remove, run now; each job's runs with each instant's status and output."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_commons.locks import lock_holder
from hermes_plugin_cron.editing import change_job, remove_job
from hermes_plugin_cron.jobs import (
    Job,
    JobNotFound,
    JobsFileError,
    JobStore,
    cron_dir,
    job_state,
    make_job,
)
from hermes_plugin_cron.runs import Run, RunLog
from hermes_plugin_cron.schedule import describe, explain, parse_schedule, upcoming, when, zone
from hermes_plugin_cron.scheduler import Scheduler, SchedulerBusy, scheduler_lock
from hermes_plugin_cron.settings import CronConfig, settings_from
from hermes_sdk.dashboard import (
    Button,
    Facts,
    Field,
    Form,
    Level,
    Outcome,
    PanelContext,
    PanelError,
    PanelView,
    Row,
    Section,
    Table,
    Text,
)

__all__ = ["CronPanel"]

log = logging.getLogger("hermes.cron")

RUNS_SHOWN = 30
REQUESTS_EVERY_SECONDS = 1.0
OUTPUT_SHOWN = 4000
JOB_FIELDS = ("name", "schedule", "prompt", "deliver", "timezone")
STATUS_LEVELS: dict[str, Level] = {
    "completed": "ok",
    "failed": "error",
    "unknown": "error",
    "missed": "warn",
    "skipped": "warn",
}
SCHEDULE_HELP = (
    "every 30m (repeats) · 30m (once, that long from now) · 0 9 * * 1-5 (cron: minute hour "
    "day month weekday) · 2026-12-24T09:00 (once then)"
)


def _when(moment: float | str | None, tz: Any = None) -> str:
    return when(moment, tz, weekday=True)


class CronPanel:
    def __init__(self, context: PanelContext) -> None:
        self.home = context.home
        self.runtime = context.runtime
        try:
            self.settings: CronConfig = settings_from(context.config)
        except ValueError as exc:
            raise PanelError(f"config.yaml: {exc}") from None
        self.store = JobStore(context.home)
        self._running: set[asyncio.Task[None]] = set()
        self._runner: Scheduler | None = None
        """The scheduler of the runs started here while no gateway runs one."""

    # --- what the page shows ----------------------------------------------------------------

    async def _fresh(self) -> None:
        """The cron section as config.yaml has it now (the Settings page may change it)."""
        try:
            self.settings = settings_from(await self.runtime.read_config())
        except ValueError as exc:
            raise PanelError(f"config.yaml: {exc}") from None

    async def view(self, query: Mapping[str, str]) -> PanelView:
        await self._fresh()
        return await asyncio.to_thread(self._view, query)

    def _view(self, query: Mapping[str, str]) -> PanelView:
        try:
            jobs = self.store.load()
        except JobsFileError as exc:
            raise PanelError(str(exc)) from None
        runs = RunLog.open(self.home)
        try:
            cursors = runs.cursors()
            sections = [self._scheduler(), self._jobs(jobs, cursors)]
            chosen = query.get("job", "")
            if chosen:
                with contextlib.suppress(JobNotFound):
                    job = self.store.find(chosen)
                    sections.append(self._edit_form(job))
                    sections.append(self._runs(job, runs.of_job(job["id"], limit=RUNS_SHOWN)))
        finally:
            runs.close()
        sections.append(
            Section(
                title="New job",
                blocks=(
                    Form(
                        action="check",
                        submit="Check the schedule",
                        fields=_job_fields({}),
                    ),
                ),
            )
        )
        return PanelView(sections=tuple(sections))

    def _scheduler(self) -> Section:
        holder = lock_holder(cron_dir(self.home) / "scheduler.lock")
        if holder is not None and holder == os.getpid() and self._runner is not None:
            said = "running here, for the runs started from this page"
            level: Level = "ok"
        elif holder is not None:
            said = f"running: the scheduler of this home runs in pid {holder}"
            level = "ok"
        else:
            said = (
                "not running: jobs fire while hermes gateway run serves this home "
                "(Run now works either way)"
            )
            level = "warn"
        return Section(title="Scheduler", blocks=(Text(text=said, level=level),))

    def _jobs(self, jobs: list[Job], cursors: Mapping[str, float | None]) -> Section:
        rows = []
        for job in jobs:
            state = job_state(job)
            tz = self._zone(job)
            last = f"{_when(job.get('last_run_at'))} {job.get('last_status') or ''}".strip()
            pause = (
                Button(action="resume", label="Resume", values={"job": job["id"]})
                if job.get("paused")
                else Button(action="pause", label="Pause", values={"job": job["id"]})
            )
            rows.append(
                Row(
                    cells=(
                        str(job.get("name") or job["id"]),
                        explain(job.get("schedule") or {}, tz),
                        state,
                        _when(cursors.get(job["id"]) or job.get("next_run_at"), tz),
                        last,
                    ),
                    buttons=(
                        Button(action="", label="Open", values={"job": job["id"]}, navigate=True),
                        Button(action="run", label="Run now", values={"job": job["id"]}),
                        pause,
                        Button(
                            action="remove",
                            label="Remove",
                            values={"job": job["id"]},
                            confirm=f"Remove the job {job.get('name')!r}? Its runs stay.",
                            danger=True,
                        ),
                    ),
                    level="warn" if state == "paused" else None,
                )
            )
        return Section(
            title="Jobs",
            blocks=(
                Table(
                    columns=("name", "schedule", "state", "next", "last"),
                    rows=tuple(rows),
                    empty="no jobs yet: create one below",
                ),
            ),
        )

    def _edit_form(self, job: Job) -> Section:
        current = {
            "name": str(job.get("name") or ""),
            "schedule": _display(job),
            "prompt": str(job.get("prompt") or ""),
            "deliver": str(job.get("deliver") or ""),
            "timezone": str(job.get("timezone") or ""),
        }
        fields = (
            Field(name="job", label="", kind="hidden", value=job["id"]),
            *_job_fields(current),
        )
        return Section(
            title=f"Change {current['name']!r}",
            blocks=(Form(action="check_edit", submit="Check the change", fields=fields),),
        )

    def _runs(self, job: Job, runs: list[Run]) -> Section:
        tz = self._zone(job)
        rows = tuple(
            Row(
                cells=(
                    _when(run.due_at, tz),
                    run.trigger,
                    run.status,
                    run.reason or "",
                    run.delivery or "",
                ),
                detail=_output(run.output_path),
                level=STATUS_LEVELS.get(run.status),
            )
            for run in runs
        )
        return Section(
            title=f"Runs of {job.get('name')!r}",
            blocks=(
                Table(
                    columns=("due", "trigger", "status", "why", "delivery"),
                    rows=rows,
                    empty="no runs yet",
                ),
            ),
        )

    def _job(self, values: Mapping[str, str]) -> Job:
        """The job a form or button names, by its exact id (an empty one is no job)."""
        reference = values.get("job", "").strip()
        if not reference:
            raise PanelError("which job? reload the page")
        found = self.store.find(reference)
        if found["id"] != reference:
            raise PanelError(f"no job with the id {reference!r}: reload the page")
        return found

    def _zone(self, job: Job) -> Any:
        try:
            return zone(job.get("timezone") or self.settings.timezone)
        except ValueError:
            return None

    # --- what the buttons and forms do --------------------------------------------------------

    async def act(self, action: str, values: Mapping[str, str]) -> Outcome:
        await self._fresh()
        try:
            if action == "check":
                return await asyncio.to_thread(self._check, values, "create")
            if action == "check_edit":
                return await asyncio.to_thread(self._check, values, "edit")
            if action == "create":
                return await asyncio.to_thread(self._create, values)
            if action == "edit":
                return await asyncio.to_thread(self._edit, values)
            if action in ("pause", "resume"):
                reference = self._job(values)["id"]
                job = await asyncio.to_thread(
                    self.store.update, reference, {"paused": action == "pause"}
                )
                return Outcome(message=f"job {job['name']!r} {action}d")
            if action == "remove":
                return await asyncio.to_thread(self._remove, self._job(values)["id"])
            if action == "run":
                return await self._run_now(self._job(values)["id"])
        except (JobNotFound, JobsFileError, ValueError) as exc:
            raise PanelError(str(exc)) from None
        raise PanelError(f"no action {action!r} on this page: reload it")

    def _check(self, values: Mapping[str, str], then: str) -> Outcome:
        """The schedule in words and its next five instants; the job is saved only by the
        confirming button that follows."""
        text = values.get("schedule", "").strip()
        timezone = values.get("timezone", "").strip() or None
        tz = zone(timezone or self.settings.timezone)
        now = datetime.now(tz)
        anchor = now.timestamp()
        if then == "edit" and text == _display(found := self._job(values)):
            schedule = found["schedule"]  # unchanged (a one-shot's words do not parse again)
            anchor = _anchor_of(found, anchor)
        else:
            schedule = parse_schedule(text, now)
        if then == "create":
            make_job(  # checks the rest (an empty prompt ...) before anything is saved
                text,
                values.get("prompt", ""),
                name=values.get("name") or None,
                deliver=values.get("deliver") or None,
                timezone=timezone,
                default_timezone=self.settings.timezone,
            )
        instants = upcoming(schedule, anchor, tz, after=now.timestamp())
        facts = [("runs", explain(schedule, tz))]
        facts += [(f"#{n}", _when(moment, tz)) for n, moment in enumerate(instants, 1)]
        if not instants:
            facts.append(("next", "never: that time has passed"))
        hidden = tuple(
            Field(name=key, label=key, kind="hidden", value=value)
            for key, value in values.items()
            if key in (*JOB_FIELDS, "job")
        )
        submit = "Create the job" if then == "create" else "Save the change"
        return Outcome(
            message="check the schedule, then confirm",
            view=PanelView(
                sections=(
                    Section(
                        title="The schedule",
                        blocks=(
                            Facts(items=tuple(facts)),
                            Form(action=then, submit=submit, fields=hidden),
                        ),
                    ),
                )
            ),
        )

    def _create(self, values: Mapping[str, str]) -> Outcome:
        job = make_job(
            values.get("schedule", ""),
            values.get("prompt", ""),
            name=values.get("name") or None,
            deliver=values.get("deliver") or None,
            timezone=values.get("timezone", "").strip() or None,
            default_timezone=self.settings.timezone,
        )
        job = self.store.add(job)
        return Outcome(
            message=f"created job {job['name']!r} ({job['id']}): {describe(job['schedule'])}"
        )

    def _edit(self, values: Mapping[str, str]) -> Outcome:
        found = self._job(values)
        changes: dict[str, Any] = {}
        for key in JOB_FIELDS:
            given = values.get(key)
            if given is None:
                continue
            before = _display(found) if key == "schedule" else str(found.get(key) or "")
            if given.strip() == before.strip():
                continue
            if given.strip():
                changes[key] = given.strip()
            elif key == "timezone":
                changes[key] = None  # back to cron.timezone
            elif key == "deliver":
                changes[key] = "local"
            else:
                raise PanelError(f"a job needs its {key}: it cannot be empty")
        if not changes:
            return Outcome(message="nothing changed")
        runs = RunLog.open(self.home)
        try:
            job = change_job(self.store, runs, self.settings, found["id"], changes)
        finally:
            runs.close()
        return Outcome(message=f"changed job {job['name']!r}: {', '.join(sorted(changes))}")

    def _remove(self, reference: str) -> Outcome:
        runs = RunLog.open(self.home)
        try:
            removed = remove_job(self.store, runs, reference)
        finally:
            runs.close()
        return Outcome(message=f"removed job {removed['name']!r} (its runs stay)")

    async def _run_now(self, reference: str) -> Outcome:
        """In the gateway's scheduler when one runs (asked through the run log), else here:
        this process holds the scheduler lock while its runs go on, and serves the runs
        others ask for meanwhile; the run shows on the job's page as it goes."""
        job = await asyncio.to_thread(self.store.find, reference)
        if self._runner is not None:  # this process holds the lock already
            await self._runner.run_now(job, wait=False)
            return Outcome(message=f"started {job['name']!r}; its run is listed below as it goes")
        try:
            lock = await asyncio.to_thread(scheduler_lock, self.home)
        except SchedulerBusy as exc:
            runs = await asyncio.to_thread(RunLog.open, self.home)
            try:
                await asyncio.to_thread(runs.request, job["id"])
            finally:
                await asyncio.to_thread(runs.close)
            return Outcome(message=f"{exc}: asked it to run {job['name']!r} now")
        try:
            runner = await asyncio.to_thread(Scheduler, self.home, self.settings, self.runtime)
        except BaseException:
            lock.release()
            raise
        self._runner = runner
        try:
            await runner.run_now(job, wait=False)
        except BaseException:
            self._runner = None
            await _closed(runner, lock)
            raise
        task = asyncio.create_task(self._hold(runner, lock))
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return Outcome(message=f"started {job['name']!r}; its run is listed below as it goes")

    async def _hold(self, runner: Scheduler, lock: Any) -> None:
        """Until this process's runs are over: serve what others ask for, then let go."""
        try:
            while runner.tasks:
                await asyncio.sleep(REQUESTS_EVERY_SECONDS)
                try:
                    await runner.serve_requests()
                except Exception:
                    log.exception("cron: the runs asked for could not be started")
        finally:
            self._runner = None
            await _closed(runner, lock)


async def _closed(runner: Scheduler, lock: Any) -> None:
    try:
        await runner.aclose()
    finally:
        lock.release()


def _job_fields(current: Mapping[str, str]) -> tuple[Field, ...]:
    return (
        Field(
            name="name", label="Name", value=current.get("name", ""), placeholder="morning brief"
        ),
        Field(
            name="schedule",
            label="Schedule",
            value=current.get("schedule", ""),
            help=SCHEDULE_HELP,
            required=True,
            placeholder="0 9 * * 1-5",
        ),
        Field(
            name="prompt",
            label="Prompt",
            kind="textarea",
            value=current.get("prompt", ""),
            required=True,
            placeholder="Summarise my inbox",
        ),
        Field(
            name="deliver",
            label="Deliver to",
            value=current.get("deliver", ""),
            help="local (kept in HERMES_HOME/cron/output), or platform:chat_id (telegram:12345)",
            placeholder="local",
        ),
        Field(
            name="timezone",
            label="Time zone",
            value=current.get("timezone", ""),
            help="An IANA name (Europe/Paris); empty: cron.timezone, else this machine's",
        ),
    )


def _display(job: Job) -> str:
    """A job's schedule as its form shows it (what it was written as)."""
    return str(job.get("schedule_display") or describe(job.get("schedule") or {}))


def _anchor_of(job: Job, now: float) -> float:
    """Where the job's counting starts: when its schedule was set, else its creation."""
    for key in ("anchor_at", "created_at"):
        try:
            return datetime.fromisoformat(str(job.get(key))).timestamp()
        except ValueError:
            continue
    return now


def _output(path: str | None) -> str:
    if not path:
        return ""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text if len(text) <= OUTPUT_SHOWN else text[:OUTPUT_SHOWN] + "\n…"
