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
serves that reply forever.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["RecordedRequest", "Reply", "ScriptedOpenAIServer"]


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build with the class methods."""

    kind: str  # text | error | cut | malformed | hang | events | raw
    text: str = ""
    tool_calls: tuple[tuple[str, str], ...] = ()  # (name, JSON arguments)
    finish_reason: str | None = None
    status: int = 200
    body: str = ""
    retry_after: str | None = None
    usage: Mapping[str, int] = field(default_factory=dict)
    chunk_size: int = 4  # characters per streamed text or argument chunk
    repeat_ids: bool = False  # repeat id and name in every tool-call chunk (llama.cpp does)
    cut_after: int = 0  # chunks sent before the connection is cut
    hang_seconds: float = 0.0
    delay_seconds: float = 0.0  # pause before answering (the model "thinking")
    chunk_delay_seconds: float = 0.0  # pause between streamed chunks (a slow model)
    events: tuple[Any, ...] = ()  # for "events": the data of each server-sent event
    content_type: str = "application/json"  # for "raw"

    @classmethod
    def say(cls, text: str, **options: Any) -> Reply:
        """A plain text answer."""
        return cls("text", text=text, finish_reason="stop", **options)

    @classmethod
    def tool_call(cls, name: str, arguments: Any, text: str = "", **options: Any) -> Reply:
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return cls(
            "text", text=text, tool_calls=((name, raw),), finish_reason="tool_calls", **options
        )

    @classmethod
    def calls(cls, calls: list[tuple[str, Any]], **options: Any) -> Reply:
        """Several tool calls in one answer."""
        raw = tuple((n, a if isinstance(a, str) else json.dumps(a)) for n, a in calls)
        return cls("text", tool_calls=raw, finish_reason="tool_calls", **options)

    @classmethod
    def error(cls, status: int, body: str = "", retry_after: float | str | None = None) -> Reply:
        message = body or json.dumps({"error": {"message": f"scripted error {status}"}})
        after = None if retry_after is None else str(retry_after)
        return cls("error", status=status, body=message, retry_after=after)

    @classmethod
    def cut(cls, text: str, after_chunks: int = 2) -> Reply:
        """Stream ``after_chunks`` chunks of ``text``, then drop the connection."""
        return cls("cut", text=text, cut_after=after_chunks)

    @classmethod
    def malformed(cls) -> Reply:
        """A 200 whose body (or first stream event) is not JSON."""
        return cls("malformed")

    @classmethod
    def stream_events(cls, *events: Any) -> Reply:
        """Stream these event payloads (dicts become JSON) as they are, then [DONE]: for
        servers that bend the protocol."""
        return cls("events", events=events)

    @classmethod
    def raw(cls, status: int, body: str, content_type: str = "application/json") -> Reply:
        """Answer with exactly this status, body and content type, whatever was asked."""
        return cls("raw", status=status, body=body, content_type=content_type)

    @classmethod
    def hang(cls, seconds: float) -> Reply:
        """Accept the request and say nothing for ``seconds``."""
        return cls("hang", hang_seconds=seconds)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]
    json: Any


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Streamed chunks are small writes: without TCP_NODELAY, Nagle's algorithm holds each
        # one back until the client's (delayed) ACK, adding ~40 ms per reply on loopback.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # tests read requests from ``server.requests``, not from stderr

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "test-model", "object": "model"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.server.owner._record(RecordedRequest("POST", self.path, headers, body))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        reply = self.server.owner._next_reply()
        if reply is None:
            self._json(500, {"error": {"message": "the scripted server has no reply queued"}})
            return
        if reply.delay_seconds:
            time.sleep(reply.delay_seconds)
        stream = bool(isinstance(body, dict) and body.get("stream"))
        model = body.get("model", "test-model") if isinstance(body, dict) else "test-model"
        if reply.kind == "hang":
            self.server.owner._stopping.wait(reply.hang_seconds)
            self.close_connection = True
            return
        if reply.kind == "error":
            headers = {"Retry-After": reply.retry_after} if reply.retry_after else {}
            self._raw(reply.status, reply.body.encode(), headers)
            return
        if reply.kind == "raw":
            self._raw(reply.status, reply.body.encode(), {}, reply.content_type)
            return
        if reply.kind == "events":
            self._stream_start()
            for event in reply.events:
                data = event if isinstance(event, str) else json.dumps(event)
                self._chunk(f"data: {data}\n\n".encode())
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")
            return
        if reply.kind == "malformed":
            if stream:
                self._stream_start()
                self._chunk(b"data: {this is not json\n\n")
                self._chunk(b"")
            else:
                self._raw(200, b"{this is not json", {})
            return
        if stream:
            self._stream(reply, model, bool(body.get("stream_options", {}).get("include_usage")))
        elif reply.kind == "cut":
            whole = json.dumps(_completion(reply, model)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(whole)))
            self.end_headers()
            self.wfile.write(whole[: len(whole) // 2])  # then close: a body cut short
            self.close_connection = True
        else:
            self._json(200, _completion(reply, model))

    # --- responses ------------------------------------------------------------------------

    def _raw(
        self,
        status: int,
        payload: bytes,
        headers: Mapping[str, str],
        content_type: str = "application/json",
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _json(self, status: int, payload: Any) -> None:
        self._raw(status, json.dumps(payload).encode(), {})

    def _stream_start(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _stream(self, reply: Reply, model: str, include_usage: bool) -> None:
        self._stream_start()
        events = _stream_events(reply, model, include_usage)
        for number, event in enumerate(events):
            if reply.kind == "cut" and number >= reply.cut_after:
                # Half a chunk, then close: the client sees a broken body, not a clean end.
                self.wfile.write(b'40\r\ndata: {"partial')
                self.wfile.flush()
                self.close_connection = True
                return
            self._chunk(f"data: {json.dumps(event)}\n\n".encode())
            if reply.chunk_delay_seconds and self.server.owner._stopping.wait(
                reply.chunk_delay_seconds
            ):
                return
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or []


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


def _completion(reply: Reply, model: str) -> dict[str, Any]:
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
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": _usage(reply),
    }


def _stream_events(reply: Reply, model: str, include_usage: bool) -> list[dict[str, Any]]:
    def event(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    events = [event({"role": "assistant", "content": ""})]
    events += [event({"content": piece}) for piece in _pieces(reply.text, reply.chunk_size)]
    for index, (name, arguments) in enumerate(reply.tool_calls):
        call_id = f"call_{index}"
        head = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        events.append(event({"tool_calls": [head]}))
        for piece in _pieces(arguments, reply.chunk_size):
            part: dict[str, Any] = {"index": index, "function": {"arguments": piece}}
            if reply.repeat_ids:
                part["id"], part["type"] = call_id, "function"
                part["function"]["name"] = name
            events.append(event({"tool_calls": [part]}))
    if reply.kind != "cut":
        events.append(event({}, reply.finish_reason))
        if include_usage:
            events.append({**event({}), "choices": [], "usage": _usage(reply)})
    return events


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedOpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that give up (timeouts, cancelled turns) reset the connection: expected.
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ScriptedOpenAIServer:
    """The server; a context manager that listens on 127.0.0.1 (an ephemeral port by default)."""

    def __init__(self, port: int = 0, default: Reply | None = None) -> None:
        self._replies: deque[Reply] = deque()
        self._default = default
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests: list[RecordedRequest] = []
        self._http = _Server(("127.0.0.1", port), _Handler)
        self._http.owner = self
        self._thread = threading.Thread(
            target=self._http.serve_forever,
            args=(0.05,),
            daemon=True,
            name="scripted-openai-server",
        )

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    def _next_reply(self) -> Reply | None:
        with self._lock:
            return self._replies.popleft() if self._replies else self._default

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def start(self) -> ScriptedOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a fixed chat-completions reply.")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--text", default="Hello from the scripted server.")
    args = parser.parse_args()
    server = ScriptedOpenAIServer(args.port, default=Reply.say(args.text)).start()
    print(f"serving on {server.base_url} (Ctrl+C to stop)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
