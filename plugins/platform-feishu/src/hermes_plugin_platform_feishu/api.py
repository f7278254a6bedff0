"""Feishu's open platform API as the app: the tenant access token (cached, fetched again
before it expires or when the API says it is no longer valid), JSON calls whose answer is
``{code, msg, data}``, file uploads and capped downloads.

Calls go through aiohttp on the gateway's loop: lark-oapi's REST client is synchronous
(requests), and its async variant opens a client per call and still fetches tokens
synchronously on the caller's loop. The SDK carries the events (:mod:`.events`)."""

from __future__ import annotations

from typing import Any

import aiohttp

from hermes_commons.app_api import CachedToken, LazySession, read_json
from hermes_commons.platform_files import read_capped
from hermes_plugin_platform_feishu.settings import FeishuSettings
from hermes_sdk.platform import NotSent

__all__ = ["CredentialsRefused", "FeishuApi", "FeishuError"]

TOKEN_PATH = "/open-apis/auth/v3/tenant_access_token/internal"
TOKEN_MARGIN_SECONDS = 300.0
STALE_TOKEN = frozenset({99991661, 99991663, 99991664, 99991665})
"""The token is missing, invalid or expired (rotated in the console): fetched again once."""
RATE_LIMITED = frozenset({99991400, 230020, 11232})
"""Too many requests: the app's, the chat's, the tenant's."""
BAD_CREDENTIALS = frozenset({10003, 10014, 99991543})
"""The token endpoint's "invalid app_id" / "invalid app_secret"."""


class FeishuError(Exception):
    """The API answered with a non-zero code (or a non-JSON error page)."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(f"{code} {message}".strip() + f" (HTTP {status})")
        self.status = status
        self.code = code

    def not_sent(self) -> NotSent:
        """Tried again: a rate limit, a server error; given up: what the same message will
        always get (no such chat, the bot not in it, content refused)."""
        if self.code in RATE_LIMITED or self.status in (429,) or self.status >= 500:
            return NotSent(f"Feishu did not take the message: {self}")
        return NotSent(f"Feishu refused the message: {self}", permanent=True)


class CredentialsRefused(Exception):
    """The app id or secret is wrong: only the user can fix it."""


class FeishuApi:
    def __init__(self, settings: FeishuSettings) -> None:
        self.settings = settings
        self.tokens = CachedToken(self._fetch_token, margin=TOKEN_MARGIN_SECONDS)
        self._http = LazySession()

    async def token(self) -> str:
        return await self.tokens.get()

    async def _fetch_token(self) -> tuple[str, float]:
        body = {"app_id": self.settings.app_id, "app_secret": self.settings.app_secret}
        url = self.settings.base_url + TOKEN_PATH
        async with self._http().post(url, json=body) as response:
            status, answer = response.status, await _json_of(response)
        code = int(answer.get("code", -1))
        if code in BAD_CREDENTIALS:
            raise CredentialsRefused(f"{code} {answer.get('msg', '')}".strip())
        token = answer.get("tenant_access_token")
        if code != 0 or not isinstance(token, str) or not token:
            raise FeishuError(status, code, str(answer.get("msg") or "no token given"))
        return token, float(answer.get("expire") or 7200)

    def forget(self, token: str) -> None:
        self.tokens.forget(token)

    async def call(
        self,
        method: str,
        path: str,
        *,
        body: dict[str, Any] | None = None,
        params: dict[str, str] | None = None,
        form: aiohttp.FormData | None = None,
    ) -> dict[str, Any]:
        """The answer of ``method path`` (its whole JSON); :class:`FeishuError` for a
        non-zero code. A token the API no longer takes is fetched again once."""
        for attempt in (1, 2):
            token = await self.token()
            headers = {"Authorization": f"Bearer {token}"}
            url = self.settings.base_url + path
            async with self._http().request(
                method, url, json=body, params=params, data=form, headers=headers
            ) as response:
                status, answer = response.status, await _json_of(response)
            code = int(answer.get("code", -1))
            if code == 0 and status < 400:
                return answer
            if code in STALE_TOKEN and attempt == 1 and form is None:
                self.forget(token)
                continue
            if code in STALE_TOKEN:
                self.forget(token)
            raise FeishuError(status, code, str(answer.get("msg") or ""))
        raise AssertionError("unreachable")

    async def download(self, message_id: str, key: str, kind: str, limit: int) -> bytes:
        """A file a user's message carries (the message resource API), at most ``limit``
        bytes."""
        token = await self.token()
        url = f"{self.settings.base_url}/open-apis/im/v1/messages/{message_id}/resources/{key}"
        headers = {"Authorization": f"Bearer {token}"}
        async with self._http().get(url, params={"type": kind}, headers=headers) as response:
            if response.status >= 400 or response.content_type == "application/json":
                answer = await _json_of(response)
                code = int(answer.get("code", -1))
                if code in STALE_TOKEN:
                    self.forget(token)
                raise FeishuError(response.status, code, str(answer.get("msg") or ""))
            return await read_capped(response.content.iter_chunked(65536), limit)

    async def upload(self, kind: str, data: bytes, name: str, file_type: str = "") -> str:
        """An image (``image``) or a file (``file``) uploaded for a message; its key. A
        form is sent once, so a stale token is fetched again and the form made anew."""
        for attempt in (1, 2):
            form = aiohttp.FormData()
            if kind == "image":
                form.add_field("image_type", "message")
                form.add_field("image", data, filename=name)
            else:
                form.add_field("file_type", file_type or "stream")
                form.add_field("file_name", name)
                form.add_field("file", data, filename=name)
            path = "/open-apis/im/v1/images" if kind == "image" else "/open-apis/im/v1/files"
            try:
                answer = await self.call("POST", path, form=form)
            except FeishuError as exc:
                if exc.code in STALE_TOKEN and attempt == 1:
                    continue
                raise
            return str(answer["data"]["image_key" if kind == "image" else "file_key"])
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        await self._http.aclose()


async def _json_of(response: aiohttp.ClientResponse) -> dict[str, Any]:
    answer, page = await read_json(response)
    return answer if answer is not None else {"code": -1, "msg": page}
