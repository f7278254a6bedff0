"""Google Chat through a real ``hermes gateway run`` process: Google Chat on loopback posts
signed events to the gateway's listener and takes replies through its Chat API."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import pytest
from hermes_plugin_platform_google_chat.testing import FakeGoogleChat, Sent

from hermes_testkit import Reply
from hermes_testkit.services import free_port

from .conftest import GatewayProcess, user_texts, wait_until

OWNER = "owner@example.org"
STRANGER = "stranger@example.org"


@pytest.fixture
def chat() -> Iterator[FakeGoogleChat]:
    with FakeGoogleChat() as fake:
        yield fake


@pytest.fixture
def google_chat_gateway(
    platform_process, chat: FakeGoogleChat, tmp_path
) -> Callable[..., GatewayProcess]:
    """Start ``hermes gateway run`` with only Google Chat, letting OWNER in; returns once
    the app's endpoint answers on the gateway's listener."""
    port = free_port()
    chat.endpoint_url = f"http://127.0.0.1:{port}/google-chat/events"
    key = tmp_path / "service-account.json"
    key.write_text(json.dumps(chat.service_account()))
    section = (
        f"  google_chat:\n    endpoint_url: {chat.endpoint_url}\n    api_url: {chat.url}\n"
        f"    certs_url: {chat.certs_url}\n    allowed_users: ['{OWNER}']\n"
    )

    def listening() -> bool:
        import httpx

        try:
            return httpx.get(chat.endpoint_url, timeout=1).status_code == 405
        except httpx.HTTPError:
            return False

    def start(write: bool = True) -> GatewayProcess:
        gateway: GatewayProcess = platform_process(
            section,
            dotenv=f"GOOGLE_CHAT_SERVICE_ACCOUNT_JSON={key}\n",
            gateway=f"  http_port: {port}\n",
            ready=listening,
            write=write,
        )
        return gateway

    return start


def wait_for(chat: FakeGoogleChat, space: str, text: str, timeout: float = 90) -> Sent:
    found: list[Sent] = []
    wait_until(
        lambda: found.extend(m for m in chat.sent_to(space) if text in m.text) or found, timeout
    )
    return found[0]


def test_a_mention_in_its_thread_a_dm_privately_strangers_and_forgeries_cost_nothing(
    google_chat_gateway, chat: FakeGoogleChat, openai_server
):
    openai_server.queue(Reply.say("Noon, in the thread."), Reply.say("Noon, privately."))
    google_chat_gateway()
    for kind in ("forged", "expired", "audience", "issuer"):
        status, _ = chat.user_says(OWNER, f"a {kind} token", token=chat.token(kind))
        assert status == 401, kind
    thread = "spaces/team/threads/t1"
    assert chat.user_says(OWNER, "what time is it?", space="spaces/team", thread=thread)[0] == 200
    answer = wait_for(chat, "spaces/team", "Noon, in the thread.")
    assert answer.thread == thread
    assert chat.deliver_again()[0] == 200  # the same event twice: answered once
    chat.user_says(OWNER, "and privately?")
    wait_for(chat, chat.dm(OWNER), "Noon, privately.")
    chat.user_says(STRANGER, "let me in")
    wait_for(chat, chat.dm(STRANGER), "hermes pairing approve")
    chat.user_says(STRANGER, "run something", space="spaces/team")
    time.sleep(1.0)
    assert [texts[-1] for texts in user_texts(openai_server)] == [
        "what time is it?",
        "and privately?",
    ]
    assert len(chat.sent_to("spaces/team")) == 1


def test_a_restart_mid_turn_is_answered_once(google_chat_gateway, chat, openai_server):
    openai_server.queue(Reply.say("never seen", delay_seconds=30))
    first = google_chat_gateway()
    chat.user_says(OWNER, "do the long thing")
    wait_until(lambda: len(openai_server.requests) == 1)
    first.kill()
    openai_server.queue(Reply.say("the answer, after the restart"))
    google_chat_gateway(write=False)
    wait_for(chat, chat.dm(OWNER), "the answer, after the restart", timeout=60)
    time.sleep(1.5)
    assert len([m for m in chat.sent_to(chat.dm(OWNER)) if "after the restart" in m.text]) == 1
    assert len(openai_server.requests) == 2


def test_an_approval_is_a_card_button_pressed(google_chat_gateway, chat, openai_server, tmp_path):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}), Reply.say("Opened it.")
    )
    google_chat_gateway()
    chat.user_says(OWNER, "open up that folder")
    card = wait_for(chat, chat.dm(OWNER), "chmod -R 777")
    assert card.buttons
    status, answer = chat.press(OWNER, card, "once")
    assert status == 200 and answer["actionResponse"]["type"] == "UPDATE_MESSAGE"
    wait_for(chat, chat.dm(OWNER), "Opened it.")
    assert oct(target.stat().st_mode)[-3:] == "777"
    assert not card.buttons
