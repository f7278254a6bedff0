"""One run of one job: a fresh agent (or the job's script alone), its output saved, then
delivered where the job says.

The agent of a job opens a session of source ``cron`` in the job's ``workdir`` (else an
empty folder of its own, so no project's context files are read), without the tools that
need someone there (``clarify``) or that would schedule more jobs (``cronjob``), with nobody
to approve a dangerous command (denied, unless approvals are off), no background review, and
the job's own iteration budget.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_plugin_cron.jobs import Job, cron_dir
from hermes_plugin_cron.settings import CronConfig
from hermes_sdk.runtime import Budget, DeliveryUnavailable, Runtime, SessionOptions

__all__ = ["EXCLUDED_TOOLS", "Outcome", "deliver", "run_job", "save_output", "targets_of"]

EXCLUDED_TOOLS = ("clarify", "cronjob", "send_message")
SCRIPT_TIMEOUT_SECONDS = 600
_SCRIPT_ENVIRONMENT = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "SHELL", "TMPDIR")
"""What a job's script inherits: never the keys in the environment or .env."""


@dataclass(frozen=True)
class Outcome:
    status: str  # completed | failed
    text: str = ""
    reason: str | None = None
    session_id: str | None = None


async def _script(job: Job, cwd: Path) -> tuple[int, str, str]:
    script = Path(str(job["script"])).expanduser()
    if not script.exists():
        raise FileNotFoundError(f"the job's script {script} does not exist")
    command = [str(script)] if os.access(script, os.X_OK) else ["/bin/sh", str(script)]
    environment = {name: os.environ[name] for name in _SCRIPT_ENVIRONMENT if name in os.environ}
    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=cwd,
        env=environment,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), SCRIPT_TIMEOUT_SECONDS)
    except (TimeoutError, asyncio.CancelledError):
        process.kill()
        await process.wait()
        raise
    assert process.returncode is not None
    return process.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def _workdir(job: Job, home: str) -> Path:
    if job.get("workdir"):
        return Path(str(job["workdir"])).expanduser()
    empty = cron_dir(home) / "workspace"
    empty.mkdir(parents=True, exist_ok=True)
    return empty


async def run_job(job: Job, runtime: Runtime, home: str, on_session: Any = None) -> Outcome:
    """Run ``job`` once; failures are outcomes, not exceptions (cancellation aside)."""
    cwd = _workdir(job, home)
    try:
        if not cwd.is_dir():
            return Outcome("failed", reason=f"the job's workdir {cwd} is not a folder")
        script_output = None
        if job.get("script"):
            code, out, err = await _script(job, cwd)
            if code != 0:
                tail = " ".join(err.strip().splitlines()[-3:])[:300]
                return Outcome("failed", reason=f"its script exited with status {code}: {tail}")
            if job.get("no_agent"):
                return Outcome("completed", text=out.strip())
            script_output = out.strip()
        return await _agent(job, runtime, cwd, script_output, on_session)
    except asyncio.CancelledError:
        raise
    except TimeoutError:
        return Outcome("failed", reason=f"its script ran past {SCRIPT_TIMEOUT_SECONDS} s")
    except Exception as exc:  # noqa: BLE001 - one line for the run record, never a crash
        return Outcome("failed", reason=" ".join(f"{type(exc).__name__}: {exc}".split())[:500])


def _prompt(job: Job, script_output: str | None) -> str:
    parts = []
    skills = job.get("skills") or []
    if skills:
        names = ", ".join(repr(str(name)) for name in skills)
        parts.append(f"Before you start, load the skill {names} with skill_view and follow it.")
    parts.append(str(job.get("prompt") or ""))
    if script_output is not None:
        parts.append(f"The output of the job's script:\n```\n{script_output}\n```")
    parts.append(
        "(This is a scheduled job: nobody is there to answer questions. Do the task and "
        "reply with the result to deliver.)"
    )
    return "\n\n".join(part for part in parts if part)


