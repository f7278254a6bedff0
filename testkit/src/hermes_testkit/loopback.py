"""The HTTP side of a test peer (a fake service a plugin's tests talk to): a threaded server
on 127.0.0.1 at a free port, whose GETs and POSTs go to the subclass, and which starts and
stops as a context manager::

    class FakeAcme(LoopbackHTTP):
        def _get(self, handler):   # a BaseHTTPRequestHandler: answer through it
            ...

    with FakeAcme() as acme:
        client = AcmeClient(base_url=acme.url)

Subclasses extend ``_on_start`` / ``_on_stop`` for threads of their own (a webhook sender).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = ["LoopbackHTTP"]


class LoopbackHTTP:
    http_protocol = "HTTP/1.0"
    """``HTTP/1.1`` for a peer that streams (server-sent events)."""

    def __init__(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = owner.http_protocol

            def log_message(self, *_args: Any) -> None:
                pass  # requests may carry tokens

            def do_GET(self) -> None:
                owner._get(self)

            def do_POST(self) -> None:
                owner._post(self)

            def do_DELETE(self) -> None:
                owner._delete(self)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @staticmethod
    def reply(
        handler: BaseHTTPRequestHandler,
        status: int,
        body: Any = None,
        *,
        raw: bytes | None = None,
        kind: str = "application/json",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Answer a request: ``body`` as JSON, or ``raw`` bytes of type ``kind``. A client
        that went away meanwhile (an adapter stopped mid-request) is no error."""
        data = raw if raw is not None else json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        with contextlib.suppress(OSError):
            handler.wfile.write(data)

    def _get(self, handler: BaseHTTPRequestHandler) -> None:
        handler.send_error(404)

    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        handler.send_error(404)

    def _delete(self, handler: BaseHTTPRequestHandler) -> None:
        handler.send_error(404)

    def _on_start(self) -> None:
        """Start what the peer runs beside its HTTP side."""

    def _on_stop(self) -> None:
        """Stop it (called before the HTTP side stops)."""

    def start(self) -> Self:
        threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True).start()
        self._on_start()
        return self

    def stop(self) -> None:
        self._on_stop()
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()
