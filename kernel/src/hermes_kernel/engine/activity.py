"""What the agent did, one INFO line each, in HERMES_HOME/logs (agent.log, or a front-end's own):
a turn's start and end (status, duration), each model call (provider, model, tokens,
latency) and each tool call (name, duration, outcome). Nobody's words are written unless
``logging.content: true``; then they are cut short, and every log handler redacts secrets.
The lines go to the files only (the terminal shows them with ``-v``)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from hermes_commons.text import argument_preview, one_line
from hermes_kernel.config.defaults import LOGGING_CONTENT
from hermes_sdk.events import LLMCall, LLMResult, ToolCall, ToolResult

if TYPE_CHECKING:
    from hermes_kernel.engine.run import TurnResult

__all__ = ["ActivityLog"]

log = logging.getLogger("hermes.activity")

_CONTENT_CHARS = 300


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


class ActivityLog:
    def __init__(self, content: bool = LOGGING_CONTENT) -> None:
        self.content = content
        """Add what was said (``logging.content``)."""

    def turn_started(self, session_id: str, source: str, text: str) -> None:
        said = f": {one_line(text, _CONTENT_CHARS)!r}" if self.content else ""
        log.info("turn started: session %s (%s)%s", session_id, source, said)

    def turn_ended(self, session_id: str, result: TurnResult, seconds: float) -> None:
        error = f" ({one_line(result.error, 200)})" if result.error else ""
        said = (
            f": {one_line(result.text, _CONTENT_CHARS)!r}" if self.content and result.text else ""
        )
        log.info(
            "turn ended: session %s: %s in %s, %d model call(s), %d tool call(s)%s%s",
            session_id,
            result.status,
            _duration(seconds),
            result.iterations,
            result.tool_calls,
            error,
            said,
        )

    def model_call(self, call: LLMCall, result: LLMResult) -> None:
        if result.ok:
            outcome = (
                f"ok in {_duration(result.duration_s)}, {result.input_tokens:,} tokens in, "
                f"{result.output_tokens:,} out, {result.tool_call_count} tool call(s), "
                f"finish {result.finish_reason or '?'}"
            )
        else:
            outcome = (
                f"failed in {_duration(result.duration_s)}: {one_line(result.error or '?', 200)}"
            )
        log.info(
            "model call: session %s, %s / %s, %d messages: %s",
            call.session_id,
            call.provider,
            call.model,
            call.message_count,
            outcome,
        )

    def tool_call(self, call: ToolCall, result: ToolResult) -> None:
        inside = f" (inside {call.parent_call_id})" if call.parent_call_id else ""
        said = ""
        if self.content:
            said = (
                f": {argument_preview(call.arguments, 200)} -> "
                f"{one_line(result.content, _CONTENT_CHARS)!r}"
            )
        log.info(
            "tool call: session %s, %s %s in %s%s%s",
            call.session_id,
            call.tool,
            "ok" if result.ok else "failed",
            _duration(result.duration_s),
            inside,
            said,
        )
