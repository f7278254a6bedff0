"""A scripted OpenAI-compatible chat-completions server on loopback, over real HTTP.

Tests queue replies (text, tool calls, streamed or not, usage) and failures (an HTTP status
with Retry-After, a stream cut mid-way, malformed JSON, a hang); every request is recorded
for assertions. No model API is reachable from our machines, so this is how providers and the
turn engine are tested end to end.

    with ScriptedOpenAIServer() as server:
        server.queue(Reply.tool_call("echo", {"text": "hi"}), Reply.say("done"))
        ... point a provider at server.base_url ...
        assert server.requests[0].json["model"] == "test-model"

Manual runs: ``python -m hermes_sdk.testing.openai_server --port 8000 --text "hello"``
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

from hermes_sdk.testing._scripted import (
    RecordedRequest,
    Reply,
    ScriptedServer,
    StreamEvent,
    pieces,
)

__all__ = ["RecordedRequest", "Reply", "ScriptedOpenAIServer"]


def _usage(reply: Reply) -> dict[str, Any]:
    usage: dict[str, Any] = {"prompt_tokens": 10, "completion_tokens": 5, **reply.usage}
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
            "usage": _usage(reply),
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
                events.append((None, {**last, "choices": [], "usage": _usage(reply)}))
        return events


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
    args = parser.parse_args()
    server = ScriptedOpenAIServer(args.port, default=Reply.say(args.text))
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
