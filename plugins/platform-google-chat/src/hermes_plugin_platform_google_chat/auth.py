"""Both directions of Google Chat's authentication, with google-auth (Google's own library):

- a request that claims to come from Chat carries a bearer token signed by Google; it is
  checked against Google's published keys (fetched here, kept as long as Google's
  Cache-Control says, fetched again for a key id not seen), for its signature, expiry,
  audience and issuer, by :class:`Verifier`;
- replies go through the Chat API as the app's service account, with an access token from
  the key's token endpoint, renewed before it expires, by :class:`AppToken`."""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

import aiohttp

from hermes_plugin_platform_google_chat.settings import CHAT_ISSUER

__all__ = ["AppToken", "KeyRefused", "Refused", "Verifier"]

GOOGLE_ISSUERS = ("https://accounts.google.com", "accounts.google.com")
SCOPES = ("https://www.googleapis.com/auth/chat.bot",)
SKEW_SECONDS = 30
"""Clock difference allowed between Google and this machine."""
TOKEN_SECONDS = 15.0
"""The longest a token request may take (google-auth's default is 120 s)."""
KEYS_SECONDS = 3600.0
"""How long keys are kept when Google's answer says nothing."""
REFETCH_SECONDS = 60.0
_MAX_AGE = re.compile(r"max-age=(\d+)")


class Refused(Exception):
    """The request is not from Google Chat for this app: the one line says why (for the
    log; the caller gets a bare 401)."""


class Verifier:
    def __init__(self, certs_url: str, audience: str, *, project_number: bool) -> None:
        self._certs_url = certs_url
        self._audience = audience
        self._project_number = project_number
        self._certs: dict[str, str] = {}
        self._until = 0.0
        self._tried = 0.0
        self._lock = asyncio.Lock()

    async def _keys(self, key_id: str | None) -> dict[str, str]:
        """Google's keys: kept while its Cache-Control says; fetched again early for a key
        id not seen (Google rotates them). Fetches, failed ones too, are at most one a
        minute once there are keys (a forged token's made-up key id must not make every
        request a fetch), and keys past their time serve while Google cannot be reached."""
        now = time.monotonic()
        wanted = now >= self._until or (key_id is not None and key_id not in self._certs)
        if not wanted or (self._certs and now - self._tried < REFETCH_SECONDS):
            return self._certs
        async with self._lock:
            if self._certs and time.monotonic() - self._tried < REFETCH_SECONDS:
                return self._certs  # tried while this request waited for the lock
            self._tried = time.monotonic()
            try:
                certs, age = await self._fetch()
            except (aiohttp.ClientError, TimeoutError, ValueError, Refused) as exc:
                if self._certs:
                    return self._certs
                raise Refused(f"Google's keys could not be fetched ({exc})") from None
            self._certs = certs
            self._until = time.monotonic() + age
        return self._certs

    async def _fetch(self) -> tuple[dict[str, str], float]:
        timeout = aiohttp.ClientTimeout(total=15)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(self._certs_url) as response,
        ):
            if response.status != 200:
                raise Refused(f"Google answered {response.status}")
            certs = json.loads(await response.read())
            age = _MAX_AGE.search(response.headers.get("Cache-Control", ""))
        if not isinstance(certs, dict) or "keys" in certs or not certs:
            raise Refused("Google's keys came in a form not expected (x509 by key id)")
        return {str(k): str(v) for k, v in certs.items()}, (
            float(age.group(1)) if age else KEYS_SECONDS
        )

    async def verify(self, authorization: str) -> dict[str, Any]:
        """The token's claims; :class:`Refused` unless Google signed it, for this app,
        and it is current."""
        from google.auth import exceptions, jwt

        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Refused("no bearer token")
        try:
            header = jwt.decode_header(token.strip())  # type: ignore[no-untyped-call]  # untyped
        except (ValueError, exceptions.GoogleAuthError) as exc:
            raise Refused(f"not a token: {exc}") from None
        try:
            certs = await self._keys(str(header.get("kid") or "") or None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise Refused(f"Google's keys could not be fetched ({exc})") from None
        try:
            claims: dict[str, Any] = jwt.decode(  # type: ignore[no-untyped-call]  # google-auth is untyped
                token.strip(),
                certs=certs,
                audience=self._audience,
                clock_skew_in_seconds=SKEW_SECONDS,
            )
        except (ValueError, exceptions.GoogleAuthError) as exc:
            raise Refused(str(exc).splitlines()[0][:200]) from None
        issuer = claims.get("iss")
        if self._project_number:
            if issuer != CHAT_ISSUER:
                raise Refused(f"issued by {issuer!r}, not Google Chat")
        elif issuer not in GOOGLE_ISSUERS:
            raise Refused(f"issued by {issuer!r}, not Google")
        elif claims.get("email") != CHAT_ISSUER or claims.get("email_verified") is not True:
            raise Refused(f"a Google token for {claims.get('email')!r}, not for Google Chat")
        return claims


class KeyRefused(Exception):
    """Google's token endpoint refused the service account's key (not a passing error)."""


class AppToken:
    """The service account's access token for the Chat API (scope chat.bot)."""

    def __init__(self, service_account: dict[str, Any]) -> None:
        self._info = service_account
        self._credentials: Any = None
        self._lock = asyncio.Lock()

    def _refreshed(self) -> Any:
        import requests
        from google.auth import exceptions
        from google.oauth2 import service_account

        credentials = self._credentials
        if credentials is None:
            made = service_account.Credentials.from_service_account_info  # untyped library
            credentials = made(self._info, scopes=list(SCOPES))  # type: ignore[no-untyped-call]
        with requests.Session() as session:
            try:
                credentials.refresh(_Timed(session))
            except exceptions.RefreshError as exc:
                if getattr(exc, "retryable", False):
                    raise ConnectionError(f"Google's token endpoint: {exc}") from None
                raise KeyRefused(str(exc).splitlines()[0][:160]) from None
        self._credentials = credentials
        return credentials

    async def token(self) -> str:
        async with self._lock:
            credentials = self._credentials
            if credentials is None or not credentials.valid:  # expires 3.75 min early
                credentials = await asyncio.to_thread(self._refreshed)
            return str(credentials.token)

    def forget(self) -> None:
        """The API refused the token (revoked before its time): fetch a new one next."""
        self._credentials = None


def _Timed(session: Any) -> Any:
    """google-auth's requests transport with a 15 s timeout (its default is 120 s, long
    for a lock every send waits on)."""
    from google.auth.transport.requests import Request

    class Timed(Request):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            kwargs["timeout"] = min(float(kwargs.get("timeout") or TOKEN_SECONDS), TOKEN_SECONDS)
            return super().__call__(*args, **kwargs)  # type: ignore[no-untyped-call]

    return Timed(session)
