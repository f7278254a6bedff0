"""A scripted Anthropic Messages API server on loopback, over real HTTP.

The same :class:`Reply` objects as the OpenAI server, rendered as ``POST /v1/messages``
answers: content blocks (``thinking``, ``text``, ``tool_use``), and when streamed the event
sequence ``message_start``, ``content_block_start`` / ``_delta`` / ``_stop`` (text_delta,
thinking_delta plus signature_delta, input_json_delta), ``message_delta`` with the stop
reason and output usage, ``message_stop``, with ``ping`` events between. Errors use the
Anthropic shape ``{"type": "error", "error": {"type": ..., "message": ...}}``.

    with ScriptedAnthropicServer() as server:
        server.queue(Reply.tool_call("get_weather", {"city": "Oslo"}), Reply.say("Sunny."))
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hermes_testkit._scripted import RecordedRequest, Reply, ScriptedServer, StreamEvent, pieces
from hermes_testkit.image_checks import anthropic_image_problem

__all__ = ["RecordedRequest", "Reply", "ScriptedAnthropicServer", "anthropic_error"]

_STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def anthropic_error(status: int, message: str) -> str:
    """An error body as the Messages API sends it, for ``Reply.error(status, body)``."""
    kind = _ERROR_TYPES.get(status, "api_error")
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}})


def _counted(request: Mapping[str, Any]) -> int:
    """The server's count of a request's input tokens: about four characters a token."""
    text = json.dumps([request.get("system"), request.get("messages"), request.get("tools")])
    return max(1, len(text) // 4)


def _usage(reply: Reply, request: Mapping[str, Any]) -> dict[str, int]:
    given = dict(reply.usage)
    counted = _counted(request)
    return {
        "input_tokens": given.get("input_tokens", given.get("prompt_tokens", counted)),
        "output_tokens": given.get("output_tokens", given.get("completion_tokens", 5)),
        "cache_creation_input_tokens": given.get("cache_creation_input_tokens", 0),
        "cache_read_input_tokens": given.get("cache_read_input_tokens", 0),
    }


def _signature(thinking: str) -> str:
    return f"sig-{len(thinking)}"  # opaque to clients; echoed back, checked by tests


def _blocks_of(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def tool_result_problem(body: Any) -> str | None:
    """The Messages API's rules about tools, in the words of Anthropic's own errors: every
    ``tool_use`` of an assistant message is answered by a ``tool_result`` with its id in the
    next (user) message, and no ``tool_result`` answers a call that was not made."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return None  # only the tool rules are checked here
    called: list[str] = []
    for index, message in enumerate(messages):
        blocks = _blocks_of(message)
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        answered = [b.get("tool_use_id") for b in results]
        for number, result in enumerate(results):
            if not isinstance(result.get("tool_use_id"), str) or not result["tool_use_id"]:
                return f"messages.{index}.content.{number}.tool_use_id: Field required"
        unexpected = [str(a) for a in answered if a not in called]
        if unexpected:
            return (
                f"messages.{index}.content: unexpected `tool_use_id` found in `tool_result` "
                f"blocks: {', '.join(unexpected)}. Each `tool_result` block must have a "
                "corresponding `tool_use` block in the previous message."
            )
        missing = [c for c in called if c not in answered]
        if missing:
            return (
                f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
        called = [
            str(b.get("id")) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
    return None


class ScriptedAnthropicServer(ScriptedServer):
    """Answers ``POST /v1/messages`` in the Anthropic format, streamed (SSE) or not."""

    route = "/v1/messages"
    base_path = ""  # clients append /v1/messages to the base URL

    def error_body(self, status: int, message: str) -> Any:
        return json.loads(anthropic_error(status, message))

    def models_listing(self) -> Any:
        return {"data": [{"id": "test-model", "type": "model"}], "has_more": False}

    def prompt_tokens(self, body: Mapping[str, Any]) -> int:
        return _counted(body)

    def overflow_error(self, tokens: int) -> Any:  # Anthropic's own words
        limit = self.context_window
        return self.error_body(400, f"prompt is too long: {tokens} tokens > {limit} maximum")

    def protocol_problem(self, body: Any) -> str | None:
        return tool_result_problem(body) or anthropic_image_problem(body)

    def _blocks(self, reply: Reply) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if reply.thinking:
            signature = _signature(reply.thinking)
            blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": signature})
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for index, (name, arguments) in enumerate(reply.tool_calls):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{index}",
                    "name": name,
                    "input": json.loads(arguments or "{}"),
                }
            )
        return blocks

    def render_complete(self, reply: Reply, request: Mapping[str, Any]) -> Any:
        return {
            "id": "msg_scripted",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "test-model"),
            "content": self._blocks(reply),
            "stop_reason": _STOP_REASONS.get(reply.finish_reason or "stop", "end_turn"),
            "stop_sequence": None,
            "usage": _usage(reply, request),
        }

    def render_stream(self, reply: Reply, request: Mapping[str, Any]) -> list[StreamEvent]:
        usage = _usage(reply, request)
        start_usage = {**usage, "output_tokens": 1}
        message = {
            "id": "msg_scripted",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "test-model"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": start_usage,
        }
        events: list[StreamEvent] = [
            ("message_start", {"type": "message_start", "message": message}),
            ("ping", {"type": "ping"}),
        ]
        index = 0

        def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
            nonlocal index
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
            )
            for delta in deltas:
                events.append(
                    (
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                    )
                )
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1

        size = reply.chunk_size
        if reply.thinking:
            deltas = [
                {"type": "thinking_delta", "thinking": part}
                for part in pieces(reply.thinking, size)
            ]
            deltas.append({"type": "signature_delta", "signature": _signature(reply.thinking)})
            block({"type": "thinking", "thinking": ""}, deltas)
        if reply.text:
            text = [{"type": "text_delta", "text": part} for part in pieces(reply.text, size)]
            block({"type": "text", "text": ""}, text)
        for number, (name, arguments) in enumerate(reply.tool_calls):
            start = {"type": "tool_use", "id": f"toolu_{number}", "name": name, "input": {}}
            json_deltas = [
                {"type": "input_json_delta", "partial_json": part}
                for part in pieces(arguments, size)
            ]
            block(start, json_deltas)
        if reply.kind != "cut":
            stop = _STOP_REASONS.get(reply.finish_reason or "stop", "end_turn")
            delta = {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            }
            events.append(("message_delta", delta))
            events.append(("message_stop", {"type": "message_stop"}))
        return events
