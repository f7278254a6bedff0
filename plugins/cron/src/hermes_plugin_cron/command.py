"""``hermes cron``: create, list, edit, pause, resume, run, remove jobs; their runs; the
scheduler's state; and ``tick`` (run what is due once, for a system crontab)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Coroutine
from datetime import datetime
from typing import Any, TypeVar

import click

from hermes_plugin_cron.jobs import (
    Job,
    JobNotFound,
    JobsFileError,
    JobStore,
    job_state,
    make_job,
)
from hermes_plugin_cron.runs import Run, RunLog
from hermes_plugin_cron.schedule import describe, next_after, when, zone
from hermes_plugin_cron.scheduler import Scheduler, SchedulerBusy, scheduler_lock
from hermes_plugin_cron.settings import CronConfig, settings_from
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext

__all__ = ["cron"]

T = TypeVar("T")
SEEN_MARK = "looked"


def _context() -> CommandContext:
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    return context


def _settings(context: CommandContext) -> CronConfig:
    try:
        return settings_from(context.config.get("cron"))
    except ValueError as exc:
        raise click.ClickException(f"config.yaml: {exc}") from None


def _store(context: CommandContext) -> JobStore:
    return JobStore(context.home)


def _runs(context: CommandContext) -> RunLog:
    return RunLog.open(context.home)


def _guarded(work: Callable[[], T]) -> T:
    try:
        return work()
    except (JobNotFound, JobsFileError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


def _when(moment: float | str | None) -> str:
    return when(moment)


@click.group()
def cron() -> None:
    """Scheduled jobs: a prompt (or a script) run on a schedule, its result delivered."""


@cron.command()
@click.argument("schedule")
@click.argument("prompt", required=False, default="")
@click.option("--name", help="A short name to refer to it by (default: the prompt's start).")
@click.option(
    "--deliver",
    help="local (files, the default), origin, a platform (telegram) or a chat (telegram:ID); "
    "several with commas.",
)
@click.option("--script", type=click.Path(dir_okay=False), help="Run this script first.")
@click.option("--no-agent", is_flag=True, help="Deliver the script's output alone, no agent.")
@click.option("--workdir", type=click.Path(file_okay=False), help="Where the job works.")
@click.option("--skill", "skills", multiple=True, help="A skill the job loads first (repeatable).")
@click.option("--timezone", help="IANA time zone of its schedule (default: cron.timezone).")
@click.option("--jitter", help="Start up to this much later, at random (20m).")
@click.option("--catch-up", type=click.Choice(["latest", "all", "none"]), help="Missed instants.")
@click.option("--max-iterations", type=click.IntRange(1, 1000), help="Model calls per run.")
@click.option("--max-tokens", type=click.IntRange(1), help="Tokens one run may use.")
@click.option("--max-cost", type=click.FloatRange(min=0, min_open=True), help="US dollars per run.")
def create(
    schedule: str,
    prompt: str,
    name: str | None,
    deliver: str | None,
    script: str | None,
    no_agent: bool,
    workdir: str | None,
    skills: tuple[str, ...],
    timezone: str | None,
    jitter: str | None,
    catch_up: str | None,
    max_iterations: int | None,
    max_tokens: int | None,
    max_cost: float | None,
) -> None:
    """Create a job: SCHEDULE is 'every 30m', '30m' (once, after that), a cron expression
    ('0 9 * * 1-5') or an ISO time."""
    context = _context()
    settings = _settings(context)

    def created() -> Job:
        job = make_job(
            schedule,
            prompt,
            name=name,
            deliver=deliver,
            script=script,
            no_agent=no_agent,
            workdir=workdir,
            skills=list(skills),
            timezone=timezone,
            jitter=jitter,
            catch_up=catch_up,
            max_iterations=max_iterations,
            max_tokens=max_tokens,
            max_cost_usd=max_cost,
            default_timezone=settings.timezone,
        )
        return _store(context).add(job)

    job = _guarded(created)
    tz = zone(job.get("timezone") or settings.timezone)
    anchor = datetime.fromisoformat(job["created_at"]).timestamp()
    first = next_after(job["schedule"], anchor, anchor, tz)
    click.echo(
        f"created job {job['name']!r} ({job['id']}): {describe(job['schedule'])}; first run "
        f"{_when(first)}; delivered to {job['deliver']}"
    )


@cron.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def list_jobs(as_json: bool) -> None:
    """The jobs, with their next and last runs."""
    jobs = _guarded(_store(_context()).load)
    if as_json:
        click.echo(json.dumps(jobs, indent=2, ensure_ascii=False))
        return
    if not jobs:
        click.echo("No jobs. Create one: hermes cron create 'every 1d' 'Summarise my inbox'")
        return
    rows = [
        (
            str(job.get("name") or ""),
            job["id"],
            describe(job.get("schedule") or {}),
            job_state(job),
            _when(job.get("next_run_at")),
            f"{_when(job.get('last_run_at'))} {job.get('last_status') or ''}".strip(),
        )
        for job in jobs
    ]
    headers = ("NAME", "ID", "SCHEDULE", "STATE", "NEXT", "LAST")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    for line in [headers, *rows]:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))


@cron.command()
@click.argument("job")
@click.option("--schedule", help="A new schedule (counting starts now).")
@click.option("--prompt", help="A new prompt.")
@click.option("--name", "new_name", help="A new name.")
@click.option("--deliver", help="Where results go.")
@click.option("--timezone", help="IANA time zone of its schedule.")
@click.option("--catch-up", type=click.Choice(["latest", "all", "none"]))
def edit(
    job: str,
    schedule: str | None,
    prompt: str | None,
    new_name: str | None,
    deliver: str | None,
    timezone: str | None,
    catch_up: str | None,
) -> None:
    """Change a job."""
    from hermes_plugin_cron.editing import change_job

    context = _context()
    given = {
        "schedule": schedule,
        "prompt": prompt,
        "name": new_name,
        "deliver": deliver,
        "timezone": timezone,
        "catch_up": catch_up,
    }
    changes = {key: value for key, value in given.items() if value is not None}
    if not changes:
        raise click.UsageError("nothing to change: give --schedule, --prompt, --name ...")
    runs = _runs(context)
    try:
        changed = _guarded(
            lambda: change_job(_store(context), runs, _settings(context), job, changes)
        )
    finally:
        runs.close()
    click.echo(f"changed job {changed['name']!r}: {describe(changed['schedule'])}")


def _set_paused(reference: str, paused: bool) -> None:
    store = _store(_context())
    changed = _guarded(lambda: store.update(reference, {"paused": paused}))
    click.echo(f"job {changed['name']!r} {'paused' if paused else 'resumed'}")


@cron.command()
@click.argument("job")
def pause(job: str) -> None:
    """Pause a job: its due instants are recorded skipped until it is resumed."""
    _set_paused(job, True)


@cron.command()
@click.argument("job")
def resume(job: str) -> None:
    """Resume a paused job."""
    _set_paused(job, False)


@cron.command()
@click.argument("job")
def remove(job: str) -> None:
    """Remove a job (its run records stay)."""
    from hermes_plugin_cron.editing import remove_job

    context = _context()
    runs = _runs(context)
    try:
        removed = _guarded(lambda: remove_job(_store(context), runs, job))
    finally:
        runs.close()
    click.echo(f"removed job {removed['name']!r}")


def _run_async(work: Coroutine[Any, Any, T]) -> T:
    try:
        return asyncio.run(work)
    except KeyboardInterrupt:
        raise click.ClickException("stopped") from None


def _describe_run(run: Run) -> str:
    line = f"{_when(run.due_at)}  {run.trigger:<8}  {run.status}"
    if run.reason:
        line += f": {run.reason}"
    if run.delivery:
        line += f"  [delivery: {run.delivery}]"
    return line


@cron.command()
@click.argument("job")
def run(job: str) -> None:
    """Run a job now and wait for it: in the gateway's scheduler when a gateway runs, else
    here. Exit status 1 if the run did not complete."""
    context = _context()
    settings = _settings(context)
    found = _guarded(lambda: _store(context).find(job))
    try:
        lock = scheduler_lock(context.home)
    except SchedulerBusy as exc:
        finished = _wait_for_gateway(context, found, str(exc))
    else:
        try:
            finished = _run_async(_run_here(context, settings, found))
        finally:
            lock.release()
    click.echo(_describe_run(finished))
    if finished.output_path:
        click.echo(f"output: {finished.output_path}")
    if finished.status != "completed":
        raise SystemExit(1)


async def _run_here(context: CommandContext, settings: CronConfig, job: Job) -> Run:
    if context.open_runtime is None:
        raise click.ClickException("this Hermes cannot run front-ends (upgrade hermes-kernel)")
    async with context.open_runtime() as runtime:
        scheduler = Scheduler(context.home, settings, runtime)
        try:
            run_id = await scheduler.run_now(job)
            finished = scheduler.runs.get(run_id)
        finally:
            await scheduler.aclose()
    assert finished is not None
    return finished


def _wait_for_gateway(context: CommandContext, job: Job, holder: str) -> Run:
    runs = _runs(context)
    request = runs.request(job["id"])
    click.echo(f"{holder}: asked it to run {job['name']!r}; waiting (Ctrl+C stops waiting)")
    try:
        while True:
            run_id = runs.run_of_request(request)
            found = runs.get(run_id) if run_id is not None else None
            if found is not None and found.ended:
                return found
            time.sleep(0.2)
    except KeyboardInterrupt:
        raise click.ClickException("stopped waiting; the run goes on in the gateway") from None
    finally:
        runs.close()


@cron.command(name="runs")
@click.argument("job")
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def runs_of(job: str, limit: int, as_json: bool) -> None:
    """A job's run records, newest first."""
    context = _context()
    found = _guarded(lambda: _store(context).find(job))
    log = _runs(context)
    records = log.of_job(found["id"], limit)
    log.close()
    if as_json:
        for record in records:
            click.echo(json.dumps(record.__dict__, ensure_ascii=False))
        return
    if not records:
        click.echo(f"job {found['name']!r} has not been due yet")
    for record in records:
        click.echo(_describe_run(record))


