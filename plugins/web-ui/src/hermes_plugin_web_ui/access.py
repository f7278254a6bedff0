"""Who may use the UI: login cookies, CSRF tokens, the login throttle and the Host check.

A visitor gets a signed cookie (``sid.expires.login.signature``): ``login`` is 1 once the
key was given: WEB_UI_KEY, or without one the token made for this run (printed in the URL
``hermes web`` shows, as Jupyter does), so another account on this machine cannot walk in
on 127.0.0.1. Its CSRF token is an HMAC of the sid, so it needs no server-side state; every
request that changes something must carry it. The signing key comes from a random secret
kept in the home (0600) mixed with the key, so changing the key logs everybody out.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from hermes_commons.files import atomic_write_bytes

__all__ = ["COOKIE", "VISITOR", "Access", "Visitor", "load_secret"]

COOKIE = "hermes_web"
SECRET_FILE = "web-ui/secret"


def load_secret(home: str) -> bytes:
    """The home's signing secret, made on first use."""
    path = Path(home) / SECRET_FILE
    try:
        secret = path.read_bytes()
        if len(secret) >= 32:
            return secret
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    secret = os.urandom(32)
    atomic_write_bytes(path, secret, mode=0o600)
    return secret


@dataclass(frozen=True, slots=True)
class Visitor:
    sid: str
    expires: int
    logged_in: bool


VISITOR: web.RequestKey[Visitor] = web.RequestKey("visitor", Visitor)
"""The request's visitor, as the access check found it."""


class Access:
    """Signs and reads the cookie, and makes and checks CSRF tokens."""

    def __init__(self, secret: bytes, key: str, lifetime_s: float) -> None:
        self._key = key.encode()
        self._signing = hmac.new(secret, self._key, hashlib.sha256).digest()
        self._lifetime = lifetime_s

    def __repr__(self) -> str:
        return "Access(...)"  # never the key, in a traceback or a log

    def _sign(self, text: str) -> str:
        return hmac.new(self._signing, text.encode(), hashlib.sha256).hexdigest()

    def new_visitor(self, *, logged_in: bool) -> Visitor:
        expires = int(time.time() + self._lifetime)
        return Visitor(secrets.token_urlsafe(18), expires, logged_in)

    def cookie_value(self, visitor: Visitor) -> str:
        body = f"{visitor.sid}.{visitor.expires}.{int(visitor.logged_in)}"
        return f"{body}.{self._sign(body)}"

    def read(self, value: str | None) -> Visitor | None:
        """The visitor a cookie names; None for a missing, forged or expired one."""
        if not value or not value.isascii() or value.count(".") != 3:
            return None  # compare_digest takes ASCII only; a stranger's cookie is no login
        body, _, signature = value.rpartition(".")
        if not hmac.compare_digest(signature, self._sign(body)):
            return None
        sid, expires, login = body.split(".")
        if not expires.isdigit() or int(expires) < time.time():
            return None
        return Visitor(sid, int(expires), login == "1")

    def csrf_token(self, visitor: Visitor) -> str:
        return self._sign(f"csrf:{visitor.sid}")

    def csrf_ok(self, visitor: Visitor | None, token: str | None) -> bool:
        if visitor is None or not token or not token.isascii():
            return False
        return hmac.compare_digest(token, self.csrf_token(visitor))

    def key_ok(self, given: str) -> bool:
        return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), self._key)
