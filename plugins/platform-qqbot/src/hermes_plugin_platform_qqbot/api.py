"""QQ's bot API as the bot: the app access token (``getAppAccessToken``; cached, fetched again
before it expires or when the API says it is not valid) and the message API's calls, whose
errors are ``{code, message}``. qq-botpy's own calls raise without QQ's code, so sends go
through here; its client uses the same token (:meth:`QQApi.token`)."""

from __future__ import annotations

from typing import Any

import aiohttp
from yarl import URL

from hermes_commons.app_api import CachedToken, LazySession, read_json
from hermes_commons.platform_files import read_capped
from hermes_plugin_platform_qqbot.settings import QQSettings
from hermes_sdk.platform import NotSent

__all__ = ["CredentialsRefused", "QQApi", "QQError"]

TOKEN_MARGIN_SECONDS = 60.0
RATE_LIMITED = frozenset({22009, 20028, 1100100, 1100308})
"""Sending too fast (a chat's, the bot's)."""
PASSIVE_ONLY = frozenset({40034024, 40034005, 40034128, 304027, 304103})
"""A proactive message refused, or a reply too late or one too many: QQ lets a bot answer
a message only within a while of it, a few times."""
IN_REVIEW = frozenset({304023, 304024})
"""Taken, and held for QQ's review: sent, as far as the bot can tell."""
URL_REFUSED = frozenset({304003})
"""A link not registered for the bot in QQ's console."""


class QQError(Exception):
    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(f"{code} {message}".strip() + f" (HTTP {status})")
        self.status = status
        self.code = code

    def not_sent(self) -> NotSent:
        if self.code in RATE_LIMITED or self.status == 429 or self.status >= 500:
            return NotSent(f"QQ did not take the message: {self}")
        if self.code in PASSIVE_ONLY:
            return NotSent(
                f"QQ refused the message: a bot may answer only within a while of a message "
                f"(an hour in a direct chat, five minutes in a group): {self}",
                permanent=True,
            )
        return NotSent(f"QQ refused the message: {self}", permanent=True)


class CredentialsRefused(Exception):
    """The AppID or AppSecret is wrong: only the user can fix it."""


class QQApi:
    def __init__(self, settings: QQSettings) -> None:
        self.settings = settings
        self.tokens = CachedToken(self._fetch_token, margin=TOKEN_MARGIN_SECONDS, shortest=30.0)
        self._http = LazySession()

    async def token(self) -> tuple[str, float]:
        """The token and when it stops being used (epoch seconds)."""
        token = await self.tokens.get()
        return token, self.tokens.expires_at

    async def _fetch_token(self) -> tuple[str, float]:
        body = {"appId": self.settings.app_id, "clientSecret": self.settings.client_secret}
        async with self._http().post(self.settings.token_url, json=body) as response:
            status, answer = response.status, await _json_of(response)
        token = answer.get("access_token")
        if not token:
            code = int(answer.get("code") or 0)
            if status in (400, 401, 403) or code in (100016, 100007, 11241):
                raise CredentialsRefused(f"{code} {answer.get('message', '')}".strip())
            raise QQError(status, code, str(answer.get("message") or "no token given"))
        return str(token), float(answer.get("expires_in") or 7200)  # QQ sends a string

    def forget(self, token: str) -> None:
        self.tokens.forget(token)

    async def call(self, method: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        for attempt in (1, 2):
            token, _ = await self.token()
            headers = {"Authorization": f"QQBot {token}", "X-Union-Appid": self.settings.app_id}
            url = self.settings.api_url + path
            async with self._http().request(method, url, json=body, headers=headers) as response:
                status, answer = response.status, await _json_of(response)
            if status < 300:
                return answer
            if status == 401 and attempt == 1:
                self.forget(token)
                continue
            code = int(answer.get("code") or answer.get("err_code") or 0)
            trace = response.headers.get("X-Tps-Trace-Id", "")
            message = str(answer.get("message") or "") + (f" (trace {trace})" if trace else "")
            raise QQError(status, code, message)
        raise AssertionError("unreachable")

    async def download(self, url: str, limit: int) -> bytes:
        """A file people sent, from QQ's servers only: each redirect is checked too."""
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=60)
        for _ in range(4):
            if not self.settings.takes_media(url):
                raise ValueError("it is not on QQ's own servers")
            async with self._http().get(url, timeout=timeout, allow_redirects=False) as response:
                if response.status in (301, 302, 303, 307, 308) and response.headers.get(
                    "Location"
                ):
                    url = str(response.url.join(URL(response.headers["Location"])))
                    continue
                if response.status >= 300:
                    raise QQError(response.status, 0, "the file could not be fetched")
                return await read_capped(response.content.iter_chunked(65536), limit)
        raise QQError(0, 0, "too many redirects")

    async def aclose(self) -> None:
        await self._http.aclose()


async def _json_of(response: aiohttp.ClientResponse) -> dict[str, Any]:
    answer, page = await read_json(response)
    return answer if answer is not None else {"code": 0, "message": page}