async def _agent(
    job: Job, runtime: Runtime, cwd: Path, script_output: str | None, on_session: Any
) -> Outcome:
    stored = job.get("budget")
    budget: dict[str, Any] = stored if isinstance(stored, dict) else {}
    iterations = budget.get("max_iterations")
    tokens, cost = budget.get("session_max_tokens"), budget.get("session_max_cost_usd")
    limits = None
    if tokens or cost:  # each run is a session of its own: the limits are per run
        limits = Budget(
            session_max_tokens=int(tokens) if tokens else None,
            session_max_cost_usd=float(cost) if cost else None,
        )
    session = await runtime.open_session(
        SessionOptions(
            source="cron",
            cwd=str(cwd),
            exclude_tools=EXCLUDED_TOOLS,
            max_iterations=int(iterations) if iterations else None,
            background_review=False,
            title=f"cron: {job.get('name') or job['id']}",
            budget=limits,
        )
    )
    if on_session is not None:
        on_session(session.session_id)
    try:
        turn = runtime.start_turn(session.session_id, _prompt(job, script_output))
        try:
            ended = await turn.result()
        except asyncio.CancelledError:
            turn.stop()
            raise
    finally:
        await runtime.end_session(session.session_id, "cron")
    if ended.ok:
        return Outcome("completed", text=ended.reply.strip(), session_id=session.session_id)
    reason = ended.error or f"the turn ended {ended.status}"
    return Outcome("failed", text=ended.reply, reason=reason, session_id=session.session_id)


def save_output(job: Job, home: str, due_at: float, outcome: Outcome) -> Path:
    """HERMES_HOME/cron/output/<job id>/<time>.md, as hermes-agent writes it."""
    folder = cron_dir(home) / "output" / str(job["id"])
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.fromtimestamp(due_at).strftime("%Y-%m-%d_%H-%M-%S")
    path = folder / f"{stamp}.md"
    if path.exists():  # a manual run in the same second
        path = folder / f"{stamp}-{os.getpid()}-{id(outcome) % 10_000}.md"
    head = f"# {job.get('name') or job['id']}\n\n{datetime.fromtimestamp(due_at).isoformat()}"
    if outcome.status == "completed":
        body = outcome.text or "(no output)"
    else:
        body = f"**Failed:** {outcome.reason}\n\n{outcome.text}".rstrip()
    path.write_text(f"{head}\n\n{body}\n", encoding="utf-8")
    return path


def targets_of(job: Job, settings: CronConfig) -> list[tuple[str, str] | str]:
    """Each place the result goes: (platform, chat id), or a one-line reason it cannot."""
    found: list[tuple[str, str] | str] = []
    for written in str(job.get("deliver") or "local").split(","):
        target = written.strip()
        if not target or target == "local":
            continue
        if target == "origin":
            origin = job.get("origin") or {}
            if isinstance(origin, dict) and origin.get("platform") and origin.get("chat_id"):
                found.append((str(origin["platform"]), str(origin["chat_id"])))
            else:
                found.append("deliver origin: the job was not created from a chat")
            continue
        platform, _, chat = target.partition(":")
        if not chat:
            chat = settings.home_chats.get(platform, "")
            if not chat:
                found.append(
                    f"no home chat for {platform}: set cron.home_chats.{platform}, or deliver "
                    f"to {platform}:CHAT_ID"
                )
                continue
        found.append((platform, chat))
    return found


async def deliver(job: Job, settings: CronConfig, runtime: Runtime, outcome: Outcome) -> str | None:
    """Send the result (or a failure notice) to the job's targets; what happened, in one
    line, for the run record (None: nothing to send)."""
    name = job.get("name") or job["id"]
    if outcome.status == "completed":
        if not outcome.text:
            return "nothing to send (empty output)"
        text = f"{name}\n\n{outcome.text}"
    else:
        if not (settings.notify_failures and job.get("notify_failure", True)):
            return None
        text = f"Scheduled job {name!r} failed: {outcome.reason}"
    said: list[str] = []
    for target in targets_of(job, settings):
        if isinstance(target, str):
            said.append(target)
            continue
        platform, chat = target
        try:
            sent = await runtime.deliver(platform, chat, text)
        except DeliveryUnavailable as exc:
            said.append(f"{platform}:{chat} not delivered: {exc}")
        else:
            said.append(f"{platform}:{chat} {sent.state}")
    return "; ".join(said) or None
