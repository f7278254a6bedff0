"""A scripted OpenAI Responses API server on loopback, over real HTTP.

The same :class:`Reply` objects as the chat-completions server, rendered as
``POST /v1/responses`` answers, following OpenAI's API reference and the official ``openai``
client's types: a ``response`` object whose ``output`` holds ``reasoning`` items (a summary
and, when asked for with ``include: ["reasoning.encrypted_content"]``, the opaque
``encrypted_content`` a stateless client sends back), a ``message`` item of ``output_text``
parts and ``function_call`` items (``call_id``, ``name``, ``arguments``); streamed, the typed
event sequence ``response.created``, ``response.in_progress``, ``response.output_item.added``
/ ``.done``, ``response.content_part.added`` / ``.done``, ``response.output_text.delta`` /
``.done``, ``response.function_call_arguments.delta`` / ``.done``,
``response.reasoning_summary_text.delta``, then ``response.completed`` (or
``response.incomplete`` for a reply cut by ``max_output_tokens``), each numbered by
``sequence_number``. Errors are OpenAI's ``{"error": {...}}``.

It refuses what the service refuses, in its words: a ``function_call_output`` whose
``call_id`` answers no ``function_call`` before it, a ``function_call`` left unanswered, a
reasoning item sent back by id without its ``encrypted_content`` when nothing is stored
(``store: false``: 404), ``temperature`` to a reasoning model, and ``max_output_tokens``
under 16. Usage counts cached input inside ``input_tokens``, as the service does.

    with ScriptedResponsesServer() as server:
        server.queue(Reply.tool_call("get_weather", {"city": "Oslo"}), Reply.say("Sunny."))
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import Any

from hermes_testkit._scripted import RecordedRequest, Reply, ScriptedServer, StreamEvent, pieces

__all__ = [
    "RecordedRequest",
    "Reply",
    "ScriptedResponsesServer",
    "function_output_problem",
    "request_problem",
]

_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}


def _counted(request: Mapping[str, Any]) -> int:
    """The server's count of a request's input tokens: about four characters a token."""
    text = json.dumps(
        [request.get("instructions"), request.get("input"), request.get("tools")],
        ensure_ascii=False,
    )
    return max(1, len(text) // 4)


def _usage(reply: Reply, request: Mapping[str, Any]) -> dict[str, Any]:
    given = dict(reply.usage)
    input_tokens = given.get("input_tokens", given.get("prompt_tokens", _counted(request)))
    output_tokens = given.get("output_tokens", given.get("completion_tokens", 5))
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": given.get("cached_tokens", 0)},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": given.get("reasoning_tokens", 0)},
        "total_tokens": input_tokens + output_tokens,
    }


def _encrypted(thinking: str) -> str:
    return f"enc-{len(thinking)}"  # opaque to clients; sent back, checked by tests


_REASONING_MODELS = re.compile(r"^(o\d|gpt-5(?!-chat)|codex)", re.IGNORECASE)


def request_problem(body: Any) -> tuple[int, str] | None:
    """What the service refuses about a request beyond tool results: (status, its words)."""
    if not isinstance(body, dict):
        return None
    model = str(body.get("model") or "")
    if "temperature" in body and _REASONING_MODELS.match(model):
        return 400, "Unsupported parameter: 'temperature' is not supported with this model."
    tokens = body.get("max_output_tokens")
    if isinstance(tokens, int) and tokens < 16:
        return 400, (
            "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= "
            f"16, but got {tokens} instead."
        )
    for item in body.get("input") or ():
        lost = (
            isinstance(item, dict)
            and item.get("type") == "reasoning"
            and item.get("id")
            and not item.get("encrypted_content")
            and body.get("store") is False
        )
        if lost:
            return 404, (
                f"Item with id '{item['id']}' not found. Items are not persisted when `store` "
                "is set to false. Try again with `store` set to true, or remove this item "
                "from your input."
            )
    problem = function_output_problem(body)
    return None if problem is None else (400, problem)


def function_output_problem(body: Any) -> str | None:
    """The Responses API's rules about tool results, in the words of OpenAI's errors."""
    items = body.get("input") if isinstance(body, dict) else None
    if not isinstance(items, list):
        return None
    called: set[str] = set()
    waiting: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "function_call":
            called.add(str(item.get("call_id")))
            waiting.append(str(item.get("call_id")))
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in called:
                return f"No tool call found for function call output with call_id {call_id}."
            if call_id in waiting:
                waiting.remove(call_id)
        elif (kind == "message" or "role" in item) and waiting:
            return f"No tool output found for function call {waiting[0]}."
    if waiting:
        return f"No tool output found for function call {waiting[0]}."
    return None


class ScriptedResponsesServer(ScriptedServer):
    """Answers ``POST /v1/responses`` in the Responses API format, streamed (SSE) or not."""

    route = "/responses"

    def error_body(self, status: int, message: str) -> Any:
        kinds = {401: "invalid_api_key", 429: "rate_limit_exceeded", 500: "server_error"}
        return {
            "error": {
                "message": message,
                "type": "invalid_request_error" if status < 500 else "server_error",
                "param": None,
                "code": kinds.get(status),
            }
        }

    def prompt_tokens(self, body: Mapping[str, Any]) -> int:
        return _counted(body)

    def overflow_error(self, tokens: int) -> Any:  # OpenAI's own words and code
        return {
            "error": {
                "message": "Your input exceeds the context window of this model. Please "
                f"adjust your input and try again. ({tokens} tokens > {self.context_window})",
                "type": "invalid_request_error",
                "param": "input",
                "code": "context_length_exceeded",
            }
        }

    def protocol_problem(self, body: Any) -> str | None:
        return function_output_problem(body)

    def refusal(self, body: Any) -> tuple[int, str] | None:
        return request_problem(body)

    # --- the response object -------------------------------------------------------------------

    def _items(self, reply: Reply, request: Mapping[str, Any]) -> list[dict[str, Any]]:
        include = request.get("include") or ()
        items: list[dict[str, Any]] = []
        if reply.thinking:
            reasoning: dict[str, Any] = {
                "type": "reasoning",
                "id": "rs_0",
                "summary": [{"type": "summary_text", "text": reply.thinking}],
            }
            if "reasoning.encrypted_content" in include:
                reasoning["encrypted_content"] = _encrypted(reply.thinking)
            items.append(reasoning)
        if reply.text:
            items.append(
                {
                    "type": "message",
                    "id": "msg_0",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
                }
            )
        for index, (name, arguments) in enumerate(reply.tool_calls):
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{index}",
                    "call_id": f"call_{index}",
                    "name": name,
                    "arguments": arguments,
                    "status": "completed",
                }
            )
        return items

    def _response(
        self, reply: Reply, request: Mapping[str, Any], status: str, output: list[Any]
    ) -> dict[str, Any]:
        incomplete = _INCOMPLETE.get(reply.finish_reason or "")
        finished = status != "in_progress"
        return {
            "id": "resp_scripted",
            "object": "response",
            "created_at": int(time.time()),
            "status": ("incomplete" if incomplete else "completed") if finished else status,
            "model": request.get("model", "test-model"),
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": request.get("tool_choice", "auto"),
            "tools": request.get("tools") or [],
            "incomplete_details": {"reason": incomplete} if incomplete and finished else None,
            "error": None,
            "usage": _usage(reply, request) if finished else None,
        }

    def render_complete(self, reply: Reply, request: Mapping[str, Any]) -> Any:
        return self._response(reply, request, "completed", self._items(reply, request))

    def render_stream(self, reply: Reply, request: Mapping[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []

        def event(kind: str, **data: Any) -> None:
            events.append((kind, {"type": kind, "sequence_number": len(events), **data}))

        event("response.created", response=self._response(reply, request, "in_progress", []))
        event("response.in_progress", response=self._response(reply, request, "in_progress", []))
        size = reply.chunk_size
        items = self._items(reply, request)
        for index, item in enumerate(items):
            kind, item_id = item["type"], item["id"]
            if kind == "reasoning":
                event(
                    "response.output_item.added", output_index=index, item={**item, "summary": []}
                )
                for part in pieces(reply.thinking, size):
                    event(
                        "response.reasoning_summary_text.delta",
                        item_id=item_id,
                        output_index=index,
                        summary_index=0,
                        delta=part,
                    )
            elif kind == "message":
                event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "status": "in_progress", "content": []},
                )
                empty = {"type": "output_text", "text": "", "annotations": []}
                event(
                    "response.content_part.added",
                    item_id=item_id,
                    output_index=index,
                    content_index=0,
                    part=empty,
                )
                for part in pieces(reply.text, size):
                    event(
                        "response.output_text.delta",
                        item_id=item_id,
                        output_index=index,
                        content_index=0,
                        delta=part,
                    )
                if reply.kind == "cut":
                    break
                event(
                    "response.output_text.done",
                    item_id=item_id,
                    output_index=index,
                    content_index=0,
                    text=reply.text,
                )
                event(
                    "response.content_part.done",
                    item_id=item_id,
                    output_index=index,
                    content_index=0,
                    part=item["content"][0],
                )
            else:
                event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "status": "in_progress", "arguments": ""},
                )
                for part in pieces(item["arguments"], size):
                    event(
                        "response.function_call_arguments.delta",
                        item_id=item_id,
                        output_index=index,
                        delta=part,
                    )
                event(
                    "response.function_call_arguments.done",
                    item_id=item_id,
                    output_index=index,
                    arguments=item["arguments"],
                )
            event("response.output_item.done", output_index=index, item=item)
        if reply.kind != "cut":
            final = self._response(reply, request, "completed", items)
            event(f"response.{final['status']}", response=final)
        return events
