"""The Bot Framework's authentication, both ways, with PyJWT and aiohttp.

Why not Microsoft's libraries: botbuilder-python is archived (its last release, 4.17.1, in
January 2026; support ended December 2025); the Microsoft 365 Agents SDK that replaces it
checks no issuer and no endorsement by default, fetches keys from a URL it hard-codes, and
gets its tokens through MSAL, which reaches login.microsoftonline.com for discovery; the
Teams SDK is a preview that brings FastAPI and uvicorn. The protocol is small and written
down (Bot Framework REST API reference, "Authentication"); each rule of it is below.

- :class:`ChannelVerifier`: a request from the Bot Connector carries a JWT that must be
  signed by a key in the Bot Framework's OpenID metadata (``jwks_uri``), RS256, issued by
  ``https://api.botframework.com``, for this bot's app id, current (5 minutes of clock
  skew), with a ``serviceurl`` claim equal to the activity's ``serviceUrl``, and, when the
  key lists endorsements, endorsed for the activity's channel (``msteams``).
- :class:`BotToken`: replies carry the app's own token, from the client-credentials grant
  at the tenant's token endpoint (scope ``https://api.botframework.com/.default``),
  renewed five minutes before it expires."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import aiohttp

from hermes_plugin_platform_teams.settings import BOT_ISSUER

__all__ = ["BotToken", "ChannelVerifier", "KeysUnavailable", "Refused", "TokenRefused"]

log = logging.getLogger("hermes.teams")

SKEW_SECONDS = 300
TEAMS = "msteams"
KEYS_SECONDS = 24 * 3600.0
REFETCH_SECONDS = 300.0
"""A key id not seen fetches the keys again, at most this often (a forged token's made-up
key id must not make every request a fetch)."""
RETRY_SECONDS = 60.0
"""After a fetch that failed, the next waits this long."""
SCOPE = "https://api.botframework.com/.default"
EARLY_SECONDS = 300.0
REFUSALS = frozenset(
    {"invalid_client", "unauthorized_client", "invalid_request", "invalid_scope", "invalid_grant"}
)
"""OAuth's answers for credentials that will not work (anything else may pass)."""


class Refused(Exception):
    """The request is not from the Bot Connector for this bot (the line is for the log)."""


class KeysUnavailable(Exception):
    """No keys to check a request with yet (the Bot Framework unreachable since the
    start): answered 503, so Teams sends the activity again."""


class TokenRefused(Exception):
    """The token endpoint refused the app's credentials (``invalid_client`` ...)."""


