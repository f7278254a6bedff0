"""A sign-in as the route sees it: its access token, refreshed (or exchanged again) when it
is within two minutes of expiring or the service refused it. Refreshing holds the auth.json
lock, so two processes never spend one refresh token twice."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from hermes_plugin_auth.services import Service
from hermes_plugin_auth.store import AuthStore
from hermes_sdk.models import ErrorKind, ProviderError

SKEW_SECONDS = 120.0
"""Renewed this long before it expires: a request never leaves with a dying token."""


def fresh(entry: dict[str, Any], service: Service, now: float) -> str | None:
    """The token to send if it needs no renewal, else None."""
    if service.exchange_path:
        exchanged = entry.get("exchanged") or {}
        if exchanged.get("token") and float(exchanged.get("expires_at", 0)) - SKEW_SECONDS > now:
            return str(exchanged["token"])
        return None
    expires_at = entry.get("expires_at")
    if expires_at is not None and float(expires_at) - SKEW_SECONDS <= now:
        return None
    return str(entry["access_token"])


class SignIn:
    """A :class:`hermes_sdk.ladder.TokenSource` for one service's sign-in."""

    def __init__(self, home: Path | str, service: Service, account: str | None = None) -> None:
        self._store = AuthStore(home)
        self._service = service
        self._account = account or service.name
        """Its key in auth.json: the service's name, or ``NAME#2``... for more accounts."""
        self._given: str | None = None
        """The token handed out last: a refusal of it is a reason to renew, unless another
        request renewed it meanwhile."""

    async def token(self, *, renew: bool = False) -> str:
        if not renew:
            entry = self._store.get(self._account)
            ready = fresh(entry, self._service, time.time()) if entry else None
            if ready is not None:
                self._given = ready
                return ready
        self._given = await asyncio.to_thread(self._renewed, renew, self._given)
        return self._given

    def _again(self, why: str) -> ProviderError:
        return ProviderError(
            ErrorKind.AUTH,
            f"{why}: sign in again with hermes login {self._account}",
        )

    def _renewed(self, renew: bool, refused: str | None) -> str:
        from hermes_plugin_auth.store import AuthFileError

        try:
            return self._renew(renew, refused)
        except AuthFileError as error:
            raise ProviderError(ErrorKind.CONNECTION, str(error)) from None

    def _renew(self, renew: bool, refused: str | None) -> str:
        from hermes_plugin_auth import usercode
        from hermes_plugin_auth.oauth import SignInError, exchange, refresh

        service = self._service
        renewing = usercode.refresh if service.flow == "user_code" else refresh
        with self._store.changing() as sign_ins:
            entry = sign_ins.get(self._account)
            if entry is None:
                raise self._again(f"Hermes is not signed in to {service.label}")
            ready = fresh(entry, service, time.time())
            if ready is not None and (not renew or ready != refused):
                return ready  # fresh, or renewed by another request while this one waited
            issuer = str(entry["issuer"])
            try:
                if service.exchange_path:
                    token, expires_at, _api = exchange(service, issuer, str(entry["access_token"]))
                    entry["exchanged"] = {"token": token, "expires_at": expires_at}
                    return token
                refresh_token = entry.get("refresh_token")
                if not refresh_token:
                    raise self._again(f"the sign-in to {service.label} has expired")
                tokens = renewing(service, issuer, str(refresh_token))
            except SignInError as error:
                if error.temporary:  # the service or the network, for now: not the sign-in
                    raise ProviderError(ErrorKind.CONNECTION, str(error)) from None
                raise self._again(str(error)) from None
            entry.update(
                access_token=tokens.access_token,
                refresh_token=tokens.refresh_token,
                expires_at=tokens.expires_at,
                refreshed_at=time.time(),
            )
            return tokens.access_token
