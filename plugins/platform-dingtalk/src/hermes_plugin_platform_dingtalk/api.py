"""DingTalk's API as the app: the access token (cached, fetched again before it expires or
when the API says it is not valid), JSON calls with the ``x-acs-dingtalk-access-token``
header (errors as ``{code, message}``), a message's session webhook (errors as
``{errcode, errmsg}`` with HTTP 200), and capped downloads of the files people send.

Calls go through aiohttp on the gateway's loop: dingtalk-stream's own calls are
synchronous (requests), made on the loop that runs them."""

from __future__ import annotations

from typing import Any

import aiohttp

from hermes_commons.app_api import CachedToken, LazySession, read_json
from hermes_commons.platform_files import read_capped
from hermes_plugin_platform_dingtalk.settings import DingTalkSettings
from hermes_sdk.platform import NotSent

__all__ = ["CredentialsRefused", "DingTalkApi", "DingTalkError"]

TOKEN_MARGIN_SECONDS = 300.0
STALE_TOKEN = frozenset({"InvalidAuthentication", "Unauthorized"})
RATE_LIMITED = ("Forbidden.AccessDenied.QpsLimit", "Throttling")
CREDENTIAL_CODES = ("invalidclient", "clientsecret", "appsecret", "invalidappkey")
"""What the token endpoint's refusal code names when the credentials are wrong
(``invalidClientIdOrSecret``); any other refusal (a rate limit) is tried again."""
WEBHOOK_RATE_LIMITED = frozenset({130101, 90018, 90002})
"""The session webhook's "sending too fast" (and the old API's QPS limits)."""


class DingTalkError(Exception):
    """The API refused a call (``code`` from its JSON, or the webhook's ``errcode``)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{code} {message}".strip() + f" (HTTP {status})")
        self.status = status
        self.code = code

    def not_sent(self) -> NotSent:
        """Tried again: a rate limit, a server error; given up: what the same message will
        always get (no such chat, the robot not in it, content refused)."""
        limited = any(self.code.startswith(prefix) for prefix in RATE_LIMITED)
        if limited or (self.code.isdigit() and int(self.code) in WEBHOOK_RATE_LIMITED):
            return NotSent(f"DingTalk did not take the message: {self}")
        if self.status == 429 or self.status >= 500:
            return NotSent(f"DingTalk did not take the message: {self}")
        return NotSent(f"DingTalk refused the message: {self}", permanent=True)


class CredentialsRefused(Exception):
    """The Client ID or Client Secret is wrong: only the user can fix it."""


class DingTalkApi:
    def __init__(self, settings: DingTalkSettings) -> None:
        self.settings = settings
        self.tokens = CachedToken(self._fetch_token, margin=TOKEN_MARGIN_SECONDS)
        self._http = LazySession()

    async def token(self) -> str:
        return await self.tokens.get()

    async def _fetch_token(self) -> tuple[str, float]:
        body = {"appKey": self.settings.client_id, "appSecret": self.settings.client_secret}
        url = f"{self.settings.api_url}/v1.0/oauth2/accessToken"
        async with self._http().post(url, json=body) as response:
            status, answer = response.status, await _json_of(response)
        token = answer.get("accessToken")
        code = str(answer.get("code") or "")
        limited = "qpslimit" in code.lower() or code.startswith(RATE_LIMITED)
        if not token and not limited and any(w in code.lower() for w in CREDENTIAL_CODES):
            raise CredentialsRefused(f"{code} {answer.get('message', '')}".strip())
        if status >= 300 or not isinstance(token, str) or not token:
            raise DingTalkError(
                status,
                str(answer.get("code") or ""),
                str(answer.get("message") or "no token given"),
            )
        return token, float(answer.get("expireIn") or 7200)

    def _forget(self, token: str) -> None:
        self.tokens.forget(token)

    async def call(self, method: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """The answer of ``method path``; :class:`DingTalkError` for a refusal. A token the
        API no longer takes is fetched again once."""
        for attempt in (1, 2):
            token = await self.token()
            headers = {"x-acs-dingtalk-access-token": token}
            url = self.settings.api_url + path
            async with self._http().request(method, url, json=body, headers=headers) as response:
                status, answer = response.status, await _json_of(response)
            if status < 300:
                return answer
            code = str(answer.get("code") or "")
            if code in STALE_TOKEN or status == 401:
                self._forget(token)
                if attempt == 1:
                    continue
            raise DingTalkError(status, code, str(answer.get("message") or ""))
        raise AssertionError("unreachable")

    async def to_webhook(self, url: str, body: dict[str, Any]) -> None:
        """Post to a message's session webhook (no token: the URL is the credential)."""
        async with self._http().post(url, json=body) as response:
            status, answer = response.status, await _json_of(response)
        code = answer.get("errcode", 0 if status < 300 else -1)
        if status >= 300 or code not in (0, "0"):
            raise DingTalkError(status, str(code), str(answer.get("errmsg") or ""))

    async def download(self, code: str, limit: int) -> bytes:
        """A file a person sent (its download code), at most ``limit`` bytes."""
        body = {"downloadCode": code, "robotCode": self.settings.robot_code}
        answer = await self.call("POST", "/v1.0/robot/messageFiles/download", body)
        url = str(answer.get("downloadUrl") or "")
        if not url:
            raise DingTalkError(200, "", "no download URL given")
        # Its own timeout: the session's 60 s would cut a large video short.
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=60)
        async with self._http().get(url, timeout=timeout) as response:
            if response.status >= 300:
                raise DingTalkError(response.status, "", "the file could not be fetched")
            return await read_capped(response.content.iter_chunked(65536), limit)

    async def aclose(self) -> None:
        await self._http.aclose()


async def _json_of(response: aiohttp.ClientResponse) -> dict[str, Any]:
    answer, page = await read_json(response)
    return answer if answer is not None else {"code": "", "message": page}
