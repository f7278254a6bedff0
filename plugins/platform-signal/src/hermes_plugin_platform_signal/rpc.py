"""signal-cli's JSON-RPC over HTTP (``POST /api/v1/rpc``): one call, its result, or its error
in one line. signal-cli answers 200 even for a JSON-RPC error; its codes: -1 a user error
(an unregistered recipient), -3 I/O, -4 an untrusted identity, -5 rate limited (with each
recipient's ``retryAfterSeconds``), and JSON-RPC's own (-32601 no such method, -32602
a wrong parameter: "Specified account does not exist")."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = ["RATE_LIMITED", "RpcClient", "RpcError"]

RATE_LIMITED = -5
NO_ACCOUNT = -32602


@dataclass
class RpcError(Exception):
    code: int
    message: str
    data: Any = None

    def __str__(self) -> str:
        return f"signal-cli: {self.message} ({self.code})"

    @property
    def retry_after(self) -> float | None:
        """The longest wait a rate-limited send names, if it does."""
        results = ((self.data or {}).get("response") or {}).get("results") or []
        waits = [r.get("retryAfterSeconds") for r in results if isinstance(r, dict)]
        known = [float(w) for w in waits if isinstance(w, (int, float))]
        return max(known) if known else None


class RpcClient:
    def __init__(self, base_url: str, http: httpx.AsyncClient) -> None:
        self.url = f"{base_url}/api/v1/rpc"
        self._http = http
        self._ids = itertools.count(1)

    async def call(self, method: str, timeout: float | None = None, **params: Any) -> Any:
        """``timeout``: for a call that uploads (a send with attachments)."""
        request = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        if timeout is not None:
            answer = await self._http.post(self.url, json=request, timeout=timeout)
        else:
            answer = await self._http.post(self.url, json=request)
        answer.raise_for_status()
        body = answer.json()
        error = body.get("error")
        if error:
            raise RpcError(int(error.get("code", 0)), str(error.get("message")), error.get("data"))
        return body.get("result")
