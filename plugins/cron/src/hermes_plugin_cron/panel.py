"""The Scheduled jobs page of the dashboard: the jobs with their next and last runs; a new
or changed schedule explained in words with its next five instants before it is saved;
pause, resume, remove, run now; each job's runs with each instant's status and output."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_plugin_cron.editing import change_job, remove_job
from hermes_plugin_cron.jobs import Job, JobNotFound, JobsFileError, JobStore, job_state, make_job
from hermes_plugin_cron.runs import Run, RunLog
from hermes_plugin_cron.schedule import describe, explain, parse_schedule, upcoming, zone
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
    if moment is None or moment == "":
        return "-"
    if isinstance(moment, str):
        try:
            return datetime.fromisoformat(moment).strftime("%Y-%m-%d %H:%M")
        except ValueError:
            return moment
    return datetime.fromtimestamp(moment, tz).strftime("%a %Y-%m-%d %H:%M")


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

    # --- what the page shows ----------------------------------------------------------------

    async def view(self, query: Mapping[str, str]) -> PanelView:
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
        try:
            scheduler_lock(self.home).release()
        except SchedulerBusy as exc:
            said = f"running: {exc}"
            level: Level = "ok"
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
            "schedule": str(job.get("schedule_display") or describe(job.get("schedule") or {})),
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

    def _zone(self, job: Job) -> Any:
        try:
            return zone(job.get("timezone") or self.settings.timezone)
        except ValueError:
            return None

    # --- what the buttons and forms do --------------------------------------------------------

    async def act(self, action: str, values: Mapping[str, str]) -> Outcome:
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
                job = await asyncio.to_thread(
                    self.store.update, values.get("job", ""), {"paused": action == "pause"}
                )
                return Outcome(message=f"job {job['name']!r} {action}d")
            if action == "remove":
                return await asyncio.to_thread(self._remove, values.get("job", ""))
            if action == "run":
                return await self._run_now(values.get("job", ""))
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
        instants = upcoming(schedule, now.timestamp(), tz, after=now.timestamp())
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
            timezone=values.get("timezone") or None,
            default_timezone=self.settings.timezone,
        )
        job = self.store.add(job)
        return Outcome(
            message=f"created job {job['name']!r} ({job['id']}): {describe(job['schedule'])}"
        )

    def _edit(self, values: Mapping[str, str]) -> Outcome:
        reference = values.get("job", "")
        found = self.store.find(reference)
        changes: dict[str, Any] = {}
        for key in JOB_FIELDS:
            given = values.get(key)
            if given is None:
                continue
            before = (
                str(found.get("schedule_display") or describe(found.get("schedule") or {}))
                if key == "schedule"
                else str(found.get(key) or "")
            )
            if given.strip() != before.strip():
                changes[key] = given.strip() or None
        changes = {key: value for key, value in changes.items() if value is not None}
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
        """In the gateway's scheduler when one runs (asked through the run log), else here
        in the background; the run shows on the job's page as it goes."""
        job = await asyncio.to_thread(self.store.find, reference)
        try:
            lock = await asyncio.to_thread(scheduler_lock, self.home)
        except SchedulerBusy as exc:
            runs = await asyncio.to_thread(RunLog.open, self.home)
            try:
                await asyncio.to_thread(runs.request, job["id"])
            finally:
                runs.close()
            return Outcome(message=f"{exc}: asked it to run {job['name']!r} now")
        task = asyncio.create_task(self._run_here(job, lock))
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return Outcome(message=f"started {job['name']!r}; its run is listed below as it goes")

    async def _run_here(self, job: Job, lock: Any) -> None:
        scheduler = Scheduler(self.home, self.settings, self.runtime)
        try:
            await scheduler.run_now(job)
        except Exception:
            log.exception("cron: the run of %r started from the dashboard failed", job.get("name"))
        finally:
            await scheduler.aclose()
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


def _output(path: str | None) -> str:
    if not path:
        return ""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text if len(text) <= OUTPUT_SHOWN else text[:OUTPUT_SHOWN] + "\n…"
