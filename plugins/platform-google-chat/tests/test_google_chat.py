"""The Google Chat adapter against Google Chat on loopback: who may post (every kind of bad
token, both audiences), spaces and threads, cards, idempotent replies, the API's refusals,
the key's refusal, settings."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_platform_google_chat.adapter import GoogleChatAdapter, to_chat_markup
from hermes_plugin_platform_google_chat.testing import FakeGoogleChat

from hermes_sdk.platform import ChatRef, Choice, NotSent, PlatformContext, PlatformNotConfigured
from hermes_testkit.platform_tests import RecordingHost, adapter_running, eventually
from hermes_testkit.services import free_port

ANN = "ann@example.org"
BOB = "bob@example.org"


@pytest.fixture(params=["endpoint-url", "project-number"])
def fake(request: pytest.FixtureRequest) -> Iterator[FakeGoogleChat]:
    with FakeGoogleChat(project_number=request.param == "project-number") as server:
        server.endpoint_url = f"http://127.0.0.1:{free_port()}/google-chat/events"
        yield server


def adapter_for(fake: FakeGoogleChat, home: Path, **secrets: str) -> GoogleChatAdapter:
    config: dict[str, Any] = {
        "endpoint_url": fake.endpoint_url,
        "api_url": fake.url,
        "certs_url": fake.certs_url,
    }
    if fake.project_number:
        config["project_number"] = "123456789012"
    given = {"GOOGLE_CHAT_SERVICE_ACCOUNT_JSON": json.dumps(fake.service_account()), **secrets}
    return GoogleChatAdapter(
        PlatformContext(name="google_chat", home=str(home), config=config, secrets=given)
    )


def running(
    adapter: GoogleChatAdapter, fake: FakeGoogleChat
) -> contextlib.AbstractAsyncContextManager[RecordingHost]:
    host = RecordingHost(int(fake.endpoint_url.split(":")[2].split("/")[0]))
    return adapter_running(adapter, host, lambda: host.listening)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


def test_only_tokens_google_signed_for_this_app_get_in(
    fake: FakeGoogleChat, tmp_path: Path
) -> None:
    adapter = adapter_for(fake, tmp_path)

    async def scenario() -> None:
        async with running(adapter, fake) as host:
            kinds = ["forged", "expired", "audience", "issuer", "unknown-kid"]
            if not fake.project_number:
                kinds += ["email", "unverified"]
            for kind in kinds:
                status, _ = await asyncio.to_thread(
                    fake.user_says, ANN, f"a {kind} token", token=fake.token(kind)
                )
                assert status == 401, kind
            status, _ = await asyncio.to_thread(fake.user_says, ANN, "no token", token="x.y.z")
            assert status == 401
            assert not host.messages
            for number in range(3):
                assert (await asyncio.to_thread(fake.user_says, ANN, f"real {number}"))[0] == 200
            assert [m.text for m in host.messages] == ["real 0", "real 1", "real 2"]
            assert fake.key_fetches == 1  # kept as Google's Cache-Control says
            for _ in range(5):  # made-up key ids fetch nothing more within the minute
                await asyncio.to_thread(fake.user_says, ANN, "x", token=fake.token("unknown-kid"))
            assert fake.key_fetches == 1
            none_alg = "eyJhbGciOiJub25lIn0.eyJpc3MiOiJhY2NvdW50cy5nb29nbGUuY29tIn0."
            assert (await asyncio.to_thread(fake.user_says, ANN, "x", token=none_alg))[0] == 401

    run(scenario)


def test_a_mention_in_a_space_is_answered_in_its_thread_and_a_resent_reply_is_one(
    fake: FakeGoogleChat, tmp_path: Path
) -> None:
    adapter = adapter_for(fake, tmp_path)

    async def scenario() -> None:
        async with running(adapter, fake) as host:
            thread = "spaces/team/threads/t77"
            await asyncio.to_thread(
                fake.user_says, BOB, "what is **new**?", space="spaces/team", thread=thread
            )
            message = host.messages[0]
            assert message.text == "what is **new**?" and message.user_id == fake.user_id(BOB)
            assert message.chat == ChatRef("google_chat", "spaces/team", "group", thread)
            first = await adapter.send(
                message.chat, "A **bold** [link](https://x.org)", reply_to=message.message_id
            )
            again = await adapter.send(
                message.chat, "A **bold** [link](https://x.org)", reply_to=message.message_id
            )
            assert first == again  # the same requestId: the API gave back the message it made
            (sent,) = fake.sent_to("spaces/team")
            assert sent.thread == thread and sent.text == "A *bold* <https://x.org|link>"

    run(scenario)


def test_a_card_button_answers_and_goes_another_persons_press_does_not(
    fake: FakeGoogleChat, tmp_path: Path
) -> None:
    adapter = adapter_for(fake, tmp_path)
    chat = ChatRef("google_chat", fake.dm(ANN), "private")
    choices = [Choice("once", "Allow once"), Choice("deny", "Deny")]

    ann = fake.user_id(ANN)

    class Host(RecordingHost):
        def question_open(self, request_id: str) -> bool:
            return all(p.user_id != ann for p in self.presses)  # only Ann was asked

    async def scenario() -> None:
        port = int(fake.endpoint_url.split(":")[2].split("/")[0])
        host = Host(port)
        task = asyncio.ensure_future(adapter.run(host))
        try:
            await eventually(lambda: host.listening)
            await adapter.ask(chat, "Run `rm -r build`?", choices, "q1")
            (card,) = fake.sent_to(chat.chat_id)
            assert [b["text"] for b in card.buttons] == ["Allow once", "Deny"]
            status, answer = await asyncio.to_thread(fake.press, BOB, card, "once")
            assert status == 200 and answer["privateMessageViewer"]  # told only Bob
            assert card.buttons
            status, answer = await asyncio.to_thread(fake.press, ANN, card, "deny")
            assert answer["actionResponse"]["type"] == "UPDATE_MESSAGE"
            assert not card.buttons and "Run `rm -r build`?" in card.text
            assert [(p.user_id, p.choice, p.chat) for p in host.presses] == [
                (fake.user_id(BOB), "once", chat),
                (ann, "deny", chat),
            ]
            status, answer = await asyncio.to_thread(fake.press_again)
            assert "privateMessageViewer" in answer  # late: the card keeps who answered
            assert "(Ann)" in card.text
        finally:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            await adapter.aclose()
            await host.aclose()

    run(scenario)


def test_the_apis_refusals_are_told_apart(fake: FakeGoogleChat, tmp_path: Path) -> None:
    adapter = adapter_for(fake, tmp_path)
    chat = ChatRef("google_chat", "spaces/team", "group")

    async def scenario() -> None:
        async with running(adapter, fake):
            fake.rate_limit(1)
            with pytest.raises(NotSent, match="RESOURCE_EXHAUSTED") as limited:
                await adapter.send(chat, "hello")
            assert not limited.value.permanent
            fake.removed_from.add("spaces/team")
            with pytest.raises(NotSent, match="PERMISSION_DENIED") as refused:
                await adapter.send(chat, "hello")
            assert refused.value.permanent

    run(scenario)


def test_a_key_google_refuses_stops_the_platform_with_one_line(
    fake: FakeGoogleChat, tmp_path: Path
) -> None:
    key = fake.service_account()
    key["client_email"] = "someone-else@hermes-test.iam.gserviceaccount.com"
    adapter = adapter_for(fake, tmp_path, GOOGLE_CHAT_SERVICE_ACCOUNT_JSON=json.dumps(key))

    async def scenario() -> None:
        with pytest.raises(
            PlatformNotConfigured, match="service account key was refused"
        ) as raised:
            async with running(adapter, fake):
                pass
        assert "\n" not in str(raised.value)

    run(scenario)


def test_inline_code_links_with_parentheses_and_mentions_of_everyone() -> None:
    assert to_chat_markup("`f(**a)` and 2**10") == "`f(**a)` and 2**10"
    assert to_chat_markup("[w](https://en.wikipedia.org/wiki/Foo_(bar))") == (
        "<https://en.wikipedia.org/wiki/Foo_(bar)|w>"
    )
    assert to_chat_markup("tell <users/all>") == "tell users/all"
    assert to_chat_markup("```\n**streaming, unclosed") == "```\n**streaming, unclosed"


def test_markdown_becomes_chats_own_markup_outside_code() -> None:
    text = "# Title\n**bold** and [docs](https://example.org)\n```\n**kept** [x](https://y.z)\n```"
    assert to_chat_markup(text) == (
        "*Title*\n*bold* and <https://example.org|docs>\n```\n**kept** [x](https://y.z)\n```"
    )


@pytest.mark.parametrize(
    ("config", "secrets", "error"),
    [
        ({}, {}, "endpoint_url"),
        ({"endpoint_url": "https://h.example.org"}, {}, "a path of its own"),
        ({"endpoint_url": "https://h.example.org/e", "project_number": "hermes"}, {}, "digits"),
        ({"endpoint_url": "https://h.example.org/e"}, {}, "GOOGLE_CHAT_SERVICE_ACCOUNT_JSON"),
        (
            {"endpoint_url": "https://h.example.org/e"},
            {"GOOGLE_CHAT_SERVICE_ACCOUNT_JSON": "/nowhere/key.json"},
            "cannot be read",
        ),
        (
            {"endpoint_url": "https://h.example.org/e"},
            {"GOOGLE_CHAT_SERVICE_ACCOUNT_JSON": '{"type": "authorized_user"}'},
            "not a service account key",
        ),
    ],
)
def test_a_wrong_setting_is_one_line_saying_what_to_fix(
    tmp_path: Path, config: dict[str, Any], secrets: dict[str, str], error: str
) -> None:
    context = PlatformContext(
        name="google_chat", home=str(tmp_path), config=config, secrets=secrets
    )
    with pytest.raises(PlatformNotConfigured, match=error) as raised:
        GoogleChatAdapter(context)
    assert "\n" not in str(raised.value)


def test_a_drive_file_is_named_for_the_agent(fake: FakeGoogleChat, tmp_path: Path) -> None:
    adapter = adapter_for(fake, tmp_path)
    event = {
        "type": "MESSAGE",
        "space": {"name": "spaces/dmx", "spaceType": "DIRECT_MESSAGE"},
        "message": {
            "name": "spaces/dmx/messages/d1",
            "sender": {"name": "users/7", "email": ANN, "type": "HUMAN"},
            "text": "see this",
            "attachment": [
                {
                    "contentName": "plan.gdoc",
                    "driveDataRef": {"driveFileId": "f1"},
                    "source": "DRIVE_FILE",
                }
            ],
        },
    }

    async def scenario() -> None:
        async with running(adapter, fake) as host:
            assert (await asyncio.to_thread(fake.post, event))[0] == 200
            (message,) = host.messages
            assert message.text.startswith("see this") and "plan.gdoc" in message.text

    run(scenario)
