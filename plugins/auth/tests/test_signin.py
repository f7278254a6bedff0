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


def test_an_unreachable_issuer_is_a_connection_error_not_a_sign_in_again(tmp_path: Path) -> None:
    """A refresh the network stopped is for now (the route tries again or falls back): a
    one-line CONNECTION error, and the sign-in is kept."""
    from hermes_sdk.models import ErrorKind, ProviderError

    with OAuthServer() as issuer:
        issuer.access_ttl = 30
        _signed_in(tmp_path, issuer)
    # The server is gone: nothing answers at its address any more.
    try:
        asyncio.run(SignIn(tmp_path, NOUS).token())
    except ProviderError as error:
        assert error.kind is ErrorKind.CONNECTION and "\n" not in str(error)
        assert "cannot reach Nous Portal to renew the sign-in" in str(error)
    else:
        raise AssertionError("a refresh with nothing to answer it succeeded")
    assert AuthStore(tmp_path).get("nous") is not None


def test_a_corrupt_auth_json_is_not_written_over(tmp_path: Path) -> None:
    from hermes_plugin_auth.store import AuthFileError

    (tmp_path / "auth.json").write_text("{not json")
    try:
        with AuthStore(tmp_path).changing() as sign_ins:
            sign_ins["nous"] = {}
    except AuthFileError as error:
        assert "cannot be read" in str(error) and "move it aside" in str(error)
    else:
        raise AssertionError("a corrupt auth.json was written over")
    assert (tmp_path / "auth.json").read_text() == "{not json"


def test_the_loopback_redirect_waits_for_its_own_sign_in() -> None:
    """A stray request (another page, another sign-in) does not end the wait."""
    import httpx
    from hermes_plugin_auth.oauth import _Redirect

    catcher = _Redirect(0, "/auth/callback", "the-state")
    base = f"http://127.0.0.1:{catcher.port}/auth/callback"
    stray = httpx.get(f"{base}?code=evil&state=other")
    mine = httpx.get(f"{base}?code=good&state=the-state")
    assert stray.status_code == 404 and mine.status_code == 200
    assert catcher.wait(5) == "/auth/callback?code=good&state=the-state"
