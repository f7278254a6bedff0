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


@dataclass
class _Guest:
    """One plugin's callbacks, and what its hooks remember between calls."""

    plugin: str
    callbacks: Callbacks
    sessions: _Sessions = field(default_factory=_Sessions)

    def each(self, hook: str) -> list[Callable[..., Any]]:
        return self.callbacks.get(hook, [])

    def observe(self, hook: str, **kwargs: Any) -> list[Any]:
        return _observe(self.plugin, hook, self.each(hook), **kwargs)


def _tool_gate(guest: _Guest) -> Callable[..., Any]:
    def hermes_tool_gate(call: ToolCall) -> Gate | None:
        args = copy.deepcopy(dict(call.arguments))  # guards may rewrite it in place, deeply
        for callback in guest.each("pre_tool_call"):
            answer = _call(
                guest.plugin,
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
            action = answer.get("action") if isinstance(answer, Mapping) else None
            if action == "block":
                message = answer.get("message")
                return Gate.deny(str(message) if message else f"blocked by {guest.plugin}")
            if action == "approve":
                message = answer.get("message") or f"{guest.plugin} asks before {call.tool} runs"
                return Gate.ask(str(message), args if args != call.arguments else None)
        return Gate.allow(args) if args != call.arguments else None

    return hermes_tool_gate


def _tool_event(call: ToolCall) -> dict[str, Any]:
    """What every tool hook gets about the call."""
    return {
        "tool_name": call.tool,
        "args": dict(call.arguments),
        "task_id": call.session_id,
        "session_id": call.session_id,
        "tool_call_id": call.call_id,
        "turn_id": "",
        "api_request_id": "",
    }


def _post_tool_call(guest: _Guest) -> Callable[..., Any]:
    def hermes_post_tool_call(call: ToolCall, result: ToolResult) -> None:
        guest.observe(
            "post_tool_call",
            **_tool_event(call),
            result=result.content,
            duration_ms=int(result.duration_s * 1000),
            status="ok" if result.ok else "error",
            error_type=None if result.ok else "tool_error",
            error_message=None if result.ok else result.content,
            middleware_trace=[],
        )

    return hermes_post_tool_call


def _transform_tool_result(guest: _Guest) -> Callable[..., Any]:
    def hermes_transform_tool_result(call: ToolCall, result: str) -> str | None:
        answers = guest.observe(
            "transform_tool_result",
            **_tool_event(call),
            result=result,
            duration_ms=0,
            status="ok",
            error_type=None,
            error_message=None,
        )
        return next(iter(_texts(answers)), None)  # the first text wins, as in hermes-agent

    return hermes_transform_tool_result


def _transform_terminal_output(guest: _Guest) -> Callable[..., Any]:
    def hermes_transform_terminal_output(command: str, output: str) -> str | None:
        answers = guest.observe(
            "transform_terminal_output",
            command=command,
            output=output,
            returncode=None,
            task_id="",
            env_type="local",
        )
        return next(iter(_texts(answers)), None)

    return hermes_transform_terminal_output


def _transform_reply(guest: _Guest) -> Callable[..., Any]:
    def hermes_transform_reply(session: SessionInfo, text: str) -> str | None:
        guest.sessions.seen(session)
        answers = guest.observe(
            "transform_llm_output",
            response_text=text,
            session_id=session.session_id,
            model=session.model or "",
            platform=session.source,
        )
        return next((answer for answer in _texts(answers) if answer), None)

    return hermes_transform_reply


def _turn_context(guest: _Guest) -> Callable[..., Any]:
    def hermes_turn_context(session: SessionInfo, text: str) -> str | None:
        sessions = guest.sessions
        sessions.seen(session)
        count = sessions.turns.get(session.session_id, 0)
        sessions.turns[session.session_id] = count + 1
        answers = guest.observe(
            "pre_llm_call",
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
        pieces = [
            answer["context"] if isinstance(answer, Mapping) else answer
            for answer in answers
            if isinstance(answer, str)
            or (isinstance(answer, Mapping) and isinstance(answer.get("context"), str))
        ]
        return "\n\n".join(piece for piece in pieces if piece.strip()) or None

    return hermes_turn_context


def _session_start(guest: _Guest) -> Callable[..., Any]:
    def hermes_on_session_start(session: SessionInfo) -> None:
        guest.sessions.seen(session)
        guest.observe(
            "on_session_start",
            session_id=session.session_id,
            model=session.model or "",
            platform=session.source,
        )

    return hermes_on_session_start


def _session_end(guest: _Guest) -> Callable[..., Any]:
    def hermes_on_session_end(session: SessionInfo, reason: str) -> None:
        common = {"session_id": session.session_id, "platform": session.source}
        guest.observe("on_session_finalize", **common, reason=reason)
        if reason in ("new", "reset"):
            guest.observe("on_session_reset", **common, reason="new_session")
        guest.sessions.known.pop(session.session_id, None)
        guest.sessions.turns.pop(session.session_id, None)

    return hermes_on_session_end


def _turn_end(guest: _Guest) -> Callable[..., Any]:
    def hermes_on_turn_end(turn: TurnInfo) -> None:
        model = guest.sessions.model(turn.session_id)
        platform = guest.sessions.platform(turn.session_id)
        common = {"session_id": turn.session_id, "task_id": turn.session_id, "turn_id": ""}
        if turn.status == "done":
            guest.observe(
                "post_llm_call",
                **common,
                user_message=turn.user_text,
                assistant_response=turn.reply,
                conversation_history=[],
                model=model,
                platform=platform,
            )
        guest.observe(
            "on_session_end",
            **common,
            completed=turn.status == "done",
            interrupted=turn.status in ("interrupted", "stopped"),
            model=model,
            platform=platform,
        )

    return hermes_on_turn_end


def _api_request(guest: _Guest) -> Callable[..., Any]:
    def hermes_pre_llm_call(call: LLMCall) -> None:
        guest.observe(
            "pre_api_request",
            **_request(call, guest.sessions),
            message_count=call.message_count,
            tool_count=call.tool_count,
            started_at=time.time(),
            middleware_trace=[],
        )

    return hermes_pre_llm_call


def _api_response(guest: _Guest) -> Callable[..., Any]:
    def hermes_post_llm_call(call: LLMCall, result: LLMResult) -> None:
        ended = time.time()
        common = {
            **_request(call, guest.sessions),
            "api_duration": result.duration_s,
            "started_at": ended - result.duration_s,
            "ended_at": ended,
        }
        if not result.ok:
            guest.observe(
                "api_request_error",
                **common,
                status_code=None,
                retry_count=call.attempt - 1,
                retryable=result.error_kind in ("rate_limit", "timeout", "server"),
                reason=result.error_kind or "error",
                error={"type": result.error_kind or "error", "message": result.error or ""},
            )
            return
        usage = usage_of(result)
        guest.observe(
            "post_api_request",
            **common,
            finish_reason=result.finish_reason or "",
            message_count=call.message_count,
            response_model=call.model,
            usage=usage,
            response={"model": call.model, "finish_reason": result.finish_reason, "usage": usage},
            assistant_message=None,
            assistant_content_chars=0,
            assistant_tool_call_count=result.tool_call_count,
        )

    return hermes_post_llm_call


_SESSION_HOOKS = (
    "on_session_start",
    "pre_llm_call",
    "transform_llm_output",
    "on_session_end",
    "post_llm_call",
    "pre_api_request",
    "post_api_request",
    "api_request_error",
)
"""hermes-agent hooks that get the session's model and platform, which Hermes tells at a
session's start (so the plugin's own ``on_session_start`` hook is made for them too)."""

BUILDERS: tuple[tuple[tuple[str, ...], Callable[[_Guest], Callable[..., Any]]], ...] = (
    (("pre_tool_call",), _tool_gate),
    (("post_tool_call",), _post_tool_call),
    (("transform_tool_result",), _transform_tool_result),
    (("transform_terminal_output",), _transform_terminal_output),
    (("transform_llm_output",), _transform_reply),
    (("pre_llm_call",), _turn_context),
    (_SESSION_HOOKS, _session_start),
    (("on_session_finalize", "on_session_reset"), _session_end),
    (("on_session_end", "post_llm_call"), _turn_end),
    (("pre_api_request",), _api_request),
    (("post_api_request", "api_request_error"), _api_response),
)
"""Each Hermes hook implementation, and the hermes-agent hooks that call for it."""


def hook_functions(plugin: str, callbacks: Callbacks) -> list[Callable[..., Any]]:
    """The Hermes hook implementations that call ``callbacks`` (by hermes-agent hook name),
    only for the hooks the plugin registered: a plugin with no guard is no gate."""
    guest = _Guest(plugin, callbacks)
    return [
        hookimpl(build(guest))
        for needs, build in BUILDERS
        if any(callbacks.get(hook) for hook in needs)
    ]


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
