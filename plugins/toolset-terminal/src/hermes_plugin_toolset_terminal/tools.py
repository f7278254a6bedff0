"""The ``terminal`` and ``process`` tool handlers.

They reach the session's backend through the tool context, so the kernel's approval check
runs before every command, and a stop (Ctrl+C) kills the running command.
"""

from __future__ import annotations

import time
from dataclasses import replace

from hermes_plugin_toolset_terminal.registry import REGISTRY, Tracked
from hermes_sdk.terminal import CommandResult
from hermes_sdk.tooling import ToolContext

DEFAULT_TIMEOUT_SECONDS = 180
BACKGROUND_AFTER_SECONDS = 600
OUTPUT_CHARS = 50_000


def shorten(text: str, limit: int = OUTPUT_CHARS) -> str:
    """The start and end of ``text`` when it is longer than ``limit`` characters."""
    if len(text) <= limit:
        return text
    half = limit // 2
    dropped = len(text) - 2 * half
    return f"{text[:half]}\n[… {dropped:,} characters omitted …]\n{text[-half:]}"


def describe(result: CommandResult, timeout: float) -> str:
    if result.timed_out:
        head = f"timed out after {timeout:g} s: the command was killed"
    elif result.interrupted:
        head = "interrupted by the user: the command was killed"
    else:
        head = f"exit code {result.exit_code}"
    parts = [f"{head} ({result.seconds:.1f} s)"]
    if result.stdout:
        parts.append(shorten(result.stdout.rstrip("\n")))
    if result.stderr:
        parts.append("[stderr]\n" + shorten(result.stderr.rstrip("\n"), OUTPUT_CHARS // 2))
    if not result.stdout and not result.stderr:
        parts.append("(no output)")
    return "\n".join(parts)


def _start(context: ToolContext, command: str, workdir: str | None, note: str = "") -> str:
    backend = context.backend()
    handle = backend.start_process(command, cwd=workdir)
    tracked = REGISTRY.add(context.session_id, handle, command)
    return (
        f"started in the background as process {tracked.id}{note}. Check it with "
        f"process(action='poll', id='{tracked.id}'); stop it with action='kill'."
    )


def terminal(
    command: str,
    context: ToolContext,
    timeout: int = DEFAULT_TIMEOUT_SECONDS,
    background: bool = False,
    workdir: str | None = None,
) -> str:
    if not command.strip():
        raise ValueError("command is empty")
    if background:
        return _start(context, command, workdir)
    if timeout > BACKGROUND_AFTER_SECONDS:
        note = f" (a timeout over {BACKGROUND_AFTER_SECONDS} s runs in the background)"
        return _start(context, command, workdir, note)
    backend = context.backend()
    result = backend.run(command, cwd=workdir, timeout=timeout, cancel=context.cancel)
    return describe(transformed(context, command, result), timeout)


def transformed(context: ToolContext, command: str, result: CommandResult) -> CommandResult:
    """The output as the plugins' transforms leave it (a noise filter), before it is
    shortened; each stream on its own."""
    transform = context.transform_output
    if transform is None:
        return result
    stdout = transform(command, result.stdout) if result.stdout else result.stdout
    stderr = transform(command, result.stderr) if result.stderr else result.stderr
    return replace(result, stdout=stdout, stderr=stderr)


def _line(tracked: Tracked) -> str:
    state = "running" if tracked.running else f"exited with code {tracked.exit_code}"
    if tracked.exit_code == -9:
        state = "killed"
    age = time.time() - tracked.started
    return f"{tracked.id}  {state}  {age:.0f} s  {tracked.command[:80]}"


def process(action: str, context: ToolContext, id: str | None = None, timeout: int = 60) -> str:
    session = context.session_id
    if action == "list":
        found = REGISTRY.all(session)
        if not found:
            return "no background processes in this session"
        backend = context.backend()
        return "\n".join(_line(REGISTRY.refresh(backend, tracked)) for tracked in found)
    if id is None:
        raise ValueError(f"action {action!r} needs the process id")
    tracked = REGISTRY.get(session, id)
    backend = context.backend()
    if action == "kill":
        backend.kill_process(tracked.handle)
        REGISTRY.refresh(backend, tracked)
        return f"killed {tracked.id}\n{_line(tracked)}"
    if action == "wait":
        deadline = time.monotonic() + min(max(timeout, 1), 600)
        while REGISTRY.refresh(backend, tracked).running and time.monotonic() < deadline:
            if context.cancel.wait(0.5):
                break
    else:
        REGISTRY.refresh(backend, tracked)
    if action == "log":
        return f"{_line(tracked)}\n{shorten(tracked.buffer) or '(no output yet)'}"
    if action in ("poll", "wait"):
        new, tracked.unread = tracked.unread, ""
        return f"{_line(tracked)}\n{shorten(new) or '(no new output)'}"
    raise ValueError(f"unknown action {action!r}; use list, poll, log, wait or kill")