class ChannelVerifier:
    def __init__(self, openid_url: str, app_id: str) -> None:
        self._openid_url = openid_url
        self._app_id = app_id
        self._keys: dict[str, dict[str, Any]] = {}
        self._until = 0.0
        self._fetched = 0.0
        self._tried = -RETRY_SECONDS
        self._lock = asyncio.Lock()

    async def _fetch(self) -> None:
        timeout = aiohttp.ClientTimeout(total=15)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            async with session.get(self._openid_url) as response:
                metadata = json.loads(await response.read()) if response.status == 200 else {}
            jwks_uri = metadata.get("jwks_uri") if isinstance(metadata, dict) else None
            if not jwks_uri:
                raise Refused(f"the Bot Framework's metadata has no keys ({response.status})")
            async with session.get(str(jwks_uri)) as response:
                keys = json.loads(await response.read()) if response.status == 200 else {}
        found = {
            str(key["kid"]): key
            for key in (keys.get("keys") or () if isinstance(keys, dict) else ())
            if isinstance(key, dict) and key.get("kid")
        }
        if not found:
            raise Refused("the Bot Framework published no signing keys")
        self._keys = found
        self._fetched = time.monotonic()
        self._until = self._fetched + KEYS_SECONDS

    async def _key(self, key_id: str) -> dict[str, Any]:
        """The key ``key_id`` from the Bot Framework's keys: kept a day; fetched again for
        a key id not seen, at most every five minutes; and tries that fail keep the keys
        held (the Bot Framework's keys are stable) and wait a minute before the next, so
        nothing a stranger sends can make every request a fetch."""
        now = time.monotonic()
        wanted = now >= self._until or (
            key_id not in self._keys and now - self._fetched >= REFETCH_SECONDS
        )
        if wanted and now - self._tried >= RETRY_SECONDS:
            async with self._lock:
                if time.monotonic() - self._tried >= RETRY_SECONDS:
                    self._tried = time.monotonic()
                    try:
                        await self._fetch()
                    except (aiohttp.ClientError, TimeoutError, ValueError, Refused) as exc:
                        log.warning("teams: the Bot Framework's keys could not be fetched: %s", exc)
        key = self._keys.get(key_id)
        if key is None and not self._keys:
            raise KeysUnavailable("the Bot Framework's keys could not be fetched yet")
        if key is None:
            raise Refused(f"signed with a key the Bot Framework does not publish ({key_id[:16]})")
        return key

    async def verify(self, authorization: str, activity: dict[str, Any]) -> dict[str, Any]:
        """The token's claims; :class:`Refused` unless the Bot Connector signed it for this
        bot and this activity."""
        import jwt  # here: the gateway imports every installed platform, configured or not

        scheme, _, token = authorization.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise Refused("no bearer token")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise Refused(f"not a token: {exc}") from None
        if header.get("alg") != "RS256":
            raise Refused(f"signed with {header.get('alg')!r}, not RS256")
        key = await self._key(str(header.get("kid") or ""))
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                jwt.PyJWK(key).key,
                algorithms=["RS256"],
                audience=self._app_id,
                issuer=BOT_ISSUER,
                leeway=SKEW_SECONDS,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as exc:
            raise Refused(str(exc)) from None
        claimed = str(claims.get("serviceurl") or claims.get("serviceUrl") or "")
        given = str(activity.get("serviceUrl") or "")
        if not claimed or claimed.rstrip("/") != given.rstrip("/"):
            raise Refused("the token is for another service URL than the activity's")
        channel = str(activity.get("channelId") or "")
        if channel != TEAMS:
            # The same bot can be on Web Chat or Direct Line, whose clients name their own
            # user ids: only Teams vouches for who a sender is.
            raise Refused(f"an activity from the {channel!r} channel, not Teams")
        endorsements = key.get("endorsements")
        if isinstance(endorsements, list) and TEAMS not in endorsements:
            raise Refused("the signing key is not endorsed for Teams")
        return claims


class BotToken:
    """The app's access token for the Bot Connector."""

    def __init__(self, token_url: str, app_id: str, password: str) -> None:
        self._url = token_url
        self._app_id = app_id
        self._password = password
        self._token = ""
        self._until = 0.0
        self._lock = asyncio.Lock()

    async def get(self, session: aiohttp.ClientSession) -> str:
        async with self._lock:
            if self._token and time.monotonic() < self._until:
                return self._token
            form = {
                "grant_type": "client_credentials",
                "client_id": self._app_id,
                "client_secret": self._password,
                "scope": SCOPE,
            }
            async with session.post(self._url, data=form) as response:
                raw = await response.read()
                try:
                    answer = json.loads(raw)
                except ValueError:
                    answer = {}
                error = answer.get("error") if isinstance(answer, dict) else None
                if response.status in (400, 401) and error in REFUSALS:
                    why = str(answer.get("error_description") or error)
                    raise TokenRefused(why.splitlines()[0][:200])
                if response.status != 200 or not isinstance(answer, dict):
                    raise ConnectionError(f"the token endpoint answered {response.status}")
            self._token = str(answer["access_token"])
            lifetime = float(answer.get("expires_in") or 3600)
            self._until = time.monotonic() + max(60.0, lifetime - EARLY_SECONDS)
            return self._token

    def forget(self) -> None:
        self._token = ""
