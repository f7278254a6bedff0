"""hermes-agent's hooks, called from Hermes's: the arguments each one gets there, and what
its answer does here.

- ``pre_tool_call`` from ``hermes_tool_gate`` (every tool): ``block`` denies, ``approve``
  asks the user, arguments changed in place run instead.
- ``post_tool_call`` from ``hermes_post_tool_call``.
- ``transform_tool_result``, ``transform_terminal_output`` (before truncation and
  redaction) and ``transform_llm_output`` from the matching ``hermes_transform_*``: the
  first text answer replaces the text.
- ``pre_llm_call`` from ``hermes_turn_context`` (once per turn): ``{"context": ...}`` or
  text, added to this turn's user message only.
- ``on_session_end`` (every turn, as there) and ``post_llm_call`` (a finished turn) from
  ``hermes_on_turn_end``.
- ``pre_api_request``, ``post_api_request`` (with hermes-agent's usage summary) and
  ``api_request_error`` from ``hermes_pre_llm_call`` / ``hermes_post_llm_call``.
- ``on_session_start`` from ``hermes_on_session_start``; ``on_session_finalize`` and
  ``on_session_reset`` from ``hermes_on_session_end``.

Each callback is called with keywords only, as hermes-agent calls it, ``telemetry_schema_version``
included. A callback that raises is logged and skipped, except a ``pre_tool_call``: a gate
that fails denies on Hermes. Hooks with no equivalent yet (subagents, the gateway's dispatch,
approvals, kanban, ``pre_verify``) are reported in one line at load and never called.
"""

from __future__ import annotations

import copy
import inspect
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_sdk import LLMCall, LLMResult, SessionInfo, ToolCall, ToolResult, TurnInfo, hookimpl
from hermes_sdk.gates import Gate

__all__ = ["MAPPED_HOOKS", "VALID_HOOKS", "hook_functions"]

log = logging.getLogger("hermes.plugins.hermes-agent")

VALID_HOOKS: frozenset[str] = frozenset(
    {
        "pre_tool_call",
        "post_tool_call",
        "transform_terminal_output",
        "transform_tool_result",
        "transform_llm_output",
        "pre_llm_call",
        "post_llm_call",
        "pre_verify",
        "pre_api_request",
        "post_api_request",
        "api_request_error",
        "on_session_start",
        "on_session_end",
        "on_session_finalize",
        "on_session_reset",
        "subagent_start",
        "subagent_stop",
        "pre_gateway_dispatch",
        "pre_approval_request",
        "post_approval_response",
        "kanban_task_claimed",
        "kanban_task_completed",
        "kanban_task_blocked",
    }
)
"""The hooks hermes-agent 0.19 defines."""

MAPPED_HOOKS: frozenset[str] = frozenset(
    {
        "pre_tool_call",
        "post_tool_call",
        "transform_tool_result",
        "transform_terminal_output",
        "transform_llm_output",
        "pre_llm_call",
        "post_llm_call",
        "pre_api_request",
        "post_api_request",
        "api_request_error",
        "on_session_start",
        "on_session_end",
        "on_session_finalize",
        "on_session_reset",
    }
)
"""The ones Hermes calls (see above); the others have no moment here yet."""

TELEMETRY = {"telemetry_schema_version": "hermes.observer.v1"}

Callbacks = dict[str, list[Callable[..., Any]]]


@dataclass
class _Sessions:
    """What hermes-agent passes that a Hermes hook's payload does not carry: the session's
    model and platform, and whether a turn is its first."""

    known: dict[str, SessionInfo] = field(default_factory=dict)
    turns: dict[str, int] = field(default_factory=dict)

    def seen(self, session: SessionInfo) -> None:
        self.known[session.session_id] = session

    def model(self, session_id: str) -> str:
        found = self.known.get(session_id)
        return (found.model or "") if found is not None else ""

    def platform(self, session_id: str) -> str:
        found = self.known.get(session_id)
        return found.source if found is not None else "cli"


