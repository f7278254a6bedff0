"""Every request to a hub: through the SSRF guard (the address judged is the address
connected to; each redirect judged again), with a timeout and a cap on the bytes read, and
errors as one line. GitHub's API and its raw file host get the user's token when one is set
(GITHUB_TOKEN or GH_TOKEN; anonymous API calls are limited to 60 an hour); no other host
ever sees it."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any
from urllib.parse import urlsplit

import httpx

from hermes_commons.ssrf import Refused, SsrfGuard, Unresolved
from hermes_commons.ssrf_http import fetch, guarded_client
from hermes_plugin_skills_hub.packages import HubError, Unreachable
from hermes_plugin_skills_hub.settings import DEFAULTS, HubSettings

__all__ = ["Fetcher"]

USER_AGENT = "hermes-skills-hub"
RETRIES = 3


class Fetcher:
    def __init__(self, settings: HubSettings) -> None:
        self.settings = settings
        self.guard = SsrfGuard(settings.allow_private_hosts)
        self._client: httpx.AsyncClient | None = None
        self._github_host = urlsplit(settings.github_api).netloc
        self._raw_host = urlsplit(settings.github_raw).netloc
        # The raw host gets the token only beside the API it belongs to: an enterprise
        # server's token must never reach public GitHub's raw host.
        self._raw_trusted = settings.github_raw != DEFAULTS.github_raw or (
            settings.github_api == DEFAULTS.github_api
        )

    async def __aenter__(self) -> Fetcher:
        self._client = guarded_client(self.guard, self.settings.timeout_seconds, USER_AGENT)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.aclose()

    def _headers(self, url: str, accept: str | None) -> dict[str, str]:
        headers = {"Accept": accept} if accept else {}
        host = urlsplit(url).netloc
        token = os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN")
        if host == self._raw_host and host != self._github_host and token and self._raw_trusted:
            headers["Authorization"] = f"token {token}"  # a private repository's files
        if host == self._github_host:
            if token:
                headers["Authorization"] = f"Bearer {token}"
            headers.setdefault("Accept", "application/vnd.github+json")
            headers["X-GitHub-Api-Version"] = "2022-11-28"
        return headers

    async def get(
        self,
        url: str,
        *,
        accept: str | None = None,
        limit: int | None = None,
        missing_ok: bool = False,
    ) -> bytes | None:
        """The body of ``url``; None for a 404 when ``missing_ok``; HubError otherwise for
        anything but a 200 (a rate limit says when to try again)."""
        assert self._client is not None, "use the Fetcher in an async with block"
        cap = limit or self.settings.max_skill_bytes
        for attempt in range(RETRIES):
            try:
                got = await fetch(
                    self._client, self.guard, url, cap + 1, headers=self._headers(url, accept)
                )
            except Unresolved as exc:  # offline, usually: a cached answer may serve
                raise Unreachable(str(exc)) from None
            except Refused as exc:
                raise HubError(str(exc)) from None
            except httpx.InvalidURL as exc:
                raise HubError(f"{url[:200]}: not a URL that can be fetched ({exc})") from None
            except (httpx.TransportError, httpx.DecodingError) as exc:
                raise Unreachable(
                    f"{urlsplit(url).netloc} did not answer ({type(exc).__name__})"
                ) from None
            if got.status == 200:
                if got.truncated or len(got.body) > cap:
                    raise HubError(
                        f"{url}: more than {cap} bytes; refused (skills_hub.max_skill_bytes)"
                    )
                return got.body
            if got.status == 404 and missing_ok:
                return None
            if got.status in (429, 502, 503, 504) and attempt < RETRIES - 1:
                await asyncio.sleep(min(2.0 * (attempt + 1), 5.0))
                continue
            raise HubError(_refusal(url, got.status, got.body))
        raise HubError(f"{url}: no answer after {RETRIES} tries")

    async def json(self, url: str, *, missing_ok: bool = False, **params: Any) -> Any:
        if params:
            url += ("&" if "?" in url else "?") + httpx.QueryParams(params).__str__()
        body = await self.get(url, missing_ok=missing_ok, limit=8_000_000)
        if body is None:
            return None
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            raise HubError(f"{url}: the answer is not JSON") from None


def _refusal(url: str, status: int, body: bytes) -> str:
    where = urlsplit(url).netloc
    if status in (403, 429) and b"rate limit" in body.lower():
        return (
            f"{where} refused: rate limited (HTTP {status}); set GITHUB_TOKEN for more "
            "requests, or try again later"
        )
    if status == 429:
        return f"{where} refused: too many requests (HTTP 429); try again later"
    if status in (401, 403):
        return f"{where} refused access (HTTP {status}): a private repository needs GITHUB_TOKEN"
    if status == 404:
        return f"{url}: not found (HTTP 404)"
    return f"{url}: HTTP {status}"
