"""The sign-in's token as routes ask for it, against the loopback authorization server:
renewed once however many ask at once (a rotating refresh token is spent once), kept in a
0600 file, and the device code's address shown as a QR code a phone can read."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import segno
from hermes_plugin_auth.oauth import device_flow, qr_code
from hermes_plugin_auth.services import BY_NAME
from hermes_plugin_auth.signin import SignIn
from hermes_plugin_auth.store import AuthStore
from hermes_plugin_auth.testing import OAuthServer

NOUS = BY_NAME["nous"]


def _signed_in(home: Path, issuer: OAuthServer) -> None:
    tokens = device_flow(NOUS, issuer.url, lambda _line: None, sleep=lambda _s: None)
    with AuthStore(home).changing() as sign_ins:
        sign_ins["nous"] = {
            "service": "nous",
            "issuer": issuer.url,
            "access_token": tokens.access_token,
            "refresh_token": tokens.refresh_token,
            "expires_at": tokens.expires_at,
        }


def test_many_asking_at_once_renew_the_token_once(tmp_path: Path) -> None:
    with OAuthServer() as issuer:
        issuer.access_ttl = 30  # inside the renewal window: every ask wants a new one
        _signed_in(tmp_path, issuer)
        issuer.access_ttl = 3600
        got: list[str] = []

        def ask() -> None:
            got.append(asyncio.run(SignIn(tmp_path, NOUS).token()))

        threads = [threading.Thread(target=ask) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert issuer.refreshes == 1  # the refresh token rotates: a second use would fail
    assert len(set(got)) == 1 and got[0] == issuer.issued[-1]
    assert (tmp_path / "auth.json").stat().st_mode & 0o777 == 0o600
    entry = AuthStore(tmp_path).get("nous")
    assert entry is not None and entry["expires_at"] > time.time() + 3000


def test_the_device_address_is_a_qr_code_of_that_address() -> None:
    address = "https://github.com/login/device"
    drawn = qr_code(address).splitlines()
    size = segno.make(address, error="m").symbol_size(border=2)[0]
    assert len(drawn) == (size + 1) // 2  # two rows of modules a line
    assert all(len(line) == size for line in drawn)
    assert set("".join(drawn)) <= {"█", "▀", "▄", " "}
