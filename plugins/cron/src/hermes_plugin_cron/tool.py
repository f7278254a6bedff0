"""The ``cronjob`` tool: the agent schedules, lists, pauses, resumes and removes jobs."""

from __future__ import annotations

from typing import Any

from hermes_plugin_cron.jobs import JobNotFound, JobsFileError, JobStore, make_job
from hermes_plugin_cron.schedule import describe
from hermes_sdk.tooling import ToolContext

__all__ = ["cronjob", "foreign_targets", "origin_of"]


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


def foreign_targets(
    deliver: str | None, origin: dict[str, str] | None, home_chats: Any
) -> list[str]:
    """The targets of ``deliver`` that are neither this session's own chat nor a home chat
    the owner configured (``cron.home_chats``): each one needs the user's approval, since a
    job sends there on its own, again and again."""
    homes = {
        (str(platform), str(chat))
        for platform, chat in (home_chats.items() if isinstance(home_chats, dict) else ())
    }
    mine = (origin["platform"], origin["chat_id"]) if origin else None
    foreign = []
    for written in str(deliver or "").split(","):
        target = written.strip()
        platform, _, chat = target.partition(":")
        if not target or target in ("local", "origin") or not chat:
            continue  # a bare platform is its home chat, or not delivered at all
        if (platform, chat) != mine and (platform, chat) not in homes:
            foreign.append(target)
    return foreign


def _approved(context: ToolContext, targets: list[str], schedule: str, prompt: str) -> bool:
    question = (
        f"Allow a scheduled job ({schedule}) to send its results to {', '.join(targets)}? "
        f"Its prompt: {prompt[:200]}"
    )
    answer = context.ask_user(question, ["allow", "deny"])
    return (answer or "").strip().lower() == "allow"


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
            strangers = foreign_targets(deliver, origin_of(context), settings.get("home_chats"))
            if strangers and not _approved(context, strangers, schedule, prompt):
                return (
                    f"error: delivering to {', '.join(strangers)} needs the user's approval "
                    "(only this chat and the home chats in cron.home_chats are free); the user "
                    "did not give it. Deliver to origin or a home chat, or ask the user."
                )
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