class NotAnAnswer(TypeError):
    """A hook returned a coroutine: hermes-agent never awaits one, so it said nothing. For a
    guard, saying nothing must not let the call through."""


def _call(plugin: str, hook: str, callback: Callable[..., Any], **kwargs: Any) -> Any:
    """One callback, as hermes-agent calls it; a coroutine it returns is awaited there
    never, so here neither (closed, with one line; a guard's raises, so the call is
    refused)."""
    answer = callback(**kwargs, **TELEMETRY)
    if inspect.iscoroutine(answer):
        answer.close()
        if hook == "pre_tool_call":
            raise NotAnAnswer(f"{hook} returned a coroutine (hermes-agent hooks are synchronous)")
        log.warning("%s: %s returned a coroutine; hermes-agent hooks are synchronous", plugin, hook)
        return None
    return answer


def _observe(
    plugin: str, hook: str, callbacks: list[Callable[..., Any]], **kwargs: Any
) -> list[Any]:
    """Each callback's answer; one that raises is logged and skipped, as hermes-agent does."""
    answers = []
    for callback in callbacks:
        try:
            answers.append(_call(plugin, hook, callback, **kwargs))
        except Exception as exc:  # noqa: BLE001 - one plugin's observer must not stop a turn
            log.warning("%s: %s failed: %s: %s", plugin, hook, type(exc).__name__, exc)
    return answers


def _texts(answers: list[Any]) -> list[str]:
    return [answer for answer in answers if isinstance(answer, str)]


def _gate(plugin: str, callbacks: list[Callable[..., Any]]) -> Callable[..., Any]:
    def hermes_tool_gate(call: ToolCall) -> Gate | None:
        args = copy.deepcopy(dict(call.arguments))  # guards may rewrite it in place, deeply
        for callback in callbacks:
            answer = _call(
                plugin,
                "pre_tool_call",
                callback,
                tool_name=call.tool,
                args=args,
                task_id=call.session_id,
                session_id=call.session_id,
                tool_call_id=call.call_id,
                turn_id="",
                api_request_id="",
                middleware_trace=[],
            )
            if isinstance(answer, Mapping) and answer.get("action") == "block":
                message = answer.get("message")
                return Gate.deny(str(message) if message else f"blocked by {plugin}")
            if isinstance(answer, Mapping) and answer.get("action") == "approve":
                message = answer.get("message") or f"{plugin} asks before {call.tool} runs"
                return Gate.ask(str(message), args if args != call.arguments else None)
        return Gate.allow(args) if args != call.arguments else None

    return hermes_tool_gate


