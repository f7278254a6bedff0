"""``hermes chat -q TEXT``: one turn for scripts. Only the final reply goes to stdout (or a
JSON object with ``--json``); progress and errors go to stderr. Exit status: 0 when the
model answered, 1 on any error (one line, no traceback), 130 when interrupted."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from typing import Any

import click

from hermes_commons.leaving import Leaving, run_until_done
from hermes_commons.text import Totals, argument_preview, result_preview, seconds
from hermes_plugin_chat.questions import terminal_answer
from hermes_plugin_chat.session import ChatOptions, ChatSession, TurnWatcher
from hermes_sdk.events import CommandContext
from hermes_sdk.runtime import (
    Question,
    Runtime,
    SessionBusy,
    SessionNotFound,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnEnded,
)


def error_line(message: str) -> None:
    print(f"hermes: error: {message}", file=sys.stderr)


def _started(event: ToolStarted) -> None:
    print(f"  > {event.tool} {argument_preview(event.arguments)}", file=sys.stderr)


def _progress(event: ToolProgress) -> None:
    print(f"    {event.tool}: {event.text}", file=sys.stderr)


def _finished(event: ToolFinished) -> None:
    status = "ok" if event.ok else "error"
    print(
        f"  < {event.tool} {status} in {seconds(event.duration_s)}: "
        f"{result_preview(event.content, 80)}",
        file=sys.stderr,
    )


def run_oneshot(context: CommandContext, options: ChatOptions, query: str, as_json: bool) -> int:
    if context.open_runtime is None:
        error_line("this Hermes offers commands no runtime")
        return 1
    return run_until_done(_main(context, options, query, as_json))


async def _main(context: CommandContext, options: ChatOptions, query: str, as_json: bool) -> int:
    assert context.open_runtime is not None  # checked by run_oneshot
    try:
        async with context.open_runtime() as runtime:
            return await _ask(runtime, options, query, as_json)
    except click.ClickException as exc:  # no model can be used
        error_line(exc.format_message())
        return 1


async def _ask(runtime: Runtime, options: ChatOptions, query: str, as_json: bool) -> int:
    try:
        chat = await ChatSession.open(runtime, options, os.getcwd())
    except (ValueError, SessionNotFound) as exc:
        error_line(str(exc))
        return 1
    for warning in [*runtime.warnings(), *chat.warnings]:
        print(f"hermes: warning: {warning}", file=sys.stderr)
    if chat.info.notice:
        print(f"hermes: {chat.info.notice}", file=sys.stderr)
    # Someone at a terminal can approve a dangerous command; a script or a pipe cannot,
    # and then such commands are refused (unattended means deny).
    attended = sys.stdin.isatty() and sys.stderr.isatty()
    watcher = TurnWatcher(
        on_notice=lambda text: print(f"hermes: {text}", file=sys.stderr),
        on_tool_started=_started,
        on_tool_progress=_progress,
        on_tool_finished=_finished,
        on_question=_ask_in_a_thread if attended else None,
    )

    def stop() -> None:
        chat.stop()
        runtime.stop_hooks()  # a hook being waited for ends now; the turn saves and leaves

    if options.references and "@" in query:  # a one-shot without any never loads them
        from hermes_plugin_chat.attach import attach_references

        def say(line: str) -> None:
            print(f"hermes: {line}", file=sys.stderr)

        query = await attach_references(runtime.home, runtime.config, query, say, say)
    leaving = Leaving(stop)
    leaving.install(asyncio.get_running_loop())
    before = Totals.of(chat.session)
    try:
        ended = await chat.run_turn(
            query, watcher, attended=attended, attachments=options.attachments
        )
    except (ValueError, SessionBusy, SessionNotFound) as exc:  # could not open or start
        error_line(str(exc))
        return 1
    finally:
        await chat.end("oneshot")
        leaving.remove()
    return _report(chat, ended, before, watcher, as_json, leaving.code)


def _ask_in_a_thread(question: Question) -> None:
    """The terminal is read in a thread of its own: the turn's events keep flowing."""
    threading.Thread(
        target=terminal_answer, args=(question,), name="hermes-question", daemon=True
    ).start()


def _report(
    chat: ChatSession,
    ended: TurnEnded,
    before: Totals,
    watcher: TurnWatcher,
    as_json: bool,
    signal_code: int | None,
) -> int:
    code = {"done": 0, "stopped": 130, "interrupted": 130}.get(ended.status, 1)
    if signal_code is not None and code != 1:
        code = signal_code  # 143 for SIGTERM: the caller learns what ended it
    if as_json:
        provider, model = chat.route
        session = chat.session
        payload: dict[str, Any] = {
            "reply": ended.reply,
            "status": ended.status,
            "error": ended.error,
            "session_id": session.session_id if session else ended.session_id,
            "provider": provider,
            "model": model,
            "usage": (Totals.of(session) - before).as_json(),
            "tool_calls": [
                {
                    "id": call.call_id,
                    "name": call.tool,
                    "arguments": dict(call.arguments),
                    "ok": call.ok,
                    "duration_s": round(call.duration_s, 3),
                    # Only for a call a tool made (a script's): the others stay as they were.
                    **({"parent": call.parent_call_id} if call.parent_call_id else {}),
                }
                for call in watcher.tool_calls
            ],
        }
        if ended.attachments:  # only when there are: the text-only object stays as it was
            payload["files"] = [item.as_dict() for item in ended.attachments]
        print(json.dumps(payload, ensure_ascii=False))
    else:
        if ended.reply:
            print(ended.reply)
        for item in ended.attachments:
            print(f"hermes: sent {item.label()} ({item.mime}): {item.path}", file=sys.stderr)
    if ended.error:
        error_line(ended.error)
    elif code in (130, 143):
        print("hermes: interrupted", file=sys.stderr)
    return code
