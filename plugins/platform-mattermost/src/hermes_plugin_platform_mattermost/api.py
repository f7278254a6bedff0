"""Mattermost's REST API v4 over aiohttp, with its errors made exceptions.

There is no maintained Python client: mattermostdriver's last release is from January 2022
(its websocket's TLS is broken on Python 3.10 and newer), and the generated
mattermostautodriver promises no compatibility from one release to the next. The plugin
needs a dozen endpoints and one websocket, so it speaks them with aiohttp, which the
gateway's HTTP listener already brings."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import aiohttp

from hermes_commons.platform_files import read_capped

__all__ = ["ApiError", "MattermostApi"]

REQUEST_SECONDS = 30.0
UPLOAD_SECONDS = 300.0


class ApiError(Exception):
    """The server answered with an error: its HTTP status, Mattermost's error id
    (``api.post.create_post.root_id.app_error``) and its message."""

    def __init__(self, status: int, error_id: str, message: str, retry_after: float | None) -> None:
        super().__init__(f"{status} {error_id or 'error'}: {message}".strip())
        self.status = status
        self.error_id = error_id
        self.message = message
        self.retry_after = retry_after


class MattermostApi:
    def __init__(self, url: str, token: str) -> None:
        self.base = f"{url}/api/v4"
        self._headers = {"Authorization": f"Bearer {token}"}
        self._session: aiohttp.ClientSession | None = None

    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=60),
            )
        return self._session

    def websocket_url(self) -> str:
        return "ws" + self.base[len("http") :] + "/websocket"

    async def call(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        form: aiohttp.FormData | None = None,
        seconds: float = REQUEST_SECONDS,
    ) -> Any:
        """The JSON answer of ``METHOD /api/v4PATH``; :class:`ApiError` for an error."""
        async with self.session().request(
            method,
            self.base + path,
            json=body if form is None else None,
            data=form,
            params=params,
            timeout=aiohttp.ClientTimeout(total=seconds),
        ) as response:
            raw = await response.read()
            if response.status >= 400:
                raise _error(response.status, raw, response.headers.get("Retry-After"))
            if not raw:
                return None
            return json.loads(raw)

    async def download(self, file_id: str, limit: int) -> bytes:
        """A file's bytes, refused past ``limit`` before more is read."""
        async with self.session().get(
            f"{self.base}/files/{file_id}", timeout=aiohttp.ClientTimeout(total=UPLOAD_SECONDS)
        ) as response:
            if response.status >= 400:
                raise _error(response.status, await response.read(), None)
            return await read_capped(response.content.iter_chunked(65536), limit)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _error(status: int, raw: bytes, retry_after: str | None) -> ApiError:
    """Mattermost's AppError JSON, or the plain text a rate limit answers with."""
    error_id, message = "", raw.decode("utf-8", errors="replace").strip()[:300]
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        error_id = str(parsed.get("id") or "")
        message = str(parsed.get("message") or message)
    wait: float | None = None
    if retry_after:
        try:
            wait = float(retry_after)
        except ValueError:
            wait = None
    return ApiError(status, error_id, message, wait)
