"""``hermes import``: the jobs of a hermes-agent home come over into this home's
cron/jobs.json (hermes-agent's format is ours), by id, under this plugin's own lock, their
schedules counted from the import. Only the source is read; a job already here stays as is."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes_plugin_cron.jobs import Job, JobsFileError, JobStore
from hermes_sdk.importing import HomeImport, ImportSection

SOURCE_KINDS = frozenset({"hermes-agent"})
"""Homes whose cron/jobs.json is in the format this plugin keeps."""
KIND = "cron jobs"


def _theirs(path: Path, section: ImportSection) -> list[Job] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise OSError(
            f"{path}: not UTF-8 text (byte {exc.start}): save it as UTF-8, then import again"
        ) from None
    try:
        data: Any = json.loads(text)
        jobs = data.get("jobs", []) if isinstance(data, dict) else data
        if not isinstance(jobs, list):
            raise ValueError
    except ValueError:
        section.left("cron/jobs.json", "not the JSON hermes-agent writes; nothing read from it")
        return None
    return [job for job in jobs if isinstance(job, dict) and job.get("id")]


def _label(job: Job) -> str:
    return f"{job.get('name') or job['id']} ({job.get('schedule_display') or ''})".strip()


def import_jobs(request: HomeImport) -> ImportSection:
    section = ImportSection(kind=KIND, reads=["cron"])
    jobs = _theirs(Path(request.source) / "cron" / "jobs.json", section)
    if not jobs:
        return section
    store = JobStore(request.target)
    imported_at = datetime.now(UTC).isoformat()

    def merge(ours: list[Job]) -> None:
        known = {str(job.get("id")) for job in ours}
        for found in jobs:
            job = dict(found)
            if str(job["id"]) in known:
                section.skip(_label(job), "already there")
                continue
            # Counted from now: the instants before the import were hermes-agent's to run,
            # and catching up on the latest of them would run it a second time.
            job["anchor_at"] = imported_at
            if job.get("state") == "paused":
                job["paused"] = True
            section.add(_label(job))
            ours.append(job)
            known.add(str(job["id"]))

    try:
        ours = store.load()
        known = {str(job.get("id")) for job in ours}
        if request.dry_run or all(str(job["id"]) in known for job in jobs):
            merge(ours)  # nothing is written: a dry run, or nothing new
        else:
            store.change(merge)  # read again under the lock: the scheduler may have saved
    except JobsFileError as exc:
        section.added.clear()
        section.already.clear()
        section.left("cron/jobs.json", f"{exc}: fix it, then import again")
    return section
