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

__all__ = ["AppToken", "Refused", "Verifier"]

GOOGLE_ISSUERS = ("https://accounts.google.com", "accounts.google.com")
SCOPES = ("https://www.googleapis.com/auth/chat.bot",)
SKEW_SECONDS = 30
"""Clock difference allowed between Google and this machine."""
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
        self._fetched = 0.0
        self._lock = asyncio.Lock()

    async def _keys(self, key_id: str | None) -> dict[str, str]:
        """Google's keys: kept while its Cache-Control says; fetched again early for a key
        id not seen (Google rotates them), at most once a minute (a forged token's made-up
        key id must not make every request a fetch)."""
        now = time.monotonic()
        fresh = now < self._until
        if fresh and (key_id is None or key_id in self._certs):
            return self._certs
        if fresh and now - self._fetched < REFETCH_SECONDS:
            return self._certs
        async with self._lock:
            if time.monotonic() - self._fetched < 1.0:
                return self._certs  # fetched while this request waited for the lock
            timeout = aiohttp.ClientTimeout(total=15)
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.get(self._certs_url) as response,
            ):
                if response.status != 200:
                    raise Refused(f"Google's keys could not be fetched ({response.status})")
                certs = json.loads(await response.read())
                age = _MAX_AGE.search(response.headers.get("Cache-Control", ""))
            if not isinstance(certs, dict) or "keys" in certs:
                raise Refused("Google's keys came in a form not expected (x509 by key id)")
            self._certs = {str(k): str(v) for k, v in certs.items()}
            self._fetched = time.monotonic()
            self._until = self._fetched + (float(age.group(1)) if age else KEYS_SECONDS)
        return self._certs

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


class AppToken:
    """The service account's access token for the Chat API (scope chat.bot)."""

    def __init__(self, service_account: dict[str, Any]) -> None:
        self._info = service_account
        self._credentials: Any = None
        self._lock = asyncio.Lock()

    def _refreshed(self) -> Any:
        from google.auth.transport.requests import Request
        from google.oauth2 import service_account

        if self._credentials is None:
            made = service_account.Credentials.from_service_account_info  # untyped library
            self._credentials = made(self._info, scopes=list(SCOPES))  # type: ignore[no-untyped-call]
        self._credentials.refresh(Request())
        return self._credentials

    async def token(self) -> str:
        async with self._lock:
            credentials = self._credentials
            if credentials is None or not credentials.valid:  # expires 3.75 min early
                credentials = await asyncio.to_thread(self._refreshed)
            return str(credentials.token)

    def forget(self) -> None:
        """The API refused the token (revoked before its time): fetch a new one next."""
        self._credentials = None
