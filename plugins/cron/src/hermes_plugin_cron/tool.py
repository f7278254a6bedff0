"""The ``cronjob`` tool: the agent schedules, lists, pauses, resumes and removes jobs."""

from __future__ import annotations

from typing import Any

from hermes_plugin_cron.jobs import JobNotFound, JobsFileError, JobStore, make_job
from hermes_plugin_cron.schedule import describe
from hermes_sdk.tooling import ToolContext

__all__ = ["cronjob", "origin_of"]


def origin_of(context: ToolContext) -> dict[str, str] | None:
    """The chat a session talks in, from its user scope: ``telegram:42`` (a person: their
    direct chat) or ``telegram:chat:-100123`` (a shared chat); None at the terminal."""
    scope = context.user_scope
    if not scope or context.source in ("cli", "cron", "review", "api", "acp"):
        return None
    platform, _, rest = scope.partition(":")
    chat = rest.removeprefix("chat:")
    if not platform or not chat:
        return None
    return {"platform": platform, "chat_id": chat}


def cronjob(
    action: str,
    context: ToolContext,
    schedule: str | None = None,
    prompt: str | None = None,
    name: str | None = None,
    deliver: str | None = None,
    job: str | None = None,
) -> Any:
    store = JobStore(context.home)
    try:
        if action == "create":
            if not schedule or not prompt:
                return "error: create needs schedule and prompt"
            settings = context.section("cron")
            created = store.add(
                make_job(
                    schedule,
                    prompt,
                    name=name,
                    deliver=deliver,
                    origin=origin_of(context),
                    default_timezone=settings.get("timezone"),
                )
            )
            return (
                f"scheduled job {created['name']!r} ({created['id']}): "
                f"{describe(created['schedule'])}, delivered to {created['deliver']}"
            )
        if action == "list":
            jobs = store.load()
            return [
                {
                    "name": found.get("name"),
                    "id": found["id"],
                    "schedule": describe(found.get("schedule") or {}),
                    "paused": bool(found.get("paused")),
                    "next_run_at": found.get("next_run_at"),
                    "last_status": found.get("last_status"),
                }
                for found in jobs
            ] or "no scheduled jobs"
        if action in ("pause", "resume", "remove"):
            if not job:
                return f"error: {action} needs job (its name or id)"
            if action == "remove":
                removed = store.remove(job)
                return f"removed job {removed['name']!r}"
            changed = store.update(job, {"paused": action == "pause"})
            return f"job {changed['name']!r} {'paused' if action == 'pause' else 'resumed'}"
        return f"error: unknown action {action!r}: use create, list, pause, resume or remove"
    except (ValueError, JobNotFound, JobsFileError) as exc:
        return f"error: {exc}"
