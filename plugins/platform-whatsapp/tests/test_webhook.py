"""What the WhatsApp adapter refuses and how it says it: unsigned or wrongly signed webhooks
(401, nothing handed over), Meta's URL verification, a reply past the 24-hour window, the
Graph API's refusals; and what it reads: photos and voice notes as attachments, button and
list answers, a typed answer."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from hermes_plugin_platform_whatsapp.adapter import WhatsAppAdapter
from hermes_plugin_platform_whatsapp.testing import (
    APP_SECRET,
    PHONE_ID,
    TOKEN,
    VERIFY_TOKEN,
    FakeWhatsApp,
)

from hermes_sdk.platform import ChatRef, Choice, NotSent, PlatformContext, PlatformNotConfigured
from hermes_testkit.audio_server import tone_wav
from hermes_testkit.media_files import photo_bytes
from hermes_testkit.platform_tests import RecordingHost
from hermes_testkit.services import free_port

USER = "15551234567"
CHAT = ChatRef(platform="whatsapp", chat_id=USER, chat_type="private")
SECRETS = {
    "WHATSAPP_CLOUD_ACCESS_TOKEN": TOKEN,
    "WHATSAPP_CLOUD_PHONE_NUMBER_ID": PHONE_ID,
    "WHATSAPP_CLOUD_APP_SECRET": APP_SECRET,
    "WHATSAPP_CLOUD_VERIFY_TOKEN": VERIFY_TOKEN,
}
Scenario = Callable[[WhatsAppAdapter, RecordingHost, FakeWhatsApp], Awaitable[None]]


@pytest.fixture
def meta() -> Iterator[FakeWhatsApp]:
    with FakeWhatsApp() as fake:
        yield fake


async def _until(condition: Callable[[], object], seconds: float = 10.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("not in time")


class StoreFailsOnce(RecordingHost):
    """A gateway whose store fails the first hand-over (a full disk, a lock held)."""

    failed = False

    async def receive(self, message):  # type: ignore[no-untyped-def]
        if not self.failed:
            self.failed = True
            raise OSError("disk full")
        await super().receive(message)


def _run(
    home: Path,
    meta: FakeWhatsApp,
    scenario: Scenario,
    host_class: type = RecordingHost,
    **secrets: str,
) -> None:
    port = free_port()
    meta.webhook_url = f"http://127.0.0.1:{port}/whatsapp/webhook"

    async def main() -> None:
        context = PlatformContext(
            name="whatsapp",
            home=str(home),
            config={"api_url": meta.api_url},
            secrets={**SECRETS, **secrets},
        )
        adapter = WhatsAppAdapter(context)
        host = host_class(port)
        task = asyncio.ensure_future(adapter.run(host))
        try:
            await _until(lambda: adapter.webhook_url)
            await scenario(adapter, host, meta)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await adapter.aclose()
            await host.aclose()

    asyncio.run(main())


def _message(meta: FakeWhatsApp, text: str = "hello") -> bytes:
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"phone_number_id": PHONE_ID},
        "contacts": [{"wa_id": USER, "profile": {"name": "Eve"}}],
        "messages": [{"from": USER, "id": "wamid.forged", "type": "text", "text": {"body": text}}],
    }
    payload = {
        "object": "whatsapp_business_account",
        "entry": [{"changes": [{"field": "messages", "value": value}]}],
    }
    return json.dumps(payload).encode()


def test_unsigned_forged_or_stale_webhooks_get_401_and_hand_nothing_over(tmp_path, meta) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: WhatsAppAdapter, host: RecordingHost, meta: FakeWhatsApp) -> None:
        body = _message(meta)
        answers = await asyncio.to_thread(
            lambda: [
                meta.post(body, None),  # missing
                meta.post(body, meta.sign(body, "someone-elses-secret")),  # forged
                meta.post(body, meta.sign(body, "the-app-secret-before-rotation")),  # stale
                meta.post(body, meta.sign(b"another body")),  # for another body
                meta.post(body, "sha256=" + "0" * 64),
            ]
        )
        assert answers == [401, 401, 401, 401, 401]
        assert await asyncio.to_thread(meta.post, b"not json", meta.sign(b"not json")) == 400
        assert await asyncio.to_thread(meta.post, body, meta.sign(body)) == 200
        assert [m.text for m in host.messages] == ["hello"]

    _run(tmp_path, meta, scenario)


def test_meta_verifies_the_url_with_the_verify_token(tmp_path, meta) -> None:  # type: ignore[no-untyped-def]
    def ask(token: str) -> tuple[int, str]:
        query = f"hub.mode=subscribe&hub.verify_token={token}&hub.challenge=1158201444"
        try:
            with urllib.request.urlopen(f"{meta.webhook_url}?{query}", timeout=10) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, ""

    async def scenario(adapter: WhatsAppAdapter, host: RecordingHost, meta: FakeWhatsApp) -> None:
        assert await asyncio.to_thread(ask, VERIFY_TOKEN) == (200, "1158201444")
        assert (await asyncio.to_thread(ask, "guess"))[0] == 403

    _run(tmp_path, meta, scenario)


def test_a_photo_and_a_voice_note_arrive_as_attachments(tmp_path, meta) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: WhatsAppAdapter, host: RecordingHost, meta: FakeWhatsApp) -> None:
        meta.user_sends_file(
            USER, photo_bytes((64, 48)), "x.jpg", "image/jpeg", caption="what is this?"
        )
        meta.user_sends_file(USER, tone_wav(0.3), "v.ogg", "audio/ogg", voice=True)
        await _until(lambda: len(host.messages) == 2)
        photo, voice = host.messages
        assert photo.text == "what is this?" and photo.attachments[0].kind == "image"
        assert (
            voice.attachments[0].kind == "audio" and voice.attachments[0].name == "voice-note.ogg"
        )

    _run(tmp_path, meta, scenario)


def test_a_reply_past_the_24_hour_window_is_refused_in_one_line(tmp_path, meta, caplog) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: WhatsAppAdapter, host: RecordingHost, meta: FakeWhatsApp) -> None:
        meta.user_says(USER, "remind me tomorrow")
        await _until(lambda: host.messages)
        adapter.windows._last[USER] -= 25 * 3600  # their last word was 25 hours ago
        with pytest.raises(NotSent) as refused:
            await adapter.send(CHAT, "Here is your reminder.")
        assert refused.value.permanent and "approved template" in str(refused.value)
        assert not meta.sent(USER)
        # One the adapter could not know of (a person never seen here): the Cloud API takes
        # it, then reports it failed, and the log says why.
        meta.age_window("15550009999", 30)
        stranger = ChatRef(platform="whatsapp", chat_id="15550009999", chat_type="private")
        await adapter.send(stranger, "hello?")
        await _until(lambda: "24-hour window had closed" in caplog.text)

    _run(tmp_path, meta, scenario)


def test_choices_go_as_buttons_a_list_or_typed_and_each_answer_comes_back(tmp_path, meta) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: WhatsAppAdapter, host: RecordingHost, meta: FakeWhatsApp) -> None:
        meta.user_says(USER, "hi")
        await _until(lambda: host.messages)
        four = [Choice(v, v.title()) for v in ("once", "session", "always", "deny")]
        await adapter.ask(CHAT, "Run `rm -rf build`?", four, "q1")
        (listed,) = meta.sent(USER)
        assert listed.text.startswith("\x00list") and len(listed.buttons) == 4
        meta.press(USER, listed, "q1:session")
        await _until(lambda: host.presses)
        assert (host.presses[0].request_id, host.presses[0].choice) == ("q1", "session")
        many = [Choice(str(n), f"Option {n}") for n in range(12)]
        await adapter.ask(CHAT, "Which one?", many, "q2")
        assert "Reply with one of" in meta.sent(USER)[-1].text
        meta.user_says(USER, "option 7")
        await _until(lambda: len(host.presses) == 2)
        assert (host.presses[1].request_id, host.presses[1].choice) == ("q2", "7")

    _run(tmp_path, meta, scenario)


def test_the_graph_apis_refusals(tmp_path, meta) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: WhatsAppAdapter, host: RecordingHost, meta: FakeWhatsApp) -> None:
        meta.user_says(USER, "hi")
        await _until(lambda: host.messages)
        meta.refusals.append((400, 131026, "Message undeliverable"))
        with pytest.raises(NotSent, match="131026"):
            await adapter.send(CHAT, "one")
        meta.refusals.append((429, 130429, "Rate limit hit"))
        with pytest.raises(Exception) as limited:  # not a refusal: retried, maybe sent
            await adapter.send(CHAT, "two")
        assert not isinstance(limited.value, NotSent)
        await adapter.send(CHAT, "three")
        assert [m.text for m in meta.sent(USER)] == ["three"]

    _run(tmp_path, meta, scenario)


def test_a_wrong_token_is_not_taken_for_a_refusal(tmp_path, meta) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: WhatsAppAdapter, host: RecordingHost, meta: FakeWhatsApp) -> None:
        meta.user_says(USER, "hi")
        await _until(lambda: host.messages)
        with pytest.raises(Exception, match="190") as raised:
            await adapter.send(CHAT, "hello")
        assert not isinstance(raised.value, NotSent)

    _run(tmp_path, meta, scenario, WHATSAPP_CLOUD_ACCESS_TOKEN="EAA-revoked")


@pytest.mark.parametrize(
    ("missing", "said"),
    [
        ("WHATSAPP_CLOUD_APP_SECRET", "set WHATSAPP_CLOUD_APP_SECRET"),
        ("WHATSAPP_CLOUD_VERIFY_TOKEN", "set WHATSAPP_CLOUD_VERIFY_TOKEN"),
        ("WHATSAPP_CLOUD_PHONE_NUMBER_ID", "set WHATSAPP_CLOUD_PHONE_NUMBER_ID"),
    ],
)
def test_each_missing_secret_is_one_line(tmp_path, missing, said) -> None:  # type: ignore[no-untyped-def]
    secrets = {k: v for k, v in SECRETS.items() if k != missing}
    with pytest.raises(PlatformNotConfigured) as raised:
        WhatsAppAdapter(PlatformContext(name="whatsapp", home=str(tmp_path), secrets=secrets))
    assert said in str(raised.value) and "\n" not in str(raised.value)


def test_a_message_not_stored_is_not_acknowledged_and_comes_again(tmp_path, meta) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: WhatsAppAdapter, host: RecordingHost, meta: FakeWhatsApp) -> None:
        meta.user_says(USER, "keep this")
        await _until(lambda: host.messages)
        await asyncio.sleep(0.3)
        assert [m.text for m in host.messages] == ["keep this"]
        assert 500 in meta.webhook_answers and meta.webhook_answers[-1] == 200

    _run(tmp_path, meta, scenario, host_class=StoreFailsOnce)
