"""BlueBubbles' REST API (``/api/v1``), as the adapter uses it: every request carries the
server password (the ``password`` query parameter, the only way the server takes it; kept
out of httpx's request log lines), answers are ``{status, message, data}``, and errors are
``{status, message, error: {type, message}}`` (``errors.ts`` in the server's source)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_commons.redact import HiddenInHttpLogs

if TYPE_CHECKING:
    import httpx

__all__ = ["Server", "ServerGarbled", "ServerRefused"]

SEND_SECONDS = 150.0
"""A send waits on the Mac until Messages has stored it: up to two minutes, with an
AppleScript retry (the server's own wait)."""
UPLOAD_SECONDS = 1200.0
"""An attachment's send waits up to twenty minutes there."""


class ServerRefused(Exception):
    """The server answered an error: its status, what it said, and the code of a message it
    could not send (``data.error``, non-zero: Messages refused it)."""

    def __init__(self, status: int, message: str, code: int = 0) -> None:
        super().__init__(f"BlueBubbles answered {status}: {message}")
        self.status, self.code = status, code


class ServerGarbled(Exception):
    """A success whose body is not the server's (a proxy's page, a truncated answer)."""


class Server:
    def __init__(self, url: str, password: str) -> None:
        self.url, self._password = url, password
        self._http: httpx.AsyncClient | None = None
        self._hide: HiddenInHttpLogs | None = None

    def client(self) -> httpx.AsyncClient:
        if self._http is None:
            import httpx

            self._hide = HiddenInHttpLogs(self._password).attach()
            self._http = httpx.AsyncClient(
                base_url=self.url,
                params={"password": self._password},
                timeout=httpx.Timeout(30.0, connect=10.0),
            )
        return self._http

    async def call(self, method: str, path: str, **fields: Any) -> Any:
        """The ``data`` of the server's answer. :class:`ServerRefused` for an error,
        :class:`ServerGarbled` for an answer that is not the server's."""
        answer = await self.client().request(method, f"/api/v1{path}", **fields)
        try:
            body = answer.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            if answer.is_success:
                raise ServerGarbled(f"BlueBubbles' answer to {path} is not its JSON")
            raise ServerRefused(answer.status_code, answer.reason_phrase)
        if not answer.is_success:
            error = body.get("error")
            said = str(body.get("message") or answer.reason_phrase)
            if isinstance(error, dict):  # error.message; error.error in older servers
                detail = error.get("message") or error.get("error")
                said = f"{said}: {detail}" if detail else said
            data = body.get("data")
            code = data.get("error") if isinstance(data, dict) else 0
            raise ServerRefused(answer.status_code, said, code if isinstance(code, int) else 0)
        if "data" not in body and "status" not in body:
            raise ServerGarbled(f"BlueBubbles' answer to {path} is not its JSON")
        return body.get("data")

    async def rows(
        self, where: list[tuple[str, int]], limit: int, sort: str = "ASC"
    ) -> tuple[list[dict[str, Any]], bool]:
        """Messages (with their chat and attachments) whose row number holds to ``where``
        (``(">", 12)``: after row 12), the first ``limit`` by date; whether the answer may
        have been cut by the limit. The server's limit counts the rows of its SQL join, a
        message once per attachment (and per chat), so fewer messages than ``limit`` can
        still be a cut answer."""
        clauses = [
            {"statement": f"message.ROWID {op} :row{n}", "args": {f"row{n}": row}}
            for n, (op, row) in enumerate(where)
        ]
        found = await self.call(
            "POST",
            "/message/query",
            json={"with": ["chat", "attachment"], "where": clauses, "sort": sort, "limit": limit},
        )
        if not isinstance(found, list):
            raise ServerGarbled("BlueBubbles' message query did not answer a list")
        records = [r for r in found if isinstance(r, dict)]
        used = sum(_joined(r) for r in records) + len(found) - len(records)
        kept = [r for r in records if isinstance(r.get("originalROWID"), int)]
        return kept, used >= limit

    async def aclose(self) -> None:
        http, self._http = self._http, None
        if http is not None:
            await http.aclose()
        if self._hide is not None:
            self._hide.detach()
            self._hide = None


def _joined(record: dict[str, Any]) -> int:
    """The rows of the server's join one message takes: one per attachment and chat."""
    attachments = record.get("attachments")
    chats = record.get("chats")
    return max(1, len(attachments) if isinstance(attachments, list) else 0) * max(
        1, len(chats) if isinstance(chats, list) else 0
    )
