"""Issue 62: the API server closed to what a web page or a stranger can send. Without a
key (``--no-auth``) a page on another origin started a turn with a ``text/plain`` POST and
read replies through DNS rebinding; any key holder continued any session by its id (a
CLI's included); wrong keys were never throttled. Requests here are the ones a browser
page sends (a "simple" cross-origin POST, a rebound Host)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hermes_plugin_api_server.settings import ServerSettings

from hermes_sdk.runtime import SessionOptions, open_runtime
from hermes_testkit import Reply

from .conftest import serving

SESSION = "X-Hermes-Session-Id"
KEY, OTHER_KEY = "sk-test-0123456789abcdef", "sk-test-fedcba9876543210"
BODY = {"model": "hermes", "messages": [{"role": "user", "content": "run: id"}]}


@pytest.fixture
def no_auth(home: Path) -> Iterator[Any]:
    with serving(home, ServerSettings(host="127.0.0.1", port=0, keys=())) as running:
        yield running


@pytest.fixture
def two_keys(home: Path) -> Iterator[Any]:
    settings = ServerSettings(host="127.0.0.1", port=0, keys=(KEY, OTHER_KEY))
    with serving(home, settings) as running:
        yield running


def test_a_cross_origin_text_plain_post_starts_no_turn(no_auth: Any, openai_server) -> None:
    response = httpx.post(
        f"{no_auth.base_url}/chat/completions",
        content=json.dumps(BODY),
        headers={"Content-Type": "text/plain;charset=UTF-8", "Origin": "https://evil.example"},
        timeout=10,
    )
    assert response.status_code == 415
    assert "application/json" in response.json()["error"]["message"]
    assert openai_server.requests == []


def test_a_rebound_host_is_refused_without_a_key(no_auth: Any, openai_server) -> None:
    port = no_auth.server.bound_port
    for host in ("evil.example", f"evil.example:{port}", "0.0.0.0"):
        response = httpx.post(
            f"{no_auth.base_url}/chat/completions",
            json=BODY,
            headers={"Host": host},
            timeout=10,
        )
        assert response.status_code == 421, host
    assert (
        httpx.get(f"{no_auth.base_url}/models", headers={"Host": "evil.example"}).status_code == 421
    )
    assert openai_server.requests == []
    openai_server.queue(Reply.say("hello from here"))
    local = httpx.post(f"{no_auth.base_url}/chat/completions", json=BODY, timeout=30)
    assert local.status_code == 200, local.text  # the loopback Host a real client sends


def test_a_session_belongs_to_the_key_that_opened_it(
    two_keys: Any, home: Path, openai_server
) -> None:
    openai_server.queue(Reply.say("mine"))
    url = f"{two_keys.base_url}/chat/completions"
    mine = httpx.post(url, json=BODY, headers={"Authorization": f"Bearer {KEY}"}, timeout=30)
    session = mine.headers[SESSION]
    stolen = httpx.post(
        url,
        json=BODY,
        headers={"Authorization": f"Bearer {OTHER_KEY}", SESSION: session},
        timeout=30,
    )
    assert stolen.status_code == 404 and "for this API key" in stolen.text

    async def a_cli_session() -> str:
        async with open_runtime(home) as runtime:
            return (await runtime.open_session(SessionOptions(source="cli"))).session_id

    import asyncio

    cli = asyncio.run(a_cli_session())
    for key in (KEY, OTHER_KEY):
        taken = httpx.post(
            url, json=BODY, headers={"Authorization": f"Bearer {key}", SESSION: cli}, timeout=30
        )
        assert taken.status_code == 404, taken.text
    assert len(openai_server.requests) == 1  # only the first turn reached the model


def test_wrong_keys_are_throttled_per_address(api: Any, openai_server) -> None:
    url = f"{api.base_url}/models"
    codes = [
        httpx.get(url, headers={"Authorization": f"Bearer sk-guess-{n}"}, timeout=10).status_code
        for n in range(12)
    ]
    assert codes[:10] == [401] * 10 and codes[10:] == [429, 429]
    refused = httpx.get(url, headers={"Authorization": f"Bearer {KEY}"}, timeout=10)
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "60"