def hook_functions(plugin: str, callbacks: Callbacks) -> list[Callable[..., Any]]:
    """The Hermes hook implementations that call ``callbacks`` (by hermes-agent hook name),
    only for the hooks the plugin registered: a plugin with no guard is no gate."""
    sessions = _Sessions()
    made: list[Callable[..., Any]] = []

    def has(*hooks: str) -> bool:
        return any(callbacks.get(hook) for hook in hooks)

    def each(hook: str) -> list[Callable[..., Any]]:
        return callbacks.get(hook, [])

    if has("pre_tool_call"):
        made.append(_gate(plugin, each("pre_tool_call")))

    if has("post_tool_call"):

        def hermes_post_tool_call(call: ToolCall, result: ToolResult) -> None:
            _observe(
                plugin,
                "post_tool_call",
                each("post_tool_call"),
                tool_name=call.tool,
                args=dict(call.arguments),
                result=result.content,
                task_id=call.session_id,
                session_id=call.session_id,
                tool_call_id=call.call_id,
                turn_id="",
                api_request_id="",
                duration_ms=int(result.duration_s * 1000),
                status="ok" if result.ok else "error",
                error_type=None if result.ok else "tool_error",
                error_message=None if result.ok else result.content,
                middleware_trace=[],
            )

        made.append(hermes_post_tool_call)

    if has("transform_tool_result"):

        def hermes_transform_tool_result(call: ToolCall, result: str) -> str | None:
            text = result
            for answer in _texts(
                _observe(
                    plugin,
                    "transform_tool_result",
                    each("transform_tool_result"),
                    tool_name=call.tool,
                    args=dict(call.arguments),
                    result=result,
                    task_id=call.session_id,
                    session_id=call.session_id,
                    tool_call_id=call.call_id,
                    turn_id="",
                    api_request_id="",
                    duration_ms=0,
                    status="ok",
                    error_type=None,
                    error_message=None,
                )
            ):
                return answer  # the first text wins, as in hermes-agent
            return text if text != result else None

        made.append(hermes_transform_tool_result)

    if has("transform_terminal_output"):

        def hermes_transform_terminal_output(command: str, output: str) -> str | None:
            answers = _texts(
                _observe(
                    plugin,
                    "transform_terminal_output",
                    each("transform_terminal_output"),
                    command=command,
                    output=output,
                    returncode=None,
                    task_id="",
                    env_type="local",
                )
            )
            return answers[0] if answers else None

        made.append(hermes_transform_terminal_output)

    if has("transform_llm_output"):

        def hermes_transform_reply(session: SessionInfo, text: str) -> str | None:
            sessions.seen(session)
            answers = _observe(
                plugin,
                "transform_llm_output",
                each("transform_llm_output"),
                response_text=text,
                session_id=session.session_id,
                model=session.model or "",
                platform=session.source,
            )
            return next((answer for answer in _texts(answers) if answer), None)

        made.append(hermes_transform_reply)

    if has("pre_llm_call"):

        def hermes_turn_context(session: SessionInfo, text: str) -> str | None:
            sessions.seen(session)
            count = sessions.turns.get(session.session_id, 0)
            sessions.turns[session.session_id] = count + 1
            answers = _observe(
                plugin,
                "pre_llm_call",
                each("pre_llm_call"),
                session_id=session.session_id,
                task_id=session.session_id,
                turn_id="",
                user_message=text,
                conversation_history=[],
                is_first_turn=count == 0,
                model=session.model or "",
                platform=session.source,
                sender_id=session.user_scope or "",
                cwd=session.cwd,
            )
            pieces = []
            for answer in answers:
                if isinstance(answer, Mapping) and isinstance(answer.get("context"), str):
                    pieces.append(answer["context"])
                elif isinstance(answer, str):
                    pieces.append(answer)
            joined = "\n\n".join(piece for piece in pieces if piece.strip())
            return joined or None

        made.append(hermes_turn_context)

    if has("on_session_start", "pre_llm_call", "transform_llm_output", "on_session_end") or has(
        "post_llm_call", "post_api_request", "pre_api_request", "api_request_error"
    ):

        def hermes_on_session_start(session: SessionInfo) -> None:
            sessions.seen(session)
            _observe(
                plugin,
                "on_session_start",
                each("on_session_start"),
                session_id=session.session_id,
                model=session.model or "",
                platform=session.source,
            )

        made.append(hermes_on_session_start)

    if has("on_session_finalize", "on_session_reset"):

        def hermes_on_session_end(session: SessionInfo, reason: str) -> None:
            common = {"session_id": session.session_id, "platform": session.source}
            _observe(
                plugin, "on_session_finalize", each("on_session_finalize"), **common, reason=reason
            )
            if reason in ("new", "reset"):
                _observe(
                    plugin,
                    "on_session_reset",
                    each("on_session_reset"),
                    **common,
                    reason="new_session",
                )
            sessions.known.pop(session.session_id, None)
            sessions.turns.pop(session.session_id, None)

        made.append(hermes_on_session_end)

    if has("on_session_end", "post_llm_call"):

        def hermes_on_turn_end(turn: TurnInfo) -> None:
            model = sessions.model(turn.session_id)
            platform = sessions.platform(turn.session_id)
            if turn.status == "done":
                _observe(
                    plugin,
                    "post_llm_call",
                    each("post_llm_call"),
                    session_id=turn.session_id,
                    task_id=turn.session_id,
                    turn_id="",
                    user_message=turn.user_text,
                    assistant_response=turn.reply,
                    conversation_history=[],
                    model=model,
                    platform=platform,
                )
            _observe(
                plugin,
                "on_session_end",
                each("on_session_end"),
                session_id=turn.session_id,
                task_id=turn.session_id,
                turn_id="",
                completed=turn.status == "done",
                interrupted=turn.status in ("interrupted", "stopped"),
                model=model,
                platform=platform,
            )

        made.append(hermes_on_turn_end)

    if has("pre_api_request"):

        def hermes_pre_llm_call(call: LLMCall) -> None:
            _observe(
                plugin,
                "pre_api_request",
                each("pre_api_request"),
                **_request(call, sessions),
                message_count=call.message_count,
                tool_count=call.tool_count,
                started_at=time.time(),
                middleware_trace=[],
            )

        made.append(hermes_pre_llm_call)

    if has("post_api_request", "api_request_error"):

        def hermes_post_llm_call(call: LLMCall, result: LLMResult) -> None:
            ended = time.time()
            timing = {
                "api_duration": result.duration_s,
                "started_at": ended - result.duration_s,
                "ended_at": ended,
            }
            if result.ok:
                _observe(
                    plugin,
                    "post_api_request",
                    each("post_api_request"),
                    **_request(call, sessions),
                    **timing,
                    finish_reason=result.finish_reason or "",
                    message_count=call.message_count,
                    response_model=call.model,
                    usage=usage_of(result),
                    response={
                        "model": call.model,
                        "finish_reason": result.finish_reason,
                        "usage": usage_of(result),
                    },
                    assistant_message=None,
                    assistant_content_chars=0,
                    assistant_tool_call_count=result.tool_call_count,
                )
            else:
                _observe(
                    plugin,
                    "api_request_error",
                    each("api_request_error"),
                    **_request(call, sessions),
                    **timing,
                    status_code=None,
                    retry_count=call.attempt - 1,
                    retryable=result.error_kind in ("rate_limit", "timeout", "server"),
                    reason=result.error_kind or "error",
                    error={"type": result.error_kind or "error", "message": result.error or ""},
                )

        made.append(hermes_post_llm_call)

    return [hookimpl(function) for function in made]


