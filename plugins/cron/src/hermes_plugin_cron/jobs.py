"""The jobs: HERMES_HOME/cron/jobs.json, as hermes-agent writes it, plus fields of ours.

``{"jobs": [...], "updated_at": ...}``; each job has hermes-agent's ``id``, ``name``,
``prompt``, ``schedule``, ``schedule_display``, ``repeat``, ``enabled``, ``created_at``,
``next_run_at``, ``last_run_at``, ``last_status``, ``last_error``, ``deliver`` and
``origin``, and may have ours: ``timezone``, ``jitter_seconds``, ``script``, ``no_agent``,
``workdir``, ``skills``, ``catch_up``, ``notify_failure``, ``paused`` and ``budget``. Fields
we do not know are kept as they are. Every change is a read-modify-write under a file lock,
written atomically, so two commands (or a command and the scheduler) never lose an edit.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text
from hermes_commons.locks import FileLock, LockTimeout

__all__ = ["JobNotFound", "JobStore", "JobsFileError", "cron_dir", "job_state"]

Job = dict[str, Any]


class JobsFileError(RuntimeError):
    """jobs.json cannot be read; the message names the file and what is wrong."""


class JobNotFound(LookupError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "no such job"


def cron_dir(home: str | Path) -> Path:
    return Path(home) / "cron"


class JobStore:
    def __init__(self, home: str | Path) -> None:
        self.dir = cron_dir(home)
        self.path = self.dir / "jobs.json"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        lock = FileLock(self.dir / ".jobs.lock")
        try:
            lock.acquire()
        except LockTimeout as exc:
            raise JobsFileError(f"{self.path}: cannot be changed now: {exc}") from None
        try:
            yield
        finally:
            lock.release()

    def load(self) -> list[Job]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise JobsFileError(f"{self.path}: cannot be read ({exc.strerror})") from None
        try:
            data = json.loads(text) if text.strip() else {"jobs": []}
        except ValueError as exc:
            raise JobsFileError(
                f"{self.path}: not valid JSON ({exc}); fix it by hand (nothing was changed)"
            ) from None
        jobs = data.get("jobs") if isinstance(data, dict) else data
        if not isinstance(jobs, list) or not all(isinstance(job, dict) for job in jobs):
            raise JobsFileError(f'{self.path}: expected {{"jobs": [...]}} with one object per job')
        return [job for job in jobs if isinstance(job.get("id"), str)]

    def _save(self, jobs: list[Job]) -> None:
        payload = {"jobs": jobs, "updated_at": datetime.now().astimezone().isoformat()}
        atomic_write_text(self.path, json.dumps(payload, indent=2, ensure_ascii=False))

    def change(self, edit: Callable[[list[Job]], Any]) -> Any:
        """Run ``edit`` on the jobs under the lock and save them; returns what it returned."""
        with self._locked():
            jobs = self.load()
            result = edit(jobs)
            self._save(jobs)
            return result

    def find(self, reference: str, jobs: list[Job] | None = None) -> Job:
        """A job by id, unique id prefix or name."""
        jobs = self.load() if jobs is None else jobs
        for job in jobs:
            if reference in (job["id"], job.get("name")):
                return job
        prefixed = [job for job in jobs if job["id"].startswith(reference)]
        if len(prefixed) == 1:
            return prefixed[0]
        known = ", ".join(sorted(str(job.get("name") or job["id"]) for job in jobs)) or "none"
        raise JobNotFound(f"no job {reference!r} (jobs: {known}); see: hermes cron list")

    def add(self, job: Job) -> Job:
        def added(jobs: list[Job]) -> Job:
            if any(other.get("name") == job["name"] for other in jobs):
                raise ValueError(
                    f"a job named {job['name']!r} exists already: choose another --name"
                )
            jobs.append(job)
            return job

        result: Job = self.change(added)
        return result

    def update(self, reference: str, fields: dict[str, Any]) -> Job:
        def updated(jobs: list[Job]) -> Job:
            job = self.find(reference, jobs)
            job.update(fields)
            return job

        result: Job = self.change(updated)
        return result

    def remove(self, reference: str) -> Job:
        def removed(jobs: list[Job]) -> Job:
            job = self.find(reference, jobs)
            jobs.remove(job)
            return job

        result: Job = self.change(removed)
        return result


def job_state(job: Job) -> str:
    """active, paused, disabled, or done (a one-shot that ran)."""
    if job.get("paused"):
        return "paused"
    if not job.get("enabled", True):
        return "done" if (job.get("repeat") or {}).get("times") else "disabled"
    return "active"


def new_job_id() -> str:
    return uuid.uuid4().hex[:12]


def make_job(
    schedule: str,
    prompt: str,
    *,
    name: str | None = None,
    deliver: str | None = None,
    origin: dict[str, str] | None = None,
    script: str | None = None,
    no_agent: bool = False,
    workdir: str | None = None,
    skills: list[str] | None = None,
    timezone: str | None = None,
    jitter: str | None = None,
    catch_up: str | None = None,
    max_iterations: int | None = None,
    max_tokens: int | None = None,
    max_cost_usd: float | None = None,
    default_timezone: str | None = None,
) -> Job:
    """A new job, checked: ValueError (ScheduleError) with one line on bad input."""
    from hermes_plugin_cron.schedule import parse_duration, parse_schedule, zone

    tz = zone(timezone or default_timezone)
    now = datetime.now(tz)
    parsed = parse_schedule(schedule, now)
    if no_agent and not script:
        raise ValueError("--no-agent runs the job's script alone: give --script PATH")
    if not prompt.strip() and not script:
        raise ValueError("a job needs a prompt, or --script with --no-agent")
    if catch_up not in (None, "latest", "all", "none"):
        raise ValueError(f"catch_up {catch_up!r}: use latest, all or none")
    if workdir is not None and not Path(workdir).expanduser().is_dir():
        raise ValueError(f"--workdir {workdir}: no such folder")
    if script is not None and not Path(script).expanduser().is_file():
        raise ValueError(f"--script {script}: no such file")
    job: Job = {
        "id": new_job_id(),
        "name": name or (" ".join(prompt.split())[:50] or Path(str(script)).name),
        "prompt": prompt,
        "schedule": parsed,
        "schedule_display": parsed["display"],
        "repeat": {"times": 1 if parsed["kind"] == "once" else None, "completed": 0},
        "enabled": True,
        "created_at": now.isoformat(),
        "next_run_at": None,
        "last_run_at": None,
        "last_status": None,
        "last_error": None,
        "deliver": deliver or ("origin" if origin else "local"),
        "origin": origin,
    }
    extra: dict[str, Any] = {
        "timezone": timezone,
        "jitter_seconds": parse_duration(jitter) if jitter else None,
        "script": str(Path(script).expanduser().resolve()) if script else None,
        "no_agent": no_agent or None,
        "workdir": str(Path(workdir).expanduser().resolve()) if workdir else None,
        "skills": skills or None,
        "catch_up": catch_up,
        "budget": {
            key: value
            for key, value in (
                ("max_iterations", max_iterations),
                ("session_max_tokens", max_tokens),
                ("session_max_cost_usd", max_cost_usd),
            )
            if value
        }
        or None,
    }
    job.update({key: value for key, value in extra.items() if value is not None})
    return job
