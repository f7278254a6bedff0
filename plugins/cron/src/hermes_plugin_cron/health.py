"""What ``hermes status`` and ``hermes doctor`` say about the jobs: how many, which failed
last time, and (for doctor) a jobs file that cannot be read or a job whose script or folder
is gone. Read from this home's jobs.json only; nothing is changed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from hermes_plugin_cron.jobs import Job, JobsFileError, JobStore, job_state
from hermes_sdk import Finding, HealthContext, StatusLine

LABEL = "Jobs"


def status_lines(context: HealthContext) -> Iterator[StatusLine]:
    try:
        jobs = JobStore(context.home).load()
    except JobsFileError as exc:
        yield StatusLine(label=LABEL, text=f"{exc} (see: hermes doctor)")
        return
    if not jobs:
        yield StatusLine(label=LABEL, text="none")
        return
    text = f"{len(jobs)} scheduled"
    paused = sum(1 for job in jobs if job_state(job) == "paused")
    if paused:
        text += f" ({paused} paused)"
    failed = sum(1 for job in jobs if job.get("last_status") == "error")
    if failed:
        text += f", {failed} failed on their last run (see: hermes cron status)"
    yield StatusLine(label=LABEL, text=text)


def _missing(job: Job) -> Iterator[str]:
    """What an active job needs from the disk and does not find."""
    script, workdir = job.get("script"), job.get("workdir")
    if isinstance(script, str) and not Path(script).expanduser().is_file():
        yield f"its script {script} does not exist"
    if isinstance(workdir, str) and not Path(workdir).expanduser().is_dir():
        yield f"its folder {workdir} does not exist"


def doctor_checks(context: HealthContext) -> Iterator[Finding]:
    store = JobStore(context.home)
    try:
        jobs = store.load()
    except JobsFileError as exc:
        yield Finding(
            level="error",
            message=str(exc),
            fix=f"repair {store.path} by hand, or move it aside to start with no jobs",
        )
        return
    if jobs:
        yield Finding(level="ok", message=f"{len(jobs)} scheduled jobs in {store.path}")
    for job in jobs:
        if job_state(job) != "active":
            continue
        name = job.get("name") or job["id"]
        for problem in _missing(job):
            yield Finding(
                level="warning",
                message=f"scheduled job {name!r}: {problem}, so its runs fail",
                fix=f"fix the path, or pause it: hermes cron pause {job['id']}",
            )