def _request(call: LLMCall, sessions: _Sessions) -> dict[str, Any]:
    """The arguments every API-request hook gets."""
    return {
        "task_id": call.session_id,
        "turn_id": "",
        "api_request_id": call.request_id,
        "session_id": call.session_id,
        "platform": sessions.platform(call.session_id),
        "model": call.model,
        "provider": call.provider,
        "base_url": "",
        "api_mode": "",
        "api_call_count": call.attempt,
    }


def usage_of(result: LLMResult) -> dict[str, int] | None:
    """hermes-agent's usage summary: ``input_tokens`` without the cached ones,
    ``prompt_tokens`` with them; None when the response carried no usage."""
    if not (result.input_tokens or result.output_tokens or result.cache_read_tokens):
        return None
    prompt = result.input_tokens + result.cache_read_tokens + result.cache_write_tokens
    return {
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "cache_read_tokens": result.cache_read_tokens,
        "cache_write_tokens": result.cache_write_tokens,
        "reasoning_tokens": result.reasoning_tokens,
        "request_count": 1,
        "prompt_tokens": prompt,
        "total_tokens": prompt + result.output_tokens,
    }


def result_text(value: Any) -> str:
    """A tool handler's answer as the text the model reads (hermes-agent's contract: text,
    usually JSON; anything else is said to be a contract error there and here)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and value.get("_multimodal"):
        return json.dumps(value.get("content"), ensure_ascii=False, default=str)
    return json.dumps(
        {
            "error": f"Tool handler returned unsupported result type: {type(value).__name__}",
            "error_type": "tool_result_contract",
        }
    )
