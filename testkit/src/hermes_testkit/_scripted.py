"""What every scripted model server shares: queued replies, recorded requests, and a
threaded HTTP server on loopback. Each wire protocol (OpenAI chat-completions, Anthropic
Messages) subclasses :class:`ScriptedServer` and renders the same :class:`Reply` objects in
its own format, so one script drives any provider under test."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import urlsplit

__all__ = ["RecordedRequest", "Reply", "ScriptedServer", "StreamEvent"]

StreamEvent = tuple[str | None, Any]
"""One server-sent event: its ``event:`` name (None for none) and its data (dicts as JSON)."""


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
    thinking: str = ""  # reasoning streamed before the text (Anthropic thinking blocks)

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
        """An HTTP error; without ``body``, the server's own error shape is used."""
        after = None if retry_after is None else str(retry_after)
        return cls("error", status=status, body=body, retry_after=after)

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
        """Stream these events as they are, then the protocol's trailer (OpenAI's [DONE]):
        for servers that bend the protocol. An event is its data (dicts become JSON) or an
        ``(event_name, data)`` pair."""
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
        owner = self.server.owner
        if self.path.rstrip("/").endswith("/models"):
            self.send_json(200, owner.models_listing())
        else:
            self.send_json(404, owner.error_body(404, f"no route {self.path}"))

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        headers = {name.lower(): value for name, value in self.headers.items()}
        owner._record(RecordedRequest("POST", self.path, headers, body))
        served = owner.serve_other(self.path, headers, raw)
        if served is not None:  # a route beside the model's own (a sign-in's token endpoint)
            self.send_json(*served)
            return
        if not owner.answers(self.path):
            self.send_json(404, owner.error_body(404, f"no route {self.path}"))
            return
        denied = owner.authentication_problem("POST", self.path, headers, raw)
        if denied is not None:  # as the service says a bad signature or key, before all else
            status, problem = denied
            self.send_json(status, owner.error_body(status, problem))
            return
        refused = owner.refusal(body) if owner.check_protocol else None
        if refused is not None:  # what the real service refuses, before any reply is used
            status, problem = refused
            self.send_json(status, owner.error_body(status, problem))
            return
        if owner.context_window is not None and isinstance(body, dict):
            tokens = owner.prompt_tokens(body)
            if tokens > owner.context_window:  # refused as the real service does
                self.send_json(400, owner.overflow_error(tokens))
                return
        reply = owner._next_reply(body)
        if reply is None:
            self.send_json(500, owner.error_body(500, "the scripted server has no reply queued"))
            return
        if reply.delay_seconds:
            time.sleep(reply.delay_seconds)
        request = body if isinstance(body, dict) else {}
        stream = owner.wants_stream(self.path, request)
        if reply.kind == "hang":
            owner._stopping.wait(reply.hang_seconds)
            self.close_connection = True
        elif reply.kind == "error":
            message = f"scripted error {reply.status}"
            extra = dict(owner.error_headers(reply.status, reply.body or message))
            if reply.retry_after:
                extra["Retry-After"] = reply.retry_after
            body_text = reply.body or json.dumps(owner.error_body(reply.status, message))
            self.send_raw(reply.status, body_text.encode(), extra)
        elif reply.kind == "raw":
            self.send_raw(reply.status, reply.body.encode(), {}, reply.content_type)
        elif reply.kind == "events":
            self.stream_start()
            for event in reply.events:
                named = event if isinstance(event, tuple) else (None, event)
                self.send_event(named)
            self.stream_end(owner.stream_trailer())
        elif reply.kind == "malformed":
            if stream:
                self.stream_start()
                self.send_chunk(owner.malformed_event())
                self.send_chunk(b"")
            else:
                self.send_raw(200, b"{this is not json", {})
        elif stream:
            self._stream(reply, owner.render_stream(reply, request))
        elif reply.kind == "cut":
            whole = json.dumps(owner.render_complete(reply, request)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(whole)))
            self.end_headers()
            self.wfile.write(whole[: len(whole) // 2])  # then close: a body cut short
            self.close_connection = True
        else:
            self.send_json(200, owner.render_complete(reply, request))

    # --- responses ------------------------------------------------------------------------

    def send_raw(
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

    def send_json(self, status: int, payload: Any) -> None:
        said = json.dumps(payload)
        extra = self.server.owner.error_headers(status, said) if status >= 400 else {}
        self.send_raw(status, said.encode(), extra)

    def stream_start(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", self.server.owner.stream_content_type)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def send_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def send_event(self, event: StreamEvent) -> None:
        self.send_chunk(self.server.owner.encode_event(event))

    def stream_end(self, trailer: StreamEvent | None) -> None:
        if trailer is not None:
            self.send_event(trailer)
        self.send_chunk(b"")

    def _stream(self, reply: Reply, events: list[StreamEvent]) -> None:
        owner = self.server.owner
        self.stream_start()
        for number, event in enumerate(events):
            if reply.kind == "cut" and number >= reply.cut_after:
                # Half a chunk, then close: the client sees a broken body, not a clean end.
                partial = owner.partial_event()
                self.wfile.write(f"{2 * len(partial):x}\r\n".encode() + partial)
                self.wfile.flush()
                self.close_connection = True
                return
            self.send_event(event)
            if reply.chunk_delay_seconds and owner._stopping.wait(reply.chunk_delay_seconds):
                return
        if reply.kind == "cut":  # fewer events than cut_after: still end without a clean close
            self.close_connection = True
            return
        self.stream_end(owner.stream_trailer())


def pieces(text: str, size: int) -> list[str]:
    """``text`` in chunks of ``size`` characters, as a streaming server sends it."""
    return [text[i : i + size] for i in range(0, len(text), size)]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # many clients connecting at once: none dropped and retried
    owner: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that give up (timeouts, cancelled turns) reset the connection: expected.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ScriptedServer:
    """A scripted model server; a context manager listening on 127.0.0.1 (an ephemeral port
    by default). Subclasses say how replies look on their wire."""

    route = "/chat/completions"
    """The POST path suffix that answers with queued replies."""
    base_path = "/v1"

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
            name=f"scripted-{type(self).__name__}",
        )

    # --- the wire format (subclasses) --------------------------------------------------------

    def render_complete(self, reply: Reply, request: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def render_stream(self, reply: Reply, request: Mapping[str, Any]) -> list[StreamEvent]:
        raise NotImplementedError

    stream_content_type = "text/event-stream"

    def encode_event(self, event: StreamEvent) -> bytes:
        """One event as it goes on the wire: a server-sent event unless the protocol
        frames its stream otherwise (Bedrock's binary event stream)."""
        name, data = event
        text = data if isinstance(data, str) else json.dumps(data)
        prefix = f"event: {name}\n" if name else ""
        return f"{prefix}data: {text}\n\n".encode()

    def partial_event(self) -> bytes:
        """The start of an event, where a dropped connection cuts a stream."""
        return b'data: {"partial'

    def malformed_event(self) -> bytes:
        """A first streamed event a client cannot decode."""
        return b"data: {this is not json\n\n"

    def answers(self, path: str) -> bool:
        """Whether a POST to ``path`` (its query string included) gets a queued reply."""
        return urlsplit(path).path.rstrip("/").endswith(self.route)

    def serve_other(
        self, path: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, Any] | None:
        """``(status, JSON)`` for a POST to a route beside the model's (a token endpoint),
        or None to go on: nothing else is served by default."""
        return None

    def wants_stream(self, path: str, body: Mapping[str, Any]) -> bool:
        """Whether the request asks for a streamed reply: its body's ``stream`` flag here;
        the path, where a protocol streams on a route of its own (Gemini, Bedrock)."""
        return bool(body.get("stream"))

    def authentication_problem(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, str] | None:
        """``(status, message)`` when the service would refuse the request's credentials
        (a signature that does not verify), or None: nothing is checked by default."""
        return None

    def stream_trailer(self) -> StreamEvent | None:
        """An event sent after every complete stream (OpenAI's ``[DONE]``)."""
        return None

    def error_body(self, status: int, message: str) -> Any:
        return {"error": {"message": message}}

    def error_headers(self, status: int, message: str) -> Mapping[str, str]:
        """Headers an error answer carries beside its body (AWS names the error's type
        in one)."""
        return {}

    check_protocol: bool = True
    """Refuse (400, as the real service does) a request that breaks the protocol's rules
    about tool calls and their results; set False to send whatever a test needs."""

    def protocol_problem(self, body: Any) -> str | None:
        """Why the real service would refuse this request body (400), or None."""
        return None

    def refusal(self, body: Any) -> tuple[int, str] | None:
        """``(status, message)`` of the real service's refusal of this body, or None: a
        :meth:`protocol_problem` is a 400; a server whose service refuses with other
        statuses says so here."""
        problem = self.protocol_problem(body)
        return None if problem is None else (400, problem)

    context_window: int | None = None
    """When set, a request the server counts above this many prompt tokens is refused with
    the protocol's context-length error (400), before any reply is used: a model with a
    small window, for tests of what a client does when a conversation outgrows it."""

    def prompt_tokens(self, body: Mapping[str, Any]) -> int:
        """The server's count of a request's prompt tokens: about four characters a token."""
        return max(1, len(json.dumps(body, ensure_ascii=False)) // 4)

    def overflow_error(self, tokens: int) -> Any:
        return self.error_body(
            400,
            f"the request has {tokens} tokens, over the model's context of {self.context_window}",
        )

    def models_listing(self) -> Any:
        return {"object": "list", "data": [{"id": "test-model", "object": "model"}]}

    # --- scripting ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.base_path}"

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    respond: Callable[[Any], Reply] | None = None
    """When set and nothing is queued: builds each reply from the request body."""

    def _next_reply(self, body: Any = None) -> Reply | None:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        return self.respond(body) if self.respond is not None else self._default

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()