cron.add_command(runs_of, name="history")


@cron.command()
def status() -> None:
    """Whether a scheduler runs for this home, and the runs that failed since you last
    looked (this marks them seen)."""
    context = _context()
    jobs = _guarded(_store(context).load)
    try:
        scheduler_lock(context.home).release()
        running = "no scheduler runs (start the gateway: hermes gateway run; or hermes cron tick)"
    except SchedulerBusy as exc:
        running = str(exc)
    log = _runs(context)
    failed = log.failed_since(log.marked(SEEN_MARK))
    log.mark(SEEN_MARK)
    log.close()
    active = sum(1 for job in jobs if job_state(job) == "active")
    click.echo(f"{len(jobs)} jobs ({active} active); {running}")
    if failed:
        click.echo(f"{len(failed)} runs failed since you last looked:")
        for record in failed:
            click.echo(f"  {record.job_name}: {_describe_run(record)}")


@cron.command()
def tick() -> None:
    """Run what is due once, wait for it, and exit (for a system crontab). Refused while a
    gateway runs the scheduler for this home."""
    context = _context()
    settings = _settings(context)
    try:
        lock = scheduler_lock(context.home)
    except SchedulerBusy as exc:
        raise click.ClickException(f"{exc}; it runs due jobs itself") from None
    try:
        started = _run_async(_tick(context, settings))
    finally:
        lock.release()
    click.echo(f"ran {len(started)} due jobs" if started else "nothing was due")


async def _tick(context: CommandContext, settings: CronConfig) -> list[int]:
    if context.open_runtime is None:
        raise click.ClickException("this Hermes cannot run front-ends (upgrade hermes-kernel)")
    async with context.open_runtime() as runtime:
        scheduler = Scheduler(context.home, settings, runtime)
        try:
            await asyncio.to_thread(scheduler.runs.orphans)
            started = await scheduler.tick()
            await scheduler.idle()
        except JobsFileError as exc:
            raise click.ClickException(str(exc)) from None
        finally:
            await scheduler.aclose()
    return started
