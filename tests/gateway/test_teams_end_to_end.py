"""Microsoft Teams through a real ``hermes gateway run`` process: the Bot Framework on
loopback posts signed activities to the gateway's listener and takes replies through its
Bot Connector."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from hermes_plugin_platform_teams.testing import (
    APP_ID,
    APP_PASSWORD,
    TENANT_ID,
    Activity,
    FakeBotFramework,
)

from hermes_testkit import Reply
from hermes_testkit.services import free_port

from .conftest import GatewayProcess, user_texts, wait_until

OWNER = "0b8e7f6a-1111-4c2d-9e3f-123456789abc"
STRANGER = "0b8e7f6a-9999-4c2d-9e3f-123456789abc"


@pytest.fixture
def teams() -> Iterator[FakeBotFramework]:
    with FakeBotFramework() as fake:
        yield fake


@pytest.fixture
def teams_gateway(platform_process, teams: FakeBotFramework) -> Callable[..., GatewayProcess]:
    """Start ``hermes gateway run`` with only Teams, letting OWNER in; returns once the
    messaging endpoint answers on the gateway's listener."""
    port = free_port()
    teams.endpoint_url = f"http://127.0.0.1:{port}/api/messages"
    section = (
        f"  teams:\n    openid_url: {teams.openid_url}\n    token_url: {teams.token_url}\n"
        f"    service_url: {teams.service_url}\n    allowed_users: ['{OWNER}']\n"
    )

    def listening() -> bool:
        import httpx

        try:
            return httpx.get(teams.endpoint_url, timeout=1).status_code == 405
        except httpx.HTTPError:
            return False

    def start(write: bool = True) -> GatewayProcess:
        gateway: GatewayProcess = platform_process(
            section,
            dotenv=(
                f"TEAMS_CLIENT_ID={APP_ID}\nTEAMS_CLIENT_SECRET={APP_PASSWORD}\n"
                f"TEAMS_TENANT_ID={TENANT_ID}\n"
            ),
            gateway=f"  http_port: {port}\n",
            ready=listening,
            write=write,
        )
        return gateway

    return start


def wait_for(
    teams: FakeBotFramework, conversation: str, text: str, timeout: float = 30
) -> Activity:
    found: list[Activity] = []
    wait_until(
        lambda: found.extend(a for a in teams.sent_to(conversation) if text in a.visible) or found,
        timeout,
    )
    return found[0]


def test_a_mention_in_its_thread_a_personal_chat_strangers_and_forgeries_cost_nothing(
    teams_gateway, teams: FakeBotFramework, openai_server
):
    openai_server.queue(Reply.say("Noon, in the thread."), Reply.say("Noon, privately."))
    teams_gateway()
    for kind in ("forged", "expired", "audience", "issuer", "serviceurl", "unendorsed"):
        status, _ = teams.user_says(OWNER, f"a {kind} token", token=teams.token(kind))
        assert status == 401, kind
    teams.user_says(OWNER, "chatter that names nobody", kind="channel")
    status, _ = teams.user_says(OWNER, "what time is it?", kind="channel", mention=True)
    assert status == 200
    root = teams.last_activity["id"]  # the post starts the thread the reply goes in
    channel = teams.conversation(OWNER, "channel")
    wait_for(teams, f"{channel};messageid={root}", "Noon, in the thread.")
    assert teams.deliver_again()[0] == 200  # Teams sends it again: answered once
    teams.user_says(OWNER, "and privately?")
    wait_for(teams, teams.conversation(OWNER), "Noon, privately.")
    teams.user_says(STRANGER, "let me in")
    wait_for(teams, teams.conversation(STRANGER), "hermes pairing approve")
    teams.user_says(STRANGER, "run something", kind="channel", mention=True)
    time.sleep(1.0)
    assert [texts[-1] for texts in user_texts(openai_server)] == [
        "what time is it?",
        "and privately?",
    ]


def test_a_restart_mid_turn_is_answered_once(teams_gateway, teams, openai_server):
    openai_server.queue(Reply.say("never seen", delay_seconds=30))
    first = teams_gateway()
    teams.user_says(OWNER, "do the long thing")
    wait_until(lambda: len(openai_server.requests) == 1)
    first.kill()
    openai_server.queue(Reply.say("the answer, after the restart"))
    teams_gateway(write=False)
    conversation = teams.conversation(OWNER)
    wait_for(teams, conversation, "the answer, after the restart", timeout=60)
    time.sleep(1.5)
    assert len([a for a in teams.sent_to(conversation) if "after the restart" in a.text]) == 1
    assert len(openai_server.requests) == 2


def test_an_approval_is_an_adaptive_card_button(teams_gateway, teams, openai_server, tmp_path):
    target = tmp_path / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.tool_call("terminal", {"command": f"chmod -R 777 {target}"}), Reply.say("Opened it.")
    )
    teams_gateway()
    teams.user_says(OWNER, "open up that folder")
    card = wait_for(teams, teams.conversation(OWNER), "chmod -R 777")
    status, answer = teams.press(OWNER, card, "once")
    assert status == 200 and answer["type"] == "application/vnd.microsoft.card.adaptive"
    wait_for(teams, teams.conversation(OWNER), "Opened it.")
    assert oct(target.stat().st_mode)[-3:] == "777"
    assert not card.buttons
