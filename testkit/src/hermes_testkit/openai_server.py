"""A scripted OpenAI-compatible chat-completions server on loopback, over real HTTP.

Tests queue replies (text, tool calls, streamed or not, usage) and failures (an HTTP status
with Retry-After, a stream cut mid-way, malformed JSON, a hang); every request is recorded
for assertions. No model API is reachable from our machines, so this is how providers and the
turn engine are tested end to end.

    with ScriptedOpenAIServer() as server:
        server.queue(Reply.tool_call("echo", {"text": "hi"}), Reply.say("done"))
        ... point a provider at server.base_url ...
        assert server.requests[0].json["model"] == "test-model"

Manual runs: ``python -m hermes_testkit.openai_server --port 8000 --text "hello"``
serves that reply forever; add ``--tool NAME --arguments JSON`` to have the "model" call
that tool on every user message, then answer with the text and the tool's result.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from hermes_testkit._scripted import (
    RecordedRequest,
    Reply,
    ScriptedServer,
    StreamEvent,
    pieces,
)
from hermes_testkit.image_checks import openai_image_problem

__all__ = ["RecordedRequest", "Reply", "ScriptedOpenAIServer", "tool_message_problem"]


def prompt_tokens(request: Mapping[str, Any]) -> int:
    """What the server's "tokenizer" counts for a request when a reply names no usage:
    about four characters of its messages and tools a token, as real servers roughly do,
    so a client that sizes its context by reported usage sees numbers that grow with it."""
    text = json.dumps([request.get("messages"), request.get("tools")], ensure_ascii=False)
    return max(1, len(text) // 4)


def _usage(reply: Reply, request: Mapping[str, Any]) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens(request),
        "completion_tokens": 5,
        **reply.usage,
    }
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    details = {k: usage.pop(k) for k in ("cached_tokens",) if k in usage}
    reasoning = {k: usage.pop(k) for k in ("reasoning_tokens",) if k in usage}
    if details:
        usage["prompt_tokens_details"] = details
    if reasoning:
        usage["completion_tokens_details"] = reasoning
    return usage


class ScriptedOpenAIServer(ScriptedServer):
    """Answers ``POST /v1/chat/completions`` in the OpenAI format, streamed (SSE) or not."""

    route = "/chat/completions"

    def stream_trailer(self) -> StreamEvent:
        return (None, "[DONE]")

    def protocol_problem(self, body: Any) -> str | None:
        return tool_message_problem(body) or openai_image_problem(body)

    def prompt_tokens(self, body: Mapping[str, Any]) -> int:
        return prompt_tokens(body)

    def overflow_error(self, tokens: int) -> Any:
        return {  # OpenAI's own words and code
            "error": {
                "message": f"This model's maximum context length is {self.context_window} "
                f"tokens. However, your messages resulted in {tokens} tokens. Please reduce "
                "the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        }

    def render_complete(self, reply: Reply, request: Mapping[str, Any]) -> Any:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                for i, (n, a) in enumerate(reply.tool_calls)
            ]
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "test-model"),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
            "usage": _usage(reply, request),
        }

    def render_stream(self, reply: Reply, request: Mapping[str, Any]) -> list[StreamEvent]:
        model = request.get("model", "test-model")
        options = request.get("stream_options")
        include_usage = isinstance(options, dict) and bool(options.get("include_usage"))

        def event(delta: dict[str, Any], finish: str | None = None) -> StreamEvent:
            return (
                None,
                {
                    "id": "chatcmpl-scripted",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                },
            )

        events = [event({"role": "assistant", "content": ""})]
        events += [event({"content": piece}) for piece in pieces(reply.text, reply.chunk_size)]
        for index, (name, arguments) in enumerate(reply.tool_calls):
            call_id = f"call_{index}"
            head = {
                "index": index,
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }
            events.append(event({"tool_calls": [head]}))
            for piece in pieces(arguments, reply.chunk_size):
                part: dict[str, Any] = {"index": index, "function": {"arguments": piece}}
                if reply.repeat_ids:
                    part["id"], part["type"] = call_id, "function"
                    part["function"]["name"] = name
                events.append(event({"tool_calls": [part]}))
        if reply.kind != "cut":
            events.append(event({}, reply.finish_reason))
            if include_usage:
                _, last = event({})
                events.append((None, {**last, "choices": [], "usage": _usage(reply, request)}))
        return events


def tool_message_problem(body: Any) -> str | None:
    """The chat-completions rules about tool calls, in the words of OpenAI's own errors: each
    tool message answers, by ``tool_call_id``, a call of the assistant message before it,
    and every call is answered before the conversation goes on."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return None  # only the tool rules are checked here
    open_calls: list[str] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            return f"Invalid type for 'messages[{index}]': expected an object."
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                return f"Missing required parameter: 'messages[{index}].tool_call_id'."
            if call_id not in open_calls:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    f"preceding message with 'tool_calls' (messages[{index}].tool_call_id "
                    f"{call_id!r})."
                )
            open_calls.remove(call_id)
            continue
        if open_calls:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(open_calls)}"
            )
        for number, call in enumerate(message.get("tool_calls") or []):
            where = f"messages[{index}].tool_calls[{number}]"
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"]:
                return f"Missing required parameter: '{where}.id'."
            if not isinstance(function, dict) or not function.get("name"):
                return f"Missing required parameter: '{where}.function.name'."
            if not isinstance(function.get("arguments"), str):
                return f"Invalid type for '{where}.function.arguments': expected a string."
            open_calls.append(call["id"])
    return None


def _tool_then_text(tool: str, arguments: Any, text: str) -> Callable[[Any], Reply]:
    """Reply to a user's message with a call to ``tool``; to its result with ``text`` and it."""

    def respond(body: Any) -> Reply:
        messages = body.get("messages", []) if isinstance(body, dict) else []
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":
            return Reply.say(f"{text} (the tool said: {last.get('content')})")
        return Reply.tool_call(tool, arguments)

    return respond


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a fixed chat-completions reply.")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--text", default="Hello from the scripted server.")
    parser.add_argument("--tool", help="first call this tool, then answer with --text")
    parser.add_argument("--arguments", default="{}", help="the tool call's arguments (JSON)")
    parser.add_argument(
        "--delay", type=float, default=0.0, help="seconds before each answer (a model's latency)"
    )
    args = parser.parse_args()
    server = ScriptedOpenAIServer(args.port, default=Reply.say(args.text, delay_seconds=args.delay))
    if args.tool:
        server.respond = _tool_then_text(args.tool, json.loads(args.arguments), args.text)
    server.start()
    print(f"serving on {server.base_url} (Ctrl+C to stop)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
