"""What a runtime's turn tells its front-end besides text: the engine's tool events, to the
turn of their session, and the turn's usage (the session's totals before and after)."""

from __future__ import annotations

from hermes_kernel.runtime.agent import ToolEvents
from hermes_kernel.runtime.questions import TurnQuestions
from hermes_kernel.store.sessions import Session
from hermes_sdk import ToolCall, ToolResult
from hermes_sdk.runtime import ToolFinished, ToolProgress, ToolStarted, TurnUsage

__all__ = ["TurnToolEvents", "turn_usage"]


def turn_usage(before: Session | None, after: Session | None) -> TurnUsage:
    if before is None or after is None:
        return TurnUsage()
    unpriced = after.unpriced_calls > before.unpriced_calls
    return TurnUsage(
        input_tokens=after.input_tokens - before.input_tokens,
        output_tokens=after.output_tokens - before.output_tokens,
        estimated_cost_usd=None
        if unpriced
        else round(after.estimated_cost_usd - before.estimated_cost_usd, 8),
    )


class TurnToolEvents:
    """The engine's tool events, to the front-end turn of their session; events of other
    sessions go on to ``before``."""

    def __init__(self, questions: TurnQuestions, before: ToolEvents | None = None) -> None:
        self._turns = questions.turns
        self._before = before

    def tool_started(self, call: ToolCall) -> None:
        turn = self._turns.get(call.session_id)
        if turn is not None:
            turn.emit(
                ToolStarted(
                    call_id=call.call_id,
                    tool=call.tool,
                    arguments=call.arguments,
                    parent_call_id=call.parent_call_id,
                )
            )
        elif self._before is not None:
            self._before.tool_started(call)

    def tool_progress(self, call: ToolCall, text: str) -> None:
        turn = self._turns.get(call.session_id)
        if turn is not None:
            turn.emit(ToolProgress(call_id=call.call_id, tool=call.tool, text=text))
        elif self._before is not None:
            self._before.tool_progress(call, text)

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        turn = self._turns.get(call.session_id)
        if turn is None:
            if self._before is not None:
                self._before.tool_finished(call, result)
        else:
            turn.emit(
                ToolFinished(
                    call_id=call.call_id,
                    tool=call.tool,
                    ok=result.ok,
                    content=result.content,
                    duration_s=result.duration_s,
                    arguments=call.arguments,
                    parent_call_id=call.parent_call_id,
                )
            )
