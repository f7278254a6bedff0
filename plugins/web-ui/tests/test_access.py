"""Who may use the UI: the key, the login form and its throttle, the cookie, CSRF tokens,
the Host and Origin checks, and the settings that refuse to serve openly."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from hermes_plugin_web_ui.settings import settings_from
from yarl import URL

from hermes_sdk.service import ServiceNotConfigured

KEY = "web-ui-test-key-0123456789"  # the one conftest.py serves with
CSRF = re.compile(r'<meta name="csrf-token" content="([^"]*)">')


async def _page(http: aiohttp.ClientSession, url: str) -> tuple[int, str, str]:
    async with http.get(url, allow_redirects=False) as response:
        text = await response.text()
        found = CSRF.search(text)
        return response.status, text, found.group(1) if found else ""


async def _set_cookie(url: str) -> str:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.headers["Set-Cookie"]


def _jar() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


def test_without_a_key_the_printed_url_logs_in_and_posts_need_the_cookie_and_token(
    ui: Any,
) -> None:
    asyncio.run(_without_a_key(ui))


async def _without_a_key(ui: Any) -> None:
    """Another account on this machine reaches 127.0.0.1 too: without WEB_UI_KEY the key
    is the token of this run, in the URL hermes web prints (and in a 0600 file)."""
    token = ui.server.login_token
    assert token and ui.login_path == f"/login?token={token}"
    url_file = ui.home / "web-ui" / "login-url"
    assert url_file.read_text().strip() == ui.server.login_url
    assert url_file.stat().st_mode & 0o777 == 0o600
    async with _jar() as http:
        status, _, _ = await _page(http, ui.base_url + "/chat")
        assert status == 303  # nobody walks in
        async with http.get(ui.base_url + "/login?token=guess-0000000000") as response:
            assert response.status == 401
            assert "login-url" in await response.text()  # where the right one is
        status, _, csrf = await _page(http, ui.base_url + ui.login_path)
        assert status == 303
        status, _, csrf = await _page(http, ui.base_url + "/chat")
        assert status == 200 and len(csrf) == 64
        async with http.get(ui.base_url + "/sessions") as response:
            assert response.status == 200
        set_cookie = (await _set_cookie(ui.base_url + ui.login_path)).lower()
        assert "httponly" in set_cookie and "samesite=lax" in set_cookie
        assert "secure" not in set_cookie  # plain http on loopback; web_ui.secure_cookie sets it
        slash = {"text": "/help"}
        async with http.post(ui.base_url + "/api/turns", json=slash) as response:
            assert response.status == 403  # the cookie alone is not enough
            assert "CSRF" in (await response.json())["error"]
        headers = {"X-CSRF-Token": csrf}
        async with http.post(ui.base_url + "/api/turns", json=slash, headers=headers) as response:
            assert response.status == 200
            assert "/undo" in (await response.json())["output"]
        cross = {**headers, "Origin": "http://evil.example"}
        async with http.post(ui.base_url + "/api/turns", json=slash, headers=cross) as response:
            assert response.status == 403  # another site's page, even with the token
            assert "another site" in (await response.json())["error"]
        weird = {"X-CSRF-Token": "é" * 64}
        async with http.post(ui.base_url + "/api/turns", json=slash, headers=weird) as response:
            assert response.status == 403
    async with (
        aiohttp.ClientSession() as bare,  # no cookie at all
        bare.post(ui.base_url + "/api/turns", json=slash) as response,
    ):
        assert response.status == 401
    async with (
        aiohttp.ClientSession(cookies={"hermes_web": "é.1.1.x"}) as odd,
        odd.get(ui.base_url + "/chat", allow_redirects=False) as response,
    ):
        assert response.status == 303  # a stranger's cookie is no login, and no crash


def test_a_foreign_host_name_is_refused_without_a_key(ui: Any) -> None:
    asyncio.run(_a_foreign_host_name_is_refused_without_a_key(ui))


async def _a_foreign_host_name_is_refused_without_a_key(ui: Any) -> None:
    """A page that points its own name at 127.0.0.1 (DNS rebinding) gets nothing."""
    async with aiohttp.ClientSession() as http:
        headers = {"Host": f"attacker.example:{ui.server.bound_port}"}
        async with http.get(ui.base_url + "/sessions", headers=headers) as response:
            assert response.status == 421
        headers = {"Host": f"localhost:{ui.server.bound_port}"}
        async with http.get(
            ui.base_url + "/sessions", headers=headers, allow_redirects=False
        ) as response:
            assert response.status == 303  # known: on to the login


def test_with_a_key_everything_waits_for_the_login(
    ui_with_key: Any, caplog: pytest.LogCaptureFixture
) -> None:
    asyncio.run(_with_a_key_everything_waits_for_the_login(ui_with_key, caplog))


async def _with_a_key_everything_waits_for_the_login(
    ui_with_key: Any, caplog: pytest.LogCaptureFixture
) -> None:
    base = ui_with_key.base_url
    caplog.set_level(logging.INFO, logger="hermes.web_ui")
    async with _jar() as http:
        async with http.get(base + "/sessions?q=x", allow_redirects=False) as response:
            assert response.status == 303
            location = URL(response.headers["Location"])
            assert location.path == "/login" and location.query["next"] == "/sessions?q=x"
        async with http.get(base + "/api/sessions/x/events") as response:
            assert response.status == 401
        status, page, csrf = await _page(http, base + "/login")
        assert status == 200 and 'name="key"' in page
        form = {"csrf": csrf, "key": "wrong-key-0000000000", "next": "/sessions"}
        async with http.post(base + "/login", data=form, allow_redirects=False) as response:
            assert response.status == 401
            assert "wrong key" in await response.text()
        assert "wrong-key-0000000000" not in caplog.text
        assert "refused a login" in caplog.text
        form["key"] = KEY
        async with http.post(base + "/login", data=form, allow_redirects=False) as response:
            assert response.status == 303 and response.headers["Location"] == "/sessions"
        status, _, _ = await _page(http, base + "/sessions")
        assert status == 200
        assert KEY not in caplog.text
        _, _, csrf = await _page(http, base + "/chat")
        async with http.post(
            base + "/logout", data={"csrf": csrf}, allow_redirects=False
        ) as response:
            assert response.status == 303
        async with http.get(base + "/chat", allow_redirects=False) as response:
            assert response.status == 303  # logged out


def test_a_forged_or_expired_cookie_is_not_a_login(ui_with_key: Any) -> None:
    asyncio.run(_a_forged_or_expired_cookie_is_not_a_login(ui_with_key))


async def _a_forged_or_expired_cookie_is_not_a_login(ui_with_key: Any) -> None:
    base = ui_with_key.base_url
    access = ui_with_key.server.access
    visitor = access.new_visitor(logged_in=False)
    forged = access.cookie_value(visitor).replace(".0.", ".1.")  # claims a login
    async with (
        aiohttp.ClientSession(cookies={"hermes_web": forged}) as http,
        http.get(base + "/chat", allow_redirects=False) as response,
    ):
        assert response.status == 303
    assert access.read(access.cookie_value(visitor)) == visitor
    expired = type(visitor)(visitor.sid, 1, True)
    assert access.read(access.cookie_value(expired)) is None


def test_wrong_keys_in_a_row_are_throttled(ui_with_key: Any) -> None:
    asyncio.run(_wrong_keys_in_a_row_are_throttled(ui_with_key))


async def _wrong_keys_in_a_row_are_throttled(ui_with_key: Any) -> None:
    base = ui_with_key.base_url
    async with _jar() as http:
        _, _, csrf = await _page(http, base + "/login")
        statuses = []
        for _ in range(6):
            form = {"csrf": csrf, "key": "guess-000000000000", "next": "/chat"}
            async with http.post(base + "/login", data=form, allow_redirects=False) as response:
                statuses.append(response.status)
        assert statuses == [401] * 5 + [429]
        form = {"csrf": csrf, "key": KEY, "next": "/chat"}
        async with http.post(base + "/login", data=form, allow_redirects=False) as response:
            assert response.status == 429  # even the right key waits out the minute


def test_login_goes_back_only_to_a_page_of_this_server(ui_with_key: Any) -> None:
    asyncio.run(_login_goes_back_only_to_a_page_of_this_server(ui_with_key))


async def _login_goes_back_only_to_a_page_of_this_server(ui_with_key: Any) -> None:
    base = ui_with_key.base_url
    targets = ("//evil.example/x", "https://evil.example", "/\\evil.example", "/\t/evil.example")
    for target in (*targets, "/status"):
        async with _jar() as http:
            _, _, csrf = await _page(http, base + "/login")
            form = {"csrf": csrf, "key": KEY, "next": target}
            async with http.post(base + "/login", data=form, allow_redirects=False) as response:
                expected = "/status" if target == "/status" else "/chat"
                assert response.headers["Location"] == expected, target


def test_serving_beyond_loopback_needs_a_long_enough_key(tmp_path: Path) -> None:
    home = str(tmp_path)
    with pytest.raises(ServiceNotConfigured, match="WEB_UI_KEY"):
        settings_from({}, {}, home=home, host="0.0.0.0")
    with pytest.raises(ServiceNotConfigured, match="at least 16"):
        settings_from({}, {"WEB_UI_KEY": "short"}, home=home, host="0.0.0.0")
    with pytest.raises(ServiceNotConfigured, match=r"web_ui\.port"):
        settings_from({"port": "many"}, {}, home=home)
    with pytest.raises(ServiceNotConfigured, match=r"hermes\.example\.org"):
        settings_from({"allowed_hosts": ["hermes.example.org"]}, {}, home=home)
    assert settings_from({"allowed_hosts": ["localhost"]}, {}, home=home).allowed_hosts
    assert KEY not in repr(settings_from({}, {"WEB_UI_KEY": KEY}, home=home))
    settings = settings_from({"host": "0.0.0.0"}, {"WEB_UI_KEY": KEY}, home=home)
    assert settings.key == KEY
    assert settings_from({}, {}, home=home, host="::1").key is None


def test_the_signing_secret_is_kept_private_and_a_login_outlives_a_restart(
    ui_with_key: Any, serve_web_ui: Any
) -> None:
    secret = ui_with_key.home / "web-ui" / "secret"
    assert secret.stat().st_mode & 0o777 == 0o600
    assert len(secret.read_bytes()) == 32
    visitor = ui_with_key.server.access.new_visitor(logged_in=True)
    cookie = ui_with_key.server.access.cookie_value(visitor)
    with serve_web_ui(ui_with_key.home, key=KEY) as again:
        assert again.server.access.read(cookie) == visitor  # the same home and key
    with serve_web_ui(ui_with_key.home, key=KEY + "-changed") as changed:
        assert changed.server.access.read(cookie) is None  # a new key logs everybody out
    with serve_web_ui(ui_with_key.home) as tokened:
        assert tokened.server.access.read(cookie) is None  # each run's token is its own


def test_with_a_key_a_foreign_host_name_is_refused_too(ui_with_key: Any) -> None:
    asyncio.run(_with_a_key_a_foreign_host_name_is_refused_too(ui_with_key))


async def _with_a_key_a_foreign_host_name_is_refused_too(ui: Any) -> None:
    """A key does not open the door to DNS rebinding: another name is refused (421), an
    address the browser typed is not (it rebinds no name), 0.0.0.0 is."""
    port = ui.server.bound_port
    async with aiohttp.ClientSession() as http:
        for host, status in (
            (f"attacker.example:{port}", 421),
            (f"0.0.0.0:{port}", 421),
            (f"[::]:{port}", 421),
            (f"192.168.1.20:{port}", 303),
            (f"localhost:{port}", 303),
            ("[unclosed", 421),
        ):
            async with http.get(
                ui.base_url + "/chat", headers={"Host": host}, allow_redirects=False
            ) as response:
                assert response.status == status, host
