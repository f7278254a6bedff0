"""What the WhatsApp adapter refuses and how it says it: unsigned or wrongly signed webhooks
(401, nothing handed over), Meta's URL verification, a reply past the 24-hour window, the
Graph API's refusals; and what it reads: photos and voice notes as attachments, button and
list answers, a typed answer."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_platform_whatsapp.adapter import WhatsAppAdapter
from hermes_plugin_platform_whatsapp.testing import (
    APP_SECRET,
    PHONE_ID,
    TOKEN,
    VERIFY_TOKEN,
    FakeWhatsApp,
)

from hermes_commons.sending import PartlySent
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
Scenario = Callable[[WhatsAppAdapter, Any, FakeWhatsApp], Awaitable[None]]


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
        # it, then reports it failed, and the report goes to the delivery ledger with why.
        meta.age_window("15550009999", 30)
        stranger = ChatRef(platform="whatsapp", chat_id="15550009999", chat_type="private")
        [wamid] = await adapter.send(stranger, "hello?")
        await _until(lambda: any(r[0] == wamid and r[1] == "failed" for r in host.reports))
        [(_, _, why)] = [r for r in host.reports if r[0] == wamid and r[1] == "failed"]
        assert "24-hour window had closed" in why

    _run(tmp_path, meta, scenario)


def test_choices_go_as_buttons_or_a_list_and_each_answer_comes_back(tmp_path, meta) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: WhatsAppAdapter, host: RecordingHost, meta: FakeWhatsApp) -> None:
        meta.user_says(USER, "hi")
        await _until(lambda: host.messages)
        three = [
            Choice("once", "Allow this command once"),
            Choice("session", "Allow this command for this session"),
            Choice("deny", "Deny"),
        ]
        await adapter.ask(CHAT, "Run `rm -rf build`?", three, "q0")
        (buttons,) = meta.sent(USER)
        titles = [title for _id, title in buttons.buttons]
        assert titles == ["1. Allow this comma…", "2. Allow this comma…", "3. Deny"]
        assert "session - Allow this command for this session" in buttons.text  # in full
        four = [Choice(v, v.title()) for v in ("once", "session", "always", "deny")]
        await adapter.ask(CHAT, "Run it?", four, "q1")
        listed = meta.sent(USER)[-1]
        assert listed.text.startswith("\x00list") and len(listed.buttons) == 4
        meta.press(USER, listed, "q1:session")
        await _until(lambda: host.presses)
        assert (host.presses[0].request_id, host.presses[0].choice) == ("q1", "session")
        many = [Choice(str(n), f"Option {n}") for n in range(12)]
        await adapter.ask(CHAT, "Which one?", many, "q2")
        assert "Reply with one of" in meta.sent(USER)[-1].text
        meta.user_says(USER, "7")  # typed: the gateway takes it as the answer, if it is one
        await _until(lambda: len(host.messages) == 2)
        assert host.messages[-1].text == "7" and len(host.presses) == 1

    _run(tmp_path, meta, scenario)


def test_a_press_meta_posts_again_is_taken_once(tmp_path, meta) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: WhatsAppAdapter, host: RecordingHost, meta: FakeWhatsApp) -> None:
        meta.user_says(USER, "hi")
        await _until(lambda: host.messages)
        await adapter.ask(CHAT, "Proceed?", [Choice("yes", "Yes"), Choice("no", "No")], "q")
        (question,) = meta.sent(USER)
        meta.press(USER, question, "q:yes")
        await _until(lambda: host.presses)
        meta.deliver_again()
        await asyncio.sleep(0.5)
        assert len(host.presses) == 1

    _run(tmp_path, meta, scenario)


def test_files_go_out_as_whatsapp_takes_them(tmp_path, meta) -> None:  # type: ignore[no-untyped-def]
    from hermes_sdk.media import MediaCache

    cache = MediaCache.of_home(tmp_path)

    async def scenario(adapter: WhatsAppAdapter, host: RecordingHost, meta: FakeWhatsApp) -> None:
        meta.user_says(USER, "hi")
        await _until(lambda: host.messages)
        pdf = cache.ingest(b"%PDF-1.4\n% a report\n", name="report.pdf")
        notes = cache.ingest(b"# Notes\n\n- one\n", name="notes.md")
        wav = cache.ingest(tone_wav(0.2), name="reply.wav")
        await adapter.send_file(CHAT, pdf)
        await adapter.send_file(CHAT, notes, caption="your notes")
        with pytest.raises(NotSent) as refused:
            await adapter.send_file(CHAT, wav)
        assert refused.value.permanent and "takes no audio/" in str(refused.value)
        sent = [m.file for m in meta.sent(USER) if m.file]
        assert [(f[0], f[2]) for f in sent] == [
            ("report.pdf", "application/pdf"),
            ("notes.md", "text/plain"),  # any text goes as text, under its own name
        ]

    _run(tmp_path, meta, scenario)


def test_a_batch_is_stored_in_order_and_a_late_delivery_keeps_its_send_time(tmp_path, meta) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: WhatsAppAdapter, host: Any, meta: FakeWhatsApp) -> None:
        written = time.time() - 30 * 3600
        meta.user_says_at_once(USER, ["first", "second", "third"], sent_at=written)
        await _until(lambda: len(host.messages) == 3)
        assert [m.text for m in host.messages] == ["first", "second", "third"]
        assert 500 in meta.webhook_answers  # the first store failed: the POST came again
        # Written 30 hours ago, delivered now: the window closed long ago.
        with pytest.raises(NotSent, match="template"):
            await adapter.send(CHAT, "too late")

    _run(tmp_path, meta, scenario, host_class=StoreFailsOnce)


def test_the_graph_apis_refusals_are_refusals(tmp_path, meta) -> None:  # type: ignore[no-untyped-def]
    async def scenario(adapter: WhatsAppAdapter, host: RecordingHost, meta: FakeWhatsApp) -> None:
        meta.user_says(USER, "hi")
        await _until(lambda: host.messages)
        meta.refusals.append((400, 131026, "Message undeliverable"))
        with pytest.raises(NotSent, match="131026") as undeliverable:
            await adapter.send(CHAT, "one")
        assert undeliverable.value.permanent  # sending it again cannot help
        meta.refusals.append((429, 130429, "Rate limit hit"))
        with pytest.raises(NotSent, match="130429") as limited:  # nothing went out
            await adapter.send(CHAT, "two")
        assert not limited.value.permanent  # tried again later, with no duplicate note
        await adapter.send(CHAT, "three")
        assert [m.text for m in meta.sent(USER)] == ["three"]
        # The second part of a long reply refused after the first went out: its retry must
        # say it may repeat, so it is no refusal of the whole.
        meta.refusals.extend([None, (429, 130429, "Rate limit hit")])
        with pytest.raises(PartlySent, match="after 1 of its parts went out"):
            await adapter.send(CHAT, "\n\n".join(["word " * 700] * 2))

    _run(tmp_path, meta, scenario)


def test_wrong_credentials_stop_the_platform_in_one_line(tmp_path, meta) -> None:  # type: ignore[no-untyped-def]
    for secrets, said in (
        ({"WHATSAPP_CLOUD_ACCESS_TOKEN": "EAA-revoked"}, "refused the access token"),
        ({"WHATSAPP_CLOUD_PHONE_NUMBER_ID": "999"}, "knows no number 999"),
    ):
        context = PlatformContext(
            name="whatsapp",
            home=str(tmp_path),
            config={"api_url": meta.api_url},
            secrets={**SECRETS, **secrets},
        )

        async def main(context: PlatformContext = context) -> str:
            adapter = WhatsAppAdapter(context)
            host = RecordingHost(free_port())
            try:
                with pytest.raises(PlatformNotConfigured) as raised:
                    await adapter.run(host)
                return str(raised.value)
            finally:
                await adapter.aclose()
                await host.aclose()

        line = asyncio.run(main())
        assert said in line and "\n" not in line


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
