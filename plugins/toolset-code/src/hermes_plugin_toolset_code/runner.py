"""One ``execute_code`` call: run the program in the session's environment, answer the calls
it makes as they arrive, and report what it printed.

Four threads take part: the handler's, which runs the command and waits; the backend's
reader, which hands stdout to :class:`~hermes_plugin_toolset_code.frames.FrameReader`; a
dispatcher, which answers one call at a time, so that a call never holds up the reading of
the script's output; and a watcher, which turns the user's stop into the script's.
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import queue
import shlex
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hermes_commons.text import one_line
from hermes_plugin_toolset_code.defaults import allowed_tools
from hermes_plugin_toolset_code.frames import FrameReader, KeptOutput
from hermes_plugin_toolset_code.program import FOLDER_FRAME, program_source
from hermes_plugin_toolset_code.settings import CodeSettings
from hermes_plugin_toolset_code.stubs import module_source
from hermes_sdk.terminal import CommandRefused, CommandResult, TerminalBackend
from hermes_sdk.tooling import ToolCaller, ToolContext, ToolFailed, progress_reporter

__all__ = ["ScriptFailed", "execute"]

log = logging.getLogger(__name__)

STDERR_TAIL = 3_000
"""Characters of stderr shown when a script fails (its traceback's end)."""
FLOOD_FACTOR = 20
FLOOD_FLOOR = 5_000_000
"""A script whose output passes FLOOD_FACTOR times the cap (and at least FLOOD_FLOOR
characters) is stopped: nobody reads it, and one that never stops printing would otherwise
run to its time limit."""
_ANSWER_TICK = 0.1


class ScriptFailed(ToolFailed):
    """The script did not finish: it raised, exited non-zero, or was stopped."""


@dataclass
class _Run:
    """What one run knows while it goes on (shared by its threads)."""

    settings: CodeSettings
    backend: TerminalBackend
    caller: ToolCaller
    allowed: list[str]
    folder: str | None = None
    """The script's private folder, once its first frame named it."""
    calls: int = 0
    refused: int = 0
    stop_reason: str | None = None
    ended: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)
    channel_error: str | None = None

    def stop_script(self, reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
        self.stop.set()


def _command(python: str) -> str:
    """The program from stdin, in a clean environment (PATH, HOME and the locale only)."""
    return (
        'env -i PATH="$PATH" HOME="$HOME" LANG="${LANG:-C.UTF-8}" TZ="${TZ:-}" '
        f"{shlex.quote(python)} -I -B -"
    )


def execute(code: str, context: ToolContext, settings: CodeSettings) -> str:
    caller = context.tool_caller()
    offered = dict(caller.tools)
    allowed = allowed_tools(settings.tools, offered)
    backend = context.backend()
    frame = f"\x1dhermes-call-{uuid.uuid4().hex[:12]}:"
    program = program_source(
        frame=frame,
        script=code,
        functions=module_source([offered[name] for name in allowed]),
        memory_bytes=settings.memory_mb * 1024 * 1024,
    )
    run = _Run(settings, backend, caller, allowed)
    output = KeptOutput(settings.max_output_chars)
    requests: queue.Queue[str | None] = queue.Queue()
    reader = FrameReader(frame, lambda message: _received(run, message, requests), output)
    flood_at = max(settings.max_output_chars * FLOOD_FACTOR, FLOOD_FLOOR)

    def on_output(text: str) -> None:
        reader.feed(text)
        if output.total > flood_at:
            run.stop_script(f"it printed over {flood_at:,} characters and was stopped")

    dispatcher = threading.Thread(
        target=_serve, args=(run, requests, progress_reporter()), daemon=True
    )
    dispatcher.start()
    watcher = threading.Thread(target=_watch_user, args=(run, context), daemon=True)
    watcher.start()
    started = time.perf_counter()
    try:
        result = backend.run(
            _command(settings.python),
            timeout=settings.timeout_seconds,
            stdin=program,
            on_output=on_output,
            cancel=run.stop,
        )
    finally:
        run.ended.set()
        requests.put(None)
        dispatcher.join(5)
        reader.finish()
    seconds = time.perf_counter() - started
    if not result.ok:
        _clean_up(run)
    return _report(run, result, output, seconds)


def _received(run: _Run, message: str, requests: queue.Queue[str | None]) -> None:
    if message.startswith(FOLDER_FRAME):
        if run.folder is None:  # only the first: a script cannot move its channel
            run.folder = message.removeprefix(FOLDER_FRAME)
        return
    requests.put(message)


def _watch_user(run: _Run, context: ToolContext) -> None:
    """The user's stop ends the script (its running call stops with the turn)."""
    while not run.ended.is_set():
        if context.cancel.wait(0.05):
            run.stop_script("the user stopped it")
            return


def _serve(run: _Run, requests: queue.Queue[str | None], report: Callable[[str], None]) -> None:
    """Answer the script's calls, in order, until it ends."""
    while True:
        ident = requests.get()
        if ident is None or run.ended.is_set():
            return
        try:
            reply = _answer(run, ident, report)
            if reply is None or run.ended.is_set():  # nobody waits for the answer now
                return
            data = json.dumps(reply).encode("ascii")  # ASCII: escapes survive any text
            run.backend.write_file(f"{run.folder}/result-{ident}.json", data)
        except Exception as exc:  # noqa: BLE001 - a failure of the channel ends the run
            run.channel_error = one_line(f"{type(exc).__name__}: {exc}", 300)
            how = "write to" if isinstance(exc, CommandRefused) else "reach"
            run.stop_script(
                f"Hermes could not {how} the script's folder {run.folder} ({run.channel_error})"
            )
            return


def _refused(text: str, run: _Run) -> dict[str, Any]:
    run.refused += 1
    return {"refused": True, "content": text}


def _answer(run: _Run, ident: str, report: Callable[[str], None]) -> dict[str, Any] | None:
    raw = run.backend.read_file(f"{run.folder}/call-{ident}.json")
    try:
        request = json.loads(raw)
        tool, arguments = request["tool"], request["arguments"]
    except (ValueError, KeyError, TypeError):
        return _refused(f"call {ident} was not readable; call tools through hermes_tools", run)
    if not isinstance(tool, str) or not isinstance(arguments, dict):
        return _refused("call_tool(name, **arguments): name is a string", run)
    if tool not in run.allowed:
        offered = ", ".join(run.allowed) or "none"
        return _refused(
            f"{tool!r} is not a tool a script may call here; it may call: {offered}", run
        )
    limit = run.settings.max_tool_calls
    if run.calls >= limit:
        return _refused(
            f"this script has made its {limit} tool calls (code.max_tool_calls = {limit}); "
            "no more are run",
            run,
        )
    if run.ended.is_set():  # the script was stopped while this call waited its turn
        return None
    run.calls += 1
    report(f"{tool} (call {run.calls})")
    future = run.caller.start(tool, arguments)
    while True:
        try:
            result = future.result(_ANSWER_TICK)
            break
        except concurrent.futures.TimeoutError:
            if run.ended.is_set():
                future.cancel()  # the kernel stops it and records its effect as unknown
                return None
        except Exception as exc:  # noqa: BLE001 - this call failed, not the script
            text = one_line(f"{type(exc).__name__}: {exc}", 300)
            return {"refused": False, "content": f"error: Hermes could not run it ({text})"}
    return {"refused": False, "content": result.content, "disposition": result.disposition}


def _clean_up(run: _Run) -> None:
    """A killed script could not remove its folder (nor its last call files)."""
    if run.folder is None:
        return
    folder = shlex.quote(run.folder)
    command = f"rm -f -- {folder}/call-* {folder}/result-*; rmdir -- {folder}"
    try:
        run.backend.run(command, cwd="/", timeout=30)
    except Exception as exc:  # noqa: BLE001 - a leftover folder in /tmp is not worth failing for
        log.debug("could not remove %s: %s", run.folder, exc)


def _tail(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else "…" + text[-limit:]


def _summary(run: _Run, seconds: float) -> str:
    calls = f"{run.calls} tool call{'' if run.calls == 1 else 's'}"
    refused = f", {run.refused} refused" if run.refused else ""
    return f"[execute_code: {calls}{refused}, {seconds:.1f} s]"


def _report(run: _Run, result: CommandResult, output: KeptOutput, seconds: float) -> str:
    text = output.text().rstrip("\n")
    if output.cut:
        text += (
            f"\n[… {output.cut:,} more characters of output cut: stdout is kept up to "
            f"code.max_output_chars ({run.settings.max_output_chars:,}); print less, or "
            "write it to a file]"
        )
    if result.ok and run.stop_reason is None:
        return f"{text or '(no output)'}\n{_summary(run, seconds)}"
    if run.stop_reason is not None:
        why = f"the script did not finish: {run.stop_reason}"
    elif result.timed_out:
        why = (
            f"the script ran past code.timeout_seconds ({run.settings.timeout_seconds:g} s) "
            "and was stopped"
        )
    elif _missing_interpreter(result, run.settings.python):
        why = (
            f"{run.settings.python} is not installed in this terminal backend "
            f"({run.backend.name}): install Python 3 there, or set code.python"
        )
    else:
        why = f"the script failed (exit status {result.exit_code})"
    parts = [f"{why}; {_summary(run, seconds)[1:-1]}"]
    if text:
        parts.append("stdout (its end):\n" + _tail(text, 1_000))
    stderr = _tail(result.stderr, STDERR_TAIL)
    if stderr:
        parts.append("stderr (its end):\n" + stderr)
    raise ScriptFailed("\n".join(parts))


def _missing_interpreter(result: CommandResult, python: str) -> bool:
    missing = "not found" in result.stderr or "No such file" in result.stderr
    return (
        result.exit_code == 127 and missing and python.rsplit("/", maxsplit=1)[-1] in result.stderr
    )
