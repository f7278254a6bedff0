"""WeCom's server API as the app: the access token (``cgi-bin/gettoken`` with the corp id
and the app's secret; cached, fetched again before it expires or when the API says it is
no longer valid), JSON calls whose answer is ``{errcode, errmsg, ...}``, media uploads and
capped downloads."""

from __future__ import annotations

import json
import re
from typing import Any

import aiohttp

from hermes_commons.app_api import CachedToken, LazySession, read_json
from hermes_commons.platform_files import read_capped
from hermes_plugin_platform_wecom.settings import WeComSettings
from hermes_sdk.platform import NotSent

__all__ = ["CredentialsRefused", "WeComApi", "WeComError"]

TOKEN_MARGIN_SECONDS = 300.0
STALE_TOKEN = frozenset({40001, 40014, 42001})
"""The access token is invalid, malformed or expired: fetched again once."""
RATE_LIMITED = frozenset({45009, 45033, 45047, -1})
"""Too many calls, too many at once, the app's message quota; -1: WeCom is busy."""
BAD_CREDENTIALS = frozenset({40013, 40001, 40091, 41004})
"""At the token endpoint: the corp id or the app's secret is wrong."""
NOT_TRUSTED = 60020
_UNSAFE_NAME = re.compile(r'[\x00-\x1f\x7f"\\]')
"""The server's IP is not among the app's trusted IPs."""


class WeComError(Exception):
    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(
            f"{code} {message}".strip() + (f" (HTTP {status})" if status != 200 else "")
        )
        self.status = status
        self.code = code

    def not_sent(self) -> NotSent:
        if self.code in RATE_LIMITED or self.status >= 500:
            return NotSent(f"WeCom did not take the message: {self}")
        if self.code == NOT_TRUSTED:
            return NotSent(
                "WeCom refused the message: this server's IP is not among the app's trusted "
                "IPs (App Management > your app > Trusted IP)",
                permanent=True,
            )
        return NotSent(f"WeCom refused the message: {self}", permanent=True)


class CredentialsRefused(Exception):
    """The corp id or the app's secret is wrong: only the user can fix it."""


class WeComApi:
    def __init__(self, settings: WeComSettings) -> None:
        self.settings = settings
        self.tokens = CachedToken(self._fetch_token, margin=TOKEN_MARGIN_SECONDS)
        self._http = LazySession()

    async def token(self) -> str:
        return await self.tokens.get()

    async def _fetch_token(self) -> tuple[str, float]:
        params = {"corpid": self.settings.corp_id, "corpsecret": self.settings.corp_secret}
        url = f"{self.settings.api_url}/cgi-bin/gettoken"
        async with self._http().get(url, params=params) as response:
            status, answer = response.status, await _json_of(response)
        code = int(answer.get("errcode", -1))
        if code in BAD_CREDENTIALS:
            raise CredentialsRefused(f"{code} {answer.get('errmsg', '')}".strip())
        token = answer.get("access_token")
        if code != 0 or not isinstance(token, str) or not token:
            raise WeComError(status, code, str(answer.get("errmsg") or "no token given"))
        return token, float(answer.get("expires_in") or 7200)

    def _forget(self, token: str) -> None:
        self.tokens.forget(token)

    async def call(
        self,
        path: str,
        *,
        body: dict[str, Any] | None = None,
        params: dict[str, str] | None = None,
        form: Any = None,
    ) -> dict[str, Any]:
        """POST ``path`` (``cgi-bin/...``) with the token; its answer, or
        :class:`WeComError`. A token WeCom no longer takes is fetched again once (a form,
        sent once, is then made again by ``form()``)."""
        for attempt in (1, 2):
            token = await self.token()
            url = f"{self.settings.api_url}/{path}"
            query = {**(params or {}), "access_token": token}
            data = form() if callable(form) else None
            async with self._http().post(url, params=query, json=body, data=data) as response:
                status, answer = response.status, await _json_of(response)
            code = int(answer.get("errcode", -1 if status >= 300 else 0))
            if code == 0 and status < 300:
                return answer
            if code in STALE_TOKEN:
                self._forget(token)
                if attempt == 1:
                    continue
            raise WeComError(status, code, str(answer.get("errmsg") or ""))
        raise AssertionError("unreachable")

    async def download(self, media_id: str, limit: int) -> bytes:
        """A file a person sent (its MediaId; kept three days), at most ``limit`` bytes."""
        for attempt in (1, 2):
            token = await self.token()
            url = f"{self.settings.api_url}/cgi-bin/media/get"
            params = {"access_token": token, "media_id": media_id}
            async with self._http().get(url, params=params) as response:
                if response.status >= 300:
                    raise WeComError(response.status, -1, "the file could not be fetched")
                data = await read_capped(response.content.iter_chunked(65536), limit)
                kind = response.content_type
            # An error is JSON; a text file sent as media is not an error.
            if kind in ("application/json", "text/plain") and len(data) < 4096:
                try:
                    answer = json.loads(data)
                except ValueError:
                    answer = None
                if isinstance(answer, dict) and "errcode" in answer:
                    code = int(answer.get("errcode", -1))
                    if code in STALE_TOKEN and attempt == 1:
                        self._forget(token)
                        continue
                    raise WeComError(200, code, str(answer.get("errmsg") or ""))
            return data
        raise AssertionError("unreachable")

    async def upload(self, kind: str, data: bytes, name: str, mime: str) -> str:
        """A file uploaded as temporary media (``image``, ``voice``, ``video``, ``file``);
        its media id."""

        name = _UNSAFE_NAME.sub("", name) or "file"  # no line breaks into the headers

        def form() -> aiohttp.FormData:
            made = aiohttp.FormData(quote_fields=False)  # a Chinese file name as it is
            made.add_field(
                "media", data, filename=name, content_type=mime or "application/octet-stream"
            )
            return made

        answer = await self.call("cgi-bin/media/upload", params={"type": kind}, form=form)
        return str(answer["media_id"])

    async def aclose(self) -> None:
        await self._http.aclose()


async def _json_of(response: aiohttp.ClientResponse) -> dict[str, Any]:
    answer, page = await read_json(response)
    return answer if answer is not None else {"errcode": -1, "errmsg": page}
