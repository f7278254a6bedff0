"""A job changed or removed with its run log kept right: a new schedule (or zone) counts
from the change and moves the job's cursor; a removed job's cursor goes with it. ``hermes
cron edit|remove``, the dashboard and the ``cronjob`` tool change jobs here."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from hermes_plugin_cron.jobs import Job, JobStore
from hermes_plugin_cron.runs import RunLog
from hermes_plugin_cron.schedule import next_after, parse_schedule, zone
from hermes_plugin_cron.settings import CronConfig

__all__ = ["change_job", "remove_job"]


def change_job(
    store: JobStore,
    runs: RunLog,
    settings: CronConfig,
    reference: str,
    changes: dict[str, Any],
) -> Job:
    """Apply ``changes`` (``schedule`` as text, ``prompt``, ``name``, ``deliver``,
    ``timezone``, ``catch_up``) to the job ``reference`` names; ValueError (one line) on
    bad input, JobNotFound when no job matches."""
    fields = {key: value for key, value in changes.items() if key != "schedule"}
    if fields.get("catch_up") not in (None, "latest", "all", "none"):
        raise ValueError(f"catch_up {fields['catch_up']!r}: use latest, all or none")
    timezone = fields.get("timezone")
    if timezone is not None:
        zone(timezone)  # ScheduleError (a ValueError) names a bad zone
    found = store.find(reference)
    schedule = changes.get("schedule")
    if schedule is not None:
        tz = zone(timezone or found.get("timezone") or settings.timezone)
        now = datetime.now(tz)
        parsed = parse_schedule(schedule, now)
        fields.update(
            schedule=parsed,
            schedule_display=parsed["display"],
            anchor_at=now.isoformat(),  # an interval counts from the change
        )
    if not fields:
        raise ValueError("nothing to change: give a new schedule, prompt, name ...")
    changed = store.update(found["id"], fields)
    if schedule is not None or timezone is not None:
        tz = zone(changed.get("timezone") or settings.timezone)
        anchor = datetime.fromisoformat(
            changed.get("anchor_at") or changed["created_at"]
        ).timestamp()
        runs.set_cursor(changed["id"], next_after(changed["schedule"], time.time(), anchor, tz))
    return changed


def remove_job(store: JobStore, runs: RunLog, reference: str) -> Job:
    """Remove the job (its run records stay) and its cursor."""
    removed = store.remove(reference)
    runs.forget(removed["id"])
    return removed
