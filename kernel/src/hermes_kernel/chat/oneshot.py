"""``hermes chat -q TEXT``: one turn for scripts. Only the final reply goes to stdout (or a
JSON object with ``--json``); progress and errors go to stderr. Exit status: 0 when the
model answered, 1 on any error (one line, no traceback), 130 when interrupted."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hermes_kernel.chat.agent import ChatAgent, ChatOptions
from hermes_kernel.chat.format import Totals, argument_preview, result_preview, seconds
from hermes_kernel.chat.loop import Leaving, run_chat
from hermes_kernel.chat.questions import terminal_approver, terminal_ask
from hermes_kernel.engine.control import TurnControl
from hermes_kernel.engine.turn import TurnResult
from hermes_kernel.store.errors import LeaseHeldError, StoreError
from hermes_kernel.tooling.environment import approval_policy
from hermes_sdk import ToolCall, ToolResult

if TYPE_CHECKING:
    from hermes_kernel.cli.app import App


@dataclass
class _Progress:
    """Tool calls as one line each on stderr, and a record of them for ``--json``."""

    quiet: bool
    calls: list[dict[str, Any]] = field(default_factory=list)

    def tool_started(self, call: ToolCall) -> None:
        if not self.quiet:
            print(f"  > {call.tool} {argument_preview(call.arguments)}", file=sys.stderr)

    def tool_progress(self, call: ToolCall, text: str) -> None:
        if not self.quiet:
            print(f"    {call.tool}: {text}", file=sys.stderr)

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        self.calls.append(
            {
                "id": call.call_id,
                "name": call.tool,
                "arguments": dict(call.arguments),
                "ok": result.ok,
                "duration_s": round(result.duration_s, 3),
            }
        )
        if not self.quiet:
            status = "ok" if result.ok else "error"
            print(
                f"  < {call.tool} {status} in {seconds(result.duration_s)}: "
                f"{result_preview(result.content, 80)}",
                file=sys.stderr,
            )


def error_line(message: str) -> None:
    print(f"hermes: error: {message}", file=sys.stderr)


def run_oneshot(app: App, options: ChatOptions, query: str, as_json: bool) -> int:
    from hermes_kernel.providers.ladder import NoProvider

    progress = _Progress(quiet=False)
    # Someone at a terminal can approve a dangerous command; a script or a pipe cannot,
    # and then such commands are refused (unattended means deny).
    attended = sys.stdin.isatty() and sys.stderr.isatty()
    timeout = approval_policy(app.settings.raw).timeout_seconds
    try:
        agent = ChatAgent(
            app,
            options,
            progress,
            approver=terminal_approver(timeout) if attended else None,
            ask=terminal_ask(timeout) if attended else None,
        )
    except (NoProvider, KeyError, StoreError) as exc:
        error_line(exc.args[0] if isinstance(exc, KeyError) else str(exc))
        return 1
    for warning in agent.warnings:
        print(f"hermes: warning: {warning}", file=sys.stderr)
    if agent.setup.notice:
        print(f"hermes: {agent.setup.notice}", file=sys.stderr)
    return run_chat(_turn(agent, query, as_json, progress))


async def _turn(agent: ChatAgent, query: str, as_json: bool, progress: _Progress) -> int:
    control = TurnControl()
    hooks = agent.app.host.hooks

    def stop() -> None:
        control.stop()
        hooks.stop()  # a hook being waited for ends now; the turn saves and leaves

    leaving = Leaving(stop)
    leaving.install(asyncio.get_running_loop())
    before = Totals.of(agent.session)
    try:
        result = await agent.turn(
            query, control, on_notice=lambda text: print(f"hermes: {text}", file=sys.stderr)
        )
    except LeaseHeldError as exc:
        result = TurnResult("", "error", f"{exc} (is this session open in another hermes?)")
    except (StoreError, KeyError) as exc:  # the database failed, or the session is gone
        result = TurnResult("", "error", exc.args[0] if isinstance(exc, KeyError) else str(exc))
    finally:
        await agent.aclose("oneshot")
        leaving.remove()
    provider, model = agent.route
    code = {"done": 0, "stopped": 130, "interrupted": 130}.get(result.status, 1)
    if leaving.code is not None and code != 1:
        code = leaving.code  # 143 for SIGTERM: the caller learns what ended it
    if as_json:
        session = agent.session
        payload = {
            "reply": result.text,
            "status": result.status,
            "error": result.error,
            "session_id": session.id if session else None,
            "provider": provider,
            "model": model,
            "usage": (Totals.of(session) - before).as_json(),
            "tool_calls": progress.calls,
        }
        print(json.dumps(payload, ensure_ascii=False))
    elif result.text:
        print(result.text)
    if result.error:
        error_line(result.error)
    elif code in (130, 143):
        print("hermes: interrupted", file=sys.stderr)
    return code
